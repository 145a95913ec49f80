//===- VMDialect.h - the VM's instruction set as IR ------------*- C++ -*-===//
#ifndef STRATA_COMPILER_DIALECT_VM_VMDIALECT_H_
#define STRATA_COMPILER_DIALECT_VM_VMDIALECT_H_

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "strata/compiler/Dialect/VM/VMDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "strata/compiler/Dialect/VM/VMTypes.h.inc"

#define GET_OP_CLASSES
#include "strata/compiler/Dialect/VM/VMOps.h.inc"

#endif // STRATA_COMPILER_DIALECT_VM_VMDIALECT_H_
