//===- BroadcastKernels.cpp - depthwise and direct convolution kernels ----===//

#include "strata/compiler/Codegen/BroadcastKernels.h"
#include "strata/compiler/Utils/IndexingMaps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace strata {
namespace {

// Lanes of a cache tile, as for the contraction kernels.
constexpr int64_t kCacheLanes = 256;

// Whether `expr` is `dim` plus, optionally, reduction loops (a convolution's
// `ow + kw`): stepping `dim` then moves the index by one.
bool isLoopPlusOffsets(AffineExpr expr, unsigned dim,
                       ArrayRef<utils::IteratorType> iterators) {
  if (auto d = dyn_cast<AffineDimExpr>(expr))
    return d.getPosition() == dim;
  auto sum = dyn_cast<AffineBinaryOpExpr>(expr);
  if (!sum || sum.getKind() != AffineExprKind::Add)
    return false;
  auto isReductionTerm = [&](AffineExpr term) {
    if (auto mul = dyn_cast<AffineBinaryOpExpr>(term);
        mul && mul.getKind() == AffineExprKind::Mul)
      term =
          isa<AffineConstantExpr>(mul.getRHS()) ? mul.getLHS() : mul.getRHS();
    auto d = dyn_cast<AffineDimExpr>(term);
    return d && iterators[d.getPosition()] == utils::IteratorType::reduction;
  };
  return (isLoopPlusOffsets(sum.getLHS(), dim, iterators) &&
          isReductionTerm(sum.getRHS())) ||
         (isLoopPlusOffsets(sum.getRHS(), dim, iterators) &&
          isReductionTerm(sum.getLHS()));
}

} // namespace

// C[.., v] += A[..] * B[.., v + offsets] with A not reading v: a depthwise
// (or direct) convolution. Vector lanes run along v; short rows go several
// to a register tile.
std::optional<ContractionTiles> chooseBroadcastTiles(linalg::LinalgOp op,
                                                     unsigned vectorBits) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (!outputMap.isProjectedPermutation() || op.getNumReductionLoops() == 0)
    return std::nullopt;
  std::optional<unsigned> vectorLoop = getInnermostLoop(outputMap);
  if (!vectorLoop)
    return std::nullopt;
  OpOperand *lanes = nullptr, *scalar = nullptr;
  for (OpOperand *input : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!lanes && map.getNumResults() > 0 &&
        isLoopPlusOffsets(map.getResults().back(), *vectorLoop, iterators))
      lanes = input;
    else
      scalar = input;
  }
  // The other input is a scalar per step, or lanes too (an NHWC depthwise
  // convolution's weights run along the same channels as its input).
  if (!lanes || !scalar)
    return std::nullopt;
  AffineMap scalarMap = op.getMatchingIndexingMap(scalar);
  if (scalarMap.isFunctionOfDim(*vectorLoop) &&
      !(scalarMap.getNumResults() > 0 &&
        isLoopPlusOffsets(scalarMap.getResults().back(), *vectorLoop,
                          iterators)))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned loops = op.getNumLoops();
  ContractionTiles tiles;
  tiles.broadcast = true;
  tiles.vectorLoop = tiles.rowLoop = *vectorLoop;
  tiles.cache.assign(loops, 1);
  tiles.registers.assign(loops, 0);
  int64_t laneCount = std::max<int64_t>(vectorBits / 32, 4);
  tiles.cache[*vectorLoop] = clampTile(kCacheLanes, ranges[*vectorLoop]);
  // Four vectors: independent accumulators for the FMAs' latency.
  tiles.registers[*vectorLoop] = clampTile(4 * laneCount, ranges[*vectorLoop]);
  SmallVector<unsigned> reductions;
  for (unsigned loop = 0; loop < loops; ++loop) {
    if (loop == *vectorLoop)
      continue;
    if (iterators[loop] == utils::IteratorType::reduction) {
      reductions.push_back(loop);
      tiles.registers[loop] = 1;
    } else {
      tiles.cacheLoopOrder.push_back(loop);
    }
  }
  tiles.reductionLoop = reductions.front();
  tiles.cacheLoopOrder.push_back(*vectorLoop);
  llvm::append_range(tiles.cacheLoopOrder, reductions);

  // Rows of fewer than four vectors (a 14x14 map's rows are one): several
  // output rows per register tile, so that four independent accumulators
  // hide the FMA latency instead of one chain waiting on itself (the loop
  // of the output's next dimension, which the broadcast operand must not
  // read).
  int64_t vectors = llvm::divideCeil(tiles.registers[*vectorLoop], laneCount);
  unsigned outputRank = outputMap.getNumResults();
  if (vectors < 4 && outputRank >= 2) {
    auto rowDim = dyn_cast<AffineDimExpr>(outputMap.getResult(outputRank - 2));
    if (rowDim && !scalarMap.isFunctionOfDim(rowDim.getPosition()) &&
        !ShapedType::isDynamic(ranges[rowDim.getPosition()])) {
      unsigned rowLoop = rowDim.getPosition();
      int64_t rows = clampTile(4 / vectors, ranges[rowLoop]);
      if (rows > 1) {
        // The register tile's row loop must enclose the tap loops for the
        // accumulators to stay in registers across them: the rows and the
        // taps are left whole by the cache tiles and looped over at the
        // register level (rows outermost; static remainders).
        tiles.rowLoop = rowLoop;
        tiles.registers[rowLoop] = rows;
        tiles.cache[rowLoop] = 0;
        for (unsigned loop : reductions)
          tiles.cache[loop] = 0;
      }
    }
  }
  return tiles;
}

