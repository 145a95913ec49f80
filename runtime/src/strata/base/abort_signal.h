// Deadlines and cancellation of running work: a call of a module function,
// a module's initialiser, and the device work they start.
//
// A CancellationToken is what a host keeps to cancel from any thread. An
// AbortSignal is what one call carries: its deadline, its token (or none)
// and the subject its errors name. Everything that could run or wait for
// long polls the signal: the VM on taken branches and calls (vm/stack.h),
// local devices between workgroups and queued submissions, waits on
// semaphores and suspended invocations (which also wake on cancellation).
//
//   auto token = CancellationToken::Create();
//   auto signal = AbortSignal::Create("function 'module.main'",
//                                     Deadline::AfterNs(2'000'000'000), token);
//   ... token->Cancel();   // from another thread
//   signal->Check();       // CANCELLED: "function 'module.main' was
//                          //  cancelled"; after the deadline:
//                          // DEADLINE_EXCEEDED: "function 'module.main'
//                          //  exceeded its deadline (2.0 s)"
//
// The work a thread is doing on behalf of a call sees the call's signal as
// AbortSignal::Current() (set with ScopedAbortSignal): that is how device
// work a call submits, and VM invocations nested in it (VMVX workgroups),
// inherit the call's deadline without threading it through every API.
#ifndef STRATA_BASE_ABORT_SIGNAL_H_
#define STRATA_BASE_ABORT_SIGNAL_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/base/wait.h"

namespace strata {

// Thread-safe. Once cancelled, stays cancelled.
class CancellationToken final : public RefObject {
public:
  static const RefTypeDescriptor kRefType; // "strata.cancellation_token"

  static RefPtr<CancellationToken> Create();

  // Cancels every call that carries this token; wakes their waits.
  void Cancel();
  bool is_cancelled() const {
    return cancelled_.load(std::memory_order_acquire);
  }
  // The flag hot loops poll (relaxed loads are enough: a poll that misses
  // the store sees it on the next one).
  const std::atomic<bool> &flag() const { return cancelled_; }

  // `notifier` (borrowed, removed before it dies) is notified on Cancel().
  void AddNotifier(WaitNotifier *notifier);
  void RemoveNotifier(WaitNotifier *notifier);

private:
  CancellationToken() : RefObject(&kRefType) {}

  std::atomic<bool> cancelled_{false};
  std::mutex mutex_;
  std::vector<WaitNotifier *> notifiers_;
};

// Immutable and thread-safe.
class AbortSignal final : public RefObject {
public:
  static const RefTypeDescriptor kRefType; // "strata.abort_signal"

  // `subject` is what the errors name ("function 'module.main'"). The
  // deadline's message states the time the signal was given: from now to
  // `deadline`.
  static RefPtr<AbortSignal>
  Create(std::string subject, Deadline deadline,
         RefPtr<CancellationToken> cancellation = nullptr);

  const std::string &subject() const { return subject_; }
  Deadline deadline() const { return deadline_; }
  CancellationToken *cancellation() const { return cancellation_.get(); }
  // The token's flag, or one that is never set.
  const std::atomic<bool> &cancelled_flag() const { return *cancelled_flag_; }
  bool is_cancelled() const {
    return cancelled_flag_->load(std::memory_order_relaxed);
  }

  // OK while the work may go on; otherwise CANCELLED or DEADLINE_EXCEEDED
  // naming the subject. Reads the clock when there is a deadline.
  Status Check() const;
  Status CancelledError() const;
  Status DeadlineExceededError() const;

  // Cancellation wakes `notifier`; deadlines do not (wait until
  // deadline()).
  void AddNotifier(WaitNotifier *notifier) const;
  void RemoveNotifier(WaitNotifier *notifier) const;

  // The signal of the call the calling thread works for, or null.
  static AbortSignal *Current();

private:
  friend class ScopedAbortSignal;
  AbortSignal(std::string subject, Deadline deadline, int64_t budget_ns,
              RefPtr<CancellationToken> cancellation);

  std::string subject_;
  Deadline deadline_;
  int64_t budget_ns_;
  RefPtr<CancellationToken> cancellation_;
  const std::atomic<bool> *cancelled_flag_;
};

// Makes `signal` (borrowed; may be null) AbortSignal::Current() on this
// thread until the scope ends, then restores the previous one.
class ScopedAbortSignal {
public:
  explicit ScopedAbortSignal(AbortSignal *signal);
  ~ScopedAbortSignal();
  ScopedAbortSignal(const ScopedAbortSignal &) = delete;
  ScopedAbortSignal &operator=(const ScopedAbortSignal &) = delete;

private:
  AbortSignal *previous_;
};

// Polls a signal from a hot loop (workgroups of a dispatch): the
// cancellation flag every time, the clock every few polls. How many adapts
// so the clock is read about every 0.1 ms of work: once per poll for long
// workgroups, once per 64 for tiny ones (a clock read costs about as much
// as an empty workgroup).
class AbortPoller {
public:
  explicit AbortPoller(const AbortSignal *signal);

  // OK, or the signal's failure once it fired.
  Status Poll() {
    if (!signal_)
      return OkStatus();
    if (!signal_->is_cancelled() && (!has_deadline_ || --countdown_ != 0))
      return OkStatus();
    return PollClock();
  }

private:
  Status PollClock();

  const AbortSignal *signal_;
  bool has_deadline_;
  uint32_t interval_ = 1;
  uint32_t countdown_ = 1;
  int64_t last_poll_ns_ = 0;
};

} // namespace strata

#endif // STRATA_BASE_ABORT_SIGNAL_H_
