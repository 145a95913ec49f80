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
  {
    std::lock_guard<std::mutex> lock(mutex_);
    incoming_.push_back(
        Submission{std::move(wait_fence),
                   std::move(signal_fence),
                   std::move(work),
                   std::move(operation),
                   RefPtr<AbortSignal>::Retain(AbortSignal::Current()),
                   {},
                   false});
    if (!thread_.joinable())
      thread_ = std::thread([this] { Run(); });
  }
  notifier_.Notify();
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

void LocalQueue::Execute(Submission &submission, Status wait_status) {
  Status status = std::move(wait_status);
  if (status.ok() && submission.abort_signal)
    status = submission.abort_signal->Check();
  if (status.ok()) {
    ScopedAbortSignal current_signal(submission.abort_signal.get());
    status = submission.work();
  }
  if (!status.ok()) {
    if (submission.signal_fence)
      submission.signal_fence->Fail(status.Annotate(submission.operation));
    return;
  }
  if (submission.signal_fence) {
    Status signalled = submission.signal_fence->Signal();
    if (!signalled.ok())
      submission.signal_fence->Fail(signalled.Annotate(submission.operation));
  }
}

void LocalQueue::Run() {
  // Only this thread touches `pending`; Submit hands over via incoming_.
  std::vector<Submission> pending;
  while (true) {
    uint64_t epoch = notifier_.epoch();
    bool stopping;
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
    }
    // The first submission whose wait is over, or whose call was cancelled
    // or ran out of time (it then fails without running), runs next.
    bool ran = false;
    Deadline earliest = Deadline::Infinite();
    for (size_t i = 0; i < pending.size(); ++i) {
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
      Execute(submission, std::move(wait_status));
      ran = true;
      break;
    }
    if (ran)
      continue;
    if (stopping) {
      for (Submission &submission : pending) {
        Unsubscribe(submission);
        Execute(submission,
                CancelledError("device destroyed before the wait fence of a "
                               "queued operation was reached"));
      }
      return;
    }
    notifier_.WaitForChange(epoch, earliest);
  }
}

} // namespace strata::hal
