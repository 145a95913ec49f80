// Access to a frame's registers through typed register operands (bank +
// ordinal), used by the interpreter for calls, returns and branch remaps.
// Internal to the VM.
#ifndef STRATA_VM_REGISTER_ACCESS_H_
#define STRATA_VM_REGISTER_ACCESS_H_

#include <bit>
#include <cstdint>
#include <vector>

#include "strata/vm/bytecode.h"
#include "strata/vm/stack.h"
#include "strata/vm/value.h"

namespace strata::vm {

// One register's contents, used for parallel moves.
struct RegisterValue {
  uint64_t bits = 0;
  RefPtr<RefObject> ref;
};

inline RegisterValue ReadTyped(const FrameRegisters &registers, uint16_t reg) {
  uint16_t ordinal = TypedRegisterOrdinal(reg);
  RegisterValue value;
  switch (static_cast<RegisterBank>(TypedRegisterBank(reg))) {
  case RegisterBank::kI32:
    value.bits = static_cast<uint32_t>(registers.i32[ordinal]);
    break;
  case RegisterBank::kI64:
    value.bits = static_cast<uint64_t>(registers.i64[ordinal]);
    break;
  case RegisterBank::kF32:
    value.bits = std::bit_cast<uint32_t>(registers.f32[ordinal]);
    break;
  case RegisterBank::kF64:
    value.bits = std::bit_cast<uint64_t>(registers.f64[ordinal]);
    break;
  case RegisterBank::kRef:
    value.ref = registers.ref[ordinal];
    break;
  }
  return value;
}

inline void WriteTyped(FrameRegisters &registers, uint16_t reg,
                       RegisterValue value) {
  uint16_t ordinal = TypedRegisterOrdinal(reg);
  switch (static_cast<RegisterBank>(TypedRegisterBank(reg))) {
  case RegisterBank::kI32:
    registers.i32[ordinal] = static_cast<int32_t>(value.bits);
    break;
  case RegisterBank::kI64:
    registers.i64[ordinal] = static_cast<int64_t>(value.bits);
    break;
  case RegisterBank::kF32:
    registers.f32[ordinal] =
        std::bit_cast<float>(static_cast<uint32_t>(value.bits));
    break;
  case RegisterBank::kF64:
    registers.f64[ordinal] = std::bit_cast<double>(value.bits);
    break;
  case RegisterBank::kRef:
    registers.ref[ordinal] = std::move(value.ref);
    break;
  }
}

inline Value ToValue(const FrameRegisters &registers, uint16_t reg) {
  uint16_t ordinal = TypedRegisterOrdinal(reg);
  switch (static_cast<RegisterBank>(TypedRegisterBank(reg))) {
  case RegisterBank::kI32:
    return Value::I32(registers.i32[ordinal]);
  case RegisterBank::kI64:
    return Value::I64(registers.i64[ordinal]);
  case RegisterBank::kF32:
    return Value::F32(registers.f32[ordinal]);
  case RegisterBank::kF64:
    return Value::F64(registers.f64[ordinal]);
  case RegisterBank::kRef:
    return Value::Ref(registers.ref[ordinal]);
  }
  return Value();
}

// Appends the value of typed register `reg` to `values`, built in place: a
// Value copied out of a temporary costs a store-forwarding stall per
// argument on the import-call path.
inline void AppendValue(std::vector<Value> &values,
                        const FrameRegisters &registers, uint16_t reg) {
  uint16_t ordinal = TypedRegisterOrdinal(reg);
  switch (static_cast<RegisterBank>(TypedRegisterBank(reg))) {
  case RegisterBank::kI32:
    values.emplace_back(Value::RawScalar{}, ValueType::kI32,
                        registers.i32[ordinal]);
    return;
  case RegisterBank::kI64:
    values.emplace_back(Value::RawScalar{}, ValueType::kI64,
                        registers.i64[ordinal]);
    return;
  case RegisterBank::kF32:
    values.emplace_back(
        Value::RawScalar{}, ValueType::kF32,
        int64_t(std::bit_cast<uint32_t>(registers.f32[ordinal])));
    return;
  case RegisterBank::kF64:
    values.emplace_back(Value::RawScalar{}, ValueType::kF64,
                        std::bit_cast<int64_t>(registers.f64[ordinal]));
    return;
  case RegisterBank::kRef:
    values.emplace_back(registers.ref[ordinal]);
    return;
  }
  values.emplace_back();
}

// Stores `value` into typed register `reg`; false on a type mismatch (only
// possible when a callee module breaks its contract).
inline bool FromValue(FrameRegisters &registers, uint16_t reg, Value &&value) {
  uint16_t ordinal = TypedRegisterOrdinal(reg);
  RegisterBank bank = static_cast<RegisterBank>(TypedRegisterBank(reg));
  if (value.type() == ValueType::kNone && bank == RegisterBank::kRef) {
    registers.ref[ordinal].reset();
    return true;
  }
  if (value.type() == ValueType::kNone || RegisterBankOf(value.type()) != bank)
    return false;
  switch (bank) {
  case RegisterBank::kI32:
    registers.i32[ordinal] = value.i32();
    break;
  case RegisterBank::kI64:
    registers.i64[ordinal] = value.i64();
    break;
  case RegisterBank::kF32:
    registers.f32[ordinal] = value.f32();
    break;
  case RegisterBank::kF64:
    registers.f64[ordinal] = value.f64();
    break;
  case RegisterBank::kRef:
    registers.ref[ordinal] = value.TakeRef();
    break;
  }
  return true;
}

} // namespace strata::vm

#endif // STRATA_VM_REGISTER_ACCESS_H_
