#include "strata/hal/drivers/register_drivers.h"

#include "strata_runtime_config.h"

#if STRATA_HAL_DRIVER_LOCAL_SYNC
#include "strata/hal/drivers/local_sync/local_sync_driver.h"
#endif
#if STRATA_HAL_DRIVER_LOCAL_TASK
#include "strata/hal/drivers/local_task/local_task_driver.h"
#endif
#if STRATA_HAL_DRIVER_CUDA
#include "strata/hal/drivers/cuda/cuda_driver.h"
#endif

namespace strata::hal {

Status RegisterAllDrivers(DriverRegistry &registry) {
#if STRATA_HAL_DRIVER_LOCAL_SYNC
  STRATA_RETURN_IF_ERROR(RegisterLocalSyncDriver(registry));
#endif
#if STRATA_HAL_DRIVER_LOCAL_TASK
  STRATA_RETURN_IF_ERROR(RegisterLocalTaskDriver(registry));
#endif
#if STRATA_HAL_DRIVER_CUDA
  STRATA_RETURN_IF_ERROR(RegisterCudaDriver(registry));
#endif
  return OkStatus();
}

} // namespace strata::hal
