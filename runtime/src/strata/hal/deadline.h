// Absolute deadlines for blocking HAL waits. Waits take a deadline rather
// than a timeout so a wait on several semaphores in turn shares one budget.
#ifndef STRATA_HAL_DEADLINE_H_
#define STRATA_HAL_DEADLINE_H_

#include <chrono>
#include <cstdint>
#include <limits>

namespace strata::hal {

// Nanoseconds on the monotonic (steady) clock.
inline int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

class Deadline {
public:
  static constexpr int64_t kInfiniteFutureNs =
      std::numeric_limits<int64_t>::max();
  static constexpr int64_t kImmediatePastNs =
      std::numeric_limits<int64_t>::min();

  // Blocks until the condition holds.
  static constexpr Deadline Infinite() { return Deadline(kInfiniteFutureNs); }
  // Never blocks: a poll.
  static constexpr Deadline Immediate() { return Deadline(kImmediatePastNs); }
  // An absolute time on the NowNs() clock.
  static constexpr Deadline AtNs(int64_t ns) { return Deadline(ns); }
  // Relative timeout from now; saturates instead of overflowing.
  static Deadline AfterNs(int64_t timeout_ns) {
    if (timeout_ns <= 0)
      return Immediate();
    int64_t now = NowNs();
    if (timeout_ns > kInfiniteFutureNs - now)
      return Infinite();
    return Deadline(now + timeout_ns);
  }
  // Milliseconds as the `hal` module passes them: negative waits forever
  // (STRATA_HAL_WAIT_FOREVER is -1), 0 polls.
  static Deadline AfterMs(int64_t timeout_ms) {
    if (timeout_ms < 0)
      return Infinite();
    if (timeout_ms > kInfiniteFutureNs / 1000000)
      return Infinite();
    return AfterNs(timeout_ms * 1000000);
  }

  int64_t ns() const { return ns_; }
  bool is_infinite() const { return ns_ == kInfiniteFutureNs; }
  bool HasPassed() const { return !is_infinite() && NowNs() >= ns_; }

private:
  constexpr explicit Deadline(int64_t ns) : ns_(ns) {}
  int64_t ns_;
};

} // namespace strata::hal

#endif // STRATA_HAL_DEADLINE_H_
