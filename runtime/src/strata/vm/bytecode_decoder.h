// Decoding of single instructions per bytecode_ops.def, bounds-checked.
// Used by the verifier and the disassembler; the interpreter reads operands
// directly because it only runs verified code.
#ifndef STRATA_VM_BYTECODE_DECODER_H_
#define STRATA_VM_BYTECODE_DECODER_H_

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "strata/base/status.h"
#include "strata/vm/bytecode.h"

namespace strata::vm {

// Little-endian, unaligned loads of instruction operands.
template <typename T> inline T LoadLittleEndian(const uint8_t *bytes) {
  if constexpr (std::endian::native == std::endian::little) {
    T value;
    std::memcpy(&value, bytes, sizeof(T));
    return value;
  } else {
    T value = 0;
    for (size_t i = 0; i < sizeof(T); ++i)
      value |= static_cast<T>(bytes[i]) << (8 * i);
    return value;
  }
}
inline uint16_t LoadU16(const uint8_t *bytes) {
  return LoadLittleEndian<uint16_t>(bytes);
}
inline uint32_t LoadU32(const uint8_t *bytes) {
  return LoadLittleEndian<uint32_t>(bytes);
}
inline uint64_t LoadU64(const uint8_t *bytes) {
  return LoadLittleEndian<uint64_t>(bytes);
}

constexpr size_t MaxOperandCount() {
  size_t longest = 0;
  for (const OpcodeInfo &info : kOpcodeInfos)
    longest = std::max(longest, std::string_view(info.format).size());
  return longest;
}
inline constexpr size_t kMaxOperandCount = MaxOperandCount();

struct DecodedOperand {
  // The operand's format character (see bytecode_ops.def).
  char kind = 0;
  // Register ordinal, immediate bits, global/rodata ordinal, callee, or
  // branch target offset.
  uint64_t value = 0;
  // Entries of an 's' or 'l' list, or remap pairs of a 'b' operand.
  uint16_t count = 0;
  const uint8_t *entries = nullptr;

  // Entry `i` of an 's' or 'l' list.
  uint16_t entry(size_t i) const { return LoadU16(entries + 2 * i); }
  // Source / destination typed register of remap pair `i` of a 'b'.
  uint16_t remap_source(size_t i) const { return LoadU16(entries + 4 * i); }
  uint16_t remap_target(size_t i) const { return LoadU16(entries + 4 * i + 2); }
};

struct DecodedInstruction {
  Opcode opcode = Opcode::kCount;
  // Offset of the opcode byte from the start of the function.
  uint32_t offset = 0;
  // Total bytes including the opcode.
  uint32_t length = 0;
  uint8_t operand_count = 0;
  DecodedOperand operands[kMaxOperandCount];

  const OpcodeInfo &info() const {
    return kOpcodeInfos[static_cast<uint8_t>(opcode)];
  }
};

// Decodes the instruction at `offset` of `code` (one function's bytes).
// INVALID_ARGUMENT for unknown opcodes and instructions that run past the
// end of `code`.
Status DecodeInstruction(std::span<const uint8_t> code, uint32_t offset,
                         DecodedInstruction *instruction);

// True for instructions after which execution never falls through.
bool IsTerminator(Opcode opcode);

} // namespace strata::vm

#endif // STRATA_VM_BYTECODE_DECODER_H_
