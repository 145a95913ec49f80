//===- TransposesAsReshapes.cpp - unit-dim transposes as host views -------===//
//
// A transpose that moves only dimensions of size 1 past the others leaves
// every element where it was: it is a reshape. Blocked layouts make many
// (a pooled [N, 1, 1, 1, 16] squeeze-excitation value moved to
// [N, 1, 16, 1, 1] and back), and each would otherwise be a dispatch, or
// a pass over memory inside one; as a collapse and an expand it is a view
// of the same buffer on the host. Dynamic dimensions count as not of size
// 1, so they keep their order.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/DispatchCreation/TransposesAsReshapes.h"
#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DEF_TRANSPOSESASRESHAPESPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// The reassociation that collapses `shape` to its dimensions not of size
// 1: each unit dimension joins the next other one (trailing ones the last
// group). Empty when every dimension is of size 1 (a rank-0 collapse).
SmallVector<ReassociationIndices>
getDropUnitDimsReassociation(ArrayRef<int64_t> shape) {
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    pending.push_back(dim);
    if (size == 1)
      continue;
    groups.push_back(pending);
    pending.clear();
  }
  if (!pending.empty() && !groups.empty())
    groups.back().append(pending.begin(), pending.end());
  return groups;
}

// Whether the transpose keeps the dimensions not of size 1 in their order.
bool movesOnlyUnitDims(linalg::TransposeOp transpose) {
  ArrayRef<int64_t> inputShape = transpose.getInput().getType().getShape();
  int64_t last = -1;
  for (int64_t source : transpose.getPermutation()) {
    if (inputShape[source] == 1)
      continue;
    if (source < last)
      return false;
    last = source;
  }
  return true;
}

struct TransposeOfUnitDimsToReshape
    : public OpRewritePattern<linalg::TransposeOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::TransposeOp transpose,
                                PatternRewriter &rewriter) const override {
    if (!transpose.hasPureTensorSemantics() || !movesOnlyUnitDims(transpose))
      return rewriter.notifyMatchFailure(transpose,
                                         "moves a dimension not of size 1");
    auto inputType = cast<RankedTensorType>(transpose.getInput().getType());
    auto resultType = cast<RankedTensorType>(transpose->getResult(0).getType());
    Location loc = transpose.getLoc();
    // Both sides keep the same dims not of size 1, so the two
    // reassociations have as many groups.
    Value collapsed = tensor::CollapseShapeOp::create(
        rewriter, loc, transpose.getInput(),
        getDropUnitDimsReassociation(inputType.getShape()));
    // The result's sizes: those of the init (the dynamic ones included).
    SmallVector<OpFoldResult> outputShape =
        tensor::getMixedSizes(rewriter, loc, transpose.getInit());
    rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
        transpose, resultType, collapsed,
        getDropUnitDimsReassociation(resultType.getShape()), outputShape);
    return success();
  }
};

struct TransposesAsReshapesPass
    : public impl::TransposesAsReshapesPassBase<TransposesAsReshapesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateTransposesAsReshapesPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace

void populateTransposesAsReshapesPatterns(RewritePatternSet &patterns) {
  patterns.add<TransposeOfUnitDimsToReshape>(patterns.getContext());
}

} // namespace strata
