// The ref types of every HAL object that crosses the VM boundary. Driver
// subclasses use their interface's descriptor, so RefCast<Device> works on
// any driver's device. The session registers all of them with the VM.
#ifndef STRATA_HAL_REF_TYPES_H_
#define STRATA_HAL_REF_TYPES_H_

#include <span>

#include "strata/base/ref_ptr.h"

namespace strata::hal {

// hal.allocator, hal.buffer, hal.buffer_view, hal.command_buffer,
// hal.device, hal.executable, hal.fence, hal.semaphore, hal.driver.
std::span<const RefTypeDescriptor *const> AllRefTypes();

} // namespace strata::hal

#endif // STRATA_HAL_REF_TYPES_H_
