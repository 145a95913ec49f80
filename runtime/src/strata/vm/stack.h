// Stack: the frames of one invocation. Frames (with their register banks)
// are carved LIFO out of inline storage, then out of heap chunks that are
// added on demand and kept for reuse; frames never move once pushed.
//
// Limits turn runaway programs into errors instead of crashes or hangs:
//  * max_depth frames (RESOURCE_EXHAUSTED),
//  * max_storage_bytes of heap chunks (RESOURCE_EXHAUSTED),
//  * an optional step budget charged per taken branch and per call
//    (DEADLINE_EXCEEDED), for fuzzing and watchdogs;
//  * the abort signal of the invocation running on it (base/abort_signal.h):
//    each step polls its cancellation flag (one relaxed load) and every
//    kClockPollSteps steps, and before each call of an import, its
//    deadline (one clock read), so a runaway loop ends in CANCELLED or
//    DEADLINE_EXCEEDED naming the invoked function.
//
// When a call fails, the frame where it failed attaches a backtrace to the
// status (innermost first) once; outer frames leave it as is:
//   "division by zero
//     at test.divide +0x0012
//     at test.main +0x0030 [model.mlir:4:7]"
//
// Yielding: when the stack is driven by an Invocation (invocation.h), a
// native function that must wait (hal.fence.await on a pending fence) calls
// Yield() and returns its DEFERRED status instead of blocking. Every frame
// stays on the stack; the native call is retried after the wait, and sees
// the wait's outcome through TakeWaitResult().
#ifndef STRATA_VM_STACK_H_
#define STRATA_VM_STACK_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/base/abort_signal.h"
#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/vm/value.h"
#include "strata/vm/wait_source.h"

namespace strata::vm {

class Module;
class ModuleState;

struct StackOptions {
  uint32_t max_depth = 1024;
  size_t max_storage_bytes = size_t(64) << 20;
  // 0 = unlimited.
  uint64_t step_budget = 0;
};

struct RegisterCounts {
  uint16_t i32 = 0;
  uint16_t i64 = 0;
  uint16_t f32 = 0;
  uint16_t f64 = 0;
  uint16_t ref = 0;
};

// Register banks of one bytecode frame (zero-initialised, refs null).
struct FrameRegisters {
  int32_t *i32 = nullptr;
  int64_t *i64 = nullptr;
  float *f32 = nullptr;
  double *f64 = nullptr;
  RefPtr<RefObject> *ref = nullptr;
  RegisterCounts counts;
};

enum class FrameKind : uint8_t { kBytecode, kNative };

struct StackFrame {
  FrameKind kind = FrameKind::kBytecode;
  // Borrowed; the context keeps modules and states alive during calls.
  const Module *module = nullptr;
  ModuleState *module_state = nullptr;
  // Bytecode: internal function ordinal. Native: export ordinal.
  uint32_t function_ordinal = 0;
  // Borrowed from the module (for backtraces).
  std::string_view function_name;
  // Bytecode: offset of the executing instruction in the function.
  uint32_t pc = 0;
  // Bytecode: interpreter bookkeeping while a call is pending (offset of the
  // call's result register list).
  uint32_t return_list_offset = 0;
  FrameRegisters registers;
  StackFrame *parent = nullptr;
  // Bytecode: the first frame of one interpreter activation (a call into
  // the module from the host or from another module); resumption finds
  // the activations by it.
  bool is_entry = false;

private:
  friend class Stack;
  size_t chunk_index_ = 0;
  size_t chunk_used_before_ = 0;
};

class Stack {
public:
  explicit Stack(StackOptions options = {});
  ~Stack();
  Stack(const Stack &) = delete;
  Stack &operator=(const Stack &) = delete;

  const StackOptions &options() const { return options_; }

  // Makes an empty stack (depth 0) as good as new for another invocation:
  // the step budget, signal and wait state start over; the frame storage
  // and call buffers stay allocated for reuse.
  void Reset();

  // Vectors an interpreter reuses between the import calls it makes, so a
  // call allocates nothing once warm. One set per interpreter activation,
  // keyed by the stack depth it entered at (live activations enter at
  // different depths, and a resumed one at its own again).
  struct CallBuffers {
    std::vector<Value> arguments;
    std::vector<Value> results;
    // Ref arguments lent to the callee: {index in `arguments`, ordinal of
    // the ref register they were moved out of}.
    std::vector<std::pair<uint32_t, uint16_t>> lent_refs;
  };
  CallBuffers &call_buffers(uint32_t entry_depth);

  // Pushes a frame with zeroed registers. RESOURCE_EXHAUSTED past the depth
  // or storage limit. Inline around PushUnnamedFrame: the name, passed on
  // to an out-of-line call, would travel on the stack (its parameters fill
  // the argument registers) and be reloaded as one 16-byte value, which
  // stalls on every call of a native function.
  Result<StackFrame *> PushFrame(FrameKind kind, const Module *module,
                                 ModuleState *module_state,
                                 uint32_t function_ordinal,
                                 std::string_view function_name,
                                 const RegisterCounts &counts = {}) {
    Result<StackFrame *> frame =
        PushUnnamedFrame(kind, module, module_state, function_ordinal, counts);
    if (frame.ok())
      (*frame)->function_name = function_name;
    return frame;
  }
  // Pops the top frame, releasing the refs in its registers.
  void PopFrame();
  // Pops frames until depth() == `depth`.
  void PopFramesTo(uint32_t depth);

