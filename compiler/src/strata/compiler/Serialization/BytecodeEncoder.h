//===- BytecodeEncoder.h - vm.func bodies to VM bytecode -------*- C++ -*-===//
//
// Encodes the ops of one vm.func into the instruction format described in
// runtime/src/strata/vm/bytecode_ops.def: registers are allocated per bank
// (entry block arguments first, in order, as the VM passes them), each op
// is written as opcode + operands, and branch targets are patched once all
// blocks have offsets.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_SERIALIZATION_BYTECODEENCODER_H_
#define STRATA_COMPILER_SERIALIZATION_BYTECODEENCODER_H_

#include <cstdint>
#include <vector>

#include "mlir/IR/SymbolTable.h"
#include "strata/compiler/Dialect/VM/VMDialect.h"
#include "strata/vm/bytecode.h"

namespace strata {

// Module-level ordinals the encoder refers to.
struct ModuleOrdinals {
  llvm::StringMap<uint32_t> functions;
  llvm::StringMap<uint32_t> imports;
  llvm::StringMap<uint32_t> rodata;
  llvm::StringMap<uint32_t> refGlobals;
  // Messages of vm.fail ops, appended to the rodata table by the writer.
  std::vector<std::string> extraRodata;
  uint32_t firstExtraRodataOrdinal = 0;
};

struct EncodedFunction {
  std::vector<uint8_t> bytecode;
  uint16_t registerCounts[::strata::vm::kRegisterBankCount] = {};
};

// The register bank of a VM value type, or failure for other types.
mlir::FailureOr<::strata::vm::RegisterBank> getRegisterBank(mlir::Type type);

// Calling convention string of a function type: "0rr_r".
mlir::FailureOr<std::string> getCallingConvention(mlir::FunctionType type);

mlir::FailureOr<EncodedFunction> encodeFunction(::strata::vm::FuncOp func,
                                                ModuleOrdinals &ordinals);

} // namespace strata

#endif // STRATA_COMPILER_SERIALIZATION_BYTECODEENCODER_H_
