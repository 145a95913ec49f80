//===- ModuleWriter.h - vm.module to a module file -------------*- C++ -*-===//
#ifndef STRATA_COMPILER_SERIALIZATION_MODULEWRITER_H_
#define STRATA_COMPILER_SERIALIZATION_MODULEWRITER_H_

#include "mlir/Support/LLVM.h"
#include "strata/compiler/Dialect/VM/VMDialect.h"
#include "llvm/Support/raw_ostream.h"

namespace strata {

// Serializes `module` into the FlatBuffer module file format
// (schema/module.fbs): bytecode for every function, rodata aligned as
// requested, and the tensor ABI of each export for reflection.
mlir::LogicalResult writeModuleFile(::strata::vm::ModuleOp module,
                                    llvm::raw_ostream &os);

} // namespace strata

#endif // STRATA_COMPILER_SERIALIZATION_MODULEWRITER_H_
