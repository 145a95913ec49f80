#include "strata/hal/ref_types.h"

#include "strata/hal/allocator.h"
#include "strata/hal/buffer.h"
#include "strata/hal/buffer_view.h"
#include "strata/hal/command_buffer.h"
#include "strata/hal/device.h"
#include "strata/hal/driver.h"
#include "strata/hal/executable.h"
#include "strata/hal/semaphore.h"

namespace strata::hal {

// All descriptors live here so the names are in one place.
const RefTypeDescriptor Allocator::kRefType = {"hal.allocator"};
const RefTypeDescriptor Buffer::kRefType = {"hal.buffer"};
const RefTypeDescriptor BufferView::kRefType = {"hal.buffer_view"};
const RefTypeDescriptor CommandBuffer::kRefType = {"hal.command_buffer"};
const RefTypeDescriptor Device::kRefType = {"hal.device"};
const RefTypeDescriptor Executable::kRefType = {"hal.executable"};
const RefTypeDescriptor Fence::kRefType = {"hal.fence"};
const RefTypeDescriptor Semaphore::kRefType = {"hal.semaphore"};
const RefTypeDescriptor Driver::kRefType = {"hal.driver"};

std::span<const RefTypeDescriptor *const> AllRefTypes() {
  static const RefTypeDescriptor *const kTypes[] = {
      &Allocator::kRefType,     &Buffer::kRefType,    &BufferView::kRefType,
      &CommandBuffer::kRefType, &Device::kRefType,    &Executable::kRefType,
      &Fence::kRefType,         &Semaphore::kRefType, &Driver::kRefType,
  };
  return kTypes;
}

} // namespace strata::hal
