//===- ConvertConvToIm2Col.cpp - convolutions as matrix products ----------===//
//
// A direct NCHW convolution lowers to loops that re-read the input once per
// output channel and filter tap, with a short or strided innermost loop:
// a few GFLOP/s. As im2col + matrix product it is (F, C*Kh*Kw) x
// (C*Kh*Kw, Oh*Ow) per image, whose innermost loop runs over the output
// pixels contiguously and vectorizes like any matmul. The patch matrix is
// materialized once (its own dispatch: FormDispatchRegions does not fuse
// gathers into reductions) at the cost of Kh*Kw copies of the input.
//
// Only ungrouped f32/f16 NCHW convolutions with more than one filter tap
// and static shapes are rewritten; 1x1 convolutions are already matrix
// products.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DEF_CONVERTCONVTOIM2COLPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

bool isWorthRewriting(linalg::Conv2DNchwFchwOp conv) {
  auto inputType = dyn_cast<RankedTensorType>(conv.getInputs()[0].getType());
  auto filterType = dyn_cast<RankedTensorType>(conv.getInputs()[1].getType());
  auto outputType = dyn_cast<RankedTensorType>(conv.getOutputs()[0].getType());
  if (!inputType || !filterType || !outputType || !inputType.hasStaticShape() ||
      !filterType.hasStaticShape() || !outputType.hasStaticShape())
    return false;
  if (!isa<FloatType>(outputType.getElementType()))
    return false;
  // [F, C, Kh, Kw]: one tap is a matrix product already.
  return filterType.getDimSize(2) * filterType.getDimSize(3) > 1;
}

struct ConvertConvToIm2ColPass
    : public impl::ConvertConvToIm2ColPassBase<ConvertConvToIm2ColPass> {
  void runOnOperation() override {
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    getOperation().walk([&](linalg::Conv2DNchwFchwOp conv) {
      if (conv.hasPureTensorSemantics() && isWorthRewriting(conv))
        convs.push_back(conv);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::Conv2DNchwFchwOp conv : convs) {
      rewriter.setInsertionPoint(conv);
      // A convolution the rewrite does not take (dilations, say) stays a
      // direct one.
      (void)linalg::rewriteInIm2Col(rewriter, conv);
    }
    if (convs.empty())
      return;
    // The product's accumulator is the convolution's, collapsed to
    // [N, F, Oh*Ow]: fill the collapsed empty tensor instead, so the fill
    // still fuses into each workgroup's tile rather than becoming a
    // whole-output temporary.
    RewritePatternSet patterns(&getContext());
    linalg::FillOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace strata
