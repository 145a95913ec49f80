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
  // RESOURCE_EXHAUSTED, naming the byte count and the limit, when the
  // request would pass the allocator's memory limit or the system refuses
  // the memory.
  virtual Result<RefPtr<Buffer>> AllocateBuffer(MemoryTypeBitfield memory_type,
                                                BufferUsageBitfield usage,
                                                uint64_t byte_length) = 0;

  virtual AllocatorStatistics statistics() const = 0;

  // The most bytes this allocator keeps in live buffers at once; 0 when it
  // has no limit.
  virtual uint64_t memory_limit() const { return 0; }
  // Sets that limit (0 = the allocator's default). Buffers already live
  // stay; later requests that would pass it fail. UNIMPLEMENTED for
  // allocators without a limit.
  virtual Status SetMemoryLimit(uint64_t bytes);

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

// The default memory limit of heap allocators: the machine's physical
// memory. Above it an overcommitting kernel would hand out memory that
// later OOM-kills the process instead of failing the request.
uint64_t DefaultMemoryLimit();

struct HeapAllocatorOptions {
  // The most bytes live at once in this allocator's buffers (what
  // SetMemoryLimit changes later). 0 = DefaultMemoryLimit().
  uint64_t memory_limit = 0;
  // The largest single request; 0 = the memory limit.
  uint64_t max_allocation_size = 0;
};

// Host heap memory, 64-byte aligned (a cache line; enough for any vector
// load the compiler emits). Thread-safe. Every request is checked against
// the memory limit (live bytes plus the request) before any memory is
// taken; memory the system refuses is RESOURCE_EXHAUSTED too.
class HeapAllocator final : public Allocator {
public:
  static constexpr uint64_t kAlignment = 64;

  static RefPtr<HeapAllocator> Create(std::string name,
                                      HeapAllocatorOptions options = {});

  std::string_view name() const override { return name_; }
  // The largest single request now: the smaller of the memory limit and
  // HeapAllocatorOptions::max_allocation_size.
  uint64_t max_allocation_size() const;
  Result<RefPtr<Buffer>> AllocateBuffer(MemoryTypeBitfield memory_type,
                                        BufferUsageBitfield usage,
                                        uint64_t byte_length) override;
  AllocatorStatistics statistics() const override;
  uint64_t memory_limit() const override;
  Status SetMemoryLimit(uint64_t bytes) override;

private:
  friend class HeapBuffer;
  HeapAllocator(std::string name, HeapAllocatorOptions options);
  // Counts `byte_length` as live when the limits allow it.
  Status Reserve(uint64_t byte_length);
  // Returns `byte_length` live bytes: a freed buffer, or a reservation the
  // system then refused (`counts_as_free` false).
  void OnFree(uint64_t byte_length, bool counts_as_free);

  std::string name_;
  const uint64_t max_allocation_size_option_;
  mutable std::mutex mutex_;
  uint64_t memory_limit_;          // Guarded by mutex_.
  AllocatorStatistics statistics_; // Guarded by mutex_.
};

} // namespace strata::hal

#endif // STRATA_HAL_ALLOCATOR_H_
