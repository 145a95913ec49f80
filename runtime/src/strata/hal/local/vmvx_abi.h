/* The contract between the compiler's vmvx target and the runtime's VMVX
 * loader (hal/loaders/vmvx_module_loader.h). Plain C so both sides include
 * it; bump STRATA_HAL_VMVX_MODULE_VERSION with any change below or in
 * vmvx_microkernels.def.
 *
 * A vmvx executable is a complete module file (schema/module.fbs) holding
 * one bytecode module. Each export is a dispatch entry point, in export
 * order, with the calling convention
 *
 *   "0" + "r" x B + "IIIIII" + "_v"
 *
 * : B bindings as vm.buffer refs (the binding's bytes, writable), then the
 * workgroup id x/y/z and the workgroup count x/y/z. The module may import
 * the microkernels of the `vmvx` native module (vmvx_microkernels.def),
 * declaring a dependency on `vmvx` >= the version it was built for. */
#ifndef STRATA_HAL_LOCAL_VMVX_ABI_H_
#define STRATA_HAL_LOCAL_VMVX_ABI_H_

/* Executable format string carried in modules for vmvx executables. */
#define STRATA_HAL_EXECUTABLE_FORMAT_VMVX "vmvx-bytecode-fb"

/* Name and version of the microkernel module executables import. */
#define STRATA_HAL_VMVX_MODULE_NAME "vmvx"
#define STRATA_HAL_VMVX_MODULE_VERSION 1

/* Number of i64 workgroup arguments after the bindings. */
#define STRATA_HAL_VMVX_WORKGROUP_ARGUMENT_COUNT 6

#endif /* STRATA_HAL_LOCAL_VMVX_ABI_H_ */
