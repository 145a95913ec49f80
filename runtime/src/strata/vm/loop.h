// Loop: runs async invocations on one thread without blocking on any single
// one. InvokeAsync returns at once; Drain() steps the invocations, and while
// all of them wait (on fences the program yielded on) it sleeps until one
// of their wait sources changes, then resumes whichever is ready.
//
//   Loop loop;
//   for (auto &input : inputs)
//     loop.InvokeAsync(context, function, {input},
//                      [](Status status, std::vector<Value> results) {...});
//   STRATA_RETURN_IF_ERROR(loop.Drain());
//
// An invocation given an abort signal (base/abort_signal.h) stops when it
// fires, also while it waits: its callback gets the signal's CANCELLED or
// DEADLINE_EXCEEDED. Drain wakes for it.
//
// Every callback runs exactly once, on the thread that drains the loop:
// with the results on success, with the failure (and no results) otherwise
// — also when the invocation could not begin, and with CANCELLED for
// invocations still pending when the loop is destroyed. Several
// invocations in flight on one context need
// ContextOptions::allow_concurrent_invocations (otherwise the later ones
// fail with FAILED_PRECONDITION).
//
// Thread-compatible: one thread at a time (callbacks may call InvokeAsync).
#ifndef STRATA_VM_LOOP_H_
#define STRATA_VM_LOOP_H_

#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/base/wait.h"
#include "strata/vm/context.h"
#include "strata/vm/invocation.h"
#include "strata/vm/module.h"
#include "strata/vm/value.h"

namespace strata::vm {

using InvokeCallback =
    std::function<void(Status status, std::vector<Value> results)>;

class Loop {
public:
  Loop();
  // Runs the callbacks of unfinished invocations with CANCELLED.
  ~Loop();
  Loop(const Loop &) = delete;
  Loop &operator=(const Loop &) = delete;

  // Queues an invocation of `function` (of `context`, kept alive) and
  // returns at once; it begins during the next Drain(), bounded by
  // `abort_signal` (may be null).
  void InvokeAsync(RefPtr<Context> context, Function function,
                   std::vector<Value> arguments, InvokeCallback callback,
                   RefPtr<AbortSignal> abort_signal = nullptr);

  // Runs until no invocation is pending (OK) or `deadline` passes
  // (DEADLINE_EXCEEDED; pending invocations stay for the next Drain).
  Status Drain(Deadline deadline = Deadline::Infinite());

  // Invocations queued, running or waiting.
  size_t pending_count() const { return ready_.size() + waiting_.size(); }

private:
  struct Task {
    RefPtr<Context> context;
    Function function;
    std::vector<Value> arguments;
    InvokeCallback callback;
    RefPtr<AbortSignal> abort_signal;
    std::unique_ptr<Invocation> invocation;
    bool begun = false;
  };

  // Begins or resumes `task`; finished tasks run their callback.
  void Step(std::unique_ptr<Task> task);
  // Moves waiting tasks whose wait is over to ready_; true if any moved.
  bool CollectReady(Deadline *earliest);
  static void Complete(Task &task, Status status, std::vector<Value> results);
  // (Un)subscribes the loop to what may end `task`'s wait.
  void SubscribeWait(Task &task);
  void UnsubscribeWait(Task &task);

  WaitNotifier notifier_;
  std::deque<std::unique_ptr<Task>> ready_;
  std::vector<std::unique_ptr<Task>> waiting_;
};

} // namespace strata::vm

#endif // STRATA_VM_LOOP_H_
