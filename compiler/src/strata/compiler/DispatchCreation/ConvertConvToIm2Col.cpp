//===- ConvertConvToIm2Col.cpp - convolutions as matrix products ----------===//
//
// A direct NCHW convolution lowers to loops that re-read the input once per
// output channel and filter tap, with a short or strided innermost loop:
// a few GFLOP/s. As im2col + matrix product it is (F, C*Kh*Kw) x
// (C*Kh*Kw, Oh*Ow) per image, a contraction whose innermost loop runs
// over output pixels contiguously: the contraction kernels take it like any
// matmul (output channels are the rows, pixels the vector lanes). The patch
// matrix is materialized once (its own dispatch: FormDispatchRegions does
// not fuse gathers into reductions) at the cost of Kh*Kw copies of the
// input. Bias, residual add and activation after the product become its
// epilogue.
//
// A 1x1 convolution with unit strides needs no patch matrix: the input is
// the right operand already.
//
// Ungrouped floating-point NCHW convolutions with static shapes are
// rewritten, and grouped ones whose taps read strided or dilated input.
// The elementwise ops after a product (these, and matmuls whose result is
// expanded back to a map's shape) are collapsed to the product's shape so
// that they become its epilogue. On
// CPUs, convolutions whose output channels divide by the vector width were put
// in the blocked channel layout before this pass
// (GlobalOptimization/BlockChannels.cpp); the rest come here.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/DispatchCreation/DispatchNames.h"
#include "strata/compiler/Passes.h"
#include "strata/compiler/Utils/ElementwiseChains.h"
#include "strata/compiler/Utils/Reshapes.h"

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

// Whether an NCHW `type` has static channels: its batch and image may be
// dynamic, the patches and the product then sized like the convolution's
// result.
bool hasStaticChannels(RankedTensorType type) {
  return type && type.getRank() == 4 && !type.isDynamicDim(1);
}

bool hasStaticShapes(linalg::Conv2DNchwFchwOp conv) {
  auto inputType = dyn_cast<RankedTensorType>(conv.getInputs()[0].getType());
  auto filterType = dyn_cast<RankedTensorType>(conv.getInputs()[1].getType());
  auto outputType = dyn_cast<RankedTensorType>(conv.getOutputs()[0].getType());
  return hasStaticChannels(inputType) && filterType &&
         filterType.hasStaticShape() && hasStaticChannels(outputType) &&
         isa<FloatType>(outputType.getElementType());
}

