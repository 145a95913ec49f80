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
#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace strata {
#define GEN_PASS_DEF_TILEANDVECTORIZECONTRACTIONSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Marks the register-tile ops until they are vectorized (peeling clones
// them, and canonicalization may rebuild their operands).
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

std::optional<unsigned> innermostDim(AffineMap map) {
  if (map.getNumResults() == 0)
    return std::nullopt;
  auto dim = dyn_cast<AffineDimExpr>(map.getResults().back());
  if (!dim)
    return std::nullopt;
  return dim.getPosition();
}

bool usesDim(AffineMap map, unsigned dim) {
  return llvm::any_of(map.getResults(), [&](AffineExpr e) {
    auto d = dyn_cast<AffineDimExpr>(e);
    return d && d.getPosition() == dim;
  });
}

int64_t clampTile(int64_t tile, int64_t range) {
  if (ShapedType::isDynamic(range))
    return tile;
  return std::min(tile, range);
}

// Whether the body is exactly `acc + a * b` of the two inputs (anything
// else, such as an activation fused onto an input, would be recomputed per
// multiply-add and keeps the vector contraction from forming).
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

} // namespace

std::optional<ContractionTiles> chooseContractionTiles(linalg::LinalgOp op,
                                                       unsigned vectorBits) {
  if (!linalg::isaContractionOpInterface(op) || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !isPlainMultiplyAdd(op))
    return std::nullopt;
  // f32 only for now: other types keep the loop lowering.
  for (OpOperand &operand : op->getOpOperands())
    if (!getElementTypeOrSelf(operand.get().getType()).isF32())
      return std::nullopt;
  if (!llvm::all_of(op.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return std::nullopt;

  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  std::optional<unsigned> vectorLoop = innermostDim(outputMap);
  if (!vectorLoop)
    return std::nullopt;
  // B: the input whose innermost dimension is the vector loop; A the other.
  OpOperand *lhs = nullptr, *rhs = nullptr;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!rhs && innermostDim(op.getMatchingIndexingMap(input)) == vectorLoop)
      rhs = input;
    else
      lhs = input;
  }
  if (!rhs || !lhs)
    return std::nullopt;
  AffineMap lhsMap = op.getMatchingIndexingMap(lhs);
  AffineMap rhsMap = op.getMatchingIndexingMap(rhs);
  if (usesDim(lhsMap, *vectorLoop))
    return std::nullopt;

  // The row loop: the output's next loop, if A reads it (B does not).
  std::optional<unsigned> rowLoop;
  if (outputMap.getNumResults() >= 2)
    if (auto dim = dyn_cast<AffineDimExpr>(
            outputMap.getResult(outputMap.getNumResults() - 2)))
      if (usesDim(lhsMap, dim.getPosition()) &&
          !usesDim(rhsMap, dim.getPosition()))
        rowLoop = dim.getPosition();
  // The reduction loop: A's innermost if it is one, else B's outermost
  // reduction.
  std::optional<unsigned> reductionLoop = innermostDim(lhsMap);
  if (!reductionLoop ||
      iterators[*reductionLoop] != utils::IteratorType::reduction) {
    reductionLoop.reset();
    for (AffineExpr e : rhsMap.getResults()) {
      unsigned dim = cast<AffineDimExpr>(e).getPosition();
      if (iterators[dim] == utils::IteratorType::reduction) {
        reductionLoop = dim;
        break;
      }
    }
  }
  if (!reductionLoop)
    return std::nullopt;

  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned loops = op.getNumLoops();
  ContractionTiles tiles;
  tiles.vectorLoop = *vectorLoop;
  tiles.reductionLoop = *reductionLoop;
  // Without a row loop the register tile is one row (matrix-vector).
  tiles.rowLoop = rowLoop.value_or(*vectorLoop);
  tiles.cache.assign(loops, 1);
  tiles.registers.assign(loops, 0);

  int64_t lanes = std::max<int64_t>(vectorBits / 32, 4);
  // Rows and 2 vectors so the accumulators use half the vector registers
  // (AVX-512: 32 registers, 8 x 2 accumulators; AVX2/SSE: 16, 4 x 2). With
  // fewer rows (a matrix-vector product) the tile widens instead: FMAs
  // need about 8 independent accumulators to hide their latency.
  int64_t registerRows = vectorBits >= 512 ? 8 : 4;
  if (rowLoop)
    registerRows = clampTile(registerRows, ranges[*rowLoop]);
  else
    registerRows = 1;
  int64_t vectorsPerRow = std::clamp<int64_t>(8 / registerRows, 2, 8);
  int64_t registerVector =
      clampTile(vectorsPerRow * lanes, ranges[*vectorLoop]);
  tiles.cache[*vectorLoop] =
      clampTile(std::max(kCacheVector, registerVector), ranges[*vectorLoop]);
  tiles.cache[*reductionLoop] =
      clampTile(kCacheReduction, ranges[*reductionLoop]);
  tiles.registers[*vectorLoop] = registerVector;
  tiles.registers[*reductionLoop] = 1;
  if (rowLoop) {
    tiles.cache[*rowLoop] = clampTile(kCacheRows, ranges[*rowLoop]);
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

namespace {

// Tiles `op` for the caches and then into register tiles, peels the partial
// register tiles, and marks the full ones for vectorization.
LogicalResult tileContraction(RewriterBase &rewriter, linalg::LinalgOp op,
                              const ContractionTiles &tiles) {
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
  // Rows outside vector panels: A's row block (mr x reduction tile) stays
  // in L1 while B's panels stream past it (measured 20-30% faster than
  // the other order on 197x384x1152 and 512^3).
  SmallVector<unsigned> registerOrder;
  if (tiles.rowLoop != tiles.vectorLoop)
    registerOrder.push_back(tiles.rowLoop);
  registerOrder.push_back(tiles.vectorLoop);
  registerOrder.push_back(tiles.reductionLoop);
  // The interchange covers every loop; untiled ones are left out of it.
  SmallVector<unsigned> interchange(registerOrder);
  for (unsigned loop = 0; loop < cacheTile.getNumLoops(); ++loop)
    if (!llvm::is_contained(registerOrder, loop))
      interchange.push_back(loop);
  linalg::LinalgTilingOptions registerOptions;
  registerOptions.setTileSizes(tiles.registers);
  registerOptions.setInterchange(interchange);
  FailureOr<linalg::TiledLinalgOp> registerTiled =
      linalg::tileLinalgOp(rewriter, cacheTile, registerOptions);
  if (failed(registerTiled))
    return cacheTile.emitOpError("could not be tiled for the registers");
  rewriter.eraseOp(cacheTile);
  registerTiled->op->setAttr(kRegisterTileMarker, rewriter.getUnitAttr());

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

// Whether `memref` is a buffer no other value of the function aliases:
// a binding (bindings are distinct, LowerExecutables marks them noalias) or
// a temporary.
bool isDistinctBuffer(Value memref) {
  if (auto arg = dyn_cast<BlockArgument>(memref))
    return isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
  return memref.getDefiningOp<memref::AllocaOp>() ||
         memref.getDefiningOp<memref::AllocOp>();
}

// Moves a read of an accumulator tile at the loop's start and the write of
// its new value at the loop's end out of `loop`: the value is carried in
// registers. Only where nothing else in the loop touches that buffer.
// (Upstream's hoistRedundantVectorTransfers also refuses buffers that have
// any view anywhere in the function, such as the subview a linalg.fill of
// the same output writes through.)
// Returns the new loop, or null when there was nothing to hoist.
scf::ForOp hoistAccumulatorTile(RewriterBase &rewriter, scf::ForOp loop) {
  for (Operation &op : loop.getBody()->without_terminator()) {
    auto read = dyn_cast<vector::TransferReadOp>(op);
    if (!read || !isDistinctBuffer(read.getBase()) || read.getMask() ||
        !llvm::all_of(read->getOperands(),
                      [&](Value v) { return loop.isDefinedOutsideOfLoop(v); }))
      continue;
    vector::TransferWriteOp write;
    bool othersTouchBuffer = false;
    for (Operation *user : read.getBase().getUsers()) {
      if (user == read || !loop->isAncestor(user))
        continue;
      auto candidate = dyn_cast<vector::TransferWriteOp>(user);
      if (write || !candidate || candidate->getBlock() != loop.getBody() ||
          candidate.getMask() || candidate.getIndices() != read.getIndices() ||
          candidate.getVectorType() != read.getVectorType() ||
          candidate.getPermutationMap() != read.getPermutationMap()) {
        othersTouchBuffer = true;
        break;
      }
      write = candidate;
    }
    if (othersTouchBuffer || !write || !read->isBeforeInBlock(write))
      continue;
    rewriter.moveOpBefore(read, loop);
    auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
        rewriter, read.getResult(), /*replaceInitOperandUsesInLoop=*/true,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
          return SmallVector<Value>{write.getVector()};
        }));
    rewriter.moveOpAfter(write, newLoop);
    rewriter.modifyOpInPlace(write, [&] {
      write.getValueToStoreMutable().assign(newLoop.getResults().back());
    });
    return newLoop;
  }
  return nullptr;
}

// The vectorized register tiles (broadcasting reads, a multiplication and
// a reduction over k) become vector.contract ops, and the transfers of C's
// tile move out of the reduction loop, so the accumulators stay in
// registers.
void formContractions(func::FuncOp func) {
  MLIRContext *context = func.getContext();
  {
    RewritePatternSet patterns(context);
    vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
    vector::populateVectorReductionToContractPatterns(patterns);
    vector::BroadcastOp::getCanonicalizationPatterns(patterns, context);
    vector::TransferReadOp::getCanonicalizationPatterns(patterns, context);
    // Subviews fold into the transfers, so C's transfers read the binding
    // at indices the reduction loop does not change.
    memref::populateFoldMemRefAliasOpPatterns(patterns);
    (void)applyPatternsGreedily(func, std::move(patterns));
  }
  // The read and the write of C's tile must use the same index values.
  IRRewriter rewriter(context);
  DominanceInfo dominance(func);
  eliminateCommonSubExpressions(rewriter, dominance, func);
  func.walk(
      [](LoopLikeOpInterface loop) { (void)moveLoopInvariantCode(loop); });
  SmallVector<scf::ForOp> loops;
  func.walk([&](scf::ForOp loop) { loops.push_back(loop); });
  for (scf::ForOp loop : loops)
    while (scf::ForOp newLoop = hoistAccumulatorTile(rewriter, loop))
      loop = newLoop;
}
// vector.contract to FMAs of a broadcast row element and 1-D vectors.
void lowerContractions(func::FuncOp func) {
  RewritePatternSet patterns(func.getContext());
  vector::populateVectorContractLoweringPatterns(
      patterns, vector::VectorContractLowering::OuterProduct);
  vector::populateVectorOuterProductLoweringPatterns(patterns);
  vector::populateVectorTransferPermutationMapLoweringPatterns(patterns);
  vector::populateVectorTransposeLoweringPatterns(
      patterns, vector::VectorTransposeLowering::EltWise);
  vector::populateVectorBroadcastLoweringPatterns(patterns);
  vector::populateVectorShapeCastLoweringPatterns(patterns);
  (void)applyPatternsGreedily(func, std::move(patterns));
}

} // namespace

