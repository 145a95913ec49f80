#include "strata/hal/local/local_queue.h"

namespace strata::hal {

LocalQueue::~LocalQueue() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  notifier_.Notify();
  if (thread_.joinable())
    thread_.join();
}

void LocalQueue::Submit(RefPtr<Fence> wait_fence, RefPtr<Fence> signal_fence,
                        Work work, std::string operation) {
  Submission submission{std::move(wait_fence),
                        std::move(signal_fence),
                        std::move(work),
                        std::move(operation),
                        RefPtr<AbortSignal>::Retain(AbortSignal::Current()),
                        {},
                        false};
  // A wait already over (reached or failed) needs no queue thread.
  Status wait_status =
      submission.wait_fence ? submission.wait_fence->Query() : OkStatus();
  if (wait_status.code() != StatusCode::kDeferred &&
      TryRunInline(submission, std::move(wait_status)))
    return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    incoming_.push_back(std::move(submission));
    ++queued_;
    if (!thread_.joinable())
      thread_ = std::thread([this] { Run(); });
  }
  notifier_.Notify();
}

bool LocalQueue::BeginInline() {
  std::lock_guard<std::mutex> lock(mutex_);
  // Anything queued was submitted earlier and must run first.
  if (queued_ != 0 || inline_running_)
    return false;
  inline_running_ = true;
  return true;
}

void LocalQueue::EndInline() {
  bool queue_waits;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    inline_running_ = false;
    queue_waits = queued_ != 0;
  }
  if (queue_waits)
    notifier_.Notify();
}

bool LocalQueue::TryRunInline(Submission &submission, Status wait_status) {
  if (!BeginInline())
    return false;
  Complete(submission, RunWork(submission.abort_signal.get(),
                               std::move(wait_status), submission.work));
  EndInline();
  return true;
}

void LocalQueue::Subscribe(Submission &submission) {
  if (submission.abort_signal && !submission.subscribed_to_signal) {
    submission.abort_signal->AddNotifier(&notifier_);
    submission.subscribed_to_signal = true;
  }
  if (!submission.wait_fence || !submission.subscribed.empty())
    return;
  submission.subscribed = submission.wait_fence->timepoints();
  for (SemaphoreTimepoint &timepoint : submission.subscribed)
    timepoint.semaphore->AddNotifier(&notifier_);
}

void LocalQueue::Unsubscribe(Submission &submission) {
  if (submission.subscribed_to_signal) {
    submission.abort_signal->RemoveNotifier(&notifier_);
    submission.subscribed_to_signal = false;
  }
  for (SemaphoreTimepoint &timepoint : submission.subscribed)
    timepoint.semaphore->RemoveNotifier(&notifier_);
  submission.subscribed.clear();
}

void LocalQueue::Complete(Submission &submission, Status status) {
  CompleteFence(submission.signal_fence.get(), std::move(status),
                submission.operation);
}

void LocalQueue::CompleteFence(Fence *signal_fence, Status status,
                               std::string_view operation) {
  if (!signal_fence)
    return;
  if (!status.ok()) {
    signal_fence->Fail(status.Annotate(operation));
    return;
  }
  Status signalled = signal_fence->Signal();
  if (!signalled.ok())
    signal_fence->Fail(signalled.Annotate(operation));
}

void LocalQueue::ExecuteQueued(Submission &submission, Status wait_status) {
  Status status = RunWork(submission.abort_signal.get(), std::move(wait_status),
                          submission.work);
  // Idle before the fence says done: work submitted once a waiter sees it
  // may run inline.
  {
    std::lock_guard<std::mutex> lock(mutex_);
    --queued_;
  }
  Complete(submission, std::move(status));
}

void LocalQueue::Run() {
  // Only this thread touches `pending`; Submit hands over via incoming_.
  std::vector<Submission> pending;
  while (true) {
    uint64_t epoch = notifier_.epoch();
    bool stopping, inline_running;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // Subscribed before the queries below, so a signal after them
      // changes the epoch read above.
      for (Submission &submission : incoming_) {
        pending.push_back(std::move(submission));
        Subscribe(pending.back());
      }
      incoming_.clear();
      stopping = stopping_;
      inline_running = inline_running_;
    }
    // The first submission whose wait is over, or whose call was cancelled
    // or ran out of time (it then fails without running), runs next.
    // Nothing runs beside an inline submission; it notifies when done.
    bool ran = false;
    Deadline earliest = Deadline::Infinite();
    for (size_t i = 0; !inline_running && i < pending.size(); ++i) {
      Status wait_status =
          pending[i].wait_fence ? pending[i].wait_fence->Query() : OkStatus();
      if (wait_status.code() == StatusCode::kDeferred &&
          pending[i].abort_signal) {
        Status aborted = pending[i].abort_signal->Check();
        if (aborted.ok())
          earliest =
              Deadline::Min(earliest, pending[i].abort_signal->deadline());
        else
          wait_status = std::move(aborted);
      }
      if (wait_status.code() == StatusCode::kDeferred)
        continue;
      Submission submission = std::move(pending[i]);
      pending.erase(pending.begin() + i);
      Unsubscribe(submission);
      ExecuteQueued(submission, std::move(wait_status));
      ran = true;
      break;
    }
    if (ran)
      continue;
    if (stopping && !inline_running) {
      for (Submission &submission : pending) {
        Unsubscribe(submission);
        ExecuteQueued(submission,
                      CancelledError("device destroyed before the wait fence "
                                     "of a queued operation was reached"));
      }
      return;
    }
    notifier_.WaitForChange(epoch, earliest);
  }
}

} // namespace strata::hal
