//===- ScalarCost.h - what an op's scalar body costs --------------*- C++
//-*-===//
#ifndef STRATA_COMPILER_UTILS_SCALARCOST_H_
#define STRATA_COMPILER_UTILS_SCALARCOST_H_

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Operation.h"

namespace strata {

// Whether `op` (or its body) computes math costing tens of instructions
// per element (exp, erf, tanh, ...), which is worth computing only once.
inline bool hasTranscendentalMath(mlir::Operation *op) {
  mlir::WalkResult result = op->walk([](mlir::Operation *nested) {
    if (mlir::isa<mlir::math::MathDialect>(nested->getDialect()) &&
        !mlir::isa<mlir::math::AbsFOp, mlir::math::AbsIOp, mlir::math::FmaOp,
                   mlir::math::SqrtOp, mlir::math::CopySignOp,
                   mlir::math::FloorOp, mlir::math::CeilOp, mlir::math::RoundOp,
                   mlir::math::RoundEvenOp, mlir::math::TruncOp>(nested))
      return mlir::WalkResult::interrupt();
    return mlir::WalkResult::advance();
  });
  return result.wasInterrupted();
}

} // namespace strata

#endif // STRATA_COMPILER_UTILS_SCALARCOST_H_
