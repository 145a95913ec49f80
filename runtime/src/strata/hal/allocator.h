// Allocators create buffers. A device has one (replaceable with
// Device::SetAllocator); the heap allocator serves all local drivers.
#ifndef STRATA_HAL_ALLOCATOR_H_
#define STRATA_HAL_ALLOCATOR_H_

#include <cstdint>
#include <mutex>
#include <span>
#include <string>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/hal/buffer.h"

namespace strata::hal {

struct AllocatorStatistics {
  uint64_t bytes_live = 0;       // Bytes in buffers not yet freed.
  uint64_t bytes_peak = 0;       // Highest bytes_live seen.
  uint64_t allocation_count = 0; // Allocations ever made.
  uint64_t free_count = 0;       // Allocations freed.
};

class Allocator : public RefObject {
public:
  static const RefTypeDescriptor kRefType;

  virtual std::string_view name() const = 0;

  // Allocates `byte_length` bytes. Allocators may add memory type bits they
  // always provide (the heap allocator adds HOST_VISIBLE|HOST_COHERENT).
  virtual Result<RefPtr<Buffer>> AllocateBuffer(MemoryTypeBitfield memory_type,
                                                BufferUsageBitfield usage,
                                                uint64_t byte_length) = 0;

  virtual AllocatorStatistics statistics() const = 0;

  // Releases cached memory, if any.
  virtual Status Trim() { return OkStatus(); }

  // Allocates and copies `initial_data` in (the buffer has its size).
  Result<RefPtr<Buffer>>
  AllocateBufferWithData(MemoryTypeBitfield memory_type,
                         BufferUsageBitfield usage,
                         std::span<const uint8_t> initial_data);

protected:
  Allocator() : RefObject(&kRefType) {}
};

struct HeapAllocatorOptions {
  // Requests above this fail with RESOURCE_EXHAUSTED instead of letting an
  // overcommitting kernel hand out memory that later OOM-kills the process.
  // 0 = the machine's physical memory size.
  uint64_t max_allocation_size = 0;
};

// Host heap memory, 64-byte aligned (a cache line; enough for any vector
// load the compiler emits). Thread-safe.
class HeapAllocator final : public Allocator {
public:
  static constexpr uint64_t kAlignment = 64;

  static RefPtr<HeapAllocator> Create(std::string name,
                                      HeapAllocatorOptions options = {});

  std::string_view name() const override { return name_; }
  uint64_t max_allocation_size() const { return max_allocation_size_; }
  Result<RefPtr<Buffer>> AllocateBuffer(MemoryTypeBitfield memory_type,
                                        BufferUsageBitfield usage,
                                        uint64_t byte_length) override;
  AllocatorStatistics statistics() const override;

private:
  friend class HeapBuffer;
  HeapAllocator(std::string name, HeapAllocatorOptions options);
  void OnFree(uint64_t byte_length);

  std::string name_;
  uint64_t max_allocation_size_;
  mutable std::mutex mutex_;
  AllocatorStatistics statistics_;
};

} // namespace strata::hal

#endif // STRATA_HAL_ALLOCATOR_H_
