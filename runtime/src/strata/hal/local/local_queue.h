// An asynchronous queue for local devices: submissions return at once and
// run on one queue thread as soon as their wait fence is reached; then their
// signal fence is signalled, or failed with the work's error (also when the
// wait fence failed). Submissions whose waits are reached run in submission
// order; one waiting on a fence never holds up later ready ones, so a
// program may submit work that waits on a fence it signals afterwards.
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
  static void Execute(Submission &submission, Status wait_status);

  std::mutex mutex_;
  std::vector<Submission> incoming_;
  bool stopping_ = false;
  std::thread thread_;
  WaitNotifier notifier_;
};

} // namespace strata::hal

#endif // STRATA_HAL_LOCAL_LOCAL_QUEUE_H_
