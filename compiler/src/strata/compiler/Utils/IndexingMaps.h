//===- IndexingMaps.h - questions about linalg indexing maps -----*- C++
//-*-===//
#ifndef STRATA_COMPILER_UTILS_INDEXINGMAPS_H_
#define STRATA_COMPILER_UTILS_INDEXINGMAPS_H_

#include <optional>

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/AffineMap.h"

namespace strata {

// The loop indexing the innermost dimension of `map`, if it is a plain loop.
inline std::optional<unsigned> getInnermostLoop(mlir::AffineMap map) {
  if (map.getNumResults() == 0)
    return std::nullopt;
  auto dim = mlir::dyn_cast<mlir::AffineDimExpr>(map.getResults().back());
  if (!dim)
    return std::nullopt;
  return dim.getPosition();
}

// Whether the linalg op owning `operand` reads it through a map leaving out
// one of its parallel loops of more than one iteration: a value computed
// for that operand would be recomputed once per iteration of that loop.
inline bool isReadAcrossAParallelLoop(mlir::OpOperand *operand) {
  auto consumer = mlir::dyn_cast<mlir::linalg::LinalgOp>(operand->getOwner());
  if (!consumer)
    return false;
  mlir::AffineMap map = consumer.getMatchingIndexingMap(operand);
  llvm::SmallVector<mlir::utils::IteratorType> iterators =
      consumer.getIteratorTypesArray();
  llvm::SmallVector<int64_t> ranges = consumer.getStaticLoopRanges();
  for (unsigned loop = 0; loop < iterators.size(); ++loop)
    if (iterators[loop] == mlir::utils::IteratorType::parallel &&
        !map.isFunctionOfDim(loop) && ranges[loop] != 1)
      return true;
  return false;
}

// Calls `fn(operand, dim, loop)` for each dim of each ranked tensor operand
// of `op` that its indexing map reads as a plain loop index (the dims whose
// sizes are that loop's extent).
inline void forEachLoopIndexedDim(
    mlir::linalg::LinalgOp op,
    llvm::function_ref<void(mlir::OpOperand &, int64_t, unsigned)> fn) {
  for (mlir::OpOperand &operand : op->getOpOperands()) {
    if (!mlir::isa<mlir::RankedTensorType>(operand.get().getType()))
      continue;
    mlir::AffineMap map = op.getMatchingIndexingMap(&operand);
    for (auto [dim, expr] : llvm::enumerate(map.getResults()))
      if (auto loop = mlir::dyn_cast<mlir::AffineDimExpr>(expr))
        fn(operand, static_cast<int64_t>(dim), loop.getPosition());
  }
}

} // namespace strata

#endif // STRATA_COMPILER_UTILS_INDEXINGMAPS_H_