// The multiply-add of `filter` and `patches` into `init` over `maps` (the
// last loop the reduction), in the output's element type; profiles call it
// what the model calls it (DispatchNames.h).
linalg::GenericOp createProduct(RewriterBase &rewriter, Location loc,
                                Value filter, Value patches, Value init,
                                ArrayRef<AffineMap> maps) {
  Type et = cast<RankedTensorType>(init.getType()).getElementType();
  SmallVector<utils::IteratorType> iterators(maps[0].getNumDims() - 1,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  auto product = linalg::GenericOp::create(
      rewriter, loc, TypeRange{init.getType()}, ValueRange{filter, patches},
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
  product->setAttr(kOpKindAttr, rewriter.getStringAttr("conv2d"));
  return product;
}

// The patches of `input` gathered through `gather` into a new tensor of
// `sizes` (loops all parallel), collapsed by `reassociation` into the
// product's right operand.
Value gatherPatches(RewriterBase &rewriter, Location loc, Value input,
                    AffineMap gather, ArrayRef<OpFoldResult> sizes,
                    ArrayRef<ReassociationIndices> reassociation) {
  Type et = cast<RankedTensorType>(input.getType()).getElementType();
  Value empty = tensor::EmptyOp::create(rewriter, loc, sizes, et);
  unsigned rank = sizes.size();
  auto patches = linalg::GenericOp::create(
      rewriter, loc, TypeRange{empty.getType()}, ValueRange{input},
      ValueRange{empty},
      SmallVector<AffineMap>{
          gather, AffineMap::getMultiDimIdentityMap(rank, input.getContext())},
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [](OpBuilder &b, Location nested, ValueRange args) {
        linalg::YieldOp::create(b, nested, args[0]);
      });
  patches->setAttr(kOpKindAttr, rewriter.getStringAttr("im2col"));
  return tensor::CollapseShapeOp::create(rewriter, loc, patches.getResult(0),
                                         reassociation);
}

// The product [F, C*Kh*Kw] x [N, C*Kh*Kw, Oh*Ow] -> [N, F, Oh*Ow] as a
// contraction over (n, f, p, k): its vector lanes run over all pixels of a
// channel, not one output row (a 56-pixel row splits into 32 + 16 + 8
// lanes, 7 pixels of a late ResNet layer fill no vector; flattened, layer1
// of ResNet-18 ran at 100 instead of 76 GFLOP/s). It writes the
// convolution's output viewed as [N, F, Oh*Ow]; the expand_shape back to
// [N, F, Oh, Ow] is moved below the elementwise ops after it (bias,
// residual add, activation), so they join the product's dispatch as its
// epilogue.
Value buildProduct(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv,
                   Value filter, Value patches) {
  auto outputType = cast<RankedTensorType>(conv.getOutputs()[0].getType());
  MLIRContext *context = rewriter.getContext();
  Location loc = conv.getLoc();
  constexpr unsigned loops = 4;
  SmallVector<AffineExpr> dims;
  for (unsigned i = 0; i < loops; ++i)
    dims.push_back(getAffineDimExpr(i, context));
  AffineExpr dn = dims[0], df = dims[1], dk = dims.back();
  ArrayRef<AffineExpr> pixels = ArrayRef<AffineExpr>(dims).slice(2, loops - 3);
  SmallVector<AffineExpr> patchExprs{dn, dk}, outputExprs{dn, df};
  llvm::append_range(patchExprs, pixels);
  llvm::append_range(outputExprs, pixels);
  SmallVector<AffineMap> maps{AffineMap::get(loops, 0, {df, dk}, context),
                              AffineMap::get(loops, 0, patchExprs, context),
                              AffineMap::get(loops, 0, outputExprs, context)};
  SmallVector<ReassociationIndices> spatial{{0}, {1}, {2, 3}};
  Value init = tensor::CollapseShapeOp::create(rewriter, loc,
                                               conv.getOutputs()[0], spatial);
  linalg::GenericOp product =
      createProduct(rewriter, loc, filter, patches, init, maps);
  return tensor::ExpandShapeOp::create(
      rewriter, loc, outputType, product.getResult(0), spatial,
      tensor::getMixedSizes(rewriter, loc, conv.getOutputs()[0]));
}

// The filter [F, C, Kh, Kw] as the [F, C*Kh*Kw] left operand.
Value collapseFilter(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv) {
  auto filterType = cast<RankedTensorType>(conv.getInputs()[1].getType());
  int64_t f = filterType.getDimSize(0);
  int64_t k = filterType.getDimSize(1) * filterType.getDimSize(2) *
              filterType.getDimSize(3);
  return tensor::CollapseShapeOp::create(
      rewriter, conv.getLoc(),
      RankedTensorType::get({f, k}, filterType.getElementType()),
      conv.getInputs()[1], SmallVector<ReassociationIndices>{{0}, {1, 2, 3}});
}

// A 1x1 convolution with unit strides needs no patch matrix: the input
// [N, C, H, W] is the right operand as it is.
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
  Value input = tensor::CollapseShapeOp::create(
      rewriter, conv.getLoc(), conv.getInputs()[0],
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3}});
  Value product =
      buildProduct(rewriter, conv, collapseFilter(rewriter, conv), input);
  rewriter.replaceOp(conv, product);
  return success();
}

// Any other convolution (taps, strides, dilations): the patch matrix
// [N, C, Kh, Kw, Oh, Ow] gathers, for each output pixel, the input values
// its filter taps read.
LogicalResult rewriteWithPatches(RewriterBase &rewriter,
                                 linalg::Conv2DNchwFchwOp conv) {
  auto inputType = cast<RankedTensorType>(conv.getInputs()[0].getType());
  auto filterType = cast<RankedTensorType>(conv.getInputs()[1].getType());
  auto outputType = cast<RankedTensorType>(conv.getOutputs()[0].getType());
  SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
  int64_t kh = filterType.getDimSize(2), kw = filterType.getDimSize(3);
  MLIRContext *context = rewriter.getContext();
  // The gather writes [N, C, Kh, Kw, Oh, Ow]: every index is a sum of
  // loops (a flattened pixel or tap index, needing divisions, ran 1.8x
  // slower), and workgroups split it by channel, each writing whole
  // contiguous planes (split by output row, each of ResNet's workgroups
  // wrote its 576 rows to as many pages: 2x slower). The product reads it
  // collapsed to [N, C*Kh*Kw, Oh*Ow], which is free.
  constexpr unsigned rank = 6;
  AffineExpr dn = getAffineDimExpr(0, context),
             dc = getAffineDimExpr(1, context),
             dr = getAffineDimExpr(2, context),
             ds = getAffineDimExpr(3, context),
             dy = getAffineDimExpr(4, context),
             dx = getAffineDimExpr(5, context);
  AffineMap gather =
      AffineMap::get(rank, 0,
                     {dn, dc, dy * strides[0] + dr * dilations[0],
                      dx * strides[1] + ds * dilations[1]},
                     context);
  Location loc = conv.getLoc();
  Value output = conv.getOutputs()[0];
  SmallVector<OpFoldResult> patchesSizes{
      tensor::getMixedSize(rewriter, loc, output, 0),
      rewriter.getIndexAttr(filterType.getDimSize(1)),
      rewriter.getIndexAttr(kh),
      rewriter.getIndexAttr(kw),
      tensor::getMixedSize(rewriter, loc, output, 2),
      tensor::getMixedSize(rewriter, loc, output, 3)};
  Value patchMatrix =
      gatherPatches(rewriter, loc, conv.getInputs()[0], gather, patchesSizes,
                    SmallVector<ReassociationIndices>{{0}, {1, 2, 3}, {4, 5}});
  Value product =
      buildProduct(rewriter, conv, collapseFilter(rewriter, conv), patchMatrix);
  rewriter.replaceOp(conv, product);
  return success();
}

