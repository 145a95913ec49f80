//===- HALDialect.h - host program on explicit buffers ---------*- C++ -*-===//
#ifndef STRATA_COMPILER_DIALECT_HAL_HALDIALECT_H_
#define STRATA_COMPILER_DIALECT_HAL_HALDIALECT_H_

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "strata/compiler/Dialect/HAL/HALDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "strata/compiler/Dialect/HAL/HALTypes.h.inc"

#define GET_OP_CLASSES
#include "strata/compiler/Dialect/HAL/HALOps.h.inc"

#endif // STRATA_COMPILER_DIALECT_HAL_HALDIALECT_H_
