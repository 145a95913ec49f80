//===- FuseElementwiseOps.cpp - elementwise fusion with a cost check ------===//
//
// Upstream elementwise fusion (producers into consumers, reshapes folded by
// expansion, constant folding) with two exceptions. Bodies stop growing at
// kMaxFusedBodyOps scalar ops. And a producer computing
// transcendental math (erf, exp, tanh, ...), or computing anything at all
// when the consumer is a contraction or reduction, is not fused into a
// consumer that reads it across one of its loops. Fused, the math would
// run once per iteration of that loop: the GELU before a matmul once per
// output column instead of once per element, and inside the matmul's
// scalar reduction instead of in a loop of its own that vectorizes.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"
#include "strata/compiler/Utils/IndexingMaps.h"
#include "strata/compiler/Utils/ScalarCost.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DEF_FUSEELEMENTWISEOPSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Fusing copies the producer's body into the consumer's: past this many
// scalar ops a kernel gains nothing from growing further, and a chain of n
// elementwise ops fused into one would cost n^2 copies to build.
constexpr size_t kMaxFusedBodyOps = 256;

size_t getBodySize(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || op->getNumRegions() == 0 || op->getRegion(0).empty())
    return 0;
  return op->getRegion(0).front().getOperations().size();
}

bool shouldFuse(OpOperand *fusedOperand) {
  Operation *producer = fusedOperand->get().getDefiningOp();
  if (!producer || !producer->hasOneUse())
    return false;
  if (getBodySize(producer) + getBodySize(fusedOperand->getOwner()) >
      kMaxFusedBodyOps)
    return false;
  if (!isReadAcrossAParallelLoop(fusedOperand))
    return true;
  if (hasTranscendentalMath(producer))
    return false;
  // Into a contraction or reduction, even cheap math (a bias and ReLU)
  // would run once per multiply-add, and keeps the consumer from being the
  // plain multiply-add its vector kernel needs: it stays in the producer's
  // dispatch as an epilogue instead. Broadcasts and copies still fuse.
  auto consumer = cast<linalg::LinalgOp>(fusedOperand->getOwner());
  return consumer.getNumReductionLoops() == 0 || getBodySize(producer) <= 1;
}

// Whether `op` multiplies and adds two operands over a reduction (a matmul,
// a convolution, their generic forms).
bool isContraction(Operation *op) {
  auto linalgOp = dyn_cast_or_null<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.getNumReductionLoops() > 0 &&
         linalgOp.getNumDpsInputs() >= 2;
}

// Whether folding the reshape `fusedOperand` is about into a contraction
// would expand the contraction: a matmul of [M, K] rows fed by a collapse
// of [1, H, W, K] (a Linear on an NHWC map) would become a product over
// [1, H, W] rows, a flatten into a Gemm one over [C, 1, 1], and neither is
// the matmul form its kernel tiles. The reshape stays outside instead.
bool expandsAContraction(OpOperand *fusedOperand) {
  return isContraction(fusedOperand->getOwner()) ||
         isContraction(fusedOperand->get().getDefiningOp());
}

// A slice of a fill is a fill of the slice's size, whatever else reads the
// fill (the zero initial states exporters build as ConstantOfShape ->
// Slice): no filled temporary of the whole, which a dynamic size cannot
// have inside an executable.
struct SliceOfFillToFill : OpRewritePattern<tensor::ExtractSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::ExtractSliceOp slice,
                                PatternRewriter &rewriter) const override {
    auto fill = slice.getSource().getDefiningOp<linalg::FillOp>();
    if (!fill)
      return failure();
    SmallVector<OpFoldResult> sizes;
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    for (auto [dim, size] : llvm::enumerate(slice.getMixedSizes()))
      if (!dropped.test(dim))
        sizes.push_back(size);
    Value empty =
        tensor::EmptyOp::create(rewriter, slice.getLoc(), sizes,
                                slice.getResultType().getElementType());
    rewriter.replaceOpWithNewOp<linalg::FillOp>(slice, fill.getInputs(),
                                                ValueRange{empty});
    return success();
  }
};

struct FuseElementwiseOpsPass
    : public impl::FuseElementwiseOpsPassBase<FuseElementwiseOpsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    RewritePatternSet patterns(context);
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    linalg::ControlFusionFn oneUse = [](OpOperand *fusedOperand) {
      Operation *producer = fusedOperand->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    linalg::ControlFusionFn expandable = [](OpOperand *fusedOperand) {
      Operation *producer = fusedOperand->get().getDefiningOp();
      return producer && producer->hasOneUse() &&
             !expandsAContraction(fusedOperand);
    };
    linalg::populateFoldReshapeOpsByExpansionPatterns(patterns, expandable);
    linalg::populateConstantFoldLinalgOperations(patterns, oneUse);
    linalg::populateEraseUnnecessaryInputsPatterns(patterns);
    patterns.add<SliceOfFillToFill>(context);
    affine::AffineApplyOp::getCanonicalizationPatterns(patterns, context);
    linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, context);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, context);
    context->getLoadedDialect<linalg::LinalgDialect>()
        ->getCanonicalizationPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace strata
