//===- Passes.h - Strata compiler passes -----------------------*- C++ -*-===//
#ifndef STRATA_COMPILER_PASSES_H_
#define STRATA_COMPILER_PASSES_H_

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/X86Vector/X86VectorDialect.h"
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
