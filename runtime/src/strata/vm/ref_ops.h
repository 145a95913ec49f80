// Execution of the vm.list and vm.buffer ops (see bytecode_ops.def), split
// from the interpreter's dispatch loop. Internal to the VM.
#ifndef STRATA_VM_REF_OPS_H_
#define STRATA_VM_REF_OPS_H_

#include <cstdint>

#include "strata/base/status.h"
#include "strata/vm/bytecode.h"
#include "strata/vm/stack.h"

namespace strata::vm {

// Executes list/buffer op `opcode` whose operands start at `code + *pc`
// (verified code); advances *pc past them. INTERNAL for other opcodes.
Status ExecuteRefOp(Opcode opcode, const uint8_t *code, uint32_t *pc,
                    FrameRegisters &registers);

} // namespace strata::vm

#endif // STRATA_VM_REF_OPS_H_
