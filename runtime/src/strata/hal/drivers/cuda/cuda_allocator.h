// Memory of a cuda device.
//   * Requests without HOST_VISIBLE get device memory: stream-ordered
//     allocations from the device's default memory pool (cuMemAllocAsync /
//     cuMemFreeAsync on the device stream; the pool keeps freed blocks), or
//     cuMemAlloc_v2 / cuMemFree_v2 on devices without pools. host_data() is
//     null.
//   * Requests with HOST_VISIBLE get pinned host memory mapped into the
//     device (cuMemHostAlloc PORTABLE|DEVICEMAP): host_data() is the host
//     pointer, kernels reach it through its device address. Freed pinned
//     blocks are cached for reuse (see CudaAllocatorOptions).
// Every CudaBuffer knows its device address. Thread-safe.
#ifndef STRATA_HAL_DRIVERS_CUDA_CUDA_ALLOCATOR_H_
#define STRATA_HAL_DRIVERS_CUDA_CUDA_ALLOCATOR_H_

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "strata/base/scratch_array.h"
#include "strata/hal/allocator.h"
#include "strata/hal/drivers/cuda/cuda_context.h"

namespace strata::hal::cuda {

class CudaAllocator;

// A buffer in memory a cuda device reaches (device or mapped host memory).
class CudaBuffer final : public Buffer {
public:
  // `buffer` (an allocation or a subspan) as a CudaBuffer allocation when
  // its memory is one, else null (host memory wrapped by
  // Buffer::WrapHostMemory, another device's buffer).
  static CudaBuffer *FromBuffer(Buffer *buffer);
  const void *implementation_tag() const override { return &kTag; }

  // The address of the allocation's first byte on the device.
  CUdeviceptr device_address() const { return device_address_; }
  // Whether the memory is pinned host memory (else device memory).
  bool is_host_memory() const { return host_block_size_ != 0; }

  ~CudaBuffer() override;

private:
  friend class CudaAllocator;
  static const char kTag;
  // `host_block_size`: the size of the pinned block holding the bytes (at
  // least byte_length), 0 for device memory.
  CudaBuffer(RefPtr<CudaAllocator> allocator, MemoryTypeBitfield memory_type,
             BufferUsageBitfield usage, uint64_t byte_length,
             uint8_t *host_data, CUdeviceptr device_address,
             uint64_t host_block_size)
      : Buffer(memory_type, usage, byte_length, host_data),
        allocator_(std::move(allocator)), device_address_(device_address),
        host_block_size_(host_block_size) {}

  RefPtr<CudaAllocator> allocator_;
  CUdeviceptr device_address_;
  uint64_t host_block_size_;
};

// The device address of byte 0 of `buffer` (allocation or subspan), or
// INVALID_ARGUMENT naming `what` when its memory is not a cuda device's.
Result<CUdeviceptr> CudaDeviceAddress(Buffer *buffer, std::string_view what);

struct CudaAllocatorOptions {
  // Freed pinned host blocks are kept for reuse, up to this many bytes in
  // all (0: none are kept). cuMemHostAlloc and cuMemFreeHost take hundreds
  // of microseconds to milliseconds each; a call that returns its results
  // in HOST_VISIBLE memory would pay them every time.
  uint64_t host_block_cache_bytes = uint64_t{256} << 20;
};

// Cached pinned blocks are sized in CudaAllocator::kHostBlockGranule steps,
// so requests of nearby sizes share them; a request takes the smallest
// cached block that fits it without wasting more than a quarter of it.
// Cached bytes count against the memory limit and are released first
// (oldest first) when a request would pass it, on Trim(), and when the
// allocator goes. A block is reused at once: every queue operation waits
// for the stream before it returns, so no queued work still reaches a
// buffer its last holder dropped.
class CudaAllocator final : public Allocator {
public:
  // Pinned blocks are sized in these steps (cuMemHostAlloc rounds to pages
  // anyway).
  static constexpr uint64_t kHostBlockGranule = 4096;
  // The most blocks the cache holds (a call may return many results).
  static constexpr size_t kMaxCachedHostBlocks = 256;

  static RefPtr<CudaAllocator> Create(std::string name,
                                      std::shared_ptr<CudaContext> context,
                                      CudaAllocatorOptions options = {});

  std::string_view name() const override { return name_; }
  Result<RefPtr<Buffer>> AllocateBuffer(MemoryTypeBitfield memory_type,
                                        BufferUsageBitfield usage,
                                        uint64_t byte_length) override;
  // Copies `bytes` into a new device-memory buffer (a module's weights are
  // read by every call: they belong in device memory, whatever memory type
  // the program asked for) and runs `release` at once.
  Result<RefPtr<Buffer>>
  ImportHostBytes(MemoryTypeBitfield memory_type, BufferUsageBitfield usage,
                  std::span<const uint8_t> bytes,
                  std::function<void()> release) override;
  AllocatorStatistics statistics() const override;
  // Device and host memory together; 0 = no limit but the device's.
  uint64_t memory_limit() const override;
  Status SetMemoryLimit(uint64_t bytes) override;
  // Frees every cached pinned block, waits for the stream and hands the
  // pool's free blocks back.
  Status Trim() override;

  const std::shared_ptr<CudaContext> &context() const { return context_; }

  ~CudaAllocator() override;

private:
  friend class CudaBuffer;
  struct CachedHostBlock {
    void *host;
    CUdeviceptr address;
    uint64_t size;
  };
  // Blocks taken out of the cache under the lock, freed after it.
  using EvictedHostBlocks = ScratchVector<CachedHostBlock, 4>;

  CudaAllocator(std::string name, std::shared_ptr<CudaContext> context,
                CudaAllocatorOptions options);

  Result<RefPtr<Buffer>> AllocateDeviceMemory(MemoryTypeBitfield memory_type,
                                              BufferUsageBitfield usage,
                                              uint64_t byte_length);
  Result<RefPtr<Buffer>> AllocateHostMemory(MemoryTypeBitfield memory_type,
                                            BufferUsageBitfield usage,
                                            uint64_t byte_length);
  // Counts `byte_length` as live if the memory limit allows it, first
  // freeing cached blocks that stand in the way. With a nonzero
  // `host_block_size`, takes a cached pinned block that fits that size into
  // `*reused` when there is one.
  Status Reserve(uint64_t byte_length, uint64_t host_block_size = 0,
                 CachedHostBlock *reused = nullptr);
  // Gives back a reservation the driver then refused.
  void Unreserve(uint64_t byte_length);
  // A buffer died: caches or frees its memory.
  void FreeBuffer(CudaBuffer &buffer);
  // Moves the oldest cached blocks into `evicted` until at most
  // `keep_bytes` and `keep_count` blocks stay. Requires mutex_.
  void EvictCachedHostBlocksLocked(uint64_t keep_bytes, size_t keep_count,
                                   EvictedHostBlocks &evicted);
  // Frees every cached block; returns whether there were any.
  bool FreeCachedHostBlocks();
  void FreeHostBlocks(std::span<const CachedHostBlock> blocks);

  std::string name_;
  std::shared_ptr<CudaContext> context_;
  const uint64_t host_block_cache_bytes_;
  mutable std::mutex mutex_;
  uint64_t memory_limit_ = 0;      // Guarded by mutex_.
  AllocatorStatistics statistics_; // Guarded by mutex_.
  // Oldest first. Guarded by mutex_.
  std::vector<CachedHostBlock> cached_host_blocks_;
};

} // namespace strata::hal::cuda

#endif // STRATA_HAL_DRIVERS_CUDA_CUDA_ALLOCATOR_H_