LogicalResult tileAndVectorizeContractions(func::FuncOp func,
                                           unsigned vectorBits,
                                           bool lowerVectors) {
  SmallVector<std::pair<linalg::LinalgOp, ContractionTiles>> work;
  func.walk([&](linalg::LinalgOp op) {
    if (!op.hasPureBufferSemantics())
      return;
    if (std::optional<ContractionTiles> tiles =
            chooseContractionTiles(op, vectorBits))
      work.push_back({op, *tiles});
  });
  if (work.empty())
    return success();

  IRRewriter rewriter(func.getContext());
  for (auto &[op, tiles] : work)
    if (failed(tileContraction(rewriter, op, tiles)))
      return failure();
  // Fold the peeled bounds into static tile shapes.
  {
    RewritePatternSet patterns(func.getContext());
    scf::ForOp::getCanonicalizationPatterns(patterns, func.getContext());
    affine::AffineMinOp::getCanonicalizationPatterns(patterns,
                                                     func.getContext());
    memref::SubViewOp::getCanonicalizationPatterns(patterns, func.getContext());
    memref::CastOp::getCanonicalizationPatterns(patterns, func.getContext());
    linalg::GenericOp::getCanonicalizationPatterns(patterns, func.getContext());
    (void)applyPatternsGreedily(func, std::move(patterns));
  }

  SmallVector<linalg::LinalgOp> marked;
  func.walk([&](linalg::LinalgOp op) {
    if (op->hasAttr(kRegisterTileMarker))
      marked.push_back(op);
  });
  for (linalg::LinalgOp op : marked) {
    op->removeAttr(kRegisterTileMarker);
    if (!op.hasPureBufferSemantics() ||
        llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
      continue;
    rewriter.setInsertionPoint(op);
    if (failed(linalg::vectorize(rewriter, op, /*inputVectorSizes=*/{},
                                 /*inputScalableVecDims=*/{},
                                 /*vectorizeNDExtract=*/false,
                                 /*flatten1DDepthwiseConv=*/false,
                                 /*assumeDynamicDimsMatchVecSizes=*/false,
                                 /*createNamedContraction=*/true)))
      return op.emitOpError("register tile could not be vectorized");
    rewriter.eraseOp(op);
  }
  formContractions(func);
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