// A broadcast kernel's register tile (every loop but the vector loop has
// one iteration): acc[lanes] += broadcast(A) * B[lanes] (or A[lanes]), one
// vector.fma.
LogicalResult vectorizeBroadcastTile(RewriterBase &rewriter,
                                     linalg::LinalgOp op,
                                     const ContractionTiles &tiles) {
  if (!isRegisterTileShape(op, tiles))
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  bool hasRows = tiles.rowLoop != tiles.vectorLoop;
  int64_t rows = hasRows ? ranges[tiles.rowLoop] : 1;
  OpOperand *acc = op.getDpsInitOperand(0);
  Type f32 = rewriter.getF32Type();
  // A lane count that is not a power of two (a partial last vector) runs
  // as the next power of two with the lanes past the tile masked off: the
  // transfers are out of bounds there, and lower to masked loads and
  // stores.
  int64_t lanes = ranges[tiles.vectorLoop];
  bool masked = !llvm::isPowerOf2_64(lanes);
  auto type = VectorType::get({int64_t(llvm::PowerOf2Ceil(lanes))}, f32);
  Location loc = op.getLoc();
  MLIRContext *context = op.getContext();
  rewriter.setInsertionPoint(op);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value padding = arith::ConstantOp::create(rewriter, loc, f32,
                                            rewriter.getF32FloatAttr(0));

  // Where row `row` of the tile starts in `operand`'s view: its dimension
  // that the row loop indexes (as row * stride + taps), at row * stride.
  auto rowPosition = [&](OpOperand *operand,
                         int64_t row) -> std::pair<int64_t, int64_t> {
    AffineMap map = op.getMatchingIndexingMap(operand);
    if (!hasRows)
      return {-1, 0};
    for (auto [index, expr] : llvm::enumerate(map.getResults())) {
      if (!expr.isFunctionOfDim(tiles.rowLoop))
        continue;
      SmallVector<AffineExpr> dims(map.getNumDims(),
                                   getAffineConstantExpr(0, context));
      dims[tiles.rowLoop] = getAffineConstantExpr(row, context);
      auto offset =
          dyn_cast<AffineConstantExpr>(expr.replaceDimsAndSymbols(dims, {}));
      return {index, offset ? offset.getValue() : 0};
    }
    return {-1, 0};
  };
  // Row `row` of an operand's tile: a view whose innermost dimension holds
  // the lanes (or one element) and whose other dimensions are unit ones;
  // rows are disjoint static subviews, so each row's accumulator is
  // carried in registers on its own.
  auto rowView = [&](OpOperand *operand, int64_t row) -> Value {
    auto [dim, offset] = rowPosition(operand, row);
    Value memref = operand->get();
    if (dim < 0)
      return memref;
    auto memrefType = cast<MemRefType>(memref.getType());
    SmallVector<OpFoldResult> offsets(memrefType.getRank(),
                                      rewriter.getIndexAttr(0));
    SmallVector<OpFoldResult> sizes =
        memref::getMixedSizes(rewriter, loc, memref);
    SmallVector<OpFoldResult> strides(memrefType.getRank(),
                                      rewriter.getIndexAttr(1));
    offsets[dim] = rewriter.getIndexAttr(offset);
    sizes[dim] = rewriter.getIndexAttr(1);
    return memref::SubViewOp::create(rewriter, loc, memref, offsets, sizes,
                                     strides);
  };
  auto readLanes = [&](Value memref) -> Value {
    unsigned rank = cast<MemRefType>(memref.getType()).getRank();
    SmallVector<Value> indices(rank, zero);
    SmallVector<bool> inBounds{!masked};
    return vector::TransferReadOp::create(
        rewriter, loc, type, memref, indices, padding,
        AffineMap::getMinorIdentityMap(rank, 1, context),
        ArrayRef<bool>(inBounds));
  };
  // An input the vector loop walks is read as lanes (per row where it reads
  // the row loop), the other as one element broadcast to all lanes.
  SmallVector<Value> broadcasts;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (op.getMatchingIndexingMap(input).isFunctionOfDim(tiles.vectorLoop)) {
      broadcasts.push_back(Value());
      continue;
    }
    unsigned rank = cast<MemRefType>(input->get().getType()).getRank();
    Value scalar = memref::LoadOp::create(rewriter, loc, input->get(),
                                          SmallVector<Value>(rank, zero));
    broadcasts.push_back(
        vector::BroadcastOp::create(rewriter, loc, type, scalar));
  }
  for (int64_t row = 0; row < rows; ++row) {
    SmallVector<Value> factors;
    for (auto [input, broadcast] :
         llvm::zip(op.getDpsInputOperands(), broadcasts))
      factors.push_back(broadcast ? broadcast : readLanes(rowView(input, row)));
    Value accView = rowView(acc, row);
    Value accumulator = readLanes(accView);
    Value result = vector::FMAOp::create(rewriter, loc, factors[0], factors[1],
                                         accumulator);
    unsigned accRank = cast<MemRefType>(accView.getType()).getRank();
    SmallVector<bool> inBounds{!masked};
    vector::TransferWriteOp::create(
        rewriter, loc, result, accView, SmallVector<Value>(accRank, zero),
        AffineMap::getMinorIdentityMap(accRank, 1, context),
        ArrayRef<bool>(inBounds));
  }
  rewriter.eraseOp(op);
  return success();
}

} // namespace strata
