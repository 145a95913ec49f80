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
// A 1x1 convolution with unit strides needs no patch matrix: the input
// viewed as [N, C, H*W] is the right operand already, so the product runs
// over all output pixels instead of one output row.
//
// Only ungrouped floating-point NCHW convolutions with static shapes are
// rewritten.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

bool hasStaticShapes(linalg::Conv2DNchwFchwOp conv) {
  auto inputType = dyn_cast<RankedTensorType>(conv.getInputs()[0].getType());
  auto filterType = dyn_cast<RankedTensorType>(conv.getInputs()[1].getType());
  auto outputType = dyn_cast<RankedTensorType>(conv.getOutputs()[0].getType());
  return inputType && filterType && outputType && inputType.hasStaticShape() &&
         filterType.hasStaticShape() && outputType.hasStaticShape() &&
         isa<FloatType>(outputType.getElementType());
}

// A 1x1 convolution with unit strides as a product over the flattened
// pixels: [F, C] x [N, C, H*W] -> [N, F, H*W].
LogicalResult rewritePointwise(RewriterBase &rewriter,
                               linalg::Conv2DNchwFchwOp conv) {
  auto inputType = cast<RankedTensorType>(conv.getInputs()[0].getType());
  auto filterType = cast<RankedTensorType>(conv.getInputs()[1].getType());
  auto outputType = cast<RankedTensorType>(conv.getOutputs()[0].getType());
  if (filterType.getDimSize(2) != 1 || filterType.getDimSize(3) != 1 ||
      !llvm::all_of(conv.getStrides().getValues<int64_t>(),
                    [](int64_t s) { return s == 1; }) ||
      inputType.getDimSize(2) != outputType.getDimSize(2) ||
      inputType.getDimSize(3) != outputType.getDimSize(3))
    return failure();
  Location loc = conv.getLoc();
  Type et = outputType.getElementType();
  int64_t n = outputType.getDimSize(0), f = outputType.getDimSize(1),
          c = inputType.getDimSize(1),
          pixels = outputType.getDimSize(2) * outputType.getDimSize(3);
  SmallVector<ReassociationIndices> spatial{{0}, {1}, {2, 3}};
  Value input = tensor::CollapseShapeOp::create(
      rewriter, loc,
      RankedTensorType::get({n, c, pixels}, inputType.getElementType()),
      conv.getInputs()[0], spatial);
  Value filter = tensor::CollapseShapeOp::create(
      rewriter, loc, RankedTensorType::get({f, c}, filterType.getElementType()),
      conv.getInputs()[1], SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
  auto flatType = RankedTensorType::get({n, f, pixels}, et);
  Value init = tensor::CollapseShapeOp::create(rewriter, loc, flatType,
                                               conv.getOutputs()[0], spatial);
  MLIRContext *context = rewriter.getContext();
  AffineExpr dn, df, dp, dc;
  bindDims(context, dn, df, dp, dc);
  SmallVector<AffineMap> maps{AffineMap::get(4, 0, {df, dc}, context),
                              AffineMap::get(4, 0, {dn, dc, dp}, context),
                              AffineMap::get(4, 0, {dn, df, dp}, context)};
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  auto product = linalg::GenericOp::create(
      rewriter, loc, TypeRange{flatType}, ValueRange{filter, input},
      ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location nested, ValueRange args) {
        Value w = args[0], x = args[1];
        if (w.getType() != et)
          w = arith::ExtFOp::create(b, nested, et, w);
        if (x.getType() != et)
          x = arith::ExtFOp::create(b, nested, et, x);
        Value mul = arith::MulFOp::create(b, nested, w, x);
        linalg::YieldOp::create(
            b, nested,
            ValueRange{arith::AddFOp::create(b, nested, mul, args[2])});
      });
  rewriter.replaceOpWithNewOp<tensor::ExpandShapeOp>(
      conv, outputType, product.getResult(0), spatial);
  return success();
}

// [F, C, Kh, Kw]: one tap (strided) is left as it is.
bool hasSeveralTaps(linalg::Conv2DNchwFchwOp conv) {
  auto filterType = cast<RankedTensorType>(conv.getInputs()[1].getType());
  return filterType.getDimSize(2) * filterType.getDimSize(3) > 1;
}

struct ConvertConvToIm2ColPass
    : public impl::ConvertConvToIm2ColPassBase<ConvertConvToIm2ColPass> {
  void runOnOperation() override {
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    getOperation().walk([&](linalg::Conv2DNchwFchwOp conv) {
      if (conv.hasPureTensorSemantics() && hasStaticShapes(conv))
        convs.push_back(conv);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::Conv2DNchwFchwOp conv : convs) {
      rewriter.setInsertionPoint(conv);
      if (succeeded(rewritePointwise(rewriter, conv)))
        continue;
      if (!hasSeveralTaps(conv))
        continue;
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
