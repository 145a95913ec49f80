#include "strata/vm/bytecode_interpreter.h"

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "strata/vm/bytecode.h"
#include "strata/vm/bytecode_decoder.h"
#include "strata/vm/ref_ops.h"
#include "strata/vm/register_access.h"
#include "strata/vm/scalar_ext_ops.h"
#include "strata/vm/scalar_ops.h"

namespace strata::vm {
namespace {

// Operand reader over verified code: no bounds checks needed.
struct CodeCursor {
  const uint8_t *code;
  uint32_t pc;

  uint8_t U8() { return code[pc++]; }
  uint16_t U16() {
    uint16_t value = LoadU16(code + pc);
    pc += 2;
    return value;
  }
  uint32_t U32() {
    uint32_t value = LoadU32(code + pc);
    pc += 4;
    return value;
  }
  uint64_t U64() {
    uint64_t value = LoadU64(code + pc);
    pc += 8;
    return value;
  }
};

// Next free argument register of each bank while binding call arguments.
struct ArgumentBinder {
  uint16_t next[kRegisterBankCount] = {};

  uint16_t Next(RegisterBank bank) {
    uint16_t ordinal = next[static_cast<int>(bank)]++;
    return MakeTypedRegister(bank, ordinal);
  }
};

class Interpreter {
public:
  Interpreter(Stack &stack, BytecodeModule &module, BytecodeModuleState &state,
              uint32_t entry_depth)
      : stack_(stack), module_(module), state_(state),
        entry_depth_(entry_depth),
        call_buffers_(stack.call_buffers(entry_depth)) {}

  Status Execute(uint32_t function_ordinal, std::span<const Value> arguments,
                 std::span<Value> results) {
    Status status = Enter(function_ordinal, arguments);
    if (status.ok())
      status = Run(results);
    return Finish(std::move(status));
  }

  // Continues this activation at its top frame `frame`, whose pc is a call
  // of an import. With `import_results` the call completed in an inner
  // activation: its results are stored and execution goes on after it.
  // Without, the call is executed again (a native function that yielded).
  Status Resume(StackFrame *frame, std::span<Value> import_results,
                bool has_import_results, std::span<Value> results) {
    SwitchTo(frame, frame->pc);
    Status status = OkStatus();
    if (has_import_results)
      status = CompleteCall(import_results);
    if (status.ok())
      status = Run(results);
    return Finish(std::move(status));
  }

private:
  // A DEFERRED status leaves every frame in place for Resume; failures get
  // a backtrace and unwind this activation.
  Status Finish(Status status) {
    if (!status.ok() && status.code() != StatusCode::kDeferred) {
      status = stack_.AnnotateWithBacktrace(status);
      stack_.PopFramesTo(entry_depth_);
    }
    return status;
  }

  // Stores `values` in the result registers of the call instruction at the
  // cursor and moves past it.
  Status CompleteCall(std::span<Value> values) {
    Opcode opcode = static_cast<Opcode>(cursor_.U8());
    if (opcode != Opcode::Call && opcode != Opcode::CallVariadic)
      return InternalError("resumed frame does not stop at a call");
    cursor_.U32(); // callee
    if (opcode == Opcode::CallVariadic)
      cursor_.pc += 2u * cursor_.U16();
    cursor_.pc += 2u * cursor_.U16(); // arguments
    uint16_t result_count = cursor_.U16();
    const uint8_t *result_regs = cursor_.code + cursor_.pc;
    cursor_.pc += 2u * result_count;
    if (result_count != values.size())
      return InternalError("resumed call expects ", result_count,
                           " results, got ", values.size());
    for (uint16_t i = 0; i < result_count; ++i) {
      if (!FromValue(frame_->registers, LoadU16(result_regs + 2 * i),
                     std::move(values[i])))
        return InternalError("resumed call got a value of the wrong type for "
                             "result ",
                             i);
    }
    return OkStatus();
  }

  // Pushes the entry frame and binds the host-provided arguments.
  Status Enter(uint32_t function_ordinal, std::span<const Value> arguments) {
    const BytecodeFunction &function = module_.functions()[function_ordinal];
    STRATA_ASSIGN_OR_RETURN(StackFrame * frame,
                            stack_.PushFrame(FrameKind::kBytecode, &module_,
                                             &state_, function_ordinal,
                                             function.name,
                                             function.register_counts));
    frame->is_entry = true;
    ArgumentBinder binder;
    for (const Value &argument : arguments) {
      if (argument.type() == ValueType::kNone ||
          !FromValue(frame->registers,
                     binder.Next(RegisterBankOf(argument.type())),
                     Value(argument)))
        return InvalidArgumentError("argument of type ",
                                    ValueTypeName(argument.type()),
                                    " cannot be passed to bytecode");
    }
    SwitchTo(frame, 0);
    return OkStatus();
  }

