#include "strata/vm/stack.h"

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstring>
#include <new>

#include "strata/vm/module.h"

namespace strata::vm {

const RefTypeDescriptor WaitSource::kRefType = {"vm.wait_source"};

namespace {

constexpr size_t kFrameAlignment = 16;

// What a stack without an abort signal polls.
const std::atomic<bool> kNeverCancelled{false};

size_t AlignUp(size_t value, size_t alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

// Byte offsets of each bank inside a frame allocation.
struct FrameLayout {
  size_t i32, i64, f32, f64, ref, total;
};

FrameLayout ComputeLayout(const RegisterCounts &counts) {
  FrameLayout layout;
  size_t offset = AlignUp(sizeof(StackFrame), kFrameAlignment);
  layout.i32 = offset;
  offset = AlignUp(offset + counts.i32 * sizeof(int32_t), alignof(int64_t));
  layout.i64 = offset;
  offset += counts.i64 * sizeof(int64_t);
  layout.f32 = offset;
  offset = AlignUp(offset + counts.f32 * sizeof(float), alignof(double));
  layout.f64 = offset;
  offset =
      AlignUp(offset + counts.f64 * sizeof(double), alignof(RefPtr<RefObject>));
  layout.ref = offset;
  offset += counts.ref * sizeof(RefPtr<RefObject>);
  layout.total = AlignUp(offset, kFrameAlignment);
  return layout;
}

// Backtraces of runaway recursion would be enormous; keep both ends.
constexpr uint32_t kBacktraceInnerFrames = 16;
constexpr uint32_t kBacktraceOuterFrames = 4;

void AppendFrameLine(const StackFrame &frame, std::string *text) {
  std::string_view module_name =
      frame.module ? std::string_view(frame.module->name()) : "?";
  *text += StrCat("\n  at ", module_name, ".", frame.function_name);
  if (frame.kind == FrameKind::kNative) {
    *text += " (native)";
    return;
  }
  char offset[16];
  std::snprintf(offset, sizeof(offset), " +0x%04x", frame.pc);
  *text += offset;
  if (frame.module) {
    std::string location =
        frame.module->FormatSourceLocation(frame.function_ordinal, frame.pc);
    if (!location.empty())
      *text += StrCat(" [", location, "]");
  }
}

} // namespace

Stack::Stack(StackOptions options)
    : options_(options), steps_remaining_(options.step_budget),
      cancelled_flag_(&kNeverCancelled) {
  chunks_.push_back(Chunk{inline_storage_, kInlineStorageSize, 0});
  ResetWindow();
}

void Stack::Reset() {
  assert(depth_ == 0 && "Reset of a stack with frames");
  steps_remaining_ = options_.step_budget;
  abort_signal_ = nullptr;
  cancelled_flag_ = &kNeverCancelled;
  backtrace_attached_ = false;
  resumable_ = false;
  native_depth_ = 0;
  ClearWaitState();
  ResetWindow();
}

Stack::CallBuffers &Stack::call_buffers(uint32_t entry_depth) {
  if (entry_depth >= call_buffers_.size())
    call_buffers_.resize(size_t(entry_depth) + 1);
  if (!call_buffers_[entry_depth])
    call_buffers_[entry_depth] = std::make_unique<CallBuffers>();
  return *call_buffers_[entry_depth];
}

Stack::~Stack() {
  PopFramesTo(0);
  for (size_t i = 1; i < chunks_.size(); ++i)
    ::operator delete(chunks_[i].data, std::align_val_t(kFrameAlignment));
}

Result<uint8_t *> Stack::Allocate(size_t size, size_t *chunk_index,
                                  size_t *used_before) {
  Chunk *chunk = &chunks_[current_chunk_];
  if (chunk->capacity - chunk->used < size) {
    // Chunks after the current one are all empty (LIFO); reuse the next one
    // if it is big enough, else replace it and everything after it.
    size_t next = current_chunk_ + 1;
    if (next >= chunks_.size() || chunks_[next].capacity < size) {
      size_t capacity = std::max(chunk->capacity * 2, size);
      for (size_t i = next; i < chunks_.size(); ++i) {
        heap_bytes_ -= chunks_[i].capacity;
        ::operator delete(chunks_[i].data, std::align_val_t(kFrameAlignment));
      }
      chunks_.resize(next);
      if (heap_bytes_ + capacity > options_.max_storage_bytes)
        capacity = std::max(size, options_.max_storage_bytes - heap_bytes_);
      if (heap_bytes_ + capacity > options_.max_storage_bytes ||
          heap_bytes_ + capacity < heap_bytes_)
        return ResourceExhaustedError("VM stack storage limit of ",
                                      options_.max_storage_bytes,
                                      " bytes exceeded");
      auto *data = static_cast<uint8_t *>(::operator new(
          capacity, std::align_val_t(kFrameAlignment), std::nothrow));
      if (!data)
        return ResourceExhaustedError("cannot grow the VM stack by ", capacity,
                                      " bytes");
      heap_bytes_ += capacity;
      chunks_.push_back(Chunk{data, capacity, 0});
    }
    current_chunk_ = next;
    chunk = &chunks_[current_chunk_];
  }
  *chunk_index = current_chunk_;
  *used_before = chunk->used;
  uint8_t *storage = chunk->data + chunk->used;
  chunk->used += size;
  return storage;
}

Result<StackFrame *> Stack::PushUnnamedFrame(FrameKind kind,
                                             const Module *module,
                                             ModuleState *module_state,
                                             uint32_t function_ordinal,
                                             const RegisterCounts &counts) {
  if (depth_ >= options_.max_depth)
    return ResourceExhaustedError("VM stack depth limit of ",
                                  options_.max_depth,
                                  " frames exceeded (runaway recursion?)");
  FrameLayout layout = ComputeLayout(counts);
  size_t chunk_index = 0, used_before = 0;
  STRATA_ASSIGN_OR_RETURN(uint8_t * storage,
                          Allocate(layout.total, &chunk_index, &used_before));
  std::memset(storage + layout.i32, 0, layout.ref - layout.i32);
  auto *frame = new (storage) StackFrame();
  frame->kind = kind;
  frame->module = module;
  frame->module_state = module_state;
  frame->function_ordinal = function_ordinal;
  frame->registers.i32 = reinterpret_cast<int32_t *>(storage + layout.i32);
  frame->registers.i64 = reinterpret_cast<int64_t *>(storage + layout.i64);
  frame->registers.f32 = reinterpret_cast<float *>(storage + layout.f32);
  frame->registers.f64 = reinterpret_cast<double *>(storage + layout.f64);
  auto *refs = reinterpret_cast<RefPtr<RefObject> *>(storage + layout.ref);
  for (uint16_t i = 0; i < counts.ref; ++i)
    new (&refs[i]) RefPtr<RefObject>();
  frame->registers.ref = refs;
  frame->registers.counts = counts;
  frame->parent = top_;
  frame->chunk_index_ = chunk_index;
  frame->chunk_used_before_ = used_before;
  top_ = frame;
  ++depth_;
  if (kind == FrameKind::kNative)
    ++native_depth_;
  // A new call means any earlier failure was handled.
  backtrace_attached_ = false;
  return frame;
}

void Stack::PopFrame() {
  StackFrame *frame = top_;
  assert(frame && "pop of an empty stack");
  if (!frame)
    return;
  for (uint16_t i = 0; i < frame->registers.counts.ref; ++i)
    frame->registers.ref[i].~RefPtr<RefObject>();
  size_t chunk_index = frame->chunk_index_;
  size_t used_before = frame->chunk_used_before_;
  top_ = frame->parent;
  if (frame->kind == FrameKind::kNative)
    --native_depth_;
  frame->~StackFrame();
  chunks_[chunk_index].used = used_before;
  current_chunk_ = chunk_index;
  if (--depth_ == 0)
    backtrace_attached_ = false;
}

void Stack::PopFramesTo(uint32_t depth) {
  while (depth_ > depth)
    PopFrame();
}

Status Stack::Yield(RefPtr<WaitSource> source, Deadline deadline) {
  if (!CanYield())
    return FailedPreconditionError(
        "a native function can only yield directly under bytecode in a "
        "resumable invocation");
  if (!source)
    return InvalidArgumentError("yield without a wait source");
  pending_wait_ = WaitRequest{std::move(source), deadline};
  return Status(StatusCode::kDeferred, "invocation waits");
}

void Stack::ResetWindow() {
  uint64_t window = UINT64_MAX;
  if (abort_signal_ && !abort_signal_->deadline().is_infinite())
    window = kClockPollSteps;
  // One past the budget left, so the step that overruns it ends the window.
  if (options_.step_budget != 0 && steps_remaining_ < window)
    window = steps_remaining_ + 1;
  window_ = countdown_ = window;
}

bool Stack::RefillSteps(uint64_t consumed) {
  if (options_.step_budget != 0) {
    if (consumed > steps_remaining_) {
      steps_remaining_ = 0;
      window_ = countdown_ = 1; // Every later step fails too.
      return false;
    }
    steps_remaining_ -= consumed;
  }
  if (abort_signal_ && abort_signal_->deadline().HasPassed()) {
    window_ = countdown_ = 1;
    return false;
  }
  ResetWindow();
  return true;
}

void Stack::set_abort_signal(const AbortSignal *signal) {
  // Steps of the current window count against the budget before it
  // restarts.
  if (options_.step_budget != 0)
    steps_remaining_ -= std::min(steps_remaining_, window_ - countdown_);
  abort_signal_ = signal;
  cancelled_flag_ = signal ? &signal->cancelled_flag() : &kNeverCancelled;
  ResetWindow();
}

Status Stack::StopError() const {
  if (abort_signal_) {
    Status status = abort_signal_->Check();
    if (!status.ok())
      return status;
  }
  return StepBudgetExhaustedError();
}

Status Stack::StepBudgetExhaustedError() const {
  return DeadlineExceededError("VM step budget of ", options_.step_budget,
                               " exhausted");
}

std::string Stack::FormatBacktrace() const {
  std::string text;
  uint32_t index = 0;
  for (const StackFrame *frame = top_; frame; frame = frame->parent, ++index) {
    bool is_inner = index < kBacktraceInnerFrames;
    bool is_outer = index + kBacktraceOuterFrames >= depth_;
    if (is_inner || is_outer) {
      AppendFrameLine(*frame, &text);
    } else if (index == kBacktraceInnerFrames) {
      text += StrCat("\n  ... ",
                     depth_ - kBacktraceInnerFrames - kBacktraceOuterFrames,
                     " frames omitted ...");
    }
  }
  return text;
}

Status Stack::AnnotateWithBacktrace(const Status &status) {
  if (status.ok() || backtrace_attached_ || depth_ == 0)
    return status;
  backtrace_attached_ = true;
  return Status(status.code(), StrCat(status.message(), FormatBacktrace()));
}

} // namespace strata::vm
