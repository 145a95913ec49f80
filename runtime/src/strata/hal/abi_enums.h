/* Bit values the compiled host program passes to `hal` module imports.
 * Shared by the compiler and the runtime; plain C. */
#ifndef STRATA_HAL_ABI_ENUMS_H_
#define STRATA_HAL_ABI_ENUMS_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Version of the `hal` native module's import surface (hal_imports.def);
 * 2 added hal.buffer.load. */
#define STRATA_HAL_MODULE_VERSION 2u

enum {
  STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL = 1u << 0,
  STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE = 1u << 1,
  STRATA_HAL_MEMORY_TYPE_HOST_COHERENT = 1u << 2,
  STRATA_HAL_MEMORY_TYPE_HOST_CACHED = 1u << 3,
};

enum {
  STRATA_HAL_BUFFER_USAGE_TRANSFER = 1u << 0,
  STRATA_HAL_BUFFER_USAGE_DISPATCH_STORAGE = 1u << 1,
  STRATA_HAL_BUFFER_USAGE_MAPPING = 1u << 2,
  STRATA_HAL_BUFFER_USAGE_CONSTANT = 1u << 3,
  STRATA_HAL_BUFFER_USAGE_DEFAULT = STRATA_HAL_BUFFER_USAGE_TRANSFER |
                                    STRATA_HAL_BUFFER_USAGE_DISPATCH_STORAGE |
                                    STRATA_HAL_BUFFER_USAGE_MAPPING,
};

enum {
  STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT = 1u << 0,
};

enum {
  STRATA_HAL_COMMAND_CATEGORY_TRANSFER = 1u << 0,
  STRATA_HAL_COMMAND_CATEGORY_DISPATCH = 1u << 1,
};

/* Queue affinity: -1 (all bits) means any queue. */
#define STRATA_HAL_QUEUE_AFFINITY_ANY (-1LL)

/* Workgroup grid limits of one dispatch, shared by every driver (command
 * buffer validation) and the module verifier (constant counts passed to
 * hal.command_buffer.dispatch). Per dimension: what GPU APIs guarantee
 * (Vulkan's minimum maxComputeWorkGroupCount), so a program valid here stays
 * valid on them. In total: bounds one dispatch's cost per workgroup (2^24
 * near-empty native workgroups take about 0.2 s on one core, VMVX ones about
 * 14 s) while leaving 2^18 times the compiler's largest static grid (64)
 * for dynamic shapes. */
#define STRATA_HAL_MAX_WORKGROUP_COUNT_PER_DIMENSION 65535u
#define STRATA_HAL_MAX_WORKGROUPS_PER_DISPATCH (1u << 24)

/* hal.command_buffer.dispatch flags: bits 32-63 number the dispatch's call
 * site in its module (1 + its index in the module file's dispatch_sites;
 * 0 = none), so profiles tell apart the call sites of one shared executable
 * and name them; bits 0-31 are reserved (no flags are defined). */
#define STRATA_HAL_DISPATCH_SITE_SHIFT 32

/* Timeout in milliseconds for hal.fence.await; -1 waits forever. */
#define STRATA_HAL_WAIT_FOREVER (-1)

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* STRATA_HAL_ABI_ENUMS_H_ */
