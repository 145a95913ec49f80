//===- EpiloguesInPlace.cpp - epilogues overwrite what they read ----------===//
//
// An elementwise epilogue (bias, activation) writes a fresh tensor, so the
// contraction or convolution it reads needs a buffer of its own: a
// temporary of the whole (workgroup) tile, on the executable's stack. When
// the epilogue reads that value element for element, it can overwrite it
// instead. Its init becomes the value it reads; empty-tensor elimination
// then traces the whole chain (fill, product, epilogue) back to the
// dispatch's output, and everything is computed in the output binding.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DEF_EPILOGUESINPLACEPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// An all-parallel generic whose one init it never reads: take over an
// input of the same type, indexed like the output, that a linalg op of the
// same block produces for this generic alone.
struct OverwriteProducedInput : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (op.getNumDpsInits() != 1 ||
        op.getNumParallelLoops() != op.getNumLoops() ||
        !op.hasPureTensorSemantics())
      return failure();
    OpOperand *init = op.getDpsInitOperand(0);
    // Already overwriting an input: taking another one instead would undo
    // this and redo it forever (two candidates, each freeing the other).
    if (op.payloadUsesValueFromOperand(init) ||
        llvm::is_contained(op.getDpsInputs(), init->get()))
      return failure();
    AffineMap initMap = op.getMatchingIndexingMap(init);
    for (OpOperand *input : op.getDpsInputOperands()) {
      Value value = input->get();
      auto producer = value.getDefiningOp<linalg::LinalgOp>();
      if (value == init->get() || value.getType() != init->get().getType() ||
          op.getMatchingIndexingMap(input) != initMap || !producer ||
          producer->getBlock() != op->getBlock() || !value.hasOneUse())
        continue;
      rewriter.modifyOpInPlace(op, [&] { init->set(value); });
      return success();
    }
    return failure();
  }
};

struct EpiloguesInPlacePass
    : public impl::EpiloguesInPlacePassBase<EpiloguesInPlacePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<OverwriteProducedInput>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace strata
