#include "strata/vm/loop.h"

namespace strata::vm {

Loop::Loop() = default;

Loop::~Loop() {
  for (std::unique_ptr<Task> &task : waiting_) {
    UnsubscribeWait(*task);
    Complete(*task,
             CancelledError("loop destroyed while '", task->function.FullName(),
                            "' waited"),
             {});
  }
  for (std::unique_ptr<Task> &task : ready_)
    Complete(*task,
             CancelledError("loop destroyed before '",
                            task->function ? task->function.FullName() : "?",
                            "' finished"),
             {});
}

void Loop::InvokeAsync(RefPtr<Context> context, Function function,
                       std::vector<Value> arguments, InvokeCallback callback,
                       RefPtr<AbortSignal> abort_signal) {
  auto task = std::make_unique<Task>();
  task->context = std::move(context);
  task->function = std::move(function);
  task->arguments = std::move(arguments);
  task->callback = std::move(callback);
  task->abort_signal = std::move(abort_signal);
  ready_.push_back(std::move(task));
}

void Loop::Complete(Task &task, Status status, std::vector<Value> results) {
  if (task.invocation)
    task.invocation->Abort(); // No-op once ended.
  // Release the invocation (and its context slot) before the callback, so
  // the callback may start another invocation on the same context.
  task.invocation.reset();
  InvokeCallback callback = std::move(task.callback);
  task.callback = nullptr;
  if (callback)
    callback(std::move(status), std::move(results));
}

void Loop::Step(std::unique_ptr<Task> task) {
  Status status;
  if (!task->begun) {
    task->begun = true;
    if (!task->context) {
      Complete(*task,
               InvalidArgumentError("async invocation without a context"), {});
      return;
    }
    task->invocation = std::make_unique<Invocation>(
        *task->context, nullptr, std::move(task->abort_signal));
    status = task->invocation->Begin(task->function, task->arguments);
    task->arguments.clear();
  } else {
    status = task->invocation->Resume();
  }
  if (status.code() == StatusCode::kDeferred) {
    SubscribeWait(*task);
    waiting_.push_back(std::move(task));
    return;
  }
  if (!status.ok()) {
    Complete(*task, std::move(status), {});
    return;
  }
  Result<std::vector<Value>> results = task->invocation->End();
  if (!results.ok()) {
    Complete(*task, results.status(), {});
    return;
  }
  Complete(*task, OkStatus(), std::move(results).value());
}

void Loop::SubscribeWait(Task &task) {
  task.invocation->pending_wait()->source->Subscribe(&notifier_);
  if (AbortSignal *signal = task.invocation->abort_signal())
    signal->AddNotifier(&notifier_);
}

void Loop::UnsubscribeWait(Task &task) {
  if (const WaitRequest *request = task.invocation->pending_wait())
    request->source->Unsubscribe(&notifier_);
  if (AbortSignal *signal = task.invocation->abort_signal())
    signal->RemoveNotifier(&notifier_);
}

bool Loop::CollectReady(Deadline *earliest) {
  bool moved = false;
  for (size_t i = 0; i < waiting_.size();) {
    Invocation &invocation = *waiting_[i]->invocation;
    const WaitRequest *request = invocation.pending_wait();
    AbortSignal *signal = invocation.abort_signal();
    Status query = request->source->Query();
    bool over = query.code() != StatusCode::kDeferred ||
                request->deadline.HasPassed() ||
                (signal && !signal->Check().ok());
    // Wait() with an immediate deadline records the outcome without
    // blocking (the wait is already over).
    if (over) {
      RefPtr<WaitSource> source = request->source;
      if (invocation.Wait(Deadline::Immediate()).ok()) {
        source->Unsubscribe(&notifier_);
        if (signal)
          signal->RemoveNotifier(&notifier_);
        ready_.push_back(std::move(waiting_[i]));
        waiting_.erase(waiting_.begin() + i);
        moved = true;
        continue;
      }
    }
    *earliest = Deadline::Min(*earliest, request->deadline);
    if (signal)
      *earliest = Deadline::Min(*earliest, signal->deadline());
    ++i;
  }
  return moved;
}

Status Loop::Drain(Deadline deadline) {
  while (true) {
    while (!ready_.empty()) {
      std::unique_ptr<Task> task = std::move(ready_.front());
      ready_.pop_front();
      Step(std::move(task));
    }
    if (waiting_.empty())
      return OkStatus();
    // Read the epoch before checking, so a change in between wakes us.
    uint64_t epoch = notifier_.epoch();
    Deadline earliest = deadline;
    if (CollectReady(&earliest))
      continue;
    if (deadline.HasPassed())
      return DeadlineExceededError("loop drain deadline passed with ",
                                   waiting_.size(),
                                   " invocation(s) still waiting");
    notifier_.WaitForChange(epoch, earliest);
  }
}

} // namespace strata::vm
