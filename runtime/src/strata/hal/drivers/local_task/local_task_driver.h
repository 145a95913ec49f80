// The local-task driver: one device ("local-task://0") whose dispatch grids
// run on a pool of worker threads (TaskGridRunner); everything else runs
// inline like local-sync. Options in the URI (local_device_options.h):
//   local-task?workers=4          4 workers (default: one per core)
//   local-task://0?loader=system  executable loaders to use, in order
#ifndef STRATA_HAL_DRIVERS_LOCAL_TASK_LOCAL_TASK_DRIVER_H_
#define STRATA_HAL_DRIVERS_LOCAL_TASK_LOCAL_TASK_DRIVER_H_

#include "strata/hal/driver.h"
#include "strata/hal/driver_registry.h"

namespace strata::hal {

inline constexpr std::string_view kLocalTaskDriverName = "local-task";

// A new local-task driver.
RefPtr<Driver> CreateLocalTaskDriver();

// Adds "local-task" to `registry` (ALREADY_EXISTS if present).
Status RegisterLocalTaskDriver(DriverRegistry &registry);

} // namespace strata::hal

#endif // STRATA_HAL_DRIVERS_LOCAL_TASK_LOCAL_TASK_DRIVER_H_
