#include "strata/hal/allocator.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "strata/base/checked_math.h"
#include "strata/base/object_pool.h"
#include "strata/base/scratch_array.h"

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

Result<RefPtr<Buffer>> Allocator::ImportHostBytes(
    MemoryTypeBitfield memory_type, BufferUsageBitfield usage,
    std::span<const uint8_t> bytes, std::function<void()> release) {
  return Buffer::WrapHostMemory(
      const_cast<uint8_t *>(bytes.data()), bytes.size(),
      memory_type | STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE, usage,
      std::move(release));
}

// Owns one aligned heap block of `block_size` bytes (at least its byte
// length) and gives it back to its allocator on death. Retains the
// allocator so statistics outlive no buffer.
class HeapBuffer final : public Buffer {
public:
  HeapBuffer(RefPtr<HeapAllocator> allocator, MemoryTypeBitfield memory_type,
             BufferUsageBitfield usage, uint64_t byte_length, uint8_t *data,
             uint64_t block_size)
      : Buffer(memory_type, usage, byte_length, data),
        allocator_(std::move(allocator)), block_size_(block_size) {}
  ~HeapBuffer() override { ReleaseStorage(); }

  // A buffer object for `data`: a parked one when there is one.
  static RefPtr<Buffer> Create(RefPtr<HeapAllocator> allocator,
                               MemoryTypeBitfield memory_type,
                               BufferUsageBitfield usage, uint64_t byte_length,
                               uint8_t *data, uint64_t block_size) {
    if (HeapBuffer *buffer = Pool().Take()) {
      buffer->ReviveFromPool();
      buffer->Reinitialize(memory_type, usage, byte_length, data);
      buffer->allocator_ = std::move(allocator);
      buffer->block_size_ = block_size;
      return RefPtr<Buffer>::Adopt(buffer);
    }
    return RefPtr<Buffer>::Adopt(new HeapBuffer(std::move(allocator),
                                                memory_type, usage, byte_length,
                                                data, block_size));
  }

private:
  friend class ObjectPool<HeapBuffer>;

  // Results of steady calls come and go one or a few at a time.
  static ObjectPool<HeapBuffer> &Pool() {
    static auto *pool = new ObjectPool<HeapBuffer>(64);
    return *pool;
  }

  // The block goes back to the allocator at once; only the object is kept.
  void OnLastReference() const override {
    auto *self = const_cast<HeapBuffer *>(this);
    self->ReleaseStorage();
    Pool().Park(self);
  }

  void ReleaseStorage() {
    if (!allocator_)
      return;
    allocator_->ReleaseBlock(host_data(), block_size_, byte_length());
    allocator_.reset();
  }

  RefPtr<HeapAllocator> allocator_;
  uint64_t block_size_;
};

Status Allocator::SetMemoryLimit(uint64_t bytes) {
  return UnimplementedError("allocator '", name(),
                            "' does not support a memory limit");
}

uint64_t DefaultMemoryLimit() {
  long pages = sysconf(_SC_PHYS_PAGES);
  long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0)
    return uint64_t{1} << 40;
  return CheckedMul(uint64_t(pages), uint64_t(page_size))
      .value_or(~uint64_t{0});
}

RefPtr<HeapAllocator> HeapAllocator::Create(std::string name,
                                            HeapAllocatorOptions options) {
  return RefPtr<HeapAllocator>::Adopt(
      new HeapAllocator(std::move(name), options));
}

#if defined(STRATA_OBJECT_POOL_DISABLED)
// Under AddressSanitizer every freed block goes back at once, so that a use
// after free is reported.
static constexpr bool kBlockCacheEnabled = false;
#else
static constexpr bool kBlockCacheEnabled = true;
#endif