// A grouped convolution left in NCHW (too few channels per group for the
// blocked layout) whose taps read its input strided or dilated: its vector
// lanes cannot run along an output row (they would read every other input
// element), and it ran as scalar loops (RegNet's stride-2 8-channel groups:
// 8 GFLOP/s). As patches [N, G, C, Kh, Kw, Oh, Ow] and a product per group,
// [G, F, C*Kh*Kw] x [N, G, C*Kh*Kw, Oh*Ow], its lanes run over pixels as an
// ungrouped convolution's do.
LogicalResult rewriteGroupedWithPatches(RewriterBase &rewriter,
                                        linalg::Conv2DNgchwGfchwOp conv) {
  auto inputType = dyn_cast<RankedTensorType>(conv.getInputs()[0].getType());
  auto filterType = dyn_cast<RankedTensorType>(conv.getInputs()[1].getType());
  auto outputType = dyn_cast<RankedTensorType>(conv.getOutputs()[0].getType());
  // The batch and the image may be dynamic (the patches and the product are
  // then sized like the convolution's result); groups and channels may not.
  auto hasStaticGroupsAndChannels = [](RankedTensorType type) {
    return type && type.getRank() == 5 && !type.isDynamicDim(1) &&
           !type.isDynamicDim(2);
  };
  if (!hasStaticGroupsAndChannels(inputType) || !filterType ||
      !filterType.hasStaticShape() || !hasStaticGroupsAndChannels(outputType) ||
      !isa<FloatType>(outputType.getElementType()))
    return failure();
  SmallVector<int64_t> strides(conv.getStrides().getValues<int64_t>());
  SmallVector<int64_t> dilations(conv.getDilations().getValues<int64_t>());
  auto isOne = [](int64_t v) { return v == 1; };
  if (llvm::all_of(strides, isOne) && llvm::all_of(dilations, isOne))
    return failure();
  MLIRContext *context = rewriter.getContext();
  Location loc = conv.getLoc();
  int64_t kh = filterType.getDimSize(3), kw = filterType.getDimSize(4);

  // The patches, loops (n, g, c, r, s, y, x).
  constexpr unsigned rank = 7;
  SmallVector<AffineExpr> d;
  for (unsigned i = 0; i < rank; ++i)
    d.push_back(getAffineDimExpr(i, context));
  AffineMap gather =
      AffineMap::get(rank, 0,
                     {d[0], d[1], d[2], d[5] * strides[0] + d[3] * dilations[0],
                      d[6] * strides[1] + d[4] * dilations[1]},
                     context);
  Value output = conv.getOutputs()[0];
  SmallVector<OpFoldResult> patchesSizes{
      tensor::getMixedSize(rewriter, loc, output, 0),
      rewriter.getIndexAttr(filterType.getDimSize(0)),
      rewriter.getIndexAttr(filterType.getDimSize(2)),
      rewriter.getIndexAttr(kh),
      rewriter.getIndexAttr(kw),
      tensor::getMixedSize(rewriter, loc, output, 3),
      tensor::getMixedSize(rewriter, loc, output, 4)};
  Value patchMatrix = gatherPatches(
      rewriter, loc, conv.getInputs()[0], gather, patchesSizes,
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3, 4}, {5, 6}});
  Value filter = tensor::CollapseShapeOp::create(
      rewriter, loc, conv.getInputs()[1],
      SmallVector<ReassociationIndices>{{0}, {1}, {2, 3, 4}});

  // The product, loops (n, g, f, p, k), on the output viewed as
  // [N, G, F, Oh*Ow].
  constexpr unsigned loops = 5;
  SmallVector<AffineExpr> l;
  for (unsigned i = 0; i < loops; ++i)
    l.push_back(getAffineDimExpr(i, context));
  SmallVector<AffineMap> maps{
      AffineMap::get(loops, 0, {l[1], l[2], l[4]}, context),
      AffineMap::get(loops, 0, {l[0], l[1], l[4], l[3]}, context),
      AffineMap::get(loops, 0, {l[0], l[1], l[2], l[3]}, context)};
  SmallVector<ReassociationIndices> spatial{{0}, {1}, {2}, {3, 4}};
  Value init = tensor::CollapseShapeOp::create(rewriter, loc, output, spatial);
  linalg::GenericOp product =
      createProduct(rewriter, loc, filter, patchMatrix, init, maps);
  rewriter.replaceOp(conv, tensor::ExpandShapeOp::create(
                               rewriter, loc, outputType, product.getResult(0),
                               spatial,
                               tensor::getMixedSizes(rewriter, loc, output)));
  return success();
}

