#include "strata/base/wait.h"

namespace strata {

void WaitNotifier::Notify() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++epoch_;
  }
  condition_.notify_all();
}

uint64_t WaitNotifier::epoch() {
  std::lock_guard<std::mutex> lock(mutex_);
  return epoch_;
}

bool WaitNotifier::WaitForChange(uint64_t seen_epoch, Deadline deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto changed = [&] { return epoch_ != seen_epoch; };
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
