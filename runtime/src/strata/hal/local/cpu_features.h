// Which x86-64 features (cpu_features.def) the running CPU and OS provide.
#ifndef STRATA_HAL_LOCAL_CPU_FEATURES_H_
#define STRATA_HAL_LOCAL_CPU_FEATURES_H_

#include <optional>
#include <string_view>

namespace strata::hal {

// True/false for a feature named in cpu_features.def, nullopt for a name it
// does not list. A feature counts only when the OS also enabled the
// register state it uses.
std::optional<bool> HostHasCpuFeature(std::string_view llvm_name);

} // namespace strata::hal

#endif // STRATA_HAL_LOCAL_CPU_FEATURES_H_
