//===- TileAndDistribute.cpp ----------------------------------------------===//
#include "strata/compiler/Codegen/TileAndDistribute.h"
#include "strata/compiler/Codegen/PaddedSources.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace strata {
namespace {

// Whether `op` is a pad whose padded tensor is never built (its reader's
// register tiles read its source in place): every workgroup reads its own
// window of the whole, so it stays outside the workgroup loop, unsplit.
bool isPadReadInPlace(Operation *op) {
  return isa_and_nonnull<tensor::PadOp>(op) && op->hasAttr(kPadReadInPlaceAttr);
}

// Ops that may stay outside the workgroup loop: they compute nothing per
// element (or nothing at all: `isPadReadInPlace`, and slices, views of
// their source, such as the interior of a padded input).
bool isAllowedOutsideLoop(Operation *op) {
  return isa<scf::ForallOp, func::ReturnOp, tensor::EmptyOp, arith::ConstantOp,
             tensor::ExtractSliceOp>(op) ||
         isPadReadInPlace(op) ||
         (op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
          llvm::none_of(op->getResultTypes(), llvm::IsaPred<ShapedType>));
}

// `lhs + rhs` on index values, folded where both are constants.
OpFoldResult addIndex(OpBuilder &builder, Location loc, OpFoldResult lhs,
                      OpFoldResult rhs) {
  std::optional<int64_t> knownLhs = getConstantIntValue(lhs);
  std::optional<int64_t> knownRhs = getConstantIntValue(rhs);
  if (knownRhs == 0)
    return lhs;
  if (knownLhs == 0)
    return rhs;
  if (knownLhs && knownRhs)
    return builder.getIndexAttr(*knownLhs + *knownRhs);
  return arith::AddIOp::create(
             builder, loc, getValueOrCreateConstantIndexOp(builder, loc, lhs),
             getValueOrCreateConstantIndexOp(builder, loc, rhs))
      .getResult();
}

OpFoldResult addIndex(OpBuilder &builder, Location loc, OpFoldResult value,
                      int64_t constant) {
  return addIndex(builder, loc, value, builder.getIndexAttr(constant));
}

// `condition ? whenTrue : whenFalse`, folded where `condition` is known.
OpFoldResult selectIndex(OpBuilder &builder, Location loc,
                         std::optional<bool> known, Value condition,
                         OpFoldResult whenTrue, OpFoldResult whenFalse) {
  if (known)
    return *known ? whenTrue : whenFalse;
  return arith::SelectOp::create(
             builder, loc, condition,
             getValueOrCreateConstantIndexOp(builder, loc, whenTrue),
             getValueOrCreateConstantIndexOp(builder, loc, whenFalse))
      .getResult();
}

// One dimension of a workgroup's tile of the unpadded result: where it
// starts and ends in the padded result, and which part of the padding next
// to it the workgroup owns (the low padding if the tile is first along the
// dimension, the high padding if it is last), so the workgroups' parts
// cover the padded result exactly once.
struct PaddedTileDim {
  OpFoldResult interiorStart;
  OpFoldResult lowPadSize, highPadSize; // owned, possibly 0
  OpFoldResult ownedStart, ownedSize;
};

PaddedTileDim getPaddedTileDim(OpBuilder &builder, Location loc,
                               OpFoldResult offset, OpFoldResult size,
                               int64_t sourceSize, int64_t low, int64_t high) {
  PaddedTileDim dim;
  dim.interiorStart = addIndex(builder, loc, offset, low);
  std::optional<int64_t> knownOffset = getConstantIntValue(offset);
  std::optional<int64_t> knownSize = getConstantIntValue(size);
  std::optional<bool> isFirst, isLast;
  Value first, last;
  // Without padding on a side, no workgroup owns any there.
  if (low == 0 || knownOffset) {
    isFirst = knownOffset && *knownOffset == 0;
  } else {
    first = arith::CmpIOp::create(
        builder, loc, arith::CmpIPredicate::eq,
        getValueOrCreateConstantIndexOp(builder, loc, offset),
        arith::ConstantIndexOp::create(builder, loc, 0));
  }
  if (high == 0 || (knownOffset && knownSize)) {
    isLast =
        knownOffset && knownSize && *knownOffset + *knownSize == sourceSize;
  } else {
    Value end = arith::AddIOp::create(
        builder, loc, getValueOrCreateConstantIndexOp(builder, loc, offset),
        getValueOrCreateConstantIndexOp(builder, loc, size));
    last = arith::CmpIOp::create(
        builder, loc, arith::CmpIPredicate::eq, end,
        arith::ConstantIndexOp::create(builder, loc, sourceSize));
  }
  OpFoldResult zero = builder.getIndexAttr(0);
  dim.lowPadSize = selectIndex(builder, loc, isFirst, first,
                               builder.getIndexAttr(low), zero);
  dim.highPadSize =
      selectIndex(builder, loc, isLast, last, builder.getIndexAttr(high), zero);
  dim.ownedStart =
      selectIndex(builder, loc, isFirst, first, zero, dim.interiorStart);
  dim.ownedSize =
      addIndex(builder, loc, addIndex(builder, loc, dim.lowPadSize, size),
               dim.highPadSize);
  return dim;
}

// getPaddedTileDim of every dimension of a source of `sourceShape` padded
// by `low` and `high`, for the tile at `offsets`, `sizes` big.
SmallVector<PaddedTileDim> getPaddedTileDims(OpBuilder &builder, Location loc,
                                             ArrayRef<OpFoldResult> offsets,
                                             ArrayRef<OpFoldResult> sizes,
                                             ArrayRef<int64_t> sourceShape,
                                             ArrayRef<int64_t> low,
                                             ArrayRef<int64_t> high) {
  SmallVector<PaddedTileDim> dims;
  for (unsigned d = 0; d < sourceShape.size(); ++d)
    dims.push_back(getPaddedTileDim(builder, loc, offsets[d], sizes[d],
                                    sourceShape[d], low[d], high[d]));
  return dims;
}

// Padded innermost rows up to this many elements get their padding by a
// fill of the whole row before the interior is written over it: the two
// columns beside a short row, filled on their own, are single elements
// 4 * row apart, which LLVM's vectorizer turns into scatters (a 7x7 map
// padded to 9x9: 10 of its 15 us), where a whole short row is one vector
// store.
constexpr int64_t kMaxWholeFilledRow = 32;

// Fills the padding of `owned` (a workgroup's part of the padded result,
// `dims` per dimension, its tile `sizes` big) with `padValue`: one slab per
// padded dimension and side, dimensions before it over the tile's interior,
// dimensions after it over the whole owned range. A short padded innermost
// row is filled whole instead of its two sides (`kMaxWholeFilledRow`).
// Returns the filled part.
Value fillOwnedPadding(RewriterBase &rewriter, Location loc, Value owned,
                       ArrayRef<PaddedTileDim> dims,
                       ArrayRef<OpFoldResult> sizes, ArrayRef<int64_t> low,
                       ArrayRef<int64_t> high, Value padValue) {
  unsigned rank = dims.size();
  SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
  unsigned innermost = rank - 1;
  std::optional<int64_t> rowSize = getConstantIntValue(sizes[innermost]);
  bool fillWholeRows =
      (low[innermost] != 0 || high[innermost] != 0) && rowSize &&
      *rowSize + low[innermost] + high[innermost] <= kMaxWholeFilledRow;
  // Fills the part of `owned` at `offsets`, `sizes` big.
  auto fillPart = [&](ArrayRef<OpFoldResult> offsets,
                      ArrayRef<OpFoldResult> partSizes) {
    Value part = tensor::ExtractSliceOp::create(rewriter, loc, owned, offsets,
                                                partSizes, strides);
    Value filled =
        linalg::FillOp::create(rewriter, loc, padValue, part).getResult(0);
    owned = tensor::InsertSliceOp::create(rewriter, loc, filled, owned, offsets,
                                          partSizes, strides);
  };
  for (unsigned d = 0; d < rank; ++d) {
    if (d == innermost && fillWholeRows) {
      SmallVector<OpFoldResult> rowOffsets, rowSizes;
      for (unsigned e = 0; e < innermost; ++e) {
        rowOffsets.push_back(dims[e].lowPadSize);
        rowSizes.push_back(sizes[e]);
      }
      rowOffsets.push_back(rewriter.getIndexAttr(0));
      rowSizes.push_back(dims[d].ownedSize);
      fillPart(rowOffsets, rowSizes);
      continue;
    }
    for (bool lowSide : {true, false}) {
      if ((lowSide ? low[d] : high[d]) == 0)
        continue;
      SmallVector<OpFoldResult> slabOffsets, slabSizes;
      for (unsigned e = 0; e < rank; ++e) {
        if (e < d) {
          slabOffsets.push_back(dims[e].lowPadSize);
          slabSizes.push_back(sizes[e]);
        } else if (e > d) {
          slabOffsets.push_back(rewriter.getIndexAttr(0));
          slabSizes.push_back(dims[e].ownedSize);
        } else if (lowSide) {
          slabOffsets.push_back(rewriter.getIndexAttr(0));
          slabSizes.push_back(dims[d].lowPadSize);
        } else {
          slabOffsets.push_back(
              addIndex(rewriter, loc, dims[d].lowPadSize, sizes[d]));
          slabSizes.push_back(dims[d].highPadSize);
        }
      }
      fillPart(slabOffsets, slabSizes);
    }
  }
  return owned;
}

// Moves the pure ops computing `values` inside `body` to its start, so
// what is built from them can come before the tile's computation. Returns
// the position after them, or failure when one depends on the computation.
FailureOr<Block::iterator> hoistToBlockStart(Block *body,
                                             ArrayRef<OpFoldResult> values) {
  Operation *loop = body->getParentOp();
  SetVector<Operation *> toMove;
  std::function<bool(Value)> collect = [&](Value value) {
    Operation *def = value.getDefiningOp();
    if (!def) // the loop's induction variable, or an argument from above
      return value.getParentBlock() == body ||
             !loop->isAncestor(value.getParentBlock()->getParentOp());
    if (!loop->isAncestor(def))
      return true;
    if (def->getBlock() != body)
      return false;
    if (toMove.contains(def))
      return true;
    if (!isPure(def) || def->getNumRegions() != 0)
      return false;
    for (Value operand : def->getOperands())
      if (!collect(operand))
        return false;
    toMove.insert(def);
    return true;
  };
  for (OpFoldResult value : values)
    if (auto dynamic = dyn_cast<Value>(value); dynamic && !collect(dynamic))
      return failure();
  Block::iterator position = body->begin();
  for (Operation *op : toMove) {
    if (&*position == op) {
      ++position;
      continue;
    }
    op->moveBefore(body, position);
  }
  return position;
}

// The dispatch returns `pad(forall)`: the workgroup loop writes the padded
// tensor instead. Each workgroup takes the part of it that it owns (its
// tile's interior plus the padding next to it, `PaddedTileDim`), fills its
// padding (`fillOwnedPadding`) and computes its tile into the interior, so
// all of it bufferizes in place.
LogicalResult writePaddedResultInLoop(RewriterBase &rewriter, tensor::PadOp pad,
                                      scf::ForallOp forall) {
  if (forall->getNumResults() != 1 || pad.getSource() != forall->getResult(0))
    return failure();
  BlockArgument shared = forall.getRegionIterArgs()[0];
  tensor::ParallelInsertSliceOp tileInsert;
  SmallVector<tensor::ExtractSliceOp> tileInits;
  for (OpOperand &use : shared.getUses()) {
    Operation *user = use.getOwner();
    if (auto extract = dyn_cast<tensor::ExtractSliceOp>(user)) {
      tileInits.push_back(extract);
      continue;
    }
    auto insert = dyn_cast<tensor::ParallelInsertSliceOp>(user);
    if (!insert || tileInsert || insert.getDest() != shared)
      return failure();
    tileInsert = insert;
  }
  if (!tileInsert || !tileInsert.hasUnitStride())
    return failure();
  SmallVector<OpFoldResult> offsets = tileInsert.getMixedOffsets();
  SmallVector<OpFoldResult> sizes = tileInsert.getMixedSizes();
  // The loop reads its output only as the tile's own init.
  for (tensor::ExtractSliceOp init : tileInits)
    if (!init.hasUnitStride() || init.getMixedOffsets() != offsets ||
        init.getMixedSizes() != sizes ||
        init.getType() != tileInsert.getSourceType())
      return failure();

  Location loc = pad.getLoc();
  RankedTensorType paddedType = pad.getResultType();
  ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
  // Read before the loop's result (the pad's source) takes the padded type.
  ArrayRef<int64_t> sourceShape = pad.getSourceType().getShape();
  Value padValue = pad.getConstantPaddingValue();
  unsigned rank = paddedType.getRank();
  Block *body = forall.getBody();
  SmallVector<OpFoldResult> bounds(offsets);
  bounds.append(sizes);
  FailureOr<Block::iterator> start = hoistToBlockStart(body, bounds);
  if (failed(start))
    return failure();

  rewriter.setInsertionPoint(forall);
  Value paddedInit = tensor::EmptyOp::create(
      rewriter, loc, paddedType.getShape(), paddedType.getElementType());
  rewriter.modifyOpInPlace(forall, [&] {
    forall.getOutputsMutable()[0].set(paddedInit);
    shared.setType(paddedType);
    forall->getResult(0).setType(paddedType);
  });

  // Before the tile's computation: take the owned part and fill its padding.
  rewriter.setInsertionPoint(body, *start);
  Value bodyPadValue = rewriter.clone(*padValue.getDefiningOp())->getResult(0);
  SmallVector<PaddedTileDim> dims =
      getPaddedTileDims(rewriter, loc, offsets, sizes, sourceShape, low, high);
  SmallVector<OpFoldResult> ownedOffsets, ownedSizes, interiorOffsets;
  for (unsigned d = 0; d < rank; ++d) {
    ownedOffsets.push_back(dims[d].ownedStart);
    ownedSizes.push_back(dims[d].ownedSize);
    interiorOffsets.push_back(dims[d].lowPadSize);
  }
  SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
  Value owned = tensor::ExtractSliceOp::create(
      rewriter, loc, shared, ownedOffsets, ownedSizes, strides);
  owned = fillOwnedPadding(rewriter, loc, owned, dims, sizes, low, high,
                           bodyPadValue);
  Value interiorInit =
      tensor::ExtractSliceOp::create(rewriter, loc, tileInsert.getSourceType(),
                                     owned, interiorOffsets, sizes, strides);
  for (tensor::ExtractSliceOp init : tileInits)
    rewriter.replaceOp(init, interiorInit);

  // After it: the tile into the interior, the owned part into the result.
  rewriter.setInsertionPoint(forall.getTerminator());
  Value result =
      tensor::InsertSliceOp::create(rewriter, loc, tileInsert.getSource(),
                                    owned, interiorOffsets, sizes, strides);
  rewriter.setInsertionPoint(tileInsert);
  rewriter.replaceOpWithNewOp<tensor::ParallelInsertSliceOp>(
      tileInsert, result, shared, ownedOffsets, ownedSizes, strides);
  rewriter.replaceOp(pad, forall->getResults());
  return success();
}

// A static constant pad as an empty tensor, fills of its padding (the
// slabs of `fillOwnedPadding`) and its source inserted into the interior:
// the padding and the interior are each written once, where a fill of the
// whole result and a copy over it write the interior twice.
struct DecomposeStaticPad : public OpRewritePattern<tensor::PadOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::PadOp pad,
                                PatternRewriter &rewriter) const override {
    if (!isStaticConstantPad(pad) || !pad.getSourceType().hasStaticShape())
      return failure();
    Location loc = pad.getLoc();
    RankedTensorType paddedType = pad.getResultType();
    ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
    unsigned rank = paddedType.getRank();
    // One tile: the whole source.
    ArrayRef<int64_t> sourceShape = pad.getSourceType().getShape();
    SmallVector<OpFoldResult> sizes =
        getAsIndexOpFoldResult(rewriter.getContext(), sourceShape);
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    SmallVector<PaddedTileDim> dims = getPaddedTileDims(
        rewriter, loc, offsets, sizes, sourceShape, low, high);
    SmallVector<OpFoldResult> interiorOffsets;
    for (const PaddedTileDim &dim : dims)
      interiorOffsets.push_back(dim.lowPadSize);
    Value padded = tensor::EmptyOp::create(rewriter, loc, paddedType.getShape(),
                                           paddedType.getElementType());
    padded = fillOwnedPadding(rewriter, loc, padded, dims, sizes, low, high,
                              pad.getConstantPaddingValue());
    SmallVector<OpFoldResult> strides(rank, rewriter.getIndexAttr(1));
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        pad, pad.getSource(), padded, interiorOffsets, sizes, strides);
    return success();
  }
};