// Whether `op` is a product whose epilogue should join its dispatch: a
// convolution product made here, or a matrix product (a Linear on a map,
// whose result the importer expands back from [rows, N]).
bool isProduct(Operation *op) {
  if (isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op))
    return true;
  auto kind = op->getAttrOfType<StringAttr>(kOpKindAttr);
  return kind && kind.getValue() == "conv2d";
}

// `value` expands a product, directly or through elementwise ops already
// moved below the expansion.
bool isFedByProduct(Value value) {
  auto expand = value.getDefiningOp<tensor::ExpandShapeOp>();
  return expand &&
         isProductUnderElementwiseOps(expand.getSrc().getDefiningOp(),
                                      isProduct, [](linalg::GenericOp generic) {
                                        return !generic->hasAttr(kOpKindAttr);
                                      });
}

struct ConvertConvToIm2ColPass
    : public impl::ConvertConvToIm2ColPassBase<ConvertConvToIm2ColPass> {
  void runOnOperation() override {
    SmallVector<linalg::Conv2DNchwFchwOp> convs;
    getOperation().walk([&](linalg::Conv2DNchwFchwOp conv) {
      if (conv.hasPureTensorSemantics() && hasStaticShapes(conv))
        convs.push_back(conv);
    });
    SmallVector<linalg::Conv2DNgchwGfchwOp> groupedConvs;
    getOperation().walk([&](linalg::Conv2DNgchwGfchwOp conv) {
      if (conv.hasPureTensorSemantics())
        groupedConvs.push_back(conv);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::Conv2DNgchwGfchwOp conv : groupedConvs) {
      rewriter.setInsertionPoint(conv);
      (void)rewriteGroupedWithPatches(rewriter, conv);
    }
    for (linalg::Conv2DNchwFchwOp conv : convs) {
      rewriter.setInsertionPoint(conv);
      if (succeeded(rewritePointwise(rewriter, conv)))
        continue;
      (void)rewriteWithPatches(rewriter, conv);
    }
    // A product's accumulator is the convolution's, collapsed to
    // [N, F, Oh*Ow]: fill the collapsed empty tensor instead, so the fill
    // still fuses into each workgroup's tile rather than becoming a
    // whole-output temporary.
    RewritePatternSet patterns(&getContext());
    linalg::FillOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns,
                                                         &getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      getOperation()->emitError(
          "folding fills into collapsed accumulators did not converge");
      return signalPassFailure();
    }

    // The product's expand_shape moves below the elementwise ops
    // that consume it (bias, residual add, activation), which run on the
    // collapsed [N, F, Oh*Ow] too: nothing then separates them from the
    // product, and they join its dispatch as its epilogue. A matmul's
    // expansion back to a map's shape moves the same way (convnext's
    // bias + GELU after each Linear ran as their own dispatches).
    RewritePatternSet collapsing(&getContext());
    linalg::populateFoldReshapeOpsByCollapsingPatterns(
        collapsing, [](OpOperand *operand) {
          // (Where a dynamic dim is among those collapsed together, the
          // collapsing and the expansion's folding undo each other (convnext
          // at any size); such products keep their expansion. A dynamic
          // batch left alone by the collapse is no such dim.)
          auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
          return consumer &&
                 consumer.getNumParallelLoops() == consumer.getNumLoops() &&
                 isFedByProduct(operand->get()) &&
                 leavesDynamicDimsWhole(
                     operand->get().getDefiningOp<tensor::ExpandShapeOp>());
        });
    if (failed(applyPatternsGreedily(getOperation(), std::move(collapsing)))) {
      getOperation()->emitError(
          "moving product expansions below their epilogues did not converge");
      return signalPassFailure();
    }
  }
};

} // namespace
} // namespace strata