  void SwitchTo(StackFrame *frame, uint32_t pc) {
    frame_ = frame;
    cursor_.code = module_.FunctionCode(frame->function_ordinal).data();
    cursor_.pc = pc;
  }

  // Applies a branch's remap list (parallel move) and jumps.
  Status TakeBranch(uint32_t target, uint16_t remap_count,
                    const uint8_t *remaps) {
    if (!stack_.ConsumeStep())
      return stack_.StopError();
    FrameRegisters &registers = frame_->registers;
    if (remap_count == 1) {
      WriteTyped(registers, LoadU16(remaps + 2),
                 ReadTyped(registers, LoadU16(remaps)));
    } else if (remap_count > 1) {
      remap_scratch_.clear();
      for (uint16_t i = 0; i < remap_count; ++i)
        remap_scratch_.push_back(ReadTyped(registers, LoadU16(remaps + 4 * i)));
      for (uint16_t i = 0; i < remap_count; ++i)
        WriteTyped(registers, LoadU16(remaps + 4 * i + 2),
                   std::move(remap_scratch_[i]));
    }
    cursor_.pc = target;
    return OkStatus();
  }

  // Reads a 'b' operand at the cursor: target and remap list.
  void ReadBranch(uint32_t *target, uint16_t *remap_count,
                  const uint8_t **remaps) {
    *target = cursor_.U32();
    *remap_count = cursor_.U16();
    *remaps = cursor_.code + cursor_.pc;
    cursor_.pc += 4u * *remap_count;
  }

  Status CallInternal(uint32_t callee, uint16_t argument_count,
                      const uint8_t *argument_regs,
                      uint32_t result_list_offset) {
    if (!stack_.ConsumeStep())
      return stack_.StopError();
    const BytecodeFunction &function = module_.functions()[callee];
    frame_->return_list_offset = result_list_offset;
    StackFrame *caller = frame_;
    STRATA_ASSIGN_OR_RETURN(StackFrame * frame,
                            stack_.PushFrame(FrameKind::kBytecode, &module_,
                                             &state_, callee, function.name,
                                             function.register_counts));
    ArgumentBinder binder;
    for (uint16_t i = 0; i < argument_count; ++i) {
      uint16_t source = LoadU16(argument_regs + 2 * i);
      uint16_t target =
          binder.Next(static_cast<RegisterBank>(TypedRegisterBank(source)));
      WriteTyped(frame->registers, target,
                 ReadTyped(caller->registers, source));
    }
    SwitchTo(frame, 0);
    return OkStatus();
  }

  // Appends typed register `reg` to the import call's arguments. A ref is
  // lent, not copied: moved out of its register and back after the call, so
  // a call costs no reference-count updates per ref argument (the callee
  // sees const arguments: it retains what it keeps). A register passed
  // twice is lent once and copied for its later uses.
  void AppendArgument(const FrameRegisters &registers, uint16_t reg) {
    std::vector<Value> &arguments = call_buffers_.arguments;
    if (static_cast<RegisterBank>(TypedRegisterBank(reg)) !=
        RegisterBank::kRef) {
      AppendValue(arguments, registers, reg);
      return;
    }
    uint16_t ordinal = TypedRegisterOrdinal(reg);
    RefPtr<RefObject> &slot = registers.ref[ordinal];
    if (slot) {
      call_buffers_.lent_refs.emplace_back(uint32_t(arguments.size()), ordinal);
      arguments.emplace_back(std::move(slot));
      return;
    }
    for (auto [index, lent_ordinal] : call_buffers_.lent_refs) {
      if (lent_ordinal == ordinal) {
        arguments.emplace_back(arguments[index].ref_ptr());
        return;
      }
    }
    arguments.emplace_back(RefPtr<RefObject>());
  }

