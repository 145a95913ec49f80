//===- VectorizableLoopOrder.cpp - keep a contiguous loop innermost -------===//
//
// Linalg ops lower to loops in iterator order, so a matmul becomes
// i, j, k with the reduction innermost: every step is a dependent scalar
// add LLVM cannot vectorize without reassociating floats. Moving the
// reductions out (i, k, j) makes the innermost loop walk the output and an
// input contiguously, and LLVM turns it into vector FMAs for the target's
// vector width. Same for convolutions (output channels innermost).
//
// Only ops whose innermost loop is a reduction change, and only when some
// parallel loop is the fastest-varying dimension of the output and walks
// the innermost dimension of at least one input that also changes along a
// reduction, with unit stride, or of a pooling's one input with any
// constant stride (a row-wise reduction has no such loop and stays as is,
// even when it reads a per-row value broadcast along the row).
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"
#include "strata/compiler/Utils/IndexingMaps.h"

#include <functional>

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace strata {
#define GEN_PASS_DEF_VECTORIZABLELOOPORDERPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Whether stepping `loop` by one moves the innermost index of `map` by one
// (the index is the loop itself or a sum with it: a convolution's
// `ow + kw`), or, with `strided`, by any constant (a strided pooling's
// `ow * 2 + kw`).
bool walksInnermost(AffineMap map, unsigned loop, bool strided) {
  if (map.getNumResults() == 0)
    return false;
  std::function<bool(AffineExpr)> hasUnitTerm = [&](AffineExpr expr) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      return dim.getPosition() == loop;
    if (auto product = dyn_cast<AffineBinaryOpExpr>(expr);
        strided && product && product.getKind() == AffineExprKind::Mul &&
        isa<AffineConstantExpr>(product.getRHS()))
      return hasUnitTerm(product.getLHS());
    auto sum = dyn_cast<AffineBinaryOpExpr>(expr);
    if (!sum || sum.getKind() != AffineExprKind::Add)
      return false;
    return hasUnitTerm(sum.getLHS()) || hasUnitTerm(sum.getRHS());
  };
  return hasUnitTerm(map.getResults().back());
}

// The new loop order (old loop numbers, outermost first), or empty when the
// op is best left alone.
SmallVector<unsigned> chooseLoopOrder(linalg::GenericOp op) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned loops = iterators.size();
  if (loops < 2 || iterators.back() != utils::IteratorType::reduction ||
      op.getNumDpsInits() != 1)
    return {};
  std::optional<unsigned> candidate =
      getInnermostLoop(op.getMatchingIndexingMap(op.getDpsInitOperand(0)));
  if (!candidate || iterators[*candidate] != utils::IteratorType::parallel)
    return {};
  // The input must also change along a reduction loop: one that does not
  // (a row's maximum broadcast over a row-wise sum) is read once per row
  // whatever the order, and moving the reduction out would walk the other
  // inputs across their rows.
  auto readsAlongReduction = [&](AffineMap map) {
    return llvm::any_of(llvm::seq<unsigned>(0, loops), [&](unsigned loop) {
      return iterators[loop] == utils::IteratorType::reduction &&
             map.isFunctionOfDim(loop);
    });
  };
  bool contiguousInInput =
      llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
        AffineMap map = op.getMatchingIndexingMap(input);
        return walksInnermost(map, *candidate, /*strided=*/false) &&
               readsAlongReduction(map);
      });
  // A pooling reads one input, strided (its window operand only gives the
  // window's shape): strided vector loads of whole output rows beat a
  // scalar chain over the window (ResNet's 3x3/2 max pool 1.8x faster). A
  // strided multiply-add (a depthwise convolution) keeps its order: on its
  // short rows the strided loads were 3x slower.
  bool stridedPooling =
      llvm::count_if(op.getDpsInputOperands(),
                     [&](OpOperand *input) {
                       return op.payloadUsesValueFromOperand(input);
                     }) == 1 &&
      llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
        return op.payloadUsesValueFromOperand(input) &&
               walksInnermost(op.getMatchingIndexingMap(input), *candidate,
                              /*strided=*/true);
      });
  if (!contiguousInInput && !stridedPooling)
    return {};
  SmallVector<unsigned> order;
  for (unsigned loop = 0; loop < loops; ++loop)
    if (loop != *candidate)
      order.push_back(loop);
  order.push_back(*candidate);
  return order;
}

struct VectorizableLoopOrderPass
    : public impl::VectorizableLoopOrderPassBase<VectorizableLoopOrderPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      SmallVector<unsigned> order = chooseLoopOrder(op);
      if (order.empty())
        continue;
      rewriter.setInsertionPoint(op);
      if (failed(linalg::interchangeGenericOp(rewriter, op, order))) {
        op.emitOpError("could not be reordered for vectorization");
        return signalPassFailure();
      }
    }
  }
};

} // namespace
} // namespace strata
