// Constants and helpers of the bytecode encoding shared by the compiler's
// encoder and the runtime's verifier, interpreter and disassembler. Header
// only, no dependencies beyond the C++ standard library.
#ifndef STRATA_VM_BYTECODE_H_
#define STRATA_VM_BYTECODE_H_

#include <cstdint>

namespace strata::vm {

// Version of the FlatBuffer schema (schema/module.fbs) layout.
inline constexpr uint32_t kSchemaVersion = 1;
// Version of the instruction set in bytecode_ops.def. Versions only add
// instructions, so modules of any version from kMinBytecodeVersion load.
inline constexpr uint32_t kBytecodeVersion = 2;
inline constexpr uint32_t kMinBytecodeVersion = 1;

enum class Opcode : uint8_t {
#define STRATA_VM_OP(name, mnemonic, format) name,
#include "strata/vm/bytecode_ops.def"
#undef STRATA_VM_OP
  kCount,
};

struct OpcodeInfo {
  const char *mnemonic;
  const char *format;
};

inline constexpr OpcodeInfo kOpcodeInfos[] = {
#define STRATA_VM_OP(name, mnemonic, format) {mnemonic, format},
#include "strata/vm/bytecode_ops.def"
#undef STRATA_VM_OP
};

inline constexpr uint32_t kOpcodeCount = static_cast<uint32_t>(Opcode::kCount);
static_assert(kOpcodeCount <= 256, "opcodes are one byte");

// The first instruction each version added; a module may only use
// instructions of its own version.
inline constexpr uint32_t FirstOpcodeAfterVersion(uint32_t version) {
  return version <= 1 ? static_cast<uint32_t>(Opcode::MathF32) : kOpcodeCount;
}

// Math functions of math.* (unary) and math2.* (binary) instructions.
enum class UnaryMathFunction : uint32_t {
#define STRATA_VM_MATH_UNARY(name, text, function) name,
#include "strata/vm/math_functions.def"
  kCount,
};
enum class BinaryMathFunction : uint32_t {
#define STRATA_VM_MATH_BINARY(name, text, function) name,
#include "strata/vm/math_functions.def"
  kCount,
};
inline constexpr const char *kUnaryMathFunctionNames[] = {
#define STRATA_VM_MATH_UNARY(name, text, function) text,
#include "strata/vm/math_functions.def"
};
inline constexpr const char *kBinaryMathFunctionNames[] = {
#define STRATA_VM_MATH_BINARY(name, text, function) text,
#include "strata/vm/math_functions.def"
};
inline constexpr uint32_t kUnaryMathFunctionCount =
    static_cast<uint32_t>(UnaryMathFunction::kCount);
inline constexpr uint32_t kBinaryMathFunctionCount =
    static_cast<uint32_t>(BinaryMathFunction::kCount);

// Register banks, in the order used by typed registers and register counts.
enum class RegisterBank : uint8_t {
  kI32 = 0,
  kI64 = 1,
  kF32 = 2,
  kF64 = 3,
  kRef = 4,
};
inline constexpr int kRegisterBankCount = 5;

// Typed register: bank in bits 15..13, ordinal in bits 12..0.
inline constexpr uint16_t kTypedRegisterOrdinalMask = 0x1FFF;
inline constexpr uint32_t kMaxRegistersPerBank = 0x2000;
inline constexpr uint16_t MakeTypedRegister(RegisterBank bank,
                                            uint16_t ordinal) {
  return static_cast<uint16_t>((static_cast<uint16_t>(bank) << 13) |
                               (ordinal & kTypedRegisterOrdinalMask));
}
inline constexpr uint8_t TypedRegisterBank(uint16_t reg) { return reg >> 13; }
inline constexpr uint16_t TypedRegisterOrdinal(uint16_t reg) {
  return reg & kTypedRegisterOrdinalMask;
}

// Callee operand: bit 31 selects the import table.
inline constexpr uint32_t kCalleeImportBit = 0x80000000u;

// Name of the optional initializer run when a module is registered.
inline constexpr const char *kInitializerFunctionName = "__init";

} // namespace strata::vm

#endif // STRATA_VM_BYTECODE_H_
