//===- FlowDialect.h - dispatch regions and executables ---------*- C++ -*-===//
#ifndef STRATA_COMPILER_DIALECT_FLOW_FLOWDIALECT_H_
#define STRATA_COMPILER_DIALECT_FLOW_FLOWDIALECT_H_

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "strata/compiler/Dialect/Flow/FlowDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "strata/compiler/Dialect/Flow/FlowAttrs.h.inc"

#define GET_OP_CLASSES
#include "strata/compiler/Dialect/Flow/FlowOps.h.inc"

#endif // STRATA_COMPILER_DIALECT_FLOW_FLOWDIALECT_H_
