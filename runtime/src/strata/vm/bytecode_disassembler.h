// Human-readable dump of a module file: header, dependencies, imports,
// exports (with tensor reflection), rodata, globals, and every function's
// instructions, one per line:
//
//   0007: %i1 = add.i32 %i0, %i2
//   000e: cond_br %i3, ^0020 [%i1 -> %i0], ^0030
//   0020: %i0, %r1 = call @fact(%i1, %r0)
//
// Register names use the bank letters of bytecode_ops.def (i I f F r).
// Backs the `strata-dump` tool.
#ifndef STRATA_VM_BYTECODE_DISASSEMBLER_H_
#define STRATA_VM_BYTECODE_DISASSEMBLER_H_

#include <cstdint>
#include <ostream>
#include <span>
#include <string>

#include "strata/base/status.h"
#include "strata/vm/bytecode_decoder.h"
#include "strata/vm/bytecode_module.h"

namespace strata::vm {

struct DisassemblyOptions {
  // Print each function's instructions (else only the tables).
  bool include_bytecode = true;
};

// Verifies `bytes` as a module file (exactly as loading would) and writes
// the dump to `os`. Nothing is printed when verification fails.
Status DisassembleModuleFile(std::span<const uint8_t> bytes, std::ostream &os,
                             const DisassemblyOptions &options = {});

// Writes the dump of an already loaded (hence verified) module.
void DisassembleModule(const BytecodeModule &module, std::ostream &os,
                       const DisassemblyOptions &options = {});

// One decoded instruction of `module` as text, without the offset.
std::string FormatInstruction(const BytecodeModule &module,
                              const DecodedInstruction &instruction);

} // namespace strata::vm

#endif // STRATA_VM_BYTECODE_DISASSEMBLER_H_
