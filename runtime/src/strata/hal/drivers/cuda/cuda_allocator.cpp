#include "strata/hal/drivers/cuda/cuda_allocator.h"

#include <algorithm>

#include "strata/base/checked_math.h"

namespace strata::hal::cuda {

const char CudaBuffer::kTag = 0;

CudaBuffer *CudaBuffer::FromBuffer(Buffer *buffer) {
  if (!buffer)
    return nullptr;
  Buffer *allocation = buffer->allocated_buffer();
  return allocation->implementation_tag() == &kTag
             ? static_cast<CudaBuffer *>(allocation)
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
CudaAllocator::Create(std::string name, std::shared_ptr<CudaContext> context,
                      CudaAllocatorOptions options) {
  return RefPtr<CudaAllocator>::Adopt(
      new CudaAllocator(std::move(name), std::move(context), options));
}

CudaAllocator::CudaAllocator(std::string name,
                             std::shared_ptr<CudaContext> context,
                             CudaAllocatorOptions options)
    : name_(std::move(name)), context_(std::move(context)),
      host_block_cache_bytes_(options.host_block_cache_bytes) {}

CudaAllocator::~CudaAllocator() { FreeCachedHostBlocks(); }

void CudaAllocator::FreeHostBlocks(std::span<const CachedHostBlock> blocks) {
  if (blocks.empty())
    return;
  // A failure here has nowhere to go; the memory is lost at worst.
  if (!context_->MakeCurrent().ok())
    return;
  const CudaSymbols &symbols = context_->symbols();
  for (const CachedHostBlock &block : blocks)
    symbols.cuMemFreeHost(block.host);
}

void CudaAllocator::EvictCachedHostBlocksLocked(uint64_t keep_bytes,
                                                size_t keep_count,
                                                EvictedHostBlocks &evicted) {
  size_t drop = 0;
  while (drop < cached_host_blocks_.size() &&
         (statistics_.bytes_cached > keep_bytes ||
          cached_host_blocks_.size() - drop > keep_count)) {
    evicted.push_back(cached_host_blocks_[drop]);
    statistics_.bytes_cached -= cached_host_blocks_[drop].size;
    ++drop;
  }
  cached_host_blocks_.erase(cached_host_blocks_.begin(),
                            cached_host_blocks_.begin() + drop);
}

bool CudaAllocator::FreeCachedHostBlocks() {
  EvictedHostBlocks evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    EvictCachedHostBlocksLocked(0, 0, evicted);
  }
  FreeHostBlocks(evicted.span());
  return !evicted.empty();
}

Status CudaAllocator::Reserve(uint64_t byte_length, uint64_t host_block_size,
                              CachedHostBlock *reused) {
  EvictedHostBlocks evicted;
  Status status = [&]() -> Status {
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t live = statistics_.bytes_live;
    if (memory_limit_ &&
        (live > memory_limit_ || byte_length > memory_limit_ - live))
      return ResourceExhaustedError(
          "allocation of ", byte_length, " bytes would bring allocator '",
          name_, "' to ", CheckedAdd(live, byte_length).value_or(~uint64_t{0}),
          " live bytes, over its memory limit of ", memory_limit_, " bytes (",
          live, " bytes already live)");
    statistics_.bytes_live += byte_length;
    statistics_.bytes_peak =
        std::max(statistics_.bytes_peak, statistics_.bytes_live);
    ++statistics_.allocation_count;
    if (host_block_size) {
      // The smallest cached block that fits without wasting more than a
      // quarter of it; the most recent among equals.
      size_t best = cached_host_blocks_.size();
      for (size_t i = cached_host_blocks_.size(); i-- > 0;) {
        uint64_t size = cached_host_blocks_[i].size;
        if (size < host_block_size || size - host_block_size > size / 4)
          continue;
        if (best == cached_host_blocks_.size() ||
            size < cached_host_blocks_[best].size)
          best = i;
      }
      if (best != cached_host_blocks_.size()) {
        *reused = cached_host_blocks_[best];
        statistics_.bytes_cached -= reused->size;
        cached_host_blocks_.erase(cached_host_blocks_.begin() + best);
        return OkStatus();
      }
    }
    // Cached blocks count against the limit too: the oldest go first.
    if (memory_limit_) {
      uint64_t room = memory_limit_ - statistics_.bytes_live;
      if (statistics_.bytes_cached > room)
        EvictCachedHostBlocksLocked(room, kMaxCachedHostBlocks, evicted);
    }
    return OkStatus();
  }();
  FreeHostBlocks(evicted.span());
  return status;
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
                     byte_length, nullptr, address, 0));
}

