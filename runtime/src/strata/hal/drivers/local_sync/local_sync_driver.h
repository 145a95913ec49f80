// The local-sync driver: one device ("local-sync://0") that runs all work
// inline on the submitting thread, dispatch grids included. Deterministic
// and thread-free; the reference for the other local drivers.
#ifndef STRATA_HAL_DRIVERS_LOCAL_SYNC_LOCAL_SYNC_DRIVER_H_
#define STRATA_HAL_DRIVERS_LOCAL_SYNC_LOCAL_SYNC_DRIVER_H_

#include "strata/hal/driver.h"
#include "strata/hal/driver_registry.h"

namespace strata::hal {

inline constexpr std::string_view kLocalSyncDriverName = "local-sync";

// A new local-sync driver.
RefPtr<Driver> CreateLocalSyncDriver();

// Adds "local-sync" to `registry` (ALREADY_EXISTS if present).
Status RegisterLocalSyncDriver(DriverRegistry &registry);

} // namespace strata::hal

#endif // STRATA_HAL_DRIVERS_LOCAL_SYNC_LOCAL_SYNC_DRIVER_H_
