//===- PackMatmulWeights.cpp - constant matrices of matmuls in panels -----===//
//
// A product by a constant matrix (a fully connected layer, a transformer's
// projections, a recurrence's step) streams the matrix once per call, or
// once per cache tile of rows. Its kernel's register tile is a few vectors
// of columns, so it reads a short piece of every row of a row-major [K, N]
// matrix: with N = 1024 it reads 256-512 bytes of each 4 KiB row, every
// read in another page (and, 4 KiB apart, in the same few L1 sets), and
// the hardware prefetchers, which do not cross pages, leave each one to
// wait. A constant matrix is packed at compile time into panels of the
// register tile's width, [N/nr, K, nr], so that each register tile streams
// one contiguous panel; the product becomes the equivalent contraction
// over the panels, its result the same [M, N] through a reshape (a
// 1024x1024x1024 product 0.78 -> 0.88 of oneDNN).
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/ContractionStrategy.h"
#include "strata/compiler/GlobalOptimization/FoldPackOfConstant.h"
#include "strata/compiler/Passes.h"
#include "strata/compiler/Utils/ElementwiseChains.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DEF_PACKMATMULWEIGHTSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// The register tile of a one-row contraction kernel: 8 vectors of columns
// (ContractionStrategy: independent accumulators to hide the FMA latency).
constexpr int64_t kPanelVectors = 8;

// Whether `slice` takes whole panels of `panel` columns of a matrix whose
// columns are whole panels, at static offsets: the same slice of the
// matrix reshaped to [rows, panels, panel] is then its panel shape.
bool isSliceOfPanels(tensor::ExtractSliceOp slice, int64_t panel) {
  RankedTensorType sourceType = slice.getSourceType();
  if (sourceType.getRank() != 2 || sourceType.isDynamicDim(1) ||
      sourceType.getDimSize(1) % panel != 0 || !slice.hasUnitStride() ||
      slice.getResultType().getRank() != 2)
    return false;
  std::optional<int64_t> columnOffset =
      getConstantIntValue(slice.getMixedOffsets()[1]);
  std::optional<int64_t> columns =
      getConstantIntValue(slice.getMixedSizes()[1]);
  return columnOffset && columns && *columnOffset % panel == 0 &&
         *columns % panel == 0;
}

// `slice` (isSliceOfPanels) in its panel shape: the same slice of its
// source reshaped to [rows, panels, panel].
Value sliceInPanels(RewriterBase &rewriter, tensor::ExtractSliceOp slice,
                    int64_t panel) {
  Location loc = slice.getLoc();
  RankedTensorType sourceType = slice.getSourceType();
  int64_t sourceRows = sourceType.getDimSize(0);
  int64_t sourcePanels = sourceType.getDimSize(1) / panel;
  SmallVector<OpFoldResult> sourceShape = {
      sourceType.isDynamicDim(0)
          ? OpFoldResult(
                tensor::DimOp::create(rewriter, loc, slice.getSource(), 0)
                    .getResult())
          : OpFoldResult(rewriter.getIndexAttr(sourceRows)),
      rewriter.getIndexAttr(sourcePanels), rewriter.getIndexAttr(panel)};
  auto panelsType = RankedTensorType::get({sourceRows, sourcePanels, panel},
                                          sourceType.getElementType());
  Value panels = tensor::ExpandShapeOp::create(
      rewriter, loc, panelsType, slice.getSource(),
      SmallVector<ReassociationIndices>{{0}, {1, 2}}, sourceShape);
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  int64_t columnOffset = *getConstantIntValue(slice.getMixedOffsets()[1]);
  int64_t columns = *getConstantIntValue(slice.getMixedSizes()[1]);
  return tensor::ExtractSliceOp::create(
      rewriter, loc, panels,
      {slice.getMixedOffsets()[0], rewriter.getIndexAttr(columnOffset / panel),
       zero},
      {slice.getMixedSizes()[0], rewriter.getIndexAttr(columns / panel),
       rewriter.getIndexAttr(panel)},
      {one, one, one});
}

