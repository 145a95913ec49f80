//===- ContractionStrategy.cpp - register-tiled contraction kernels -------===//
//
// A contraction C[.., r, v] += A[.., r, .., k] * B[.., k, .., v] (any loop
// order, any extra batch or reduction loops) runs as
//
//   for cache tiles (rows x vector x reduction, other loops by one)
//     for register tiles (mr rows x nr vector lanes)
//       acc = C[tile]                      // mr x nr, in registers
//       for k in the cache tile: acc += broadcast(A[r, k]) * B[k, v..v+nr]
//       C[tile] = acc
//
// The vector loop is the output's innermost loop and must be some input's
// innermost, unit-stride loop: its loads and the accumulator stores are
// contiguous, the other input is read one scalar per row. Partial register
// tiles at the edges are peeled off and stay loops.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/ContractionStrategy.h"
#include "strata/compiler/Codegen/AccumulatorFills.h"
#include "strata/compiler/Codegen/BroadcastKernels.h"
#include "strata/compiler/Codegen/CacheTileEpilogues.h"
#include "strata/compiler/Codegen/HoistAccumulatorTiles.h"
#include "strata/compiler/Codegen/LoweringConfig.h"
#include "strata/compiler/Codegen/TransposedRowTransfers.h"
#include "strata/compiler/Codegen/WindowChecks.h"
#include "strata/compiler/Passes.h"
#include "strata/compiler/Utils/IndexingMaps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Patterns.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DEF_TILEANDVECTORIZECONTRACTIONSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Marks the register-tile ops, with the index of their kernel, until they
// are vectorized (peeling clones them, and canonicalization may rebuild
// their operands).
constexpr StringLiteral kRegisterTileMarker = "strata.register_tile";
// Marks the register loops still to be peeled.
constexpr StringLiteral kPeelMarker = "strata.peel";

// Cache tile: a 64-row block of A (64 KiB at k = 256) and a 256 x 256 block
// of B (256 KiB) stay in L2 while C's 64 x 256 block is accumulated.
// (Measured on 197x384x1152 and 1024^3: 32-128 rows, 256-1024 lanes and
// 128-256 reduction steps are within noise of each other; this one was
// best.)
constexpr int64_t kCacheRows = 64;
constexpr int64_t kCacheVector = 256;
constexpr int64_t kCacheReduction = 256;

// The input of `op` whose innermost dimension is walked by `vectorLoop`
// (B), or null.
OpOperand *findVectorOperand(linalg::LinalgOp op, unsigned vectorLoop) {
  for (OpOperand *input : op.getDpsInputOperands())
    if (getInnermostLoop(op.getMatchingIndexingMap(input)) == vectorLoop)
      return input;
  return nullptr;
}

bool usesDim(AffineMap map, unsigned dim) {
  return llvm::any_of(map.getResults(), [&](AffineExpr e) {
    auto d = dyn_cast<AffineDimExpr>(e);
    return d && d.getPosition() == dim;
  });
}

std::optional<ContractionTiles> chooseMatmulTiles(linalg::LinalgOp op,
                                                  unsigned vectorBits);

} // namespace

bool isPlainMultiplyAdd(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (body->getOperations().size() != 3)
    return false;
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value acc = body->getArgument(2);
  Value product = add.getLhs() == acc ? add.getRhs() : add.getLhs();
  if ((add.getLhs() == acc) == (add.getRhs() == acc))
    return false;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  Value a = body->getArgument(0), b = body->getArgument(1);
  return (mul.getLhs() == a && mul.getRhs() == b) ||
         (mul.getLhs() == b && mul.getRhs() == a);
}

bool isRegisterTileShape(linalg::LinalgOp op, const ContractionTiles &tiles) {
  bool hasRows = tiles.rowLoop != tiles.vectorLoop;
  SmallVector<unsigned> blockLoops = getRegisterBlockLoops(tiles);
  for (auto [loop, range] : llvm::enumerate(op.getStaticLoopRanges()))
    if (range != 1 && loop != tiles.vectorLoop &&
        !(hasRows && loop == tiles.rowLoop) &&
        !llvm::is_contained(blockLoops, loop))
      return false;
  return true;
}

std::optional<ContractionTiles> chooseContractionTiles(linalg::LinalgOp op,
                                                       unsigned vectorBits) {
  // Two inputs multiplied (or a window's input and shape), or one input
  // reduced along lanes.
  if (op.getNumDpsInputs() < 1 || op.getNumDpsInputs() > 2 ||
      op.getNumDpsInits() != 1 ||
      (op.getNumDpsInputs() == 1 && !isLaneWiseReduction(op)))
    return std::nullopt;
  // f32 only for now: other types keep the loop lowering.
  for (OpOperand &operand : op->getOpOperands())
    if (!getElementTypeOrSelf(operand.get().getType()).isF32())
      return std::nullopt;
  // Other reductions of one value per step (a pooling's max or sum) run as
  // broadcast kernels with their own body on the lanes.
  if (!isPlainMultiplyAdd(op))
    return isLaneWiseReduction(op) ? chooseBroadcastTiles(op, vectorBits)
                                   : std::nullopt;
  if (linalg::isaContractionOpInterface(op))
    return chooseMatmulTiles(op, vectorBits);
  return chooseBroadcastTiles(op, vectorBits);
}

