#include "strata/hal/drivers/cuda/cuda_allocator.h"

#include <algorithm>

#include "strata/base/checked_math.h"

namespace strata::hal::cuda {

CudaBuffer *CudaBuffer::FromBuffer(Buffer *buffer) {
  // Buffers carry no implementation tag; one dynamic_cast per binding costs
  // nanoseconds next to the microseconds of a kernel launch.
  return buffer ? dynamic_cast<CudaBuffer *>(buffer->allocated_buffer())
                : nullptr;
}

CudaBuffer::~CudaBuffer() { allocator_->FreeBuffer(*this); }

Result<CUdeviceptr> CudaDeviceAddress(Buffer *buffer, std::string_view what) {
  if (!buffer)
    return InvalidArgumentError(what, " is null");
  CudaBuffer *allocation = CudaBuffer::FromBuffer(buffer);
  if (!allocation)
    return InvalidArgumentError(
        what,
        " is memory the cuda device cannot reach (a buffer not allocated by "
        "a cuda allocator, e.g. host memory from Buffer::WrapHostMemory); "
        "allocate it from the device's allocator");
  return allocation->device_address() + buffer->byte_offset();
}

RefPtr<CudaAllocator>
CudaAllocator::Create(std::string name, std::shared_ptr<CudaContext> context) {
  return RefPtr<CudaAllocator>::Adopt(
      new CudaAllocator(std::move(name), std::move(context)));
}

Status CudaAllocator::Reserve(uint64_t byte_length) {
  std::lock_guard<std::mutex> lock(mutex_);
  uint64_t live = statistics_.bytes_live;
  if (memory_limit_ &&
      (live > memory_limit_ || byte_length > memory_limit_ - live))
    return ResourceExhaustedError(
        "allocation of ", byte_length, " bytes would bring allocator '", name_,
        "' to ", CheckedAdd(live, byte_length).value_or(~uint64_t{0}),
        " live bytes, over its memory limit of ", memory_limit_, " bytes (",
        live, " bytes already live)");
  statistics_.bytes_live += byte_length;
  statistics_.bytes_peak =
      std::max(statistics_.bytes_peak, statistics_.bytes_live);
  ++statistics_.allocation_count;
  return OkStatus();
}

void CudaAllocator::Unreserve(uint64_t byte_length) {
  std::lock_guard<std::mutex> lock(mutex_);
  statistics_.bytes_live -= byte_length;
  --statistics_.allocation_count;
}

Result<RefPtr<Buffer>>
CudaAllocator::AllocateBuffer(MemoryTypeBitfield memory_type,
                              BufferUsageBitfield usage, uint64_t byte_length) {
  if (memory_type & STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE)
    return AllocateHostMemory(memory_type, usage, byte_length);
  return AllocateDeviceMemory(memory_type, usage, byte_length);
}

Result<RefPtr<Buffer>>
CudaAllocator::AllocateDeviceMemory(MemoryTypeBitfield memory_type,
                                    BufferUsageBitfield usage,
                                    uint64_t byte_length) {
  // CUDA refuses empty allocations; an empty buffer still gets an address.
  std::optional<size_t> size =
      CheckedCast<size_t>(std::max<uint64_t>(byte_length, 1));
  if (!size)
    return ResourceExhaustedError("allocation of ", byte_length,
                                  " bytes exceeds the address space");
  STRATA_RETURN_IF_ERROR(Reserve(byte_length));
  const CudaSymbols &symbols = context_->symbols();
  CUdeviceptr address = 0;
  // Stream-ordered: every use of the memory is later work on the same
  // stream, so no synchronization is needed before it is used.
  Status status = context_->MakeCurrent();
  if (status.ok())
    status = context_->pool()
                 ? STRATA_CUDA_CALL(symbols, cuMemAllocAsync, &address, *size,
                                    context_->stream())
                 : STRATA_CUDA_CALL(symbols, cuMemAlloc_v2, &address, *size);
  if (!status.ok()) {
    Unreserve(byte_length);
    return status.Annotate("allocating ", byte_length,
                           " bytes of device memory in allocator '", name_,
                           "'");
  }
  memory_type = (memory_type | STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL) &
                ~(STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE |
                  STRATA_HAL_MEMORY_TYPE_HOST_COHERENT |
                  STRATA_HAL_MEMORY_TYPE_HOST_CACHED);
  return RefPtr<Buffer>::Adopt(
      new CudaBuffer(RefPtr<CudaAllocator>::Retain(this), memory_type, usage,
                     byte_length, nullptr, address, false));
}

Result<RefPtr<Buffer>>
CudaAllocator::AllocateHostMemory(MemoryTypeBitfield memory_type,
                                  BufferUsageBitfield usage,
                                  uint64_t byte_length) {
  std::optional<size_t> size =
      CheckedCast<size_t>(std::max<uint64_t>(byte_length, 1));
  if (!size)
    return ResourceExhaustedError("allocation of ", byte_length,
                                  " bytes exceeds the address space");
  STRATA_RETURN_IF_ERROR(Reserve(byte_length));
  const CudaSymbols &symbols = context_->symbols();
  void *host = nullptr;
  CUdeviceptr address = 0;
  Status status = context_->MakeCurrent();
  if (status.ok())
    status =
        STRATA_CUDA_CALL(symbols, cuMemHostAlloc, &host, *size,
                         CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
  if (status.ok()) {
    status = STRATA_CUDA_CALL(symbols, cuMemHostGetDevicePointer_v2, &address,
                              host, 0u);
    if (!status.ok())
      symbols.cuMemFreeHost(host);
  }
  if (!status.ok()) {
    Unreserve(byte_length);
    return status.Annotate("allocating ", byte_length,
                           " bytes of pinned host memory in allocator '", name_,
                           "'");
  }
  // Pinned memory is coherent: the device reads and writes it in place.
  memory_type |= STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE |
                 STRATA_HAL_MEMORY_TYPE_HOST_COHERENT;
  return RefPtr<Buffer>::Adopt(
      new CudaBuffer(RefPtr<CudaAllocator>::Retain(this), memory_type, usage,
                     byte_length, static_cast<uint8_t *>(host), address, true));
}

Result<RefPtr<Buffer>> CudaAllocator::ImportHostBytes(
    MemoryTypeBitfield memory_type, BufferUsageBitfield usage,
    std::span<const uint8_t> bytes, std::function<void()> release) {
  STRATA_ASSIGN_OR_RETURN(
      RefPtr<Buffer> buffer,
      AllocateDeviceMemory(memory_type & ~STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
                           usage, bytes.size()));
  if (!bytes.empty()) {
    const CudaSymbols &symbols = context_->symbols();
    auto *cuda_buffer = static_cast<CudaBuffer *>(buffer.get());
    STRATA_RETURN_IF_ERROR(STRATA_CUDA_CALL(
        symbols, cuMemcpyHtoDAsync_v2, cuda_buffer->device_address(),
        bytes.data(), bytes.size(), context_->stream()));
    // The bytes are the caller's: the copy must be done before release.
    STRATA_RETURN_IF_ERROR(context_->Synchronize());
  }
  if (release)
    release();
  return buffer;
}

void CudaAllocator::FreeBuffer(CudaBuffer &buffer) {
  const CudaSymbols &symbols = context_->symbols();
  // A failure here has nowhere to go; the memory is lost at worst.
  if (context_->MakeCurrent().ok()) {
    if (buffer.is_host_memory())
      symbols.cuMemFreeHost(buffer.host_data());
    else if (context_->pool())
      // Ordered after all work queued so far, the last that could use it.
      symbols.cuMemFreeAsync(buffer.device_address(), context_->stream());
    else
      symbols.cuMemFree_v2(buffer.device_address());
  }
  std::lock_guard<std::mutex> lock(mutex_);
  statistics_.bytes_live -= buffer.byte_length();
  ++statistics_.free_count;
}

AllocatorStatistics CudaAllocator::statistics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return statistics_;
}

uint64_t CudaAllocator::memory_limit() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return memory_limit_;
}

Status CudaAllocator::SetMemoryLimit(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  memory_limit_ = bytes;
  return OkStatus();
}

Status CudaAllocator::Trim() {
  if (!context_->pool())
    return OkStatus();
  STRATA_RETURN_IF_ERROR(context_->MakeCurrent());
  STRATA_RETURN_IF_ERROR(context_->Synchronize());
  return STRATA_CUDA_CALL(context_->symbols(), cuMemPoolTrimTo,
                          context_->pool(), size_t{0});
}

} // namespace strata::hal::cuda