LogicalResult tileInPlace(func::FuncOp func, const WorkgroupTiling &tiling) {
  // expand_shape(tensor.empty) is just an empty tensor; folding it lets a
  // fill on it fuse into the tile.
  {
    RewritePatternSet patterns(func.getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    (void)applyPatternsGreedily(func, std::move(patterns));
  }
  Operation *terminator = func.getBody().front().getTerminator();
  TilingInterface root = findTileableDispatchRoot(terminator);
  if (!root)
    return failure();
  tensor::PadOp paddedResult = findPaddedDispatchResult(terminator);
  // The split must make exactly the grid the host launches.
  {
    OpBuilder builder(root);
    SmallVector<Range> domain = root.getIterationDomain(builder);
    if (tiling.loop >= domain.size() || tiling.tileSize <= 0)
      return failure();
    std::optional<int64_t> size = getConstantIntValue(domain[tiling.loop].size);
    if (tiling.count != ShapedType::kDynamic &&
        (!size || llvm::divideCeil(*size, tiling.tileSize) != tiling.count))
      return failure();
  }

  IRRewriter rewriter(func.getContext());
  // An init the root only overwrites (elementwise ops often reuse an input
  // as their init) would become the loop's shared output and keep its
  // producer outside the loop; a fresh empty tensor lets it fuse.
  // An init it accumulates into that is an argument (an input binding,
  // never written) is copied, by a producer that fuses into each tile:
  // bufferization would otherwise copy the whole argument in every
  // workgroup, over the rows the others had already written.
  if (auto linalgRoot = dyn_cast<linalg::LinalgOp>(root.getOperation())) {
    for (OpOperand &init : linalgRoot.getDpsInitsMutable()) {
      auto type = cast<RankedTensorType>(init.get().getType());
      bool accumulates = linalgRoot.payloadUsesValueFromOperand(&init);
      if (accumulates && !isa<BlockArgument>(init.get()))
        continue;
      rewriter.setInsertionPoint(root);
      Value empty = tensor::EmptyOp::create(
          rewriter, root.getLoc(),
          tensor::getMixedSizes(rewriter, root.getLoc(), init.get()),
          type.getElementType());
      if (accumulates)
        empty =
            linalg::CopyOp::create(rewriter, root.getLoc(), init.get(), empty)
                .getResult(0);
      init.set(empty);
    }
  }
  SmallVector<OpFoldResult> tileSizes(root.getLoopIteratorTypes().size(),
                                      rewriter.getIndexAttr(0));
  tileSizes[tiling.loop] = rewriter.getIndexAttr(tiling.tileSize);
  scf::SCFTilingOptions tilingOptions;
  tilingOptions.setTileSizes(tileSizes);
  tilingOptions.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tilingOptions);
  options.setFusionControlFn(
      [](tensor::ExtractSliceOp, OpResult producer,
         bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
        if (isPadReadInPlace(producer.getOwner()))
          return std::nullopt;
        return scf::SCFTileAndFuseOptions::ControlFnResult{};
      });
  rewriter.setInsertionPoint(root);
  FailureOr<scf::SCFTileAndFuseResult> result =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, root, options);
  if (failed(result) || result->loops.size() != 1)
    return failure();
  for (OpResult value : root->getResults())
    if (Value replacement = result->replacements.lookup(value))
      rewriter.replaceAllUsesWith(value, replacement);
  if (paddedResult &&
      failed(writePaddedResultInLoop(
          rewriter, paddedResult,
          cast<scf::ForallOp>(result->loops.front().getOperation()))))
    return failure();

  // A dynamic extent the tiling read off a fused producer's result (the
  // batch of the convolution under an epilogue) is read off its operands
  // instead, so that the producer does not stay outside the loop for its
  // sizes alone.
  {
    RewritePatternSet dims(func.getContext());
    memref::populateResolveRankedShapedTypeResultDimsPatterns(dims);
    tensor::DimOp::getCanonicalizationPatterns(dims, func.getContext());
    if (failed(applyPatternsGreedily(func, std::move(dims))))
      return failure();
  }
  // Drop what the fusion made dead (also the slices it left in the loop),
  // then require that nothing computing remains outside the loop.
  (void)runRegionDCE(rewriter, func.getBody());
  for (Operation &op : func.getBody().front())
    if (!isAllowedOutsideLoop(&op)) {
      return failure();
    }
  return success();
}

} // namespace

