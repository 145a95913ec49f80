// Memory of a cuda device.
//   * Requests without HOST_VISIBLE get device memory: stream-ordered
//     allocations from the device's default memory pool (cuMemAllocAsync /
//     cuMemFreeAsync on the device stream; the pool keeps freed blocks), or
//     cuMemAlloc_v2 / cuMemFree_v2 on devices without pools. host_data() is
//     null.
//   * Requests with HOST_VISIBLE get pinned host memory mapped into the
//     device (cuMemHostAlloc PORTABLE|DEVICEMAP): host_data() is the host
//     pointer, kernels reach it through its device address.
// Every CudaBuffer knows its device address. Thread-safe.
#ifndef STRATA_HAL_DRIVERS_CUDA_CUDA_ALLOCATOR_H_
#define STRATA_HAL_DRIVERS_CUDA_CUDA_ALLOCATOR_H_

#include <memory>
#include <mutex>
#include <string>

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

  // The address of the allocation's first byte on the device.
  CUdeviceptr device_address() const { return device_address_; }
  // Whether the memory is pinned host memory (else device memory).
  bool is_host_memory() const { return host_memory_; }

  ~CudaBuffer() override;

private:
  friend class CudaAllocator;
  CudaBuffer(RefPtr<CudaAllocator> allocator, MemoryTypeBitfield memory_type,
             BufferUsageBitfield usage, uint64_t byte_length,
             uint8_t *host_data, CUdeviceptr device_address, bool host_memory)
      : Buffer(memory_type, usage, byte_length, host_data),
        allocator_(std::move(allocator)), device_address_(device_address),
        host_memory_(host_memory) {}

  RefPtr<CudaAllocator> allocator_;
  CUdeviceptr device_address_;
  bool host_memory_;
};

// The device address of byte 0 of `buffer` (allocation or subspan), or
// INVALID_ARGUMENT naming `what` when its memory is not a cuda device's.
Result<CUdeviceptr> CudaDeviceAddress(Buffer *buffer, std::string_view what);

class CudaAllocator final : public Allocator {
public:
  static RefPtr<CudaAllocator> Create(std::string name,
                                      std::shared_ptr<CudaContext> context);

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
  // Waits for the stream and hands the pool's free blocks back.
  Status Trim() override;

  const std::shared_ptr<CudaContext> &context() const { return context_; }

private:
  friend class CudaBuffer;
  CudaAllocator(std::string name, std::shared_ptr<CudaContext> context)
      : name_(std::move(name)), context_(std::move(context)) {}

  Result<RefPtr<Buffer>> AllocateDeviceMemory(MemoryTypeBitfield memory_type,
                                              BufferUsageBitfield usage,
                                              uint64_t byte_length);
  Result<RefPtr<Buffer>> AllocateHostMemory(MemoryTypeBitfield memory_type,
                                            BufferUsageBitfield usage,
                                            uint64_t byte_length);
  // Counts `byte_length` as live if the memory limit allows it.
  Status Reserve(uint64_t byte_length);
  void Unreserve(uint64_t byte_length);
  // A buffer died: frees its memory.
  void FreeBuffer(CudaBuffer &buffer);

  std::string name_;
  std::shared_ptr<CudaContext> context_;
  mutable std::mutex mutex_;
  uint64_t memory_limit_ = 0;      // Guarded by mutex_.
  AllocatorStatistics statistics_; // Guarded by mutex_.
};

} // namespace strata::hal::cuda

#endif // STRATA_HAL_DRIVERS_CUDA_CUDA_ALLOCATOR_H_
