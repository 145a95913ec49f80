// ObjectPool<T>: objects whose last reference went, kept for reuse so that
// a steady stream of calls creates its per-call objects (command buffers,
// fences, semaphores, buffer views) without allocating. T overrides
// RefObject::OnLastReference to reset itself and Park() here; its Create
// asks Take() first and reinitializes what it gets.
//
// Each pooled type has one process-wide pool that is never destroyed (a
// parked object must outlive any static whose destructor releases the
// last reference to another), bounded by its capacity; beyond it objects
// are deleted. AddressSanitizer builds keep nothing, so a use after the
// last release is still caught there. Thread-safe.
#ifndef STRATA_BASE_OBJECT_POOL_H_
#define STRATA_BASE_OBJECT_POOL_H_

#include <atomic>
#include <cstddef>
#include <mutex>
#include <thread>
#include <vector>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace strata {

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STRATA_OBJECT_POOL_DISABLED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define STRATA_OBJECT_POOL_DISABLED 1
#endif

// A lock for a few instructions' worth of work (a vector push or pop):
// uncontended it is one atomic exchange and a store, where a std::mutex
// is two calls into the C library; every call takes and parks several
// pooled objects (simple_mul 2.13 -> 2.05 us). Waiters spin, and yield
// their core after a while in case the holder was preempted.
class PoolLock {
public:
  void lock() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
        if (spins >= 64) {
          std::this_thread::yield();
          continue;
        }
#if defined(__x86_64__) || defined(__i386__)
        _mm_pause();
#endif
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

private:
  std::atomic<bool> locked_{false};
};

template <typename T> class ObjectPool {
public:
  explicit ObjectPool(size_t capacity) {
#if defined(STRATA_OBJECT_POOL_DISABLED)
    capacity = 0;
#endif
    capacity_ = capacity;
    parked_.reserve(capacity);
  }
  ObjectPool(const ObjectPool &) = delete;
  ObjectPool &operator=(const ObjectPool &) = delete;

  // A parked object (the caller revives and reinitializes it), or null.
  T *Take() {
    std::lock_guard<PoolLock> lock(mutex_);
    if (parked_.empty())
      return nullptr;
    T *object = parked_.back();
    parked_.pop_back();
    return object;
  }

  // Keeps `object` (reset, no references left) for a later Take, or
  // deletes it when the pool is full.
  void Park(T *object) {
    {
      std::lock_guard<PoolLock> lock(mutex_);
      if (parked_.size() < capacity_) {
        parked_.push_back(object);
        return;
      }
    }
    delete object;
  }

private:
  PoolLock mutex_;
  size_t capacity_;
  std::vector<T *> parked_;
};

} // namespace strata

#endif // STRATA_BASE_OBJECT_POOL_H_