SmallVector<unsigned> getRegisterLoopOrder(const ContractionTiles &tiles,
                                           unsigned numLoops) {
  // Rows outside vector panels: A's row block (mr x reduction tile) stays
  // in L1 while B's panels stream past it (measured 20-30% faster than
  // the other order on 197x384x1152 and 512^3).
  // Block loops, like rows, enclose the reduction loops.
  SmallVector<unsigned> order;
  if (tiles.rowLoop != tiles.vectorLoop)
    order.push_back(tiles.rowLoop);
  llvm::append_range(order, getRegisterBlockLoops(tiles));
  order.push_back(tiles.vectorLoop);
  order.push_back(tiles.reductionLoop);
  // Every loop is listed; untiled ones make no loop.
  for (unsigned loop = 0; loop < numLoops; ++loop)
    if (!llvm::is_contained(order, loop))
      order.push_back(loop);
  return order;
}

namespace {

std::optional<ContractionTiles> chooseMatmulTiles(linalg::LinalgOp op,
                                                  unsigned vectorBits) {
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return std::nullopt;

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  std::optional<unsigned> vectorLoop = getInnermostLoop(outputMap);
  if (!vectorLoop)
    return std::nullopt;
  // B: the input whose innermost dimension is the vector loop; A the other.
  OpOperand *rhs = findVectorOperand(op, *vectorLoop);
  if (!rhs)
    return std::nullopt;
  OpOperand *lhs = op.getDpsInputOperand(rhs == op.getDpsInputOperand(0));
  AffineMap lhsMap = op.getMatchingIndexingMap(lhs);
  AffineMap rhsMap = op.getMatchingIndexingMap(rhs);
  if (usesDim(lhsMap, *vectorLoop))
    return std::nullopt;

  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  // The row loop: the output's innermost other loop that A reads and B
  // does not, skipping unit loops (an exporter's [128, 1, 768] product has
  // its rows outside a unit dimension) and B's own loops.
  std::optional<unsigned> rowLoop;
  for (AffineExpr expr : llvm::reverse(outputMap.getResults().drop_back())) {
    unsigned dim = cast<AffineDimExpr>(expr).getPosition();
    // Unit loops, and loops only B reads (a convolution's output rows
    // beside its columns), are tiled by one.
    if (ranges[dim] == 1 || (usesDim(rhsMap, dim) && !usesDim(lhsMap, dim)))
      continue;
    if (usesDim(lhsMap, dim) && !usesDim(rhsMap, dim))
      rowLoop = dim;
    break;
  }
  // The reduction loop: A's innermost if it is one, else B's outermost
  // reduction; unit loops are skipped (a flattened [1, C, 1, 1] input's
  // reduction over C is not its innermost loop).
  std::optional<unsigned> reductionLoop;
  for (AffineExpr e : llvm::reverse(lhsMap.getResults())) {
    unsigned dim = cast<AffineDimExpr>(e).getPosition();
    if (ranges[dim] == 1)
      continue;
    if (iterators[dim] == utils::IteratorType::reduction)
      reductionLoop = dim;
    break;
  }
  if (!reductionLoop) {
    for (AffineExpr e : rhsMap.getResults()) {
      unsigned dim = cast<AffineDimExpr>(e).getPosition();
      if (iterators[dim] == utils::IteratorType::reduction &&
          ranges[dim] != 1) {
        reductionLoop = dim;
        break;
      }
    }
  }
  // Every reduction loop of one step: any of them will do.
  if (!reductionLoop)
    for (AffineExpr e : rhsMap.getResults())
      if (iterators[cast<AffineDimExpr>(e).getPosition()] ==
          utils::IteratorType::reduction) {
        reductionLoop = cast<AffineDimExpr>(e).getPosition();
        break;
      }
  if (!reductionLoop)
    return std::nullopt;

  unsigned loops = op.getNumLoops();
  ContractionTiles tiles;
  tiles.vectorLoop = *vectorLoop;
  tiles.reductionLoop = *reductionLoop;
  // Without a row loop the register tile is one row (matrix-vector).
  tiles.rowLoop = rowLoop.value_or(*vectorLoop);
  tiles.cache.assign(loops, 1);
  tiles.registers.assign(loops, 0);

  int64_t lanes = std::max<int64_t>(vectorBits / 32, 4);
  // AVX-512: 6 rows x 4 vectors, 24 of the 32 registers as accumulators,
  // 6 broadcasts and 4 loads per 24 FMAs (8 x 2 ran at 0.69-0.92 of oneDNN
  // where 6 x 4 runs at 0.79-0.97; 8 x 3, 7 x 4, 4 x 4 and 12 x 2 were
  // slower). AVX2/SSE: 4 rows x 2 vectors of their 16 registers. With
  // fewer rows (a matrix-vector product) the tile widens instead: FMAs
  // need about 8 independent accumulators to hide their latency.
  bool wide = vectorBits >= 512;
  int64_t registerRows = wide ? 6 : 4;
  if (rowLoop)
    registerRows = clampTile(registerRows, ranges[*rowLoop]);
  else
    registerRows = 1;
  int64_t vectorsPerRow = std::clamp<int64_t>(8 / registerRows, 2, 8);
  if (wide && registerRows > 1)
    vectorsPerRow = std::max<int64_t>(vectorsPerRow, 4);
  int64_t registerVector =
      clampTile(vectorsPerRow * lanes, ranges[*vectorLoop]);
  tiles.cache[*vectorLoop] =
      clampTile(std::max(kCacheVector, registerVector), ranges[*vectorLoop]);
  tiles.cache[*reductionLoop] =
      clampTile(kCacheReduction, ranges[*reductionLoop]);
  tiles.registers[*vectorLoop] = registerVector;
  tiles.registers[*reductionLoop] = 1;
  if (rowLoop) {
    tiles.cache[*rowLoop] =
        clampTile(kCacheRows / registerRows * registerRows, ranges[*rowLoop]);
    tiles.registers[*rowLoop] = registerRows;
  }
  // Loops other than the three: batch loops outermost, then rows, vector,
  // reduction.
  for (unsigned loop = 0; loop < loops; ++loop)
    if (loop != *vectorLoop && loop != *reductionLoop && loop != rowLoop)
      tiles.cacheLoopOrder.push_back(loop);
  if (rowLoop)
    tiles.cacheLoopOrder.push_back(*rowLoop);
  tiles.cacheLoopOrder.push_back(*vectorLoop);
  tiles.cacheLoopOrder.push_back(*reductionLoop);
  return tiles;
}

// The loops tileLinalgOp made for tile sizes `sizes` in loop order
// `order`, each with the dimension it tiles (untiled dimensions get none).
SmallVector<std::pair<unsigned, Operation *>>
zipTiledLoops(ArrayRef<unsigned> order, ArrayRef<int64_t> sizes,
              ArrayRef<Operation *> loops) {
  SmallVector<std::pair<unsigned, Operation *>> tiled;
  for (unsigned dim : order)
    if (sizes[dim] != 0 && tiled.size() < loops.size())
      tiled.push_back({dim, loops[tiled.size()]});
  return tiled;
}

// Tiles `op` for the caches and then into register tiles, peels the partial
// register tiles, and marks the full ones for vectorization.
LogicalResult tileContraction(RewriterBase &rewriter, linalg::LinalgOp op,
                              const ContractionTiles &tiles, unsigned kernel,
                              linalg::GenericOp epilogue) {
  rewriter.setInsertionPoint(op);
  linalg::LinalgTilingOptions cacheOptions;
  cacheOptions.setTileSizes(tiles.cache);
  cacheOptions.setInterchange(tiles.cacheLoopOrder);
  FailureOr<linalg::TiledLinalgOp> cacheTiled =
      linalg::tileLinalgOp(rewriter, op, cacheOptions);
  if (failed(cacheTiled))
    return op.emitOpError("could not be tiled for the caches");
  rewriter.eraseOp(op);

  linalg::LinalgOp cacheTile = cacheTiled->op;
  rewriter.setInsertionPoint(cacheTile);
  SmallVector<unsigned> interchange =
      getRegisterLoopOrder(tiles, cacheTile.getNumLoops());
  linalg::LinalgTilingOptions registerOptions;
  registerOptions.setTileSizes(tiles.registers);
  registerOptions.setInterchange(interchange);
  FailureOr<linalg::TiledLinalgOp> registerTiled =
      linalg::tileLinalgOp(rewriter, cacheTile, registerOptions);
  if (failed(registerTiled))
    return cacheTile.emitOpError("could not be tiled for the registers");
  // The epilogue runs on each cache tile once its reduction is done.
  if (epilogue) {
    Operation *last = registerTiled->loops.empty()
                          ? registerTiled->op.getOperation()
                          : registerTiled->loops.front();
    rewriter.setInsertionPointAfter(last);
    if (failed(applyEpilogueToTile(rewriter, epilogue,
                                   cacheTile.getDpsInitOperand(0)->get())))
      return epilogue.emitOpError("could not run per cache tile");
  }
  rewriter.eraseOp(cacheTile);
  registerTiled->op->setAttr(kRegisterTileMarker,
                             rewriter.getIndexAttr(kernel));
  // The loops follow the interchange, one per tiled loop. Every reduction
  // loop at this level is one the accumulators stay in registers across
  // (a broadcast kernel has several: channel blocks, taps).
  SmallVector<utils::IteratorType> iterators =
      registerTiled->op.getIteratorTypesArray();
  for (auto [dim, loop] :
       zipTiledLoops(interchange, tiles.registers, registerTiled->loops))
    if (iterators[dim] == utils::IteratorType::reduction) {
      loop->setAttr(kRegisterReductionLoopMarker, rewriter.getUnitAttr());
      if (tiles.broadcast && readsTapsAsLanes(registerTiled->op, tiles))
        loop->setAttr(kRegisterTapLoopMarker, rewriter.getUnitAttr());
    }

  // Peel the row and vector loops (the reduction loop steps by one): the
  // main loops then have static register tiles, and so do the remainders
  // where the ranges are static. Peeling the row loop clones the vector
  // loop into the remainder: the marker makes sure the clone is peeled too.
  for (Operation *loop : registerTiled->loops) {
    auto forOp = dyn_cast<scf::ForOp>(loop);
    std::optional<int64_t> step =
        forOp ? getConstantIntValue(forOp.getStep()) : std::nullopt;
    if (forOp && (!step || *step != 1))
      forOp->setAttr(kPeelMarker, rewriter.getUnitAttr());
  }
  // Row and vector cache loops whose tile does not divide their static
  // range are peeled too, first: the last cache tile's extent is then
  // static, and so are its register tiles (197 rows as 3 x 64 + 5; the
  // dynamic 5-row remainder was left as scalar loops: 197x384x1152 ran at
  // 80 GFLOP/s, 200 rows at 110).
  for (auto [dim, loop] :
       zipTiledLoops(tiles.cacheLoopOrder, tiles.cache, cacheTiled->loops)) {
    auto forOp = dyn_cast<scf::ForOp>(loop);
    if (!forOp || tiles.broadcast ||
        (dim != tiles.rowLoop && dim != tiles.vectorLoop))
      continue;
    std::optional<int64_t> lb = getConstantIntValue(forOp.getLowerBound());
    std::optional<int64_t> ub = getConstantIntValue(forOp.getUpperBound());
    std::optional<int64_t> step = getConstantIntValue(forOp.getStep());
    if (lb && ub && step && *step > 1 && (*ub - *lb) % *step != 0)
      forOp->setAttr(kPeelMarker, rewriter.getUnitAttr());
  }
  while (true) {
    scf::ForOp next;
    cacheTiled->loops.front()->getParentOp()->walk<WalkOrder::PreOrder>(
        [&](scf::ForOp loop) {
          if (!loop->hasAttr(kPeelMarker))
            return WalkResult::advance();
          next = loop;
          return WalkResult::interrupt();
        });
    if (!next)
      break;
    next->removeAttr(kPeelMarker);
    scf::ForOp partial;
    rewriter.setInsertionPoint(next);
    if (succeeded(scf::peelForLoopAndSimplifyBounds(rewriter, next, partial)))
      partial->removeAttr(kPeelMarker);
  }
  return success();
}

// Some vector pattern sets can rewrite each other's results back and
// forth: a fixed bound keeps a missed case from hanging the compiler (the
// IR stays valid, only less optimized).
GreedyRewriteConfig boundedRewrites() {
  GreedyRewriteConfig config;
  config.setMaxIterations(8);
  return config;
}

// vector.contract to FMAs of a broadcast row element and 1-D vectors.
void lowerContractions(func::FuncOp func) {
  {
    // Batches tiled by one leave a leading unit dimension.
    RewritePatternSet patterns(func.getContext());
    vector::populateCastAwayVectorLeadingOneDimPatterns(patterns);
    (void)applyPatternsGreedily(func, std::move(patterns), boundedRewrites());
  }
  RewritePatternSet patterns(func.getContext());
  vector::populateVectorContractLoweringPatterns(
      patterns, vector::VectorContractLowering::OuterProduct);
  vector::populateVectorOuterProductLoweringPatterns(patterns);
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  vector::populateVectorTransposeLoweringPatterns(
      patterns, vector::VectorTransposeLowering::EltWise);
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
  (void)applyPatternsGreedily(func, std::move(patterns), boundedRewrites());
}

// A transfer map reading `operand` of `op` as a vector along `loops` (in
// order); the operand's other dimensions are unit ones of the register tile
// and dropped.
AffineMap getTileReadMap(linalg::LinalgOp op, OpOperand *operand,
                         ArrayRef<unsigned> loops) {
  AffineMap map = op.getMatchingIndexingMap(operand);
  SmallVector<AffineExpr> results;
  for (unsigned loop : loops)
    for (auto [index, expr] : llvm::enumerate(map.getResults()))
      if (cast<AffineDimExpr>(expr).getPosition() == loop)
        results.push_back(getAffineDimExpr(index, op.getContext()));
  return AffineMap::get(map.getNumResults(), 0, results, op.getContext());
}

// Vectorizes a static register tile of a contraction: every loop but the
// row, vector and reduction loops has one iteration, and so does the
// reduction loop. Its operands are read without their unit dimensions (an
// exporter's [128, 1, 768] product would otherwise carry them into the
// vectors, where the contraction no longer lowers to outer products) into
// one rows x 1 by 1 x lanes vector.contract.
LogicalResult vectorizeRegisterTile(RewriterBase &rewriter, linalg::LinalgOp op,
                                    const ContractionTiles &tiles,
                                    unsigned kernel,
                                    const PaddedSources &padded) {
  if (tiles.broadcast)
    return vectorizeBroadcastTile(rewriter, op, tiles, kernel, padded);
  if (!isRegisterTileShape(op, tiles))
    return failure();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  bool hasRows = tiles.rowLoop != tiles.vectorLoop;
  OpOperand *rhs = findVectorOperand(op, tiles.vectorLoop);
  if (!rhs)
    return failure();
  OpOperand *lhs = op.getDpsInputOperand(rhs == op.getDpsInputOperand(0));
  OpOperand *acc = op.getDpsInitOperand(0);
  int64_t rows = hasRows ? ranges[tiles.rowLoop] : 1;
  int64_t lanes = ranges[tiles.vectorLoop];
  Type f32 = rewriter.getF32Type();
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value padding = ub::PoisonOp::create(rewriter, loc, f32);

  auto read = [&](OpOperand *operand, ArrayRef<unsigned> loops,
                  VectorType contractType) -> Value {
    AffineMap map = getTileReadMap(op, operand, loops);
    SmallVector<int64_t> shape;
    for (unsigned loop : loops)
      shape.push_back(ranges[loop]);
    auto type = VectorType::get(shape, f32);
    if (shape.empty())
      type = VectorType::get({1}, f32);
    SmallVector<Value> indices(map.getNumDims(), zero);
    // A scalar (the row element of a one-row tile) is read as one lane.
    if (shape.empty())
      map =
          AffineMap::getMinorIdentityMap(map.getNumDims(), 1, op.getContext());
    SmallVector<bool> inBounds(type.getRank(), true);
    Value vector = vector::TransferReadOp::create(
        rewriter, loc, type, operand->get(), indices, padding, map,
        ArrayRef<bool>(inBounds));
    if (vector.getType() == contractType)
      return vector;
    return vector::ShapeCastOp::create(rewriter, loc, contractType, vector);
  };
  SmallVector<unsigned> rowLoops, accLoops;
  if (hasRows)
    rowLoops.push_back(tiles.rowLoop);
  accLoops = rowLoops;
  accLoops.push_back(tiles.vectorLoop);
  auto lhsType = VectorType::get({rows, 1}, f32);
  auto rhsType = VectorType::get({1, lanes}, f32);
  auto accType = VectorType::get({rows, lanes}, f32);
  Value lhsVector = read(lhs, rowLoops, lhsType);
  Value rhsVector = read(rhs, {tiles.vectorLoop}, rhsType);
  Value accVector = read(acc, accLoops, accType);
  Operation *accRead = accVector.getDefiningOp();
  if (auto cast = dyn_cast<vector::ShapeCastOp>(accRead))
    accRead = cast.getSource().getDefiningOp();
  accRead->setAttr(kAccumulatorReadMarker, rewriter.getIndexAttr(kernel));

  MLIRContext *context = op.getContext();
  AffineExpr m = getAffineDimExpr(0, context), n = getAffineDimExpr(1, context),
             k = getAffineDimExpr(2, context);
  SmallVector<AffineMap> maps = AffineMap::inferFromExprList(
      ArrayRef<ArrayRef<AffineExpr>>{{m, k}, {k, n}, {m, n}}, context);
  auto iterators = rewriter.getArrayAttr(
      {vector::IteratorTypeAttr::get(context, vector::IteratorType::parallel),
       vector::IteratorTypeAttr::get(context, vector::IteratorType::parallel),
       vector::IteratorTypeAttr::get(context,
                                     vector::IteratorType::reduction)});
  Value result = vector::ContractionOp::create(
      rewriter, loc, lhsVector, rhsVector, accVector,
      rewriter.getAffineMapArrayAttr(maps), iterators);

  AffineMap accMap = getTileReadMap(op, acc, accLoops);
  auto storeType = VectorType::get(
      hasRows ? ArrayRef<int64_t>{rows, lanes} : ArrayRef<int64_t>{lanes}, f32);
  if (storeType != accType)
    result = vector::ShapeCastOp::create(rewriter, loc, storeType, result);
  SmallVector<Value> indices(accMap.getNumDims(), zero);
  SmallVector<bool> inBounds(storeType.getRank(), true);
  vector::TransferWriteOp::create(rewriter, loc, result, acc->get(), indices,
                                  accMap, ArrayRef<bool>(inBounds));
  rewriter.eraseOp(op);
  return success();
}

// Folds peeled loop bounds into static tile shapes.
void foldStaticTileShapes(func::FuncOp func) {
  MLIRContext *context = func.getContext();
  RewritePatternSet patterns(context);
  scf::ForOp::getCanonicalizationPatterns(patterns, context);
  affine::AffineMinOp::getCanonicalizationPatterns(patterns, context);
  // Tile sizes `min(tile, range - iv)` that a loop's bounds make constant
  // (a register loop inside a peeled cache tile).
  scf::populateSCFForLoopCanonicalizationPatterns(patterns);
  memref::SubViewOp::getCanonicalizationPatterns(patterns, context);
  memref::CastOp::getCanonicalizationPatterns(patterns, context);
  linalg::GenericOp::getCanonicalizationPatterns(patterns, context);
  (void)applyPatternsGreedily(func, std::move(patterns));
}

// Moves `rows` (a loop over the rows of a register tile, the only loop of
// its reduction step `step`: `for k { ...; for r { tile } }`) outside the
// reduction loop, to `for r < rowCount { for k { ...; tile } }`, so that
// each row carries its accumulators across the reduction in registers
// (hoistAccumulatorTiles) instead of loading and storing them every step
// (a one-row classifier 46 -> 30 us). The rows are independent and each
// row's reduction keeps its order. `rowCount` is defined above `step`.
void moveRowLoopOutOfReduction(RewriterBase &rewriter, scf::ForOp rows,
                               scf::ForOp step, Value rowCount) {
  Location loc = rows.getLoc();
  rewriter.setInsertionPoint(step);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  auto outer = scf::ForOp::create(rewriter, loc, zero, rowCount, one);
  rewriter.setInsertionPoint(outer.getBody()->getTerminator());
  auto inner = scf::ForOp::create(rewriter, loc, step.getLowerBound(),
                                  step.getUpperBound(), step.getStep());
  inner->setDiscardableAttrs(step->getDiscardableAttrDictionary());
  IRMapping mapping;
  mapping.map(step.getInductionVar(), inner.getInductionVar());
  mapping.map(rows.getInductionVar(), outer.getInductionVar());
  rewriter.setInsertionPoint(inner.getBody()->getTerminator());
  for (Operation &op : step.getBody()->without_terminator()) {
    if (&op != rows.getOperation()) {
      rewriter.clone(op, mapping);
      continue;
    }
    for (Operation &rowOp : rows.getBody()->without_terminator())
      rewriter.clone(rowOp, mapping);
  }
  rewriter.eraseOp(step);
}

// Runs register tiles of a dynamic row count (the remainder of a dynamic
// row loop, fewer rows than a register tile's), left unvectorized, a row
// at a time: each row a static register tile of one row, marked to be
// vectorized like the main ones. As scalar loops, a product of one row
// over a dynamic row count (a classifier at batch 1) ran at 2 GFLOP/s.
// A tile that is one step of its reduction loop (a loop of its own) gets
// its row loop outside that loop (moveRowLoopOutOfReduction).
// Returns whether it split any.
FailureOr<bool> splitDynamicRowsToSingleRows(
    RewriterBase &rewriter, ArrayRef<std::pair<linalg::LinalgOp, unsigned>> ops,
    ArrayRef<ContractionTiles> kernels) {
  bool split = false;
  for (auto [op, kernel] : ops) {
    const ContractionTiles &tiles = kernels[kernel];
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (!op.hasPureBufferSemantics() || tiles.broadcast ||
        tiles.rowLoop == tiles.vectorLoop ||
        !ShapedType::isDynamic(ranges[tiles.rowLoop]) ||
        llvm::any_of(llvm::enumerate(ranges), [&](auto loopAndRange) {
          return loopAndRange.index() != tiles.rowLoop &&
                 ShapedType::isDynamic(loopAndRange.value());
        }))
      continue;
    // The row count, read off the output tile where that is defined above
    // the tile's reduction step.
    auto step = dyn_cast<scf::ForOp>(op->getParentOp());
    Value output = op.getDpsInitOperand(0)->get();
    std::optional<unsigned> outputRowDim =
        op.getMatchingIndexingMap(op.getDpsInitOperand(0))
            .getResultPosition(
                getAffineDimExpr(tiles.rowLoop, op.getContext()));
    Value rowCount;
    if (step && step.getNumResults() == 0 && outputRowDim &&
        step.isDefinedOutsideOfLoop(output)) {
      rewriter.setInsertionPoint(step);
      rowCount =
          memref::DimOp::create(rewriter, op.getLoc(), output, *outputRowDim);
    }
    SmallVector<int64_t> sizes(op.getNumLoops(), 0);
    sizes[tiles.rowLoop] = 1;
    linalg::LinalgTilingOptions options;
    options.setTileSizes(sizes);
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::TiledLinalgOp> tiled =
        linalg::tileLinalgOp(rewriter, op, options);
    if (failed(tiled))
      return op.emitOpError("register tile could not be split into rows");
    rewriter.eraseOp(op);
    tiled->op->setAttr(kRegisterTileMarker, rewriter.getIndexAttr(kernel));
    if (rowCount && tiled->loops.size() == 1)
      if (auto rows = dyn_cast<scf::ForOp>(tiled->loops.front());
          rows && rows->getParentOp() == step.getOperation())
        moveRowLoopOutOfReduction(rewriter, rows, step, rowCount);
    split = true;
  }
  return split;
}

// Vectorizes the register tiles marked kRegisterTileMarker (unmarking
// them); those of a dynamic shape are left as loops, in `unvectorized`.
LogicalResult vectorizeMarkedTiles(
    RewriterBase &rewriter, func::FuncOp func,
    ArrayRef<ContractionTiles> kernels, const PaddedSources &padded,
    SmallVectorImpl<std::pair<linalg::LinalgOp, unsigned>> &unvectorized) {
  SmallVector<linalg::LinalgOp> marked;
  func.walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(kRegisterTileMarker))
      marked.push_back(op);
  });
  for (linalg::LinalgOp op : marked) {
    auto kernel = op->getAttrOfType<IntegerAttr>(kRegisterTileMarker);
    op->removeAttr(kRegisterTileMarker);
    if (!op.hasPureBufferSemantics() ||
        llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic)) {
      unvectorized.push_back({op, unsigned(kernel.getInt())});
      continue;
    }
    // The roles of the loops are those of the whole op; a register tile of
    // one row has no row loop.
    ContractionTiles roles = kernels[kernel.getInt()];
    if (op.getStaticLoopRanges()[roles.rowLoop] == 1) {
      roles.registers[roles.rowLoop] = 1;
      roles.rowLoop = roles.vectorLoop;
    }
    if (failed(vectorizeRegisterTile(rewriter, op, roles, kernel.getInt(),
                                     padded)))
      return op.emitOpError("register tile could not be vectorized");
  }
  return success();
}

