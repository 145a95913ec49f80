// Execution of the math, cast and bitcast ops that bytecode version 2 added
// (see bytecode_ops.def), split from the interpreter's dispatch loop.
// Internal to the VM.
#ifndef STRATA_VM_SCALAR_EXT_OPS_H_
#define STRATA_VM_SCALAR_EXT_OPS_H_

#include <cstdint>

#include "strata/base/status.h"
#include "strata/vm/bytecode.h"
#include "strata/vm/stack.h"

namespace strata::vm {

// True for the opcodes ExecuteScalarExtOp handles.
inline bool IsScalarExtOp(Opcode opcode) {
  return opcode >= Opcode::MathF32 && opcode <= Opcode::TruncF32F16;
}

// Executes `opcode` whose operands start at `code + *pc` (verified code:
// math function ids are in range); advances *pc past them. INTERNAL for
// other opcodes.
Status ExecuteScalarExtOp(Opcode opcode, const uint8_t *code, uint32_t *pc,
                          FrameRegisters &registers);

} // namespace strata::vm

#endif // STRATA_VM_SCALAR_EXT_OPS_H_
