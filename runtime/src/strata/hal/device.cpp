#include "strata/hal/device.h"

namespace strata::hal {

Result<RefPtr<Fence>> Device::CreateFence() {
  STRATA_ASSIGN_OR_RETURN(RefPtr<Semaphore> semaphore, CreateSemaphore(0));
  return Fence::CreateAt(std::move(semaphore), 1);
}

} // namespace strata::hal
