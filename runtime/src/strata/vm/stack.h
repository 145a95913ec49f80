// Stack: the frames of one invocation. Frames (with their register banks)
// are carved LIFO out of inline storage, then out of heap chunks that are
// added on demand and kept for reuse; frames never move once pushed.
//
// Limits turn runaway programs into errors instead of crashes or hangs:
//  * max_depth frames (RESOURCE_EXHAUSTED),
//  * max_storage_bytes of heap chunks (RESOURCE_EXHAUSTED),
//  * an optional step budget charged per taken branch and per call
//    (DEADLINE_EXCEEDED), for fuzzing and watchdogs.
//
// When a call fails, the frame where it failed attaches a backtrace to the
// status (innermost first) once; outer frames leave it as is:
//   "division by zero
//     at test.divide +0x0012
//     at test.main +0x0030 [model.mlir:4:7]"
#ifndef STRATA_VM_STACK_H_
#define STRATA_VM_STACK_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"

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

  // Pushes a frame with zeroed registers. RESOURCE_EXHAUSTED past the depth
  // or storage limit.
  Result<StackFrame *> PushFrame(FrameKind kind, const Module *module,
                                 ModuleState *module_state,
                                 uint32_t function_ordinal,
                                 std::string_view function_name,
                                 const RegisterCounts &counts = {});
  // Pops the top frame, releasing the refs in its registers.
  void PopFrame();
  // Pops frames until depth() == `depth`.
  void PopFramesTo(uint32_t depth);

  StackFrame *top() const { return top_; }
  uint32_t depth() const { return depth_; }

  // Charges one step against the budget; false once it is exhausted.
  bool ConsumeStep() {
    if (options_.step_budget == 0)
      return true;
    if (steps_remaining_ == 0)
      return false;
    --steps_remaining_;
    return true;
  }
  Status StepBudgetExhaustedError() const;

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

  Result<uint8_t *> Allocate(size_t size, size_t *chunk_index,
                             size_t *used_before);

  StackOptions options_;
  StackFrame *top_ = nullptr;
  uint32_t depth_ = 0;
  uint64_t steps_remaining_ = 0;
  bool backtrace_attached_ = false;
  std::vector<Chunk> chunks_;
  size_t current_chunk_ = 0;
  size_t heap_bytes_ = 0;
  alignas(16) uint8_t inline_storage_[kInlineStorageSize];
};

} // namespace strata::vm

#endif // STRATA_VM_STACK_H_
