// Registers every driver built into this runtime.
#ifndef STRATA_HAL_DRIVERS_REGISTER_DRIVERS_H_
#define STRATA_HAL_DRIVERS_REGISTER_DRIVERS_H_

#include "strata/hal/driver_registry.h"

namespace strata::hal {

// local-sync, local-task and cuda, those this build has (the
// STRATA_HAL_DRIVER_* options).
Status RegisterAllDrivers(DriverRegistry &registry);

} // namespace strata::hal

#endif // STRATA_HAL_DRIVERS_REGISTER_DRIVERS_H_