// Splits register tiles whose lane count is not a power of two (the 24
// lanes left of a 56-pixel row) into power-of-two parts (16 + 8): LLVM
// handles other vector widths poorly (that row ran 5x slower).
LogicalResult splitLanesToPowersOfTwo(RewriterBase &rewriter, func::FuncOp func,
                                      ArrayRef<ContractionTiles> kernels,
                                      int64_t laneCount) {
  while (true) {
    SmallVector<std::tuple<linalg::LinalgOp, unsigned, IntegerAttr>> work;
    func.walk([&](linalg::LinalgOp op) {
      auto kernel = op->getAttrOfType<IntegerAttr>(kRegisterTileMarker);
      if (!kernel ||
          llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
        return;
      const ContractionTiles &tiles = kernels[kernel.getInt()];
      int64_t lanes = op.getStaticLoopRanges()[tiles.vectorLoop];
      // A broadcast kernel's last partial vector stays whole: it runs as
      // one masked vector (a 14-pixel row as 16 lanes, 2 masked off)
      // instead of 8 + 4 + 2.
      if (tiles.broadcast && lanes < laneCount)
        return;
      if (lanes > 4 && !llvm::isPowerOf2_64(lanes))
        work.push_back({op, tiles.vectorLoop, kernel});
    });
    if (work.empty())
      return success();
    for (auto [op, vectorLoop, kernel] : work) {
      int64_t lanes = op.getStaticLoopRanges()[vectorLoop];
      SmallVector<int64_t> sizes(op.getNumLoops(), 0);
      sizes[vectorLoop] = llvm::bit_floor(static_cast<uint64_t>(lanes));
      linalg::LinalgTilingOptions options;
      options.setTileSizes(sizes);
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::TiledLinalgOp> tiled =
          linalg::tileLinalgOp(rewriter, op, options);
      if (failed(tiled) || tiled->loops.size() != 1)
        return op.emitOpError("register tile could not be split");
      rewriter.eraseOp(op);
      tiled->op->setAttr(kRegisterTileMarker, kernel);
      scf::ForOp partial;
      auto loop = cast<scf::ForOp>(tiled->loops.front());
      rewriter.setInsertionPoint(loop);
      (void)scf::peelForLoopAndSimplifyBounds(rewriter, loop, partial);
    }
    foldStaticTileShapes(func);
  }
}

} // namespace