HeapAllocator::HeapAllocator(std::string name, HeapAllocatorOptions options)
    : name_(std::move(name)),
      max_allocation_size_option_(options.max_allocation_size),
      block_cache_bytes_(kBlockCacheEnabled ? options.block_cache_bytes : 0),
      memory_limit_(options.memory_limit ? options.memory_limit
                                         : DefaultMemoryLimit()) {
  cached_blocks_.reserve(kMaxCachedBlocks);
}

HeapAllocator::~HeapAllocator() { FreeBlocks(cached_blocks_); }

void HeapAllocator::FreeBlocks(std::span<const CachedBlock> blocks) {
  for (const CachedBlock &block : blocks)
    std::free(block.data);
}

void HeapAllocator::EvictCachedBlocksLocked(uint64_t keep_bytes,
                                            size_t keep_count,
                                            EvictedBlocks &evicted) {
  size_t drop = 0;
  while (drop < cached_blocks_.size() &&
         (statistics_.bytes_cached > keep_bytes ||
          cached_blocks_.size() - drop > keep_count)) {
    evicted.push_back(cached_blocks_[drop]);
    statistics_.bytes_cached -= cached_blocks_[drop].size;
    ++drop;
  }
  cached_blocks_.erase(cached_blocks_.begin(), cached_blocks_.begin() + drop);
}

Status HeapAllocator::Trim() {
  EvictedBlocks evicted;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    EvictCachedBlocksLocked(0, 0, evicted);
  }
  FreeBlocks(evicted.span());
  return OkStatus();
}

uint64_t HeapAllocator::memory_limit() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return memory_limit_;
}

Status HeapAllocator::SetMemoryLimit(uint64_t bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  memory_limit_ = bytes ? bytes : DefaultMemoryLimit();
  return OkStatus();
}

uint64_t HeapAllocator::max_allocation_size() const {
  uint64_t limit = memory_limit();
  return max_allocation_size_option_
             ? std::min(max_allocation_size_option_, limit)
             : limit;
}

Status HeapAllocator::Reserve(uint64_t byte_length, uint64_t block_size,
                              void **reused) {
  EvictedBlocks evicted;
  Status status = [&]() -> Status {
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t single_limit =
        max_allocation_size_option_
            ? std::min(max_allocation_size_option_, memory_limit_)
            : memory_limit_;
    if (byte_length > single_limit)
      return ResourceExhaustedError("allocation of ", byte_length,
                                    " bytes exceeds the limit of allocator '",
                                    name_, "' (", single_limit, " bytes)");
    uint64_t live = statistics_.bytes_live;
    if (live > memory_limit_ || byte_length > memory_limit_ - live)
      return ResourceExhaustedError(
          "allocation of ", byte_length, " bytes would bring allocator '",
          name_, "' to ", CheckedAdd(live, byte_length).value_or(~uint64_t{0}),
          " live bytes, over its memory limit of ", memory_limit_, " bytes (",
          live, " bytes already live)");
    statistics_.bytes_live += byte_length;
    // The smallest cached block that fits without wasting more than a
    // quarter of it; the most recent among equals (likelier in cache).
    size_t best = cached_blocks_.size();
    for (size_t i = cached_blocks_.size(); i-- > 0;) {
      uint64_t size = cached_blocks_[i].size;
      if (size < block_size || size - block_size > size / 4)
        continue;
      if (best == cached_blocks_.size() || size < cached_blocks_[best].size)
        best = i;
    }
    if (best != cached_blocks_.size()) {
      *reused = cached_blocks_[best].data;
      statistics_.bytes_cached -= cached_blocks_[best].size;
      cached_blocks_.erase(cached_blocks_.begin() + best);
      return OkStatus();
    }
    // Cached blocks count against the limit too: the oldest go first.
    uint64_t room = memory_limit_ - statistics_.bytes_live;
    if (statistics_.bytes_cached > room)
      EvictCachedBlocksLocked(room, kMaxCachedBlocks, evicted);
    return OkStatus();
  }();
  FreeBlocks(evicted.span());
  return status;
}

