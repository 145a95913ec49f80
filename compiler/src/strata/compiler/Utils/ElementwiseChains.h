//===- ElementwiseChains.h - producers under elementwise ops -----*- C++
//-*-===//
#ifndef STRATA_COMPILER_UTILS_ELEMENTWISECHAINS_H_
#define STRATA_COMPILER_UTILS_ELEMENTWISECHAINS_H_

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace strata {

// Whether `op` is reached by walking up from itself through all-parallel
// linalg.generic ops (each by its first input that a linalg op produces)
// to an op that `isProduct` accepts: a product with elementwise ops
// already moved out of its way (below a reshape of its result). Generics
// that `mayPass` refuses end the walk.
inline bool isProductUnderElementwiseOps(
    mlir::Operation *op, llvm::function_ref<bool(mlir::Operation *)> isProduct,
    llvm::function_ref<bool(mlir::linalg::GenericOp)> mayPass =
        [](mlir::linalg::GenericOp) { return true; }) {
  while (op) {
    if (isProduct(op))
      return true;
    auto generic = mlir::dyn_cast<mlir::linalg::GenericOp>(op);
    if (!generic || generic.getNumParallelLoops() != generic.getNumLoops() ||
        !mayPass(generic))
      return false;
    mlir::Operation *next = nullptr;
    for (mlir::Value input : generic.getDpsInputs())
      if (auto linalgOp = input.getDefiningOp<mlir::linalg::LinalgOp>()) {
        next = linalgOp;
        break;
      }
    op = next;
  }
  return false;
}

} // namespace strata

#endif // STRATA_COMPILER_UTILS_ELEMENTWISECHAINS_H_