LogicalResult tileAndVectorizeContractions(func::FuncOp func,
                                           unsigned vectorBits,
                                           bool lowerVectors) {
  // The kernels the lowering config recorded, in the order of their ops;
  // a function without one (a test of this pass alone) chooses here.
  flow::LoweringConfigAttr config = getLoweringConfig(func);
  if (config)
    vectorBits = config.getVectorBits();
  SmallVector<std::pair<linalg::LinalgOp, ContractionTiles>> work;
  func.walk([&](linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics())
      return;
    if (std::optional<ContractionTiles> tiles =
            chooseContractionTiles(op, vectorBits))
      work.push_back({op, std::move(*tiles)});
  });
  if (config) {
    ArrayAttr kernels = config.getKernels();
    if (kernels.size() != work.size())
      return func.emitOpError("has ")
             << work.size() << " multiply-add kernels but its lowering config "
             << "lists " << kernels.size();
    for (auto [item, kernel] : llvm::zip(work, kernels)) {
      auto &[op, tiles] = item;
      tiles = getContractionTiles(cast<flow::KernelConfigAttr>(kernel));
      if (tiles.cache.size() != op.getNumLoops() ||
          llvm::any_of(tiles.cacheLoopOrder,
                       [&](unsigned loop) { return loop >= op.getNumLoops(); }))
        return op.emitOpError("has ")
               << op.getNumLoops() << " loops but its kernel config tiles "
               << tiles.cache.size();
    }
  }
  if (work.empty())
    return verifyUnbuiltPaddedSources(func);
  SmallVector<std::optional<AccumulatorFill>> fills;
  for (auto &[op, tiles] : work)
    fills.push_back(findAccumulatorFill(op, tiles));

  SmallVector<linalg::GenericOp> epilogues;
  for (auto &[op, tiles] : work) {
    linalg::GenericOp epilogue = findCacheTileEpilogue(op, tiles);
    epilogues.push_back(epilogue);
    // What the epilogue's operands are computed from (side-effect free ops
    // between the two) moves above the contraction, into which it is run.
    if (epilogue)
      while (op->getNextNode() != epilogue)
        op->getNextNode()->moveBefore(op);
  }

  // Stack buffers of padded sources, found before tiling splits their
  // readers (PaddedSources.h).
  PaddedSources padded = findPaddedSources(func);
  IRRewriter rewriter(func.getContext());
  for (auto [index, item] : llvm::enumerate(work))
    if (failed(tileContraction(rewriter, item.first, item.second, index,
                               epilogues[index])))
      return failure();
  for (linalg::GenericOp epilogue : epilogues)
    if (epilogue)
      rewriter.eraseOp(epilogue);
  foldStaticTileShapes(func);
  SmallVector<ContractionTiles> kernels =
      llvm::to_vector(llvm::make_second_range(work));
  int64_t laneCount = std::max<unsigned>(vectorBits / 32, 4);
  if (failed(splitLanesToPowersOfTwo(rewriter, func, kernels, laneCount)))
    return failure();
  SmallVector<std::pair<linalg::LinalgOp, unsigned>> unvectorized;
  if (failed(
          vectorizeMarkedTiles(rewriter, func, kernels, padded, unvectorized)))
    return failure();
  eraseUnreadPaddedSources(rewriter, padded);
  if (failed(verifyUnbuiltPaddedSources(func)))
    return failure();
  hoistAccumulatorTiles(func);
  // After the accumulators are carried by the tap loops: each version of a
  // loop nest carries them on its own, and unrolled, the taps carry them
  // from one step to the next.
  unswitchWindowChecks(rewriter, func);
  unrollTapLoops(func);
  hoistWindowSharedReads(rewriter, func, [&](Value memref) {
    return canReadAhead(memref, padded);
  });
  foldAccumulatorFills(func, fills, unvectorized);
  // Once their tiles are filled before their reduction loops, the rows
  // past the last register tile of a dynamic row count, a row at a time.
  FailureOr<bool> splitRows =
      splitDynamicRowsToSingleRows(rewriter, unvectorized, kernels);
  if (failed(splitRows))
    return failure();
  if (*splitRows) {
    foldStaticTileShapes(func);
    if (failed(splitLanesToPowersOfTwo(rewriter, func, kernels, laneCount)))
      return failure();
    SmallVector<std::pair<linalg::LinalgOp, unsigned>> leftAsLoops;
    if (failed(vectorizeMarkedTiles(rewriter, func, kernels, PaddedSources(),
                                    leftAsLoops)))
      return failure();
    func.walk([](vector::TransferReadOp read) {
      read->removeAttr(kAccumulatorReadMarker);
    });
    hoistAccumulatorTiles(func);
  }
  transposeRowTransfers(func);
  if (lowerVectors)
    lowerContractions(func);
  return success();
}

namespace {

struct TileAndVectorizeContractionsPass
    : public impl::TileAndVectorizeContractionsPassBase<
          TileAndVectorizeContractionsPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(tileAndVectorizeContractions(getOperation(), vectorBits,
                                            lowerVectors)))
      signalPassFailure();
  }
};

} // namespace
} // namespace strata