void populateDecomposeStaticPadPatterns(RewritePatternSet &patterns) {
  patterns.add<DecomposeStaticPad>(patterns.getContext(), /*benefit=*/2);
}

// Workgroup `id` of `count` runs tiles [id * per, min((id + 1) * per, n))
// of the forall's n tiles, per = ceil(n / count): contiguous, so each reads
// one part of the operands.
static LogicalResult runTileRange(RewriterBase &rewriter, scf::ForallOp forall,
                                  Value id, Value count) {
  Location loc = forall.getLoc();
  auto index = [&](OpFoldResult value) {
    return getValueOrCreateConstantIndexOp(rewriter, loc, value);
  };
  Value lower = index(forall.getMixedLowerBound()[0]);
  Value upper = index(forall.getMixedUpperBound()[0]);
  Value step = index(forall.getMixedStep()[0]);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto ceilDiv = [&](Value a, Value b) -> Value {
    Value biased = arith::AddIOp::create(
        rewriter, loc, a, arith::SubIOp::create(rewriter, loc, b, one));
    return arith::DivUIOp::create(rewriter, loc, biased, b);
  };
  Value tiles =
      ceilDiv(arith::SubIOp::create(rewriter, loc, upper, lower), step);
  Value perWorkgroup = ceilDiv(tiles, count);
  Value first = arith::MulIOp::create(rewriter, loc, id, perWorkgroup);
  Value last = arith::MinUIOp::create(
      rewriter, loc, tiles,
      arith::AddIOp::create(rewriter, loc, first, perWorkgroup));
  auto loop = scf::ForOp::create(rewriter, loc, first, last, one);
  rewriter.setInsertionPointToStart(loop.getBody());
  Value iv = arith::AddIOp::create(
      rewriter, loc, lower,
      arith::MulIOp::create(rewriter, loc, loop.getInductionVar(), step));
  Block *body = forall.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.inlineBlockBefore(body, loop.getBody()->getTerminator(),
                             ValueRange{iv});
  rewriter.eraseOp(forall);
  return success();
}

