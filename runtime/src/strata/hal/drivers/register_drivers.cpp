#include "strata/hal/drivers/register_drivers.h"

#include "strata/hal/drivers/local_sync/local_sync_driver.h"
#include "strata/hal/drivers/local_task/local_task_driver.h"

namespace strata::hal {

Status RegisterAllDrivers(DriverRegistry &registry) {
  STRATA_RETURN_IF_ERROR(RegisterLocalSyncDriver(registry));
  STRATA_RETURN_IF_ERROR(RegisterLocalTaskDriver(registry));
  return OkStatus();
}

} // namespace strata::hal
