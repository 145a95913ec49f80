// An asynchronous queue for local devices: submissions run one at a time as
// soon as their wait fence is reached; then their signal fence is signalled,
// or failed with the work's error (also when the wait fence failed).
// Submissions whose waits are reached run in submission order; one waiting on
// a fence never holds up later ready ones, so a program may submit work that
// waits on a fence it signals afterwards.
//
// A submission whose wait is already reached while the queue is idle (nothing
// queued or running) runs inline on the submitting thread, which then takes
// part in its dispatch grids. Handing it to the sleeping queue thread, and the
// submitter's wait for its fence, would cost two thread wake-ups (tens of
// microseconds each on a virtual CPU) per call, more than a small model takes.
// Every other submission returns at once and runs on the queue thread.
//
// Submissions carry the abort signal of the call that submitted them
// (AbortSignal::Current() when Submit runs; base/abort_signal.h): the work
// runs with it as the queue thread's current signal (so dispatch grids stop
// between workgroups when it fires), and a submission still waiting for its
// wait fence when it fires is dropped with its status. Either way its
// signal fence fails with that CANCELLED or DEADLINE_EXCEEDED, so the
// program waiting on it sees why, and the queue moves on.
//
// The queue thread starts with the first submission. Destroying the queue
// finishes every submission whose wait is reached and fails the others'
// signal fences with CANCELLED.
#ifndef STRATA_HAL_LOCAL_LOCAL_QUEUE_H_
#define STRATA_HAL_LOCAL_LOCAL_QUEUE_H_

#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "strata/base/abort_signal.h"
#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/base/wait.h"
#include "strata/hal/semaphore.h"

namespace strata::hal {

class LocalQueue {
public:
  using Work = std::function<Status()>;

  LocalQueue() = default;
  ~LocalQueue();
  LocalQueue(const LocalQueue &) = delete;
  LocalQueue &operator=(const LocalQueue &) = delete;

  // Queues `work` after `wait_fence` (may be null); `signal_fence` (may be
  // null) reports the outcome. `operation` annotates failures.
  void Submit(RefPtr<Fence> wait_fence, RefPtr<Fence> signal_fence, Work work,
              std::string operation);

  // The inline case of Submit without packaging `work` (a Status()
  // callable, borrowed): when `wait_fence` (may be null) is over and the
  // queue is idle, runs it on this thread under the current abort signal,
  // completes `signal_fence` and returns true. Otherwise does nothing and
  // returns false; the caller then Submits. What a synchronous call takes,
  // with no allocation.
  template <typename F>
  bool TryRunInline(Fence *wait_fence, Fence *signal_fence, F &&work,
                    std::string_view operation) {
    Status wait_status = wait_fence ? wait_fence->Query() : OkStatus();
    if (wait_status.code() == StatusCode::kDeferred || !BeginInline())
      return false;
    CompleteFence(signal_fence,
                  RunWork(AbortSignal::Current(), std::move(wait_status),
                          std::forward<F>(work)),
                  operation);
    EndInline();
    return true;
  }

private:
  struct Submission {
    RefPtr<Fence> wait_fence;
    RefPtr<Fence> signal_fence;
    Work work;
    std::string operation;
    RefPtr<AbortSignal> abort_signal;
    std::vector<SemaphoreTimepoint> subscribed;
    bool subscribed_to_signal = false;
  };

  void Run();
  void Subscribe(Submission &submission);
  void Unsubscribe(Submission &submission);
  // The work's status, or the wait's or abort signal's failure. `work`
  // runs with `abort_signal` (may be null) as the current signal.
  template <typename F>
  static Status RunWork(AbortSignal *abort_signal, Status wait_status,
                        F &&work) {
    Status status = std::move(wait_status);
    if (status.ok() && abort_signal)
      status = abort_signal->Check();
    if (status.ok()) {
      ScopedAbortSignal current_signal(abort_signal);
      status = work();
    }
    return status;
  }
  // Signals the signal fence, or fails it with `status`.
  static void Complete(Submission &submission, Status status);
  // Signals `signal_fence` (may be null), or fails it with `status`
  // annotated with `operation`.
  static void CompleteFence(Fence *signal_fence, Status status,
                            std::string_view operation);
  // Claims the queue for an inline submission: false when anything is
  // queued or running inline.
  bool BeginInline();
  // Ends it, waking the queue thread for work queued meanwhile.
  void EndInline();

  // Runs `submission` (whose wait ended with `wait_status`) on the calling
  // thread if the queue is idle; returns false, running nothing, otherwise.
  bool TryRunInline(Submission &submission, Status wait_status);
  // Runs a submission the queue thread took from the queue.
  void ExecuteQueued(Submission &submission, Status wait_status);

  std::mutex mutex_;
  std::vector<Submission> incoming_;
  // Submissions handed to the queue thread and not yet finished.
  size_t queued_ = 0;
  // A submission runs inline on a submitting thread; the queue thread runs
  // nothing meanwhile.
  bool inline_running_ = false;
  bool stopping_ = false;
  std::thread thread_;
  WaitNotifier notifier_;
};

} // namespace strata::hal

#endif // STRATA_HAL_LOCAL_LOCAL_QUEUE_H_
