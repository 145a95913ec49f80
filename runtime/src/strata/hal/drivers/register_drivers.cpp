#include "strata/hal/drivers/register_drivers.h"

#include "strata/hal/drivers/local_sync/local_sync_driver.h"

namespace strata::hal {

Status RegisterAllDrivers(DriverRegistry &registry) {
  STRATA_RETURN_IF_ERROR(RegisterLocalSyncDriver(registry));
  return OkStatus();
}

} // namespace strata::hal
