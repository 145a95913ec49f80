#include "strata/hal/allocator.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#include "strata/base/checked_math.h"
#include "strata/base/object_pool.h"

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
  ~HeapBuffer() override { FreeStorage(); }

  // A buffer object for `data`: a parked one when there is one.
  static RefPtr<Buffer> Create(RefPtr<HeapAllocator> allocator,
                               MemoryTypeBitfield memory_type,
                               BufferUsageBitfield usage, uint64_t byte_length,
                               uint8_t *data) {
    if (HeapBuffer *buffer = Pool().Take()) {
      buffer->ReviveFromPool();
      buffer->Reinitialize(memory_type, usage, byte_length, data);
      buffer->allocator_ = std::move(allocator);
      return RefPtr<Buffer>::Adopt(buffer);
    }
    return RefPtr<Buffer>::Adopt(new HeapBuffer(
        std::move(allocator), memory_type, usage, byte_length, data));
  }

private:
  friend class ObjectPool<HeapBuffer>;

  // Results of steady calls come and go one or a few at a time.
  static ObjectPool<HeapBuffer> &Pool() {
    static auto *pool = new ObjectPool<HeapBuffer>(64);
    return *pool;
  }

  // The memory goes back at once; only the object is kept.
  void OnLastReference() const override {
    auto *self = const_cast<HeapBuffer *>(this);
    self->FreeStorage();
    Pool().Park(self);
  }

  void FreeStorage() {
    if (!allocator_)
      return;
    std::free(host_data());
    allocator_->OnFree(byte_length(), /*counts_as_free=*/true);
    allocator_.reset();
  }

  RefPtr<HeapAllocator> allocator_;
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

HeapAllocator::HeapAllocator(std::string name, HeapAllocatorOptions options)
    : name_(std::move(name)),
      max_allocation_size_option_(options.max_allocation_size),
      memory_limit_(options.memory_limit ? options.memory_limit
                                         : DefaultMemoryLimit()) {}

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

Status HeapAllocator::Reserve(uint64_t byte_length) {
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
        "allocation of ", byte_length, " bytes would bring allocator '", name_,
        "' to ", CheckedAdd(live, byte_length).value_or(~uint64_t{0}),
        " live bytes, over its memory limit of ", memory_limit_, " bytes (",
        live, " bytes already live)");
  statistics_.bytes_live += byte_length;
  return OkStatus();
}

Result<RefPtr<Buffer>>
HeapAllocator::AllocateBuffer(MemoryTypeBitfield memory_type,
                              BufferUsageBitfield usage, uint64_t byte_length) {
  // aligned_alloc needs a size that is a multiple of the alignment; a zero
  // request still gets a real block so host_data() is never null.
  std::optional<uint64_t> padded = CheckedAdd(byte_length, kAlignment - 1);
  std::optional<size_t> size =
      padded ? CheckedCast<size_t>(*padded / kAlignment * kAlignment)
             : std::nullopt;
  if (!size)
    return ResourceExhaustedError("allocation of ", byte_length,
                                  " bytes in allocator '", name_,
                                  "' exceeds the address space");
  STRATA_RETURN_IF_ERROR(Reserve(byte_length));
  void *data = std::aligned_alloc(kAlignment, *size ? *size : kAlignment);
  if (!data) {
    OnFree(byte_length, /*counts_as_free=*/false);
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
                            usage, byte_length, static_cast<uint8_t *>(data));
}

AllocatorStatistics HeapAllocator::statistics() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return statistics_;
}

void HeapAllocator::OnFree(uint64_t byte_length, bool counts_as_free) {
  std::lock_guard<std::mutex> lock(mutex_);
  statistics_.bytes_live -= byte_length;
  if (counts_as_free)
    ++statistics_.free_count;
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