// The panel width for `matmul`, when it is an f32 product of a constant
// [K, N] matrix that splits into two or more panels of its kernel's
// register tile width; 0 otherwise. The rows may be dynamic (a batch): the
// rows of the last register tile then run one at a time, each streaming
// the panels.
int64_t getPanelWidth(linalg::MatmulOp matmul, unsigned vectorBits) {
  if (!matmul.hasPureTensorSemantics() || matmul.hasUserDefinedMaps())
    return 0;
  auto lhsType = dyn_cast<RankedTensorType>(matmul.getInputs()[0].getType());
  auto rhsType = dyn_cast<RankedTensorType>(matmul.getInputs()[1].getType());
  auto outType = dyn_cast<RankedTensorType>(matmul.getOutputs()[0].getType());
  auto isStaticPastRows = [](RankedTensorType type) {
    return type.getRank() == 2 && !type.isDynamicDim(1);
  };
  if (!lhsType || !rhsType || !outType || !isStaticPastRows(lhsType) ||
      !rhsType.hasStaticShape() || !isStaticPastRows(outType) ||
      !lhsType.getElementType().isF32() || !rhsType.getElementType().isF32() ||
      !outType.getElementType().isF32())
    return 0;
  DenseElementsAttr weights;
  if (!matchPattern(matmul.getInputs()[1], m_Constant(&weights)) ||
      weights.isSplat())
    return 0;
  // The output starts as a fill, which then fills the panel shape, or as
  // a slice of whole panels of another value (a recurrence's step starts
  // from its row of the input projection): the slice then reads that value
  // reshaped to panels, a view. (Any other value would reach the product
  // through a reshape, which keeps the two in separate dispatches.)
  auto fill = matmul.getOutputs()[0].getDefiningOp<linalg::FillOp>();
  bool startsAsFill =
      fill && fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
  auto slice = matmul.getOutputs()[0].getDefiningOp<tensor::ExtractSliceOp>();
  if (!startsAsFill && !slice)
    return 0;
  int64_t panel = kPanelVectors * std::max<int64_t>(vectorBits / 32, 4);
  // Several rows: the width of the matrix kernel's register tile (the
  // strategy's own choice, 4 vectors on AVX-512).
  if (lhsType.getDimSize(0) != 1) {
    std::optional<ContractionTiles> tiles =
        chooseContractionTiles(matmul, vectorBits);
    if (!tiles || tiles->broadcast || tiles->vectorLoop != 1)
      return 0;
    panel = tiles->registers[tiles->vectorLoop];
  }
  // (A last, partial panel is padded with zero columns: a classifier's
  // 1000 classes are 7 full panels of 128 and one of 104.)
  int64_t columns = rhsType.getDimSize(1);
  if (llvm::divideCeil(columns, panel) < 2)
    return 0;
  if (!startsAsFill && !isSliceOfPanels(slice, panel))
    return 0;
  return panel;
}

// out[m, n] += x[m, k] * W[k, n] as
// out[m, p, j] += x[m, k] * panels[p, k, j] with n = p * panel + j (the
// columns past N, zero in the last panel, sliced off the result).
// `packed` holds the panels of each constant packed so far: products of
// the same matrix (a recurrence's steps) share them.
linalg::GenericOp packMatmul(RewriterBase &rewriter, linalg::MatmulOp matmul,
                             int64_t panel, DenseMap<Value, Value> &packed) {
  Location loc = matmul.getLoc();
  Value lhs = matmul.getInputs()[0], rhs = matmul.getInputs()[1];
  Value out = matmul.getOutputs()[0];
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  int64_t k = rhsType.getDimSize(0), n = rhsType.getDimSize(1);
  Type f32 = rhsType.getElementType();

  int64_t panelCount = llvm::divideCeil(n, panel);
  bool partial = n % panel != 0;
  Value &panels = packed[rhs];
  if (!panels) {
    rewriter.setInsertionPointAfterValue(rhs);
    auto panelsType = RankedTensorType::get({panelCount, k, panel}, f32);
    Value panelsInit =
        tensor::EmptyOp::create(rewriter, loc, panelsType.getShape(), f32);
    std::optional<Value> padding;
    if (partial)
      padding = arith::ConstantOp::create(rewriter, loc, f32,
                                          rewriter.getFloatAttr(f32, 0.0));
    panels = linalg::PackOp::create(
                 rewriter, loc, rhs, panelsInit,
                 /*innerDimsPos=*/{1},
                 /*innerTiles=*/{rewriter.getIndexAttr(panel)}, padding,
                 /*outerDimsPerm=*/{1, 0})
                 .getResult();
  }
  rewriter.setInsertionPoint(matmul);

  // The output in panels: the [M, N] output reshaped, or, with a partial
  // last panel, a new one filled as the output is (getPanelWidth: a fill).
  SmallVector<ReassociationIndices> split = {{0}, {1, 2}};
  int64_t m = cast<RankedTensorType>(out.getType()).getDimSize(0);
  auto outPanelsType = RankedTensorType::get({m, panelCount, panel}, f32);
  Value outPanels;
  OpFoldResult rows;
  if (partial) {
    // (getPanelWidth: the output is a fill of an empty tensor, which holds
    // the row count.)
    auto fill = out.getDefiningOp<linalg::FillOp>();
    rows = fill.getOutputs()[0]
               .getDefiningOp<tensor::EmptyOp>()
               .getMixedSizes()[0];
    Value empty = tensor::EmptyOp::create(
        rewriter, loc,
        {rows, rewriter.getIndexAttr(panelCount), rewriter.getIndexAttr(panel)},
        f32);
    outPanels =
        linalg::FillOp::create(rewriter, loc, fill.getInputs()[0], empty)
            .getResult(0);
  } else if (auto slice = out.getDefiningOp<tensor::ExtractSliceOp>()) {
    // (getPanelWidth: whole panels of another value.)
    outPanels = sliceInPanels(rewriter, slice, panel);
  } else {
    outPanels =
        tensor::ExpandShapeOp::create(rewriter, loc, outPanelsType, out, split);
  }
  MLIRContext *context = rewriter.getContext();
  AffineExpr row, p, j, red;
  bindDims(context, row, p, j, red);
  SmallVector<AffineMap> maps = {AffineMap::get(4, 0, {row, red}, context),
                                 AffineMap::get(4, 0, {p, red, j}, context),
                                 AffineMap::get(4, 0, {row, p, j}, context)};
  SmallVector<utils::IteratorType> iterators(3, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  auto product = linalg::GenericOp::create(
      rewriter, loc, TypeRange{outPanelsType}, ValueRange{lhs, panels},
      ValueRange{outPanels}, maps, iterators,
      [](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value mul = arith::MulFOp::create(nested, nestedLoc, args[0], args[1]);
        Value sum = arith::AddFOp::create(nested, nestedLoc, args[2], mul);
        linalg::YieldOp::create(nested, nestedLoc, sum);
      });
  if (!partial) {
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        matmul, out.getType(), product.getResult(0), split);
    return product;
  }
  // The padded columns dropped: [M, P * panel] sliced to [M, N].
  Value collapsed = tensor::CollapseShapeOp::create(
      rewriter, loc, RankedTensorType::get({m, panelCount * panel}, f32),
      product.getResult(0), split);
  OpFoldResult zero = rewriter.getIndexAttr(0), one = rewriter.getIndexAttr(1);
  rewriter.replaceOpWithNewOp<tensor::ExtractSliceOp>(
      matmul, cast<RankedTensorType>(out.getType()), collapsed,
      /*offsets=*/ArrayRef<OpFoldResult>{zero, zero},
      /*sizes=*/ArrayRef<OpFoldResult>{rows, rewriter.getIndexAttr(n)},
      /*strides=*/ArrayRef<OpFoldResult>{one, one});
  return product;
}

