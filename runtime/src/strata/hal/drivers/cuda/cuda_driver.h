// The cuda driver: one device per NVIDIA GPU ("cuda://0", "cuda://1";
// "cuda" is GPU 0), through the CUDA driver API loaded at run time
// (cuda_dynamic_symbols.h). Without a driver library or a GPU it lists no
// device, and creating one is UNAVAILABLE saying why.
#ifndef STRATA_HAL_DRIVERS_CUDA_CUDA_DRIVER_H_
#define STRATA_HAL_DRIVERS_CUDA_CUDA_DRIVER_H_

#include "strata/hal/driver.h"
#include "strata/hal/driver_registry.h"

namespace strata::hal {

inline constexpr std::string_view kCudaDriverName = "cuda";

// A new cuda driver; the CUDA library is loaded on first use.
RefPtr<Driver> CreateCudaDriver();

// Adds "cuda" to `registry` (ALREADY_EXISTS if present).
Status RegisterCudaDriver(DriverRegistry &registry);

} // namespace strata::hal

#endif // STRATA_HAL_DRIVERS_CUDA_CUDA_DRIVER_H_
