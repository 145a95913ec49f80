// Absolute deadlines and a wake-up counter, shared by the HAL (semaphore
// waits) and the VM (suspended invocations, loops). Waits take a deadline
// rather than a timeout so a wait on several things in turn shares one
// budget.
#ifndef STRATA_BASE_WAIT_H_
#define STRATA_BASE_WAIT_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <limits>
#include <mutex>

namespace strata {

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
  // The earlier of two deadlines.
  static Deadline Min(Deadline a, Deadline b) { return a.ns_ < b.ns_ ? a : b; }

  int64_t ns() const { return ns_; }
  bool is_infinite() const { return ns_ == kInfiniteFutureNs; }
  bool HasPassed() const { return !is_infinite() && NowNs() >= ns_; }

private:
  constexpr explicit Deadline(int64_t ns) : ns_(ns) {}
  int64_t ns_;
};

// Lets one thread wait for any of several things to change: each thing it
// is registered with calls Notify() (from any thread) after it changed.
// Read epoch(), check the things, then WaitForChange(epoch) so a change in
// between is never missed. A waiter spins briefly (kSpinNs) before it
// sleeps: waking a sleeping thread can cost tens of microseconds (a
// virtual CPU's wake-up interrupt), more than a small call or the gap
// between a queue's submissions takes.
class WaitNotifier {
public:
  void Notify();
  // A counter that Notify() increments.
  uint64_t epoch();
  // Blocks until epoch() != `seen_epoch` or the deadline passes; returns
  // false on timeout.
  bool WaitForChange(uint64_t seen_epoch, Deadline deadline);

private:
  static constexpr int64_t kSpinNs = 50'000;

  std::mutex mutex_;
  std::condition_variable condition_;
  // Written under mutex_ (so a sleeper never misses a change), read
  // without it by spinners.
  std::atomic<uint64_t> epoch_{0};
};

} // namespace strata

#endif // STRATA_BASE_WAIT_H_
