// Timeline semaphores and fences. A semaphore holds a monotonically
// increasing 64-bit value; waiters block until it reaches theirs. A failed
// semaphore wakes every waiter with the failure. A fence is a set of
// (semaphore, value) timepoints treated as one: it is reached when all are.
#ifndef STRATA_HAL_SEMAPHORE_H_
#define STRATA_HAL_SEMAPHORE_H_

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <span>
#include <vector>

#include "strata/base/abort_signal.h"
#include "strata/base/object_pool.h"
#include "strata/base/ref_ptr.h"
#include "strata/base/scratch_array.h"
#include "strata/base/status.h"
#include "strata/hal/deadline.h"

namespace strata::hal {

// Lets one thread wait on several semaphores at once: every semaphore it is
// registered with calls Notify() after each signal or failure.
using SemaphoreNotifier = strata::WaitNotifier;

class Semaphore : public RefObject {
public:
  static const RefTypeDescriptor kRefType;

  // Registers/unregisters a notifier (borrowed; it must be removed before
  // it dies). Notify() may run on the signalling thread.
  virtual void AddNotifier(SemaphoreNotifier *notifier) = 0;
  virtual void RemoveNotifier(SemaphoreNotifier *notifier) = 0;

  // The current value, or the failure status once failed.
  virtual Result<uint64_t> Query() = 0;
  // Moves the value forward; `value` must exceed the current one
  // (FAILED_PRECONDITION otherwise). Signalling a failed semaphore returns
  // its failure.
  virtual Status Signal(uint64_t value) = 0;
  // Fails the semaphore: every current and future waiter gets `status`.
  // The first failure wins. An OK status is turned into INTERNAL.
  virtual void Fail(Status status) = 0;
  // Blocks until value >= `value` (OK), the semaphore fails (its failure
  // status) or the deadline passes (DEADLINE_EXCEEDED).
  virtual Status Wait(uint64_t value, Deadline deadline) = 0;

protected:
  Semaphore() : RefObject(&kRefType) {}
};

// A semaphore living in host memory (mutex + condition variable); used by
// every local driver. Thread-safe.
class HostSemaphore final : public Semaphore {
public:
  static RefPtr<HostSemaphore> Create(uint64_t initial_value);

  Result<uint64_t> Query() override;
  Status Signal(uint64_t value) override;
  void Fail(Status status) override;
  Status Wait(uint64_t value, Deadline deadline) override;
  void AddNotifier(SemaphoreNotifier *notifier) override;
  void RemoveNotifier(SemaphoreNotifier *notifier) override;

private:
  friend class ObjectPool<HostSemaphore>;
  explicit HostSemaphore(uint64_t initial_value) : value_(initial_value) {}
  // Reset and parked in the semaphore pool for the next Create.
  void OnLastReference() const override;
  // Wakes waiters and notifiers; called with mutex_ held so a notifier
  // cannot be removed (and destroyed) mid-notification.
  void NotifyLocked();

  std::mutex mutex_;
  std::condition_variable condition_;
  uint64_t value_;
  Status failure_;
  std::vector<SemaphoreNotifier *> notifiers_;
};

struct SemaphoreTimepoint {
  RefPtr<Semaphore> semaphore;
  uint64_t value = 0;
};

enum class WaitMode {
  kAll, // Every timepoint reached.
  kAny, // At least one reached.
};

// Waits on several timepoints under one deadline. Returns OK when the mode
// is satisfied, the failure status as soon as any semaphore fails, or
// DEADLINE_EXCEEDED. An empty list is satisfied at once. With
// `abort_signal` (borrowed, may be null) the wait also ends, with the
// signal's CANCELLED or DEADLINE_EXCEEDED, when the signal fires first.
Status WaitSemaphores(WaitMode mode,
                      std::span<const SemaphoreTimepoint> timepoints,
                      Deadline deadline,
                      const AbortSignal *abort_signal = nullptr);

class Fence final : public RefObject {
public:
  static const RefTypeDescriptor kRefType;

  // An empty fence (always reached).
  static RefPtr<Fence> Create();
  // A fence with one timepoint.
  static RefPtr<Fence> CreateAt(RefPtr<Semaphore> semaphore, uint64_t value);
  // The union of the timepoints of `fences` (null entries are skipped); a
  // semaphore present in several keeps the highest value.
  static RefPtr<Fence> Join(std::span<Fence *const> fences);

  // Adds a timepoint (keeps the max value when the semaphore is present).
  void Insert(RefPtr<Semaphore> semaphore, uint64_t value);

  // A copy of the timepoints.
  std::vector<SemaphoreTimepoint> timepoints() const;
  size_t timepoint_count() const;
  // Calls `visit(std::span<const SemaphoreTimepoint>)` on a snapshot of
  // the timepoints, taken under the lock and visited outside it (signals
  // run callbacks that may come back to this fence); no allocation for
  // fences of up to 4 timepoints. Returns what `visit` returns.
  template <typename Visit> auto VisitTimepoints(Visit visit) const {
    std::unique_lock<std::mutex> lock(mutex_);
    ScratchArray<SemaphoreTimepoint, 4> snapshot(timepoints_.size());
    std::copy(timepoints_.begin(), timepoints_.end(), snapshot.begin());
    lock.unlock();
    return visit(std::span<const SemaphoreTimepoint>(snapshot.span()));
  }

  // OK when every timepoint is reached, DEFERRED when some are not yet, or
  // the failure status of a failed semaphore.
  Status Query() const;
  // Signals every semaphore to its timepoint value (host signal).
  Status Signal();
  // Fails every semaphore of the fence with `status`.
  void Fail(Status status);
  // Waits for all timepoints under one deadline; returns early with the
  // failure status if any of its semaphores fails, or with the status of
  // `abort_signal` (may be null) when it fires (see WaitSemaphores).
  Status Wait(Deadline deadline,
              const AbortSignal *abort_signal = nullptr) const;

private:
  friend class ObjectPool<Fence>;
  Fence() : RefObject(&kRefType) {}
  // Emptied and parked in the fence pool for the next Create.
  void OnLastReference() const override;

  mutable std::mutex mutex_;
  // Most fences hold one timepoint: inline, so a fence is one allocation.
  ScratchVector<SemaphoreTimepoint, 2> timepoints_;
};

} // namespace strata::hal

#endif // STRATA_HAL_SEMAPHORE_H_
