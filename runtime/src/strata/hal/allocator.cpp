#include "strata/hal/allocator.h"

#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace strata::hal {

Result<RefPtr<Buffer>>
Allocator::AllocateBufferWithData(MemoryTypeBitfield memory_type,
                                  BufferUsageBitfield usage,
                                  std::span<const uint8_t> initial_data) {
  STRATA_ASSIGN_OR_RETURN(
      RefPtr<Buffer> buffer,
      AllocateBuffer(memory_type, usage, initial_data.size()));
  STRATA_RETURN_IF_ERROR(buffer->WriteData(0, initial_data));
  return buffer;
}

// Owns one aligned heap block; returns it to the allocator's statistics on
// death. Retains the allocator so statistics outlive no buffer.
class HeapBuffer final : public Buffer {
public:
  HeapBuffer(RefPtr<HeapAllocator> allocator, MemoryTypeBitfield memory_type,
             BufferUsageBitfield usage, uint64_t byte_length, uint8_t *data)
      : Buffer(memory_type, usage, byte_length, data),
        allocator_(std::move(allocator)) {}
  ~HeapBuffer() override {
    std::free(host_data());
    allocator_->OnFree(byte_length());
  }

private:
  RefPtr<HeapAllocator> allocator_;
};

namespace {

uint64_t PhysicalMemorySize() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0)
    return uint64_t{1} << 40;
  return uint64_t(pages) * uint64_t(page_size);
}

} // namespace

RefPtr<HeapAllocator> HeapAllocator::Create(std::string name,
                                            HeapAllocatorOptions options) {
  return RefPtr<HeapAllocator>::Adopt(
      new HeapAllocator(std::move(name), options));
}

HeapAllocator::HeapAllocator(std::string name, HeapAllocatorOptions options)
    : name_(std::move(name)),
      max_allocation_size_(options.max_allocation_size
                               ? options.max_allocation_size
                               : PhysicalMemorySize()) {}

Result<RefPtr<Buffer>>
HeapAllocator::AllocateBuffer(MemoryTypeBitfield memory_type,
                              BufferUsageBitfield usage, uint64_t byte_length) {
  if (byte_length > max_allocation_size_ ||
      byte_length > ~uint64_t{0} - kAlignment)
    return ResourceExhaustedError("allocation of ", byte_length,
                                  " bytes exceeds the limit of allocator '",
                                  name_, "' (", max_allocation_size_,
                                  " bytes)");
  // aligned_alloc needs a size that is a multiple of the alignment; a zero
  // request still gets a real block so host_data() is never null.
  uint64_t padded = (byte_length + kAlignment - 1) / kAlignment * kAlignment;
  if (padded == 0)
    padded = kAlignment;
  void *data = std::aligned_alloc(kAlignment, size_t(padded));
  if (!data)
    return ResourceExhaustedError("out of host memory allocating ", byte_length,
                                  " bytes in allocator '", name_, "'");
  // Host memory is always visible to and coherent with the host.
  memory_type |= STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE |
                 STRATA_HAL_MEMORY_TYPE_HOST_COHERENT;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    statistics_.bytes_live += byte_length;
    if (statistics_.bytes_live > statistics_.bytes_peak)
      statistics_.bytes_peak = statistics_.bytes_live;
    ++statistics_.allocation_count;
  }
  return RefPtr<Buffer>::Adopt(
      new HeapBuffer(RefPtr<HeapAllocator>::Retain(this), memory_type, usage,
                     byte_length, static_cast<uint8_t *>(data)));
}

AllocatorStatistics HeapAllocator::statistics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return statistics_;
}

void HeapAllocator::OnFree(uint64_t byte_length) {
  std::lock_guard<std::mutex> lock(mutex_);
  statistics_.bytes_live -= byte_length;
  ++statistics_.free_count;
}

} // namespace strata::hal
