#include "strata/tooling/heap_counter.h"

#include <atomic>
#include <cstddef>
#include <cstdlib>
#include <new>

namespace {

std::atomic<uint64_t> allocation_count{0};

void *CountedAllocate(std::size_t size, std::size_t alignment) {
  allocation_count.fetch_add(1, std::memory_order_relaxed);
  void *pointer;
  if (alignment <= alignof(std::max_align_t)) {
    pointer = std::malloc(size ? size : 1);
  } else {
    // aligned_alloc wants a multiple of the alignment.
    std::size_t rounded = (size + alignment - 1) / alignment * alignment;
    pointer = std::aligned_alloc(alignment, rounded ? rounded : alignment);
  }
  if (!pointer) {
#if __cpp_exceptions
    throw std::bad_alloc();
#else
    // Built without exceptions (STRATA_SIZE_OPTIMIZED): out of memory ends
    // the process, as operator new would there.
    std::abort();
#endif
  }
  return pointer;
}

} // namespace

namespace strata::tooling {
uint64_t HeapAllocationCount() {
  return allocation_count.load(std::memory_order_relaxed);
}
} // namespace strata::tooling

void *operator new(std::size_t size) {
  return CountedAllocate(size, alignof(std::max_align_t));
}
void *operator new[](std::size_t size) {
  return CountedAllocate(size, alignof(std::max_align_t));
}
void *operator new(std::size_t size, std::align_val_t alignment) {
  return CountedAllocate(size, std::size_t(alignment));
}
void *operator new[](std::size_t size, std::align_val_t alignment) {
  return CountedAllocate(size, std::size_t(alignment));
}
void operator delete(void *pointer) noexcept { std::free(pointer); }
void operator delete[](void *pointer) noexcept { std::free(pointer); }
void operator delete(void *pointer, std::size_t) noexcept {
  std::free(pointer);
}
void operator delete[](void *pointer, std::size_t) noexcept {
  std::free(pointer);
}
void operator delete(void *pointer, std::align_val_t) noexcept {
  std::free(pointer);
}
void operator delete[](void *pointer, std::align_val_t) noexcept {
  std::free(pointer);
}
void operator delete(void *pointer, std::size_t, std::align_val_t) noexcept {
  std::free(pointer);
}
void operator delete[](void *pointer, std::size_t, std::align_val_t) noexcept {
  std::free(pointer);
}
