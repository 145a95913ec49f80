// Stepwise invocation of a function in a context (SPEC §3). Unlike
// Context::Invoke, nothing here blocks on a wait the program yields on
// (hal.fence.await of a pending fence): the step returns DEFERRED and the
// caller decides when and how to wait.
//
//   Invocation invocation(*context);
//   Status status = invocation.Begin(function, arguments);
//   while (status.code() == StatusCode::kDeferred) {
//     // invocation.pending_wait()->source can be polled or waited on with
//     // others; Wait() blocks on it.
//     status = invocation.Wait(Deadline::Infinite());
//     if (status.ok())
//       status = invocation.Resume();
//   }
//   if (!status.ok()) {
//     invocation.Abort();   // after a failed step
//     return status;
//   }
//   STRATA_ASSIGN_OR_RETURN(std::vector<Value> results, invocation.End());
//
// While begun and not ended or aborted, the invocation counts as in flight
// on its context (see ContextOptions::allow_concurrent_invocations).
//
// Deadlines and cancellation: an invocation runs under an abort signal
// (base/abort_signal.h), its own or, without one, the one of the call the
// beginning thread works for (AbortSignal::Current(): how a VMVX workgroup
// inherits the deadline of the call that dispatched it). Its stack polls
// the signal on taken branches and calls; Wait() wakes when it fires; the
// step that notices fails with its CANCELLED or DEADLINE_EXCEEDED (and a
// backtrace). While a step runs, the signal is AbortSignal::Current(), so
// the device work the program submits carries it too.
// Thread-compatible: one thread at a time per invocation; it may move
// between threads between steps.
#ifndef STRATA_VM_INVOCATION_H_
#define STRATA_VM_INVOCATION_H_

#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/base/wait.h"
#include "strata/vm/context.h"
#include "strata/vm/module.h"
#include "strata/vm/stack.h"
#include "strata/vm/value.h"

namespace strata::vm {

class Invocation {
public:
  // Runs on `stack` when given (it must outlive the invocation and not be
  // used by anything else meanwhile), else on a stack of its own with the
  // context's limits. Keeps `context` alive. `abort_signal` bounds it (null:
  // the beginning thread's AbortSignal::Current(), if any).
  explicit Invocation(Context &context, Stack *stack = nullptr,
                      RefPtr<AbortSignal> abort_signal = nullptr);
  // Aborts an invocation still in flight.
  ~Invocation();
  Invocation(const Invocation &) = delete;
  Invocation &operator=(const Invocation &) = delete;

  // Checks the function and arguments (Context::CheckInvocation), then
  // runs until the function returns (OK), must wait (DEFERRED) or fails.
  // An invocation begins once.
  Status Begin(const Function &function, std::span<const Value> arguments);

  // True after a step returned DEFERRED and until the next step.
  bool is_deferred() const { return state_ == State::kDeferred; }
  // What the suspended invocation waits for; null when there is nothing to
  // wait for (not deferred, or the wait is already over).
  const WaitRequest *pending_wait() const;

  // Blocks until the pending wait is over: its source is reached or failed,
  // the request's own deadline passed (the program then sees a timeout),
  // or the abort signal fired (Resume then fails). Returns OK then (Resume
  // next), or DEADLINE_EXCEEDED when `deadline` came first (still deferred:
  // wait again later).
  Status Wait(Deadline deadline);

  // Continues after Wait: OK when the function returned, DEFERRED when it
  // must wait again, otherwise its failure (the abort signal's, once it
  // fired).
  Status Resume();

  // The signal bounding the invocation once begun (null: none).
  AbortSignal *abort_signal() const { return abort_signal_.get(); }

  // The results, once a step returned OK; ends the invocation.
  Result<std::vector<Value>> End();
  // Before Begin: a vector whose capacity the results reuse (the one the
  // caller got from its previous call), so steady calls allocate nothing.
  void set_result_storage(std::vector<Value> storage) {
    storage.clear();
    results_ = std::move(storage);
  }

  // Ends an invocation that failed or is deferred: its frames are popped
  // and their refs released. A no-op when nothing is in flight.
  void Abort();

private:
  enum class State { kIdle, kDeferred, kFinished, kFailed, kEnded };

  Status HandleStep(Status status);
  // Fails a deferred invocation whose signal fired, like a failed step.
  Status FailAborted(Status status);
  // Wait() while an abort signal may end the wait.
  Status WaitOrAbort(const WaitRequest &request, Deadline deadline);
  void Release();

  RefPtr<Context> context_;
  std::unique_ptr<Stack> own_stack_;
  Stack *stack_;
  RefPtr<AbortSignal> abort_signal_;
  // The stack's signal before Begin, restored when the invocation ends.
  const AbortSignal *previous_stack_signal_ = nullptr;
  bool signal_installed_ = false;
  State state_ = State::kIdle;
  bool acquired_ = false;
  uint32_t base_depth_ = 0;
  Function function_;
  // Kept for a native function called directly, which is retried from the
  // start after a wait.
  std::vector<Value> arguments_;
  std::vector<Value> results_;
};

} // namespace strata::vm

#endif // STRATA_VM_INVOCATION_H_
