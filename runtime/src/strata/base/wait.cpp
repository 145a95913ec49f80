#include "strata/base/wait.h"

#include <algorithm>
#include <thread>

namespace strata {

void WaitNotifier::Notify() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    epoch_.fetch_add(1, std::memory_order_release);
  }
  condition_.notify_all();
}

uint64_t WaitNotifier::epoch() {
  return epoch_.load(std::memory_order_acquire);
}

bool WaitNotifier::WaitForChange(uint64_t seen_epoch, Deadline deadline) {
  auto changed = [&] {
    return epoch_.load(std::memory_order_acquire) != seen_epoch;
  };
  // Spin first (yielding, so a thread that has work gets the core), up to
  // kSpinNs or the deadline.
  int64_t spin_until = std::min(NowNs() + kSpinNs, deadline.ns());
  while (!changed()) {
    if (NowNs() >= spin_until)
      break;
    std::this_thread::yield();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  if (deadline.is_infinite()) {
    condition_.wait(lock, changed);
    return true;
  }
  if (deadline.HasPassed())
    return changed();
  return condition_.wait_until(lock,
                               std::chrono::steady_clock::time_point(
                                   std::chrono::nanoseconds(deadline.ns())),
                               changed);
}

} // namespace strata
