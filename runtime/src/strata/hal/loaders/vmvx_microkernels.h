// The `vmvx` native module: microkernels that VMVX executables import
// (hal/local/vmvx_microkernels.def). Stateless; one instance may be
// registered in any number of contexts.
#ifndef STRATA_HAL_LOADERS_VMVX_MICROKERNELS_H_
#define STRATA_HAL_LOADERS_VMVX_MICROKERNELS_H_

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/vm/module.h"

namespace strata::hal {

Result<RefPtr<vm::Module>> CreateVmvxMicrokernelModule();

} // namespace strata::hal

#endif // STRATA_HAL_LOADERS_VMVX_MICROKERNELS_H_
