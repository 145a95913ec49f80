//===- SplitAccumulatorInits.cpp - sums start from zero, then add the init
//-===//
//
// A contraction that accumulates into a value it did not fill (C += A * B
// with C an input) would, once in a dispatch, write that value in place:
// bufferization must copy it first, as a whole before the workgroups split
// it, or as a temporary per workgroup tile, which targets with fixed-size
// scratch (the cuda target's shared memory) cannot hold. Here the
// accumulation starts from a fill of zero and the value is added after
// it, an elementwise op that becomes the contraction's epilogue: the
// dispatch is then a fill, a contraction and an epilogue like any other,
// written in place. Only sums are split (the body yields `out + x`, x not
// reading out), where (0 + x...) + c is c + x... reassociated.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DEF_SPLITACCUMULATORINITSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Whether the init is a value nothing in this function made for the
// accumulation: not a fill, not an empty tensor.
bool isAccumulatedValue(Value init) {
  Operation *producer = init.getDefiningOp();
  return !producer || !isa<linalg::FillOp, tensor::EmptyOp>(producer);
}

// Whether `op`'s body adds to its only init: `out + x` with `out` used
// there alone.
bool isSumIntoInit(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  BlockArgument out = body->getArguments().back();
  if (!out.hasOneUse())
    return false;
  Operation *add = *out.getUsers().begin();
  if (!isa<arith::AddFOp, arith::AddIOp>(add) ||
      body->getTerminator()->getOperand(0) != add->getResult(0))
    return false;
  return true;
}

struct SplitSumIntoInit : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumReductionLoops() == 0 ||
        op.getNumDpsInits() != 1 || op->getNumResults() != 1)
      return rewriter.notifyMatchFailure(op, "not a one-result reduction");
    OpOperand *init = op.getDpsInitOperand(0);
    auto type = dyn_cast<RankedTensorType>(init->get().getType());
    if (!type || !type.hasStaticShape() || !isAccumulatedValue(init->get()) ||
        !isSumIntoInit(op))
      return rewriter.notifyMatchFailure(op, "does not sum into a value");
    Location loc = op.getLoc();
    Type elementType = type.getElementType();
    Value zero = arith::ConstantOp::create(rewriter, loc, elementType,
                                           rewriter.getZeroAttr(elementType));
    Value empty =
        tensor::EmptyOp::create(rewriter, loc, type.getShape(), elementType);
    Value filled =
        linalg::FillOp::create(rewriter, loc, zero, empty).getResult(0);
    Value accumulated = init->get();
    rewriter.modifyOpInPlace(op, [&] { init->set(filled); });
    rewriter.setInsertionPointAfter(op);
    Value sum = linalg::AddOp::create(rewriter, loc, TypeRange{type},
                                      ValueRange{op->getResult(0), accumulated},
                                      ValueRange{empty})
                    .getResult(0);
    rewriter.replaceAllUsesExcept(op->getResult(0), sum, sum.getDefiningOp());
    return success();
  }
};

struct SplitAccumulatorInitsPass
    : public impl::SplitAccumulatorInitsPassBase<SplitAccumulatorInitsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<SplitSumIntoInit>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace strata
