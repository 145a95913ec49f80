//===- Passes.h - Strata compiler passes -----------------------*- C++ -*-===//
#ifndef STRATA_COMPILER_PASSES_H_
#define STRATA_COMPILER_PASSES_H_

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include "strata/compiler/Dialect/Flow/FlowDialect.h"
#include "strata/compiler/Dialect/HAL/HALDialect.h"
#include "strata/compiler/Dialect/VM/VMDialect.h"

namespace strata {

#define GEN_PASS_DECL
#include "strata/compiler/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "strata/compiler/Passes.h.inc"

} // namespace strata

#endif // STRATA_COMPILER_PASSES_H_