Result<RefPtr<Buffer>>
CudaAllocator::AllocateHostMemory(MemoryTypeBitfield memory_type,
                                  BufferUsageBitfield usage,
                                  uint64_t byte_length) {
  // Blocks are sized in granules, so that requests of nearby sizes can
  // share cached ones; an empty buffer still gets a block (and an address).
  std::optional<uint64_t> padded =
      CheckedAdd(std::max<uint64_t>(byte_length, 1), kHostBlockGranule - 1);
  std::optional<size_t> size =
      padded
          ? CheckedCast<size_t>(*padded / kHostBlockGranule * kHostBlockGranule)
          : std::nullopt;
  if (!size)
    return ResourceExhaustedError("allocation of ", byte_length,
                                  " bytes exceeds the address space");
  CachedHostBlock block = {nullptr, 0, *size};
  STRATA_RETURN_IF_ERROR(Reserve(byte_length, *size, &block));
  if (!block.host) {
    const CudaSymbols &symbols = context_->symbols();
    auto allocate = [&]() -> Status {
      STRATA_RETURN_IF_ERROR(context_->MakeCurrent());
      STRATA_RETURN_IF_ERROR(STRATA_CUDA_CALL(
          symbols, cuMemHostAlloc, &block.host, *size,
          CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP));
      Status status = STRATA_CUDA_CALL(symbols, cuMemHostGetDevicePointer_v2,
                                       &block.address, block.host, 0u);
      if (!status.ok()) {
        symbols.cuMemFreeHost(block.host);
        block.host = nullptr;
      }
      return status;
    };
    Status status = allocate();
    // Out of pinned memory: the cached blocks (of other sizes) go back to
    // the system, then one more try.
    if (status.code() == StatusCode::kResourceExhausted &&
        FreeCachedHostBlocks())
      status = allocate();
    if (!status.ok()) {
      Unreserve(byte_length);
      return status.Annotate("allocating ", byte_length,
                             " bytes of pinned host memory in allocator '",
                             name_, "'");
    }
  }
  // Pinned memory is coherent: the device reads and writes it in place.
  memory_type |= STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE |
                 STRATA_HAL_MEMORY_TYPE_HOST_COHERENT;
  return RefPtr<Buffer>::Adopt(new CudaBuffer(
      RefPtr<CudaAllocator>::Retain(this), memory_type, usage, byte_length,
      static_cast<uint8_t *>(block.host), block.address, block.size));
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
  if (buffer.is_host_memory()) {
    CachedHostBlock block = {buffer.host_data(), buffer.device_address(),
                             buffer.host_block_size_};
    EvictedHostBlocks evicted;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      statistics_.bytes_live -= buffer.byte_length();
      ++statistics_.free_count;
      // Room within the cache's budget and the memory limit, made by
      // dropping the oldest blocks.
      uint64_t live = statistics_.bytes_live;
      uint64_t room = host_block_cache_bytes_;
      if (memory_limit_)
        room = live > memory_limit_ ? 0 : std::min(room, memory_limit_ - live);
      if (block.size <= room) {
        EvictCachedHostBlocksLocked(room - block.size, kMaxCachedHostBlocks - 1,
                                    evicted);
        cached_host_blocks_.push_back(block);
        statistics_.bytes_cached += block.size;
        block.host = nullptr;
      }
    }
    if (block.host)
      evicted.push_back(block);
    FreeHostBlocks(evicted.span());
    return;
  }
  const CudaSymbols &symbols = context_->symbols();
  // A failure here has nowhere to go; the memory is lost at worst.
  if (context_->MakeCurrent().ok()) {
    if (context_->pool())
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
  EvictedHostBlocks evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    memory_limit_ = bytes;
    // Cached blocks over a lowered limit go at once.
    uint64_t live = statistics_.bytes_live;
    uint64_t room = live > bytes ? 0 : bytes - live;
    if (bytes && statistics_.bytes_cached > room)
      EvictCachedHostBlocksLocked(room, kMaxCachedHostBlocks, evicted);
  }
  FreeHostBlocks(evicted.span());
  return OkStatus();
}

Status CudaAllocator::Trim() {
  FreeCachedHostBlocks();
  if (!context_->pool())
    return OkStatus();
  STRATA_RETURN_IF_ERROR(context_->MakeCurrent());
  STRATA_RETURN_IF_ERROR(context_->Synchronize());
  return STRATA_CUDA_CALL(context_->symbols(), cuMemPoolTrimTo,
                          context_->pool(), size_t{0});
}

} // namespace strata::hal::cuda