  Status CallImport(uint32_t import_ordinal, uint16_t segment_count,
                    const uint8_t *segment_sizes, uint16_t argument_count,
                    const uint8_t *argument_regs, uint16_t result_count,
                    const uint8_t *result_regs) {
    if (!stack_.ConsumeStepAndPollClock())
      return stack_.StopError();
    const Function &target = state_.imports[import_ordinal];
    if (!target)
      return NotFoundError("optional import '",
                           module_.imports()[import_ordinal].full_name,
                           "' is not available");
    const Signature &signature = module_.imports()[import_ordinal].signature;
    const FrameRegisters &registers = frame_->registers;
    // Arguments in the Module::Call form: variadic segments get their
    // tuple count in front. The buffers are the stack's, reused from call
    // to call (a program makes an import call per dispatch).
    std::vector<Value> &arguments = call_buffers_.arguments;
    std::vector<Value> &results = call_buffers_.results;
    arguments.clear();
    arguments.reserve(argument_count + segment_count);
    call_buffers_.lent_refs.clear();
    uint16_t next_register = 0;
    uint16_t segment = 0;
    for (const SignatureEntry &entry : signature.arguments()) {
      if (!entry.is_variadic()) {
        AppendArgument(registers, LoadU16(argument_regs + 2 * next_register++));
        continue;
      }
      uint16_t tuple_count = LoadU16(segment_sizes + 2 * segment++);
      arguments.emplace_back(Value::RawScalar{}, ValueType::kI32, tuple_count);
      size_t value_count = size_t(tuple_count) * entry.tuple_types.size();
      for (size_t i = 0; i < value_count; ++i)
        AppendArgument(registers, LoadU16(argument_regs + 2 * next_register++));
    }
    results.clear();
    results.resize(result_count);
    // The verifier matched this call site's registers to the import's
    // signature, and linking matched that to the export's.
    Status status = target.Call(stack_, arguments, results,
                                ArgumentCheck::kCheckedByCaller);
    // The lent references go back to their registers, failed call or not.
    for (auto [index, ordinal] : call_buffers_.lent_refs)
      frame_->registers.ref[ordinal] = arguments[index].TakeRef();
    // Drop the references the other arguments hold now, not at the next
    // call.
    arguments.clear();
    STRATA_RETURN_IF_ERROR(status);
    for (uint16_t i = 0; i < result_count; ++i) {
      if (!FromValue(frame_->registers, LoadU16(result_regs + 2 * i),
                     std::move(results[i])))
        return InternalError("import '",
                             module_.imports()[import_ordinal].full_name,
                             "' returned a value of the wrong type for "
                             "result ",
                             i);
    }
    results.clear();
    return OkStatus();
  }

  // Handles `ret`; sets *finished when the entry frame returned.
  void Return(uint16_t count, const uint8_t *regs, std::span<Value> results,
              bool *finished) {
    StackFrame *callee = frame_;
    if (stack_.depth() == entry_depth_ + 1) {
      for (uint16_t i = 0; i < count; ++i)
        results[i] = ToValue(callee->registers, LoadU16(regs + 2 * i));
      stack_.PopFrame();
      *finished = true;
      return;
    }
    StackFrame *caller = callee->parent;
    const uint8_t *caller_code =
        module_.FunctionCode(caller->function_ordinal).data();
    uint32_t list_offset = caller->return_list_offset;
    const uint8_t *targets = caller_code + list_offset + 2;
    for (uint16_t i = 0; i < count; ++i) {
      RegisterValue value = ReadTyped(callee->registers, LoadU16(regs + 2 * i));
      WriteTyped(caller->registers, LoadU16(targets + 2 * i), std::move(value));
    }
    stack_.PopFrame();
    SwitchTo(caller, list_offset + 2 + 2u * count);
  }

  Status Run(std::span<Value> results);