// Whether `value` collapses one of `products` back to [M, N], directly or
// through elementwise ops already moved above the collapse.
bool isCollapsedProduct(Value value, const DenseSet<Operation *> &products) {
  auto collapse = value.getDefiningOp<tensor::CollapseShapeOp>();
  return collapse && isProductUnderElementwiseOps(
                         collapse.getSrc().getDefiningOp(),
                         [&](Operation *op) { return products.contains(op); });
}

struct PackMatmulWeightsPass
    : public impl::PackMatmulWeightsPassBase<PackMatmulWeightsPass> {
  using PackMatmulWeightsPassBase::PackMatmulWeightsPassBase;

  void runOnOperation() override {
    if (vectorBits == 0)
      return;
    func::FuncOp func = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<std::pair<linalg::MatmulOp, int64_t>> products;
    func.walk([&](linalg::MatmulOp matmul) {
      if (int64_t panel = getPanelWidth(matmul, vectorBits))
        products.push_back({matmul, panel});
    });
    if (products.empty())
      return;
    DenseMap<Value, Value> packed;
    DenseSet<Operation *> packedProducts;
    for (auto [matmul, panel] : products)
      packedProducts.insert(packMatmul(rewriter, matmul, panel, packed));
    // The panels of each constant, computed now; an output that starts as a
    // fill is filled in its panel shape (a reshaped fill would stay outside
    // the workgroups' tiles, keeping the product in one workgroup).
    RewritePatternSet patterns(&getContext());
    populateFoldPackOfConstantPatterns(patterns);
    linalg::FillOp::getCanonicalizationPatterns(patterns, &getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();

    // The collapse back to [M, N] moves below the elementwise ops that
    // consume the product (bias, activation), which run on its panel shape
    // too: nothing then separates them from the product, and they join its
    // dispatch as its epilogue (a Linear's bias + ReLU ran as a dispatch of
    // its own).
    RewritePatternSet expanding(&getContext());
    linalg::populateFoldReshapeOpsByExpansionPatterns(
        expanding, [&](OpOperand *operand) {
          auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
          return consumer &&
                 consumer.getNumParallelLoops() == consumer.getNumLoops() &&
                 isCollapsedProduct(operand->get(), packedProducts);
        });
    if (failed(applyPatternsGreedily(func, std::move(expanding))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace strata
