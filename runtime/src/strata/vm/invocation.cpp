#include "strata/vm/invocation.h"

#include "strata/vm/bytecode_interpreter.h"

namespace strata::vm {

Invocation::Invocation(Context &context, Stack *stack,
                       RefPtr<AbortSignal> abort_signal)
    : context_(RefPtr<Context>::Retain(&context)), stack_(stack),
      abort_signal_(std::move(abort_signal)) {
  if (!stack_) {
    own_stack_ = std::make_unique<Stack>(context.options().stack_options);
    stack_ = own_stack_.get();
  }
}

Invocation::~Invocation() { Abort(); }

Status Invocation::Begin(const Function &function,
                         std::span<const Value> arguments) {
  if (state_ != State::kIdle)
    return FailedPreconditionError("invocation of '", function_.FullName(),
                                   "' already begun");
  STRATA_RETURN_IF_ERROR(context_->CheckInvocation(function, arguments));
  if (!abort_signal_)
    abort_signal_ = RefPtr<AbortSignal>::Retain(AbortSignal::Current());
  if (abort_signal_)
    STRATA_RETURN_IF_ERROR(abort_signal_->Check());
  STRATA_RETURN_IF_ERROR(context_->AcquireInvocation(function));
  acquired_ = true;
  function_ = function;
  base_depth_ = stack_->depth();
  results_.assign(function.signature().result_types().size(), Value());
  previous_stack_signal_ = stack_->abort_signal();
  stack_->set_abort_signal(abort_signal_.get());
  signal_installed_ = true;
  stack_->ClearWaitState();
  stack_->set_resumable(true);
  ScopedAbortSignal current_signal(abort_signal_.get());
  // CheckInvocation checked the arguments.
  Status status = function.Call(*stack_, arguments, results_,
                                ArgumentCheck::kCheckedByCaller);
  if (status.code() == StatusCode::kDeferred && stack_->depth() == base_depth_)
    arguments_.assign(arguments.begin(), arguments.end());
  return HandleStep(std::move(status));
}

Status Invocation::HandleStep(Status status) {
  stack_->set_resumable(false);
  if (status.ok()) {
    state_ = State::kFinished;
  } else if (status.code() == StatusCode::kDeferred) {
    if (!stack_->pending_wait()) {
      state_ = State::kFailed;
      return InternalError("'", function_.FullName(),
                           "' deferred without a wait");
    }
    state_ = State::kDeferred;
  } else {
    state_ = State::kFailed;
  }
  return status;
}

const WaitRequest *Invocation::pending_wait() const {
  return state_ == State::kDeferred ? stack_->pending_wait() : nullptr;
}

Status Invocation::Wait(Deadline deadline) {
  if (state_ != State::kDeferred)
    return FailedPreconditionError("invocation of '", function_.FullName(),
                                   "' is not waiting");
  const WaitRequest *request = stack_->pending_wait();
  if (!request)
    return OkStatus(); // Already over.
  if (abort_signal_)
    return WaitOrAbort(*request, deadline);
  Status status =
      request->source->Wait(Deadline::Min(deadline, request->deadline));
  if (status.code() == StatusCode::kDeadlineExceeded) {
    // A failure that happens to carry this code ends the wait too.
    Status query = request->source->Query();
    if (!query.ok() && query.code() != StatusCode::kDeferred) {
      stack_->CompleteWait(std::move(query));
      return OkStatus();
    }
    if (!request->deadline.HasPassed())
      return status;
    stack_->CompleteWait(DeadlineExceededError(
        "wait of '", function_.FullName(), "' timed out"));
    return OkStatus();
  }
  stack_->CompleteWait(std::move(status));
  return OkStatus();
}

Status Invocation::WaitOrAbort(const WaitRequest &request, Deadline deadline) {
  RefPtr<WaitSource> source = request.source;
  Deadline request_deadline = request.deadline;
  // Subscribed before each check, so a change in between wakes the wait.
  WaitNotifier notifier;
  source->Subscribe(&notifier);
  abort_signal_->AddNotifier(&notifier);
  std::optional<Status> outcome;
  while (true) {
    uint64_t epoch = notifier.epoch();
    Status query = source->Query();
    if (query.code() != StatusCode::kDeferred) {
      outcome = std::move(query);
      break;
    }
    Status aborted = abort_signal_->Check();
    if (!aborted.ok()) {
      outcome = std::move(aborted);
      break;
    }
    if (request_deadline.HasPassed()) {
      outcome = DeadlineExceededError("wait of '", function_.FullName(),
                                      "' timed out");
      break;
    }
    if (deadline.HasPassed())
      break;
    notifier.WaitForChange(
        epoch,
        Deadline::Min(deadline, Deadline::Min(request_deadline,
                                              abort_signal_->deadline())));
  }
  abort_signal_->RemoveNotifier(&notifier);
  source->Unsubscribe(&notifier);
  if (!outcome)
    return DeadlineExceededError("wait of '", function_.FullName(),
                                 "' still pending at the caller's deadline");
  stack_->CompleteWait(std::move(*outcome));
  return OkStatus();
}

Status Invocation::FailAborted(Status status) {
  status = stack_->AnnotateWithBacktrace(status);
  stack_->PopFramesTo(base_depth_);
  stack_->ClearWaitState();
  state_ = State::kFailed;
  return status;
}

Status Invocation::Resume() {
  if (state_ != State::kDeferred)
    return FailedPreconditionError("invocation of '", function_.FullName(),
                                   "' is not deferred");
  if (stack_->pending_wait())
    return FailedPreconditionError("invocation of '", function_.FullName(),
                                   "' must Wait() before it resumes");
  if (abort_signal_) {
    Status aborted = abort_signal_->Check();
    if (!aborted.ok())
      return FailAborted(std::move(aborted));
  }
  stack_->set_resumable(true);
  ScopedAbortSignal current_signal(abort_signal_.get());
  Status status;
  if (stack_->depth() == base_depth_) {
    // The yielding native function was the invocation's own function.
    status = function_.Call(*stack_, arguments_, results_);
  } else {
    status = ResumeBytecodeFrames(*stack_, base_depth_, results_);
  }
  return HandleStep(std::move(status));
}

Result<std::vector<Value>> Invocation::End() {
  if (state_ != State::kFinished)
    return FailedPreconditionError(
        "invocation of '", function_.FullName(),
        "' has no results: it did not finish (Abort() after a failure)");
  std::vector<Value> results = std::move(results_);
  Release();
  state_ = State::kEnded;
  return results;
}

void Invocation::Abort() {
  if (state_ == State::kIdle || state_ == State::kEnded) {
    Release();
    return;
  }
  stack_->PopFramesTo(base_depth_);
  stack_->ClearWaitState();
  stack_->set_resumable(false);
  results_.clear();
  arguments_.clear();
  Release();
  state_ = State::kEnded;
}

void Invocation::Release() {
  if (signal_installed_) {
    stack_->set_abort_signal(previous_stack_signal_);
    signal_installed_ = false;
  }
  if (acquired_) {
    context_->ReleaseInvocation();
    acquired_ = false;
  }
}

} // namespace strata::vm