  Stack &stack_;
  BytecodeModule &module_;
  BytecodeModuleState &state_;
  const uint32_t entry_depth_;
  StackFrame *frame_ = nullptr;
  CodeCursor cursor_ = {nullptr, 0};
  std::vector<RegisterValue> remap_scratch_;
  Stack::CallBuffers &call_buffers_;
};

// Operand helpers for the dispatch loop below.
#define REG() cursor_.U16()
#define BINARY(bank, expr)                                                     \
  {                                                                            \
    uint16_t d = REG(), x = REG(), y = REG();                                  \
    auto a = r.bank[x];                                                        \
    auto b = r.bank[y];                                                        \
    r.bank[d] = (expr);                                                        \
    break;                                                                     \
  }
#define UNARY(dst_bank, src_bank, expr)                                        \
  {                                                                            \
    uint16_t d = REG(), x = REG();                                             \
    auto a = r.src_bank[x];                                                    \
    r.dst_bank[d] = (expr);                                                    \
    break;                                                                     \
  }
#define COMPARE(bank, expr)                                                    \
  {                                                                            \
    uint16_t d = REG(), x = REG(), y = REG();                                  \
    auto a = r.bank[x];                                                        \
    auto b = r.bank[y];                                                        \
    r.i32[d] = (expr) ? 1 : 0;                                                 \
    break;                                                                     \
  }
#define CHECKED_BINARY(bank, type, function)                                   \
  {                                                                            \
    uint16_t d = REG(), x = REG(), y = REG();                                  \
    type value;                                                                \
    STRATA_RETURN_IF_ERROR(function<type>(r.bank[x], r.bank[y], &value));      \
    r.bank[d] = value;                                                         \
    break;                                                                     \
  }
#define SELECT(bank)                                                           \
  {                                                                            \
    uint16_t d = REG(), c = REG(), x = REG(), y = REG();                       \
    r.bank[d] = r.i32[c] ? r.bank[x] : r.bank[y];                              \
    break;                                                                     \
  }
#define GLOBAL_LOAD(bank, globals)                                             \
  {                                                                            \
    uint16_t d = REG();                                                        \
    r.bank[d] = state_.globals[cursor_.U32()];                                 \
    break;                                                                     \
  }
#define GLOBAL_STORE(bank, globals)                                            \
  {                                                                            \
    uint32_t g = cursor_.U32();                                                \
    state_.globals[g] = r.bank[REG()];                                         \
    break;                                                                     \
  }

Status Interpreter::Run(std::span<Value> results) {
  while (true) {
    FrameRegisters &r = frame_->registers;
    frame_->pc = cursor_.pc;
    const Opcode opcode = static_cast<Opcode>(cursor_.U8());
    switch (opcode) {
    // --- constants and moves ---
    case Opcode::ConstI32: {
      uint16_t d = REG();
      r.i32[d] = static_cast<int32_t>(cursor_.U32());
      break;
    }
    case Opcode::ConstI64: {
      uint16_t d = REG();
      r.i64[d] = static_cast<int64_t>(cursor_.U64());
      break;
    }
    case Opcode::ConstF32: {
      uint16_t d = REG();
      r.f32[d] = std::bit_cast<float>(cursor_.U32());
      break;
    }
    case Opcode::ConstF64: {
      uint16_t d = REG();
      r.f64[d] = std::bit_cast<double>(cursor_.U64());
      break;
    }
    case Opcode::ConstRefZero:
      r.ref[REG()].reset();
      break;
    case Opcode::ConstRefRodata: {
      uint16_t d = REG();
      uint32_t ordinal = cursor_.U32();
      r.ref[d] = state_.rodata_buffers[ordinal];
      break;
    }
    case Opcode::MovI32:
      UNARY(i32, i32, a)
    case Opcode::MovI64:
      UNARY(i64, i64, a)
    case Opcode::MovF32:
      UNARY(f32, f32, a)
    case Opcode::MovF64:
      UNARY(f64, f64, a)
    case Opcode::MovRef: {
      uint16_t d = REG(), x = REG();
      r.ref[d] = r.ref[x];
      break;
    }
    case Opcode::SelectI32:
      SELECT(i32)
    case Opcode::SelectI64:
      SELECT(i64)
    case Opcode::SelectF32:
      SELECT(f32)
    case Opcode::SelectF64:
      SELECT(f64)
    case Opcode::SelectRef: {
      uint16_t d = REG(), c = REG(), x = REG(), y = REG();
      RefPtr<RefObject> chosen = r.i32[c] ? r.ref[x] : r.ref[y];
      r.ref[d] = std::move(chosen);
      break;
    }

    // --- globals ---
    case Opcode::GlobalLoadI32:
      GLOBAL_LOAD(i32, globals_i32)
    case Opcode::GlobalLoadI64:
      GLOBAL_LOAD(i64, globals_i64)
    case Opcode::GlobalLoadF32:
      GLOBAL_LOAD(f32, globals_f32)
    case Opcode::GlobalLoadF64:
      GLOBAL_LOAD(f64, globals_f64)
    case Opcode::GlobalLoadRef:
      GLOBAL_LOAD(ref, globals_ref)
    case Opcode::GlobalStoreI32:
      GLOBAL_STORE(i32, globals_i32)
    case Opcode::GlobalStoreI64:
      GLOBAL_STORE(i64, globals_i64)
    case Opcode::GlobalStoreF32:
      GLOBAL_STORE(f32, globals_f32)
    case Opcode::GlobalStoreF64:
      GLOBAL_STORE(f64, globals_f64)
    case Opcode::GlobalStoreRef:
      GLOBAL_STORE(ref, globals_ref)

    // --- i32 arithmetic ---
    case Opcode::AddI32:
      BINARY(i32, WrappingAdd(a, b))
    case Opcode::SubI32:
      BINARY(i32, WrappingSub(a, b))
    case Opcode::MulI32:
      BINARY(i32, WrappingMul(a, b))
    case Opcode::DivI32S:
      CHECKED_BINARY(i32, int32_t, DivideSigned)
    case Opcode::DivI32U:
      CHECKED_BINARY(i32, int32_t, DivideUnsigned)
    case Opcode::RemI32S:
      CHECKED_BINARY(i32, int32_t, RemainderSigned)
    case Opcode::RemI32U:
      CHECKED_BINARY(i32, int32_t, RemainderUnsigned)
    case Opcode::AndI32:
      BINARY(i32, a & b)
    case Opcode::OrI32:
      BINARY(i32, a | b)
    case Opcode::XorI32:
      BINARY(i32, a ^ b)
    case Opcode::ShlI32:
      BINARY(i32, ShiftLeft(a, b))
    case Opcode::ShrI32S:
      BINARY(i32, ShiftRightSigned(a, b))
    case Opcode::ShrI32U:
      BINARY(i32, ShiftRightUnsigned(a, b))
    case Opcode::NotI32:
      UNARY(i32, i32, ~a)
    case Opcode::MinI32S:
      BINARY(i32, a < b ? a : b)
    case Opcode::MaxI32S:
      BINARY(i32, a > b ? a : b)

    // --- i64 arithmetic ---
    case Opcode::AddI64:
      BINARY(i64, WrappingAdd(a, b))
    case Opcode::SubI64:
      BINARY(i64, WrappingSub(a, b))
    case Opcode::MulI64:
      BINARY(i64, WrappingMul(a, b))
    case Opcode::DivI64S:
      CHECKED_BINARY(i64, int64_t, DivideSigned)
    case Opcode::DivI64U:
      CHECKED_BINARY(i64, int64_t, DivideUnsigned)
    case Opcode::RemI64S:
      CHECKED_BINARY(i64, int64_t, RemainderSigned)
    case Opcode::RemI64U:
      CHECKED_BINARY(i64, int64_t, RemainderUnsigned)
    case Opcode::AndI64:
      BINARY(i64, a & b)
    case Opcode::OrI64:
      BINARY(i64, a | b)
    case Opcode::XorI64:
      BINARY(i64, a ^ b)
    case Opcode::ShlI64:
      BINARY(i64, ShiftLeft(a, b))
    case Opcode::ShrI64S:
      BINARY(i64, ShiftRightSigned(a, b))
    case Opcode::ShrI64U:
      BINARY(i64, ShiftRightUnsigned(a, b))
    case Opcode::NotI64:
      UNARY(i64, i64, ~a)
    case Opcode::MinI64S:
      BINARY(i64, a < b ? a : b)
    case Opcode::MaxI64S:
      BINARY(i64, a > b ? a : b)

    // --- f32 / f64 arithmetic ---
    case Opcode::AddF32:
      BINARY(f32, a + b)
    case Opcode::SubF32:
      BINARY(f32, a - b)
    case Opcode::MulF32:
      BINARY(f32, a * b)
    case Opcode::DivF32:
      BINARY(f32, a / b)
    case Opcode::NegF32:
      UNARY(f32, f32, -a)
    case Opcode::AbsF32:
      UNARY(f32, f32, std::fabs(a))
    case Opcode::MinF32:
      BINARY(f32, FloatMin(a, b))
    case Opcode::MaxF32:
      BINARY(f32, FloatMax(a, b))
    case Opcode::SqrtF32:
      UNARY(f32, f32, std::sqrt(a))
    case Opcode::AddF64:
      BINARY(f64, a + b)
    case Opcode::SubF64:
      BINARY(f64, a - b)
    case Opcode::MulF64:
      BINARY(f64, a * b)
    case Opcode::DivF64:
      BINARY(f64, a / b)
    case Opcode::NegF64:
      UNARY(f64, f64, -a)
    case Opcode::AbsF64:
      UNARY(f64, f64, std::fabs(a))
    case Opcode::MinF64:
      BINARY(f64, FloatMin(a, b))
    case Opcode::MaxF64:
      BINARY(f64, FloatMax(a, b))
    case Opcode::SqrtF64:
      UNARY(f64, f64, std::sqrt(a))

    // --- comparisons ---
    case Opcode::CmpEqI32:
      COMPARE(i32, a == b)
    case Opcode::CmpNeI32:
      COMPARE(i32, a != b)
    case Opcode::CmpLtI32S:
      COMPARE(i32, a < b)
    case Opcode::CmpLtI32U:
      COMPARE(i32, uint32_t(a) < uint32_t(b))
    case Opcode::CmpLeI32S:
      COMPARE(i32, a <= b)
    case Opcode::CmpLeI32U:
      COMPARE(i32, uint32_t(a) <= uint32_t(b))
    case Opcode::CmpNzI32:
      UNARY(i32, i32, a != 0 ? 1 : 0)
    case Opcode::CmpEqI64:
      COMPARE(i64, a == b)
    case Opcode::CmpNeI64:
      COMPARE(i64, a != b)
    case Opcode::CmpLtI64S:
      COMPARE(i64, a < b)
    case Opcode::CmpLtI64U:
      COMPARE(i64, uint64_t(a) < uint64_t(b))
    case Opcode::CmpLeI64S:
      COMPARE(i64, a <= b)
    case Opcode::CmpLeI64U:
      COMPARE(i64, uint64_t(a) <= uint64_t(b))
    case Opcode::CmpEqF32:
      COMPARE(f32, a == b)
    case Opcode::CmpLtF32:
      COMPARE(f32, a < b)
    case Opcode::CmpLeF32:
      COMPARE(f32, a <= b)
    case Opcode::CmpEqF64:
      COMPARE(f64, a == b)
    case Opcode::CmpLtF64:
      COMPARE(f64, a < b)
    case Opcode::CmpLeF64:
      COMPARE(f64, a <= b)
    case Opcode::CmpEqRef:
      COMPARE(ref, a.get() == b.get())
    case Opcode::CmpNzRef: {
      uint16_t d = REG(), x = REG();
      r.i32[d] = r.ref[x] ? 1 : 0;
      break;
    }

    // --- casts ---
    case Opcode::TruncI64I32:
      UNARY(i32, i64, static_cast<int32_t>(static_cast<uint32_t>(a)))
    case Opcode::ExtI32I64S:
      UNARY(i64, i32, static_cast<int64_t>(a))
    case Opcode::ExtI32I64U:
      UNARY(i64, i32, static_cast<int64_t>(static_cast<uint32_t>(a)))
    case Opcode::CastSI32F32:
      UNARY(f32, i32, static_cast<float>(a))
    case Opcode::CastF32SI32:
      UNARY(i32, f32, (SaturatingCast<int32_t, float>(a)))
    case Opcode::CastSI64F64:
      UNARY(f64, i64, static_cast<double>(a))
    case Opcode::CastF64SI64:
      UNARY(i64, f64, (SaturatingCast<int64_t, double>(a)))
    case Opcode::ExtF32F64:
      UNARY(f64, f32, static_cast<double>(a))
    case Opcode::TruncF64F32:
      UNARY(f32, f64, static_cast<float>(a))

    // --- control flow ---
    case Opcode::Branch: {
      uint32_t target;
      uint16_t remap_count;
      const uint8_t *remaps;
      ReadBranch(&target, &remap_count, &remaps);
      STRATA_RETURN_IF_ERROR(TakeBranch(target, remap_count, remaps));
      break;
    }
    case Opcode::CondBranch: {
      int32_t condition = r.i32[REG()];
      uint32_t true_target, false_target;
      uint16_t true_count, false_count;
      const uint8_t *true_remaps, *false_remaps;
      ReadBranch(&true_target, &true_count, &true_remaps);
      ReadBranch(&false_target, &false_count, &false_remaps);
      if (condition)
        STRATA_RETURN_IF_ERROR(
            TakeBranch(true_target, true_count, true_remaps));
      else
        STRATA_RETURN_IF_ERROR(
            TakeBranch(false_target, false_count, false_remaps));
      break;
    }
    case Opcode::Call:
    case Opcode::CallVariadic: {
      uint32_t callee = cursor_.U32();
      uint16_t segment_count = 0;
      const uint8_t *segment_sizes = nullptr;
      if (opcode == Opcode::CallVariadic) {
        segment_count = cursor_.U16();
        segment_sizes = cursor_.code + cursor_.pc;
        cursor_.pc += 2u * segment_count;
      }
      uint16_t argument_count = cursor_.U16();
      const uint8_t *argument_regs = cursor_.code + cursor_.pc;
      cursor_.pc += 2u * argument_count;
      uint32_t result_list_offset = cursor_.pc;
      uint16_t result_count = cursor_.U16();
      const uint8_t *result_regs = cursor_.code + cursor_.pc;
      cursor_.pc += 2u * result_count;
      if (callee & kCalleeImportBit) {
        STRATA_RETURN_IF_ERROR(CallImport(
            callee & ~kCalleeImportBit, segment_count, segment_sizes,
            argument_count, argument_regs, result_count, result_regs));
      } else {
        STRATA_RETURN_IF_ERROR(CallInternal(callee, argument_count,
                                            argument_regs, result_list_offset));
      }
      break;
    }
    case Opcode::Return: {
      uint16_t count = cursor_.U16();
      const uint8_t *regs = cursor_.code + cursor_.pc;
      bool finished = false;
      Return(count, regs, results, &finished);
      if (finished)
        return OkStatus();
      break;
    }
    case Opcode::Fail: {
      int32_t code = r.i32[REG()];
      std::span<const uint8_t> message = module_.rodata(cursor_.U32());
      return Status(FailCodeFromInt(code),
                    std::string(message.begin(), message.end()));
    }

    // --- math, casts (scalar_ext_ops.cpp), lists and buffers (ref_ops.cpp)
    default:
      if (IsScalarExtOp(opcode))
        STRATA_RETURN_IF_ERROR(
            ExecuteScalarExtOp(opcode, cursor_.code, &cursor_.pc, r));
      else
        STRATA_RETURN_IF_ERROR(
            ExecuteRefOp(opcode, cursor_.code, &cursor_.pc, r));
      break;
    }
  }
}

#undef REG
#undef BINARY
#undef UNARY
#undef COMPARE
#undef CHECKED_BINARY
#undef SELECT
#undef GLOBAL_LOAD
#undef GLOBAL_STORE

} // namespace

Status ExecuteBytecodeFunction(Stack &stack, BytecodeModule &module,
                               BytecodeModuleState &state,
                               uint32_t function_ordinal,
                               std::span<const Value> arguments,
                               std::span<Value> results) {
  Interpreter interpreter(stack, module, state, stack.depth());
  return interpreter.Execute(function_ordinal, arguments, results);
}

Status ResumeBytecodeFrames(Stack &stack, uint32_t base_depth,
                            std::span<Value> results) {
  // Results of an inner activation that finished, for the call instruction
  // its caller stopped at.
  std::vector<Value> carried;
  bool has_carried = false;
  while (true) {
    StackFrame *top = stack.top();
    if (!top || stack.depth() <= base_depth ||
        top->kind != FrameKind::kBytecode)
      return InternalError("no suspended bytecode frames to resume");
    // The activation owning `top`: frames down to its entry frame.
    StackFrame *entry = top;
    uint32_t entry_depth = stack.depth() - 1;
    while (!entry->is_entry && entry->parent) {
      entry = entry->parent;
      --entry_depth;
    }
    if (entry_depth < base_depth)
      return InternalError("suspended frames cross the invocation's base");
    auto &module = const_cast<BytecodeModule &>(
        static_cast<const BytecodeModule &>(*entry->module));
    auto &state = *static_cast<BytecodeModuleState *>(entry->module_state);
    bool is_outermost = entry_depth == base_depth;
    std::vector<Value> activation_results;
    if (!is_outermost)
      activation_results.resize(module.functions()[entry->function_ordinal]
                                    .signature.result_types()
                                    .size());
    Interpreter interpreter(stack, module, state, entry_depth);
    Status status = interpreter.Resume(
        top, carried, has_carried,
        is_outermost ? results : std::span<Value>(activation_results));
    if (!status.ok()) {
      if (status.code() != StatusCode::kDeferred)
        stack.PopFramesTo(base_depth);
      return status;
    }
    if (is_outermost)
      return OkStatus();
    carried = std::move(activation_results);
    has_carried = true;
  }
}

} // namespace strata::vm
