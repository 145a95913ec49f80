#include "strata/hal/drivers/register_drivers.h"

#include "strata/hal/drivers/local_sync/local_sync_driver.h"
#include "strata/hal/drivers/local_task/local_task_driver.h"
#if defined(STRATA_HAL_DRIVER_CUDA)
#include "strata/hal/drivers/cuda/cuda_driver.h"
#endif

namespace strata::hal {

Status RegisterAllDrivers(DriverRegistry &registry) {
  STRATA_RETURN_IF_ERROR(RegisterLocalSyncDriver(registry));
  STRATA_RETURN_IF_ERROR(RegisterLocalTaskDriver(registry));
#if defined(STRATA_HAL_DRIVER_CUDA)
  STRATA_RETURN_IF_ERROR(RegisterCudaDriver(registry));
#endif
  return OkStatus();
}

} // namespace strata::hal
