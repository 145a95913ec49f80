#include "strata/vm/bytecode_decoder.h"

namespace strata::vm {
namespace {

// Byte size of fixed-size operands; 0 for lists.
size_t FixedOperandSize(char kind) {
  switch (kind) {
  case 'i':
  case 'I':
  case 'f':
  case 'F':
  case 'r':
    return 2;
  case 'k':
  case 'm':
  case 'n':
  case 'x':
  case 'g':
  case 'd':
  case 'c':
    return 4;
  case 'K':
  case 'X':
    return 8;
  default:
    return 0;
  }
}

} // namespace

bool IsTerminator(Opcode opcode) {
  switch (opcode) {
  case Opcode::Branch:
  case Opcode::CondBranch:
  case Opcode::Return:
  case Opcode::Fail:
    return true;
  default:
    return false;
  }
}

Status DecodeInstruction(std::span<const uint8_t> code, uint32_t offset,
                         DecodedInstruction *instruction) {
  const size_t size = code.size();
  if (offset >= size)
    return InvalidArgumentError("instruction offset ", offset,
                                " is past the end of the function (", size,
                                " bytes)");
  uint8_t opcode_byte = code[offset];
  if (opcode_byte >= kOpcodeCount)
    return InvalidArgumentError("unknown opcode ", unsigned(opcode_byte),
                                " at offset ", offset);
  instruction->opcode = static_cast<Opcode>(opcode_byte);
  instruction->offset = offset;
  instruction->operand_count = 0;
  const OpcodeInfo &info = kOpcodeInfos[opcode_byte];
  size_t cursor = size_t(offset) + 1;
  auto truncated = [&]() {
    return InvalidArgumentError("truncated '", info.mnemonic,
                                "' instruction at offset ", offset);
  };
  auto need = [&](size_t bytes) { return size - cursor >= bytes; };

  for (const char *kind = info.format; *kind; ++kind) {
    DecodedOperand &operand =
        instruction->operands[instruction->operand_count++];
    operand = DecodedOperand();
    operand.kind = *kind;
    if (size_t fixed = FixedOperandSize(*kind)) {
      if (!need(fixed))
        return truncated();
      const uint8_t *bytes = code.data() + cursor;
      operand.value = fixed == 2   ? LoadU16(bytes)
                      : fixed == 4 ? LoadU32(bytes)
                                   : LoadU64(bytes);
      cursor += fixed;
      continue;
    }
    // Variable-length operands.
    size_t entry_size = 2;
    if (*kind == 'b') {
      if (!need(4))
        return truncated();
      operand.value = LoadU32(code.data() + cursor);
      cursor += 4;
      entry_size = 4;
    } else if (*kind != 's' && *kind != 'l') {
      return InternalError("bad operand kind '", *kind, "' in the op table");
    }
    if (!need(2))
      return truncated();
    operand.count = LoadU16(code.data() + cursor);
    cursor += 2;
    if (!need(size_t(operand.count) * entry_size))
      return truncated();
    operand.entries = code.data() + cursor;
    cursor += size_t(operand.count) * entry_size;
  }
  instruction->length = static_cast<uint32_t>(cursor - offset);
  return OkStatus();
}

} // namespace strata::vm