LogicalResult tileToWorkgroups(func::FuncOp func,
                               const WorkgroupTiling &tiling) {
  // Tile a copy so a failure leaves the original untouched.
  OpBuilder builder(func);
  auto copy = cast<func::FuncOp>(builder.clone(*func));
  if (failed(tileInPlace(copy, tiling))) {
    copy.erase();
    return failure();
  }
  func.getBody().takeBody(copy.getBody());
  copy.erase();
  return success();
}

LogicalResult distributeToWorkgroups(func::FuncOp func, bool tiled,
                                     bool chunked) {
  MLIRContext *context = func.getContext();
  Block &entry = func.getBody().front();
  Type indexType = IndexType::get(context);
  Location loc = func.getLoc();
  Value workgroupId = entry.addArgument(indexType, loc);
  Value workgroupCount = entry.addArgument(indexType, loc);
  SmallVector<Type> argTypes(func.getArgumentTypes());
  argTypes.append({indexType, indexType});
  func.setFunctionType(
      FunctionType::get(context, argTypes, func.getResultTypes()));

  SmallVector<scf::ForallOp> loops;
  for (Operation &op : entry)
    if (auto forall = dyn_cast<scf::ForallOp>(op))
      loops.push_back(forall);

  IRRewriter rewriter(context);
  if (tiled) {
    if (loops.size() != 1 || loops.front().getRank() != 1)
      return func.emitOpError("lost its workgroup loop during bufferization");
    scf::ForallOp forall = loops.front();
    rewriter.setInsertionPoint(forall);
    if (chunked)
      return runTileRange(rewriter, forall, workgroupId, workgroupCount);
    Value lower = getValueOrCreateConstantIndexOp(
        rewriter, loc, forall.getMixedLowerBound()[0]);
    Value step = getValueOrCreateConstantIndexOp(rewriter, loc,
                                                 forall.getMixedStep()[0]);
    Value iv = arith::AddIOp::create(
        rewriter, loc, lower,
        arith::MulIOp::create(rewriter, loc, workgroupId, step));
    Block *body = forall.getBody();
    rewriter.eraseOp(body->getTerminator());
    rewriter.inlineBlockBefore(body, forall, ValueRange{iv});
    rewriter.eraseOp(forall);
    return success();
  }

  // One workgroup does all the work.
  Operation *terminator = entry.getTerminator();
  rewriter.setInsertionPointToStart(&entry);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value isFirst = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        workgroupId, zero);
  auto ifOp = scf::IfOp::create(rewriter, loc, isFirst, /*withElse=*/false);
  Block *thenBlock = ifOp.thenBlock();
  for (Operation &op : llvm::make_early_inc_range(entry)) {
    if (&op == terminator || &op == ifOp || &op == zero.getDefiningOp() ||
        &op == isFirst.getDefiningOp())
      continue;
    op.moveBefore(thenBlock->getTerminator());
  }
  return success();
}

} // namespace strata
