#include "strata/base/abort_signal.h"

#include <algorithm>
#include <cstdio>

namespace strata {
namespace {

const std::atomic<bool> kNeverCancelled{false};

thread_local AbortSignal *current_signal = nullptr;

// "2.0 s", "25 ms", "40 us": the time a signal was given (measured from
// its creation, so a little under the timeout asked for: round up to the
// unit's precision).
std::string FormatDuration(int64_t ns) {
  char text[32];
  if (ns >= 99500000)
    std::snprintf(text, sizeof(text), "%.1f s", double(ns) / 1e9);
  else if (ns >= 999500)
    std::snprintf(text, sizeof(text), "%.0f ms", double(ns) / 1e6);
  else
    std::snprintf(text, sizeof(text), "%.0f us", double(ns) / 1e3);
  return text;
}

} // namespace

const RefTypeDescriptor CancellationToken::kRefType = {
    "strata.cancellation_token"};
const RefTypeDescriptor AbortSignal::kRefType = {"strata.abort_signal"};

RefPtr<CancellationToken> CancellationToken::Create() {
  return RefPtr<CancellationToken>::Adopt(new CancellationToken());
}

void CancellationToken::Cancel() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (cancelled_.exchange(true, std::memory_order_acq_rel))
    return;
  // Under the lock, so a notifier cannot be removed (and destroyed) while
  // it is notified.
  for (WaitNotifier *notifier : notifiers_)
    notifier->Notify();
}

void CancellationToken::AddNotifier(WaitNotifier *notifier) {
  std::lock_guard<std::mutex> lock(mutex_);
  notifiers_.push_back(notifier);
}

void CancellationToken::RemoveNotifier(WaitNotifier *notifier) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find(notifiers_.begin(), notifiers_.end(), notifier);
  if (it != notifiers_.end())
    notifiers_.erase(it);
}

AbortSignal::AbortSignal(std::string subject, Deadline deadline,
                         int64_t budget_ns,
                         RefPtr<CancellationToken> cancellation)
    : RefObject(&kRefType), subject_(std::move(subject)), deadline_(deadline),
      budget_ns_(budget_ns), cancellation_(std::move(cancellation)),
      cancelled_flag_(cancellation_ ? &cancellation_->flag()
                                    : &kNeverCancelled) {}

RefPtr<AbortSignal>
AbortSignal::Create(std::string subject, Deadline deadline,
                    RefPtr<CancellationToken> cancellation) {
  int64_t budget_ns = 0;
  if (!deadline.is_infinite() && deadline.ns() != Deadline::kImmediatePastNs)
    budget_ns = std::max<int64_t>(0, deadline.ns() - NowNs());
  return RefPtr<AbortSignal>::Adopt(new AbortSignal(
      std::move(subject), deadline, budget_ns, std::move(cancellation)));
}

Status AbortSignal::Check() const {
  if (is_cancelled())
    return CancelledError();
  if (deadline_.HasPassed())
    return DeadlineExceededError();
  return OkStatus();
}

Status AbortSignal::CancelledError() const {
  return strata::CancelledError(subject_, " was cancelled");
}

Status AbortSignal::DeadlineExceededError() const {
  return strata::DeadlineExceededError(subject_, " exceeded its deadline (",
                                       FormatDuration(budget_ns_), ")");
}

void AbortSignal::AddNotifier(WaitNotifier *notifier) const {
  if (cancellation_)
    cancellation_->AddNotifier(notifier);
}

void AbortSignal::RemoveNotifier(WaitNotifier *notifier) const {
  if (cancellation_)
    cancellation_->RemoveNotifier(notifier);
}

AbortSignal *AbortSignal::Current() { return current_signal; }

ScopedAbortSignal::ScopedAbortSignal(AbortSignal *signal)
    : previous_(current_signal) {
  current_signal = signal;
}

ScopedAbortSignal::~ScopedAbortSignal() { current_signal = previous_; }

AbortPoller::AbortPoller(const AbortSignal *signal)
    : signal_(signal),
      has_deadline_(signal && !signal->deadline().is_infinite()) {
  if (has_deadline_)
    last_poll_ns_ = NowNs();
}

Status AbortPoller::PollClock() {
  if (signal_->is_cancelled())
    return signal_->CancelledError();
  int64_t now = NowNs();
  if (now >= signal_->deadline().ns())
    return signal_->DeadlineExceededError();
  // Aim at one clock read per 50-200 us of polled work, but never fewer
  // than one per 64 polls: a grid whose workgroups suddenly get longer
  // overshoots the deadline by at most 64 of them.
  constexpr int64_t kShortNs = 50000, kLongNs = 200000;
  constexpr uint32_t kMaxInterval = 64;
  int64_t elapsed = now - last_poll_ns_;
  last_poll_ns_ = now;
  if (elapsed < kShortNs && interval_ < kMaxInterval)
    interval_ *= 2;
  else if (elapsed > kLongNs && interval_ > 1)
    interval_ /= 2;
  countdown_ = interval_;
  return OkStatus();
}

} // namespace strata