Result<RefPtr<Buffer>>
HeapAllocator::AllocateBuffer(MemoryTypeBitfield memory_type,
                              BufferUsageBitfield usage, uint64_t byte_length) {
  // aligned_alloc needs a size that is a multiple of the alignment; a zero
  // request still gets a real block so host_data() is never null.
  // Blocks the cache may keep are sized in granules, so that requests of
  // nearby sizes can share them.
  uint64_t granule =
      byte_length >= kMinCachedBlockSize ? kCachedBlockGranule : kAlignment;
  std::optional<uint64_t> padded = CheckedAdd(byte_length, granule - 1);
  std::optional<size_t> size =
      padded ? CheckedCast<size_t>(*padded / granule * granule) : std::nullopt;
  if (!size)
    return ResourceExhaustedError("allocation of ", byte_length,
                                  " bytes in allocator '", name_,
                                  "' exceeds the address space");
  if (*size == 0)
    *size = kAlignment;
  void *data = nullptr;
  STRATA_RETURN_IF_ERROR(Reserve(byte_length, *size, &data));
  if (!data)
    data = std::aligned_alloc(kAlignment, *size);
  if (!data) {
    Unreserve(byte_length);
    return ResourceExhaustedError("the system refused ", byte_length,
                                  " bytes to allocator '", name_,
                                  "' (out of host memory; its memory limit is ",
                                  memory_limit(), " bytes)");
  }
  // Host memory is always visible to and coherent with the host.
  memory_type |= STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE |
                 STRATA_HAL_MEMORY_TYPE_HOST_COHERENT;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    statistics_.bytes_peak =
        std::max(statistics_.bytes_peak, statistics_.bytes_live);
    ++statistics_.allocation_count;
  }
  return HeapBuffer::Create(RefPtr<HeapAllocator>::Retain(this), memory_type,
                            usage, byte_length, static_cast<uint8_t *>(data),
                            *size);
}

AllocatorStatistics HeapAllocator::statistics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return statistics_;
}

void HeapAllocator::ReleaseBlock(void *data, uint64_t block_size,
                                 uint64_t byte_length) {
  EvictedBlocks evicted;
  bool cached = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    statistics_.bytes_live -= byte_length;
    ++statistics_.free_count;
    uint64_t held = statistics_.bytes_live;
    if (block_size >= kMinCachedBlockSize && block_size <= block_cache_bytes_ &&
        held <= memory_limit_ && block_size <= memory_limit_ - held) {
      // Room for it within the cache's bytes and count and the memory
      // limit, making it by dropping the oldest blocks.
      uint64_t room = std::min(block_cache_bytes_, memory_limit_ - held);
      EvictCachedBlocksLocked(room - block_size, kMaxCachedBlocks - 1, evicted);
      cached_blocks_.push_back({data, block_size});
      statistics_.bytes_cached += block_size;
      cached = true;
    }
  }
  if (!cached)
    std::free(data);
  FreeBlocks(evicted.span());
}

void HeapAllocator::Unreserve(uint64_t byte_length) {
  std::lock_guard<std::mutex> lock(mutex_);
  statistics_.bytes_live -= byte_length;
}

} // namespace strata::hal

// Under a sanitizer, memory the system refuses must come back as null (and
// so as RESOURCE_EXHAUSTED above) as it does without one, instead of the
// sanitizer's allocator aborting the process. Options in the environment
// (ASAN_OPTIONS, TSAN_OPTIONS) still take precedence.
#if defined(__SANITIZE_ADDRESS__)
#define STRATA_HAL_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_HAL_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_THREAD__)
#define STRATA_HAL_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STRATA_HAL_UNDER_TSAN 1
#endif
#endif
#ifdef STRATA_HAL_UNDER_ASAN
extern "C" const char *__asan_default_options() {
  return "allocator_may_return_null=1";
}
#endif
#ifdef STRATA_HAL_UNDER_TSAN
extern "C" const char *__tsan_default_options() {
  return "allocator_may_return_null=1";
}
#endif
