// Allocators create buffers. A device has one (replaceable with
// Device::SetAllocator); the heap allocator serves all local drivers.
#ifndef STRATA_HAL_ALLOCATOR_H_
#define STRATA_HAL_ALLOCATOR_H_

#include <cstdint>
#include <functional>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "strata/base/ref_ptr.h"
#include "strata/base/scratch_array.h"
#include "strata/base/status.h"
#include "strata/hal/buffer.h"

namespace strata::hal {

struct AllocatorStatistics {
  uint64_t bytes_live = 0;       // Bytes in buffers not yet freed.
  uint64_t bytes_peak = 0;       // Highest bytes_live seen.
  uint64_t allocation_count = 0; // Allocations ever made.
  uint64_t free_count = 0;       // Allocations freed.
  // Bytes of freed blocks kept for reuse (HeapAllocator's block cache);
  // held from the system but in no buffer.
  uint64_t bytes_cached = 0;
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

  // A buffer holding `bytes`, host memory owned by the caller (a module's
  // constants): `release` (may be empty) runs once the allocator no longer
  // needs them. The default wraps the bytes without a copy, as a
  // HOST_VISIBLE buffer that runs `release` when it dies: for local devices
  // host memory is device memory. Allocators of devices with memory of
  // their own override it to copy the bytes in (and release them at once).
  virtual Result<RefPtr<Buffer>> ImportHostBytes(MemoryTypeBitfield memory_type,
                                                 BufferUsageBitfield usage,
                                                 std::span<const uint8_t> bytes,
                                                 std::function<void()> release);

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
  // Freed blocks of at least HeapAllocator::kMinCachedBlockSize bytes are
  // kept for reuse, up to this many bytes in all (0: none are kept).
  uint64_t block_cache_bytes = uint64_t{64} << 20;
};

// Host heap memory, 64-byte aligned (a cache line; enough for any vector
// load the compiler emits). Thread-safe. Every request is checked against
// the memory limit (live bytes plus the request) before any memory is
// taken; memory the system refuses is RESOURCE_EXHAUSTED too.
//
// Large freed blocks are cached: the C library maps and unmaps blocks this
// size (or trims its heap) on every free, so a call that returns a large
// result each time paid a page fault per 4 KiB touched, often more than
// the kernels themselves. Cached bytes count against the memory limit and
// are released first when a request would pass it, on Trim(), and when
// the allocator goes. AddressSanitizer builds cache nothing, so a use after
// free is still caught there.
class HeapAllocator final : public Allocator {
public:
  static constexpr uint64_t kAlignment = 64;
  // Smaller blocks are left to the C library, whose own free lists serve
  // them without system calls.
  static constexpr uint64_t kMinCachedBlockSize = uint64_t{64} << 10;
  // Cached blocks are sized in these steps, so requests of nearby sizes
  // share them.
  static constexpr uint64_t kCachedBlockGranule = 4096;
  // The most blocks the cache holds.
  static constexpr size_t kMaxCachedBlocks = 32;

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
  // Frees every cached block.
  Status Trim() override;

  ~HeapAllocator() override;

private:
  friend class HeapBuffer;
  struct CachedBlock {
    void *data;
    uint64_t size;
  };

  HeapAllocator(std::string name, HeapAllocatorOptions options);
  // Counts `byte_length` as live when the limits allow it, first freeing
  // cached blocks that stand in the way. Takes a cached block of
  // `block_size` bytes into `*reused` when there is one.
  Status Reserve(uint64_t byte_length, uint64_t block_size, void **reused);
  // Gives back a reservation the system then refused (no buffer was made,
  // so nothing counts as freed); freed buffers go through ReleaseBlock.
  void Unreserve(uint64_t byte_length);
  // A buffer of `byte_length` bytes died; its block of `block_size` bytes
  // at `data` is cached or freed.
  void ReleaseBlock(void *data, uint64_t block_size, uint64_t byte_length);
  // Blocks taken out of the cache under the lock, freed after it.
  using EvictedBlocks = ScratchVector<CachedBlock, 4>;
  // Moves the oldest cached blocks into `evicted` until at most
  // `keep_bytes` and `keep_count` blocks stay. Requires mutex_.
  void EvictCachedBlocksLocked(uint64_t keep_bytes, size_t keep_count,
                               EvictedBlocks &evicted);
  static void FreeBlocks(std::span<const CachedBlock> blocks);

  std::string name_;
  const uint64_t max_allocation_size_option_;
  const uint64_t block_cache_bytes_;
  mutable std::mutex mutex_;
  uint64_t memory_limit_;          // Guarded by mutex_.
  AllocatorStatistics statistics_; // Guarded by mutex_.
  // Oldest first. Guarded by mutex_.
  std::vector<CachedBlock> cached_blocks_;
};

} // namespace strata::hal

#endif // STRATA_HAL_ALLOCATOR_H_