  StackFrame *top() const { return top_; }
  uint32_t depth() const { return depth_; }

  // Steps between two reads of the clock while a deadline is set: about
  // 10-50 us of a tight loop, so one read costs under 0.1% of it.
  static constexpr uint64_t kClockPollSteps = 1024;

  // Charges one step (a taken branch or a call); false once the step
  // budget is exhausted or the abort signal fired (StopError() says which).
  bool ConsumeStep() {
    if (cancelled_flag_->load(std::memory_order_relaxed))
      return false;
    if (--countdown_ != 0)
      return true;
    return RefillSteps(window_);
  }
  // The same, reading the clock now: before native calls, which may take
  // long.
  bool ConsumeStepAndPollClock() {
    if (cancelled_flag_->load(std::memory_order_relaxed))
      return false;
    return RefillSteps(window_ - countdown_ + 1);
  }
  // Why ConsumeStep() returned false: the abort signal's CANCELLED or
  // DEADLINE_EXCEEDED, else the step budget's DEADLINE_EXCEEDED.
  Status StopError() const;
  Status StepBudgetExhaustedError() const;

  // The signal steps and waits honour (borrowed; null = none). Invocations
  // set it for their duration.
  void set_abort_signal(const AbortSignal *signal);
  const AbortSignal *abort_signal() const { return abort_signal_; }

  // True when the native function on top may suspend the invocation
  // instead of blocking: an Invocation drives the stack and only bytecode
  // frames lie below (a native caller could not be resumed mid-way).
  bool CanYield() const {
    return resumable_ && native_depth_ == 1 && top_ &&
           top_->kind == FrameKind::kNative;
  }
  // Records that the invocation must wait for `source` (until `deadline`)
  // and returns the DEFERRED status the native function returns.
  // FAILED_PRECONDITION when !CanYield().
  Status Yield(RefPtr<WaitSource> source,
               Deadline deadline = Deadline::Infinite());
  // In a retried native call: the outcome of the wait it asked for (OK, the
  // failure, or DEADLINE_EXCEEDED when the request's deadline passed);
  // nullopt in a first call. Cleared when taken and when a native call
  // returns.
  std::optional<Status> TakeWaitResult() {
    return std::exchange(wait_result_, std::nullopt);
  }

  // For invocation drivers.
  void set_resumable(bool resumable) { resumable_ = resumable; }
  bool resumable() const { return resumable_; }
  // The wait the last DEFERRED asked for, or null.
  const WaitRequest *pending_wait() const {
    return pending_wait_ ? &*pending_wait_ : nullptr;
  }
  // Ends the pending wait with `result`, handed to the retried call.
  void CompleteWait(Status result) {
    pending_wait_.reset();
    wait_result_ = std::move(result);
  }
  void ClearWaitState() {
    pending_wait_.reset();
    wait_result_.reset();
  }

  // Appends the current frame chain to `status` unless a backtrace was
  // already attached during this failure. OK stays OK.
  Status AnnotateWithBacktrace(const Status &status);
  // The current frame chain, one "\n  at ..." line per frame.
  std::string FormatBacktrace() const;

private:
  struct Chunk {
    uint8_t *data;
    size_t capacity;
    size_t used;
  };
  static constexpr size_t kInlineStorageSize = 8 * 1024;

  // PushFrame without the name.
  Result<StackFrame *> PushUnnamedFrame(FrameKind kind, const Module *module,
                                        ModuleState *module_state,
                                        uint32_t function_ordinal,
                                        const RegisterCounts &counts);

  Result<uint8_t *> Allocate(size_t size, size_t *chunk_index,
                             size_t *used_before);
  // Ends a window of `consumed` steps (the current one included): charges
  // them to the budget, reads the clock, starts the next window.
  bool RefillSteps(uint64_t consumed);
  // Starts a window sized by the budget left and the signal.
  void ResetWindow();

  StackOptions options_;
  StackFrame *top_ = nullptr;
  uint32_t depth_ = 0;
  uint64_t steps_remaining_ = 0;
  // Steps left in the current window, and its size; the slow path runs
  // when the countdown reaches zero.
  uint64_t countdown_ = 1;
  uint64_t window_ = 1;
  const AbortSignal *abort_signal_ = nullptr;
  const std::atomic<bool> *cancelled_flag_;
  bool backtrace_attached_ = false;
  bool resumable_ = false;
  uint32_t native_depth_ = 0;
  std::optional<WaitRequest> pending_wait_;
  std::optional<Status> wait_result_;
  std::vector<Chunk> chunks_;
  std::vector<std::unique_ptr<CallBuffers>> call_buffers_;
  size_t current_chunk_ = 0;
  size_t heap_bytes_ = 0;
  alignas(16) uint8_t inline_storage_[kInlineStorageSize];
};

} // namespace strata::vm

#endif // STRATA_VM_STACK_H_
