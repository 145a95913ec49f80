// Which x86-64 features (cpu_features.def) the running CPU and OS provide.
#ifndef STRATA_HAL_LOCAL_CPU_FEATURES_H_
#define STRATA_HAL_LOCAL_CPU_FEATURES_H_

#include <optional>
#include <string_view>

#include "strata/base/status.h"

namespace strata::hal {

// True/false for a feature named in cpu_features.def, nullopt for a name it
// does not list. A feature counts only when the OS also enabled the
// register state it uses.
std::optional<bool> HostHasCpuFeature(std::string_view llvm_name);

// OK when the host has every feature of `llvm_names` (comma-separated LLVM
// names, as a module lists what its executables were compiled for); else
// FAILED_PRECONDITION naming every missing one and every one this runtime
// does not know.
Status CheckHostCpuFeatures(std::string_view llvm_names);

} // namespace strata::hal

#endif // STRATA_HAL_LOCAL_CPU_FEATURES_H_
