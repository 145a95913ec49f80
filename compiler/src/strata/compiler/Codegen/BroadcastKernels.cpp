//===- BroadcastKernels.cpp - depthwise and direct convolution kernels ----===//

#include "strata/compiler/Codegen/BroadcastKernels.h"
#include "strata/compiler/Codegen/AccumulatorFills.h"
#include "strata/compiler/Codegen/PlainSubViews.h"
#include "strata/compiler/Utils/IndexingMaps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace strata {
namespace {

// Lanes of a cache tile, as for the contraction kernels.
constexpr int64_t kCacheLanes = 256;
// Accumulator registers of a register tile that broadcasts one element per
// row: 8 (of AVX2's and SSE's 16 vector registers; one-vector rows on
// AVX-512 too, where 16 rows were within noise but left fewer register
// tiles to split a row between workgroups), 16 of AVX-512's 32 for rows
// of several vectors (an NHWC convolution's 64 output channels: 4 rows).
constexpr int64_t kBroadcastAccumulators512 = 16;
constexpr int64_t kBroadcastAccumulators = 8;
// Accumulators of a register tile whose operands are both lanes (a
// depthwise convolution, a pooling): the 2 x 4 FMAs in flight, each row
// reading its own input vectors (four of them left half the FMA units
// idle: a 5x5 depthwise convolution 0.112 -> 0.102 ms).
constexpr int64_t kLanesAccumulators = 8;
// Accumulators of a direct convolution's register tile of rows times
// output-channel blocks: each broadcast element then feeds one FMA per
// block and each weight vector one per row (24 of AVX-512's 32 registers,
// 12 of AVX2's 16, leaving room for the blocks' weight vectors).
constexpr int64_t kBlockedAccumulators512 = 24;
constexpr int64_t kBlockedAccumulators = 12;
constexpr int64_t kMaxRegisterBlocks = 4;

// Rows per register tile for `range` rows: the most, up to `limit`, that
// divide `range` if that is at least half the limit (7 for a 56- or
// 14-pixel row), else `limit` with a remainder.
int64_t chooseBroadcastRows(int64_t range, int64_t limit) {
  if (range <= limit)
    return range;
  for (int64_t rows = limit; rows * 2 >= limit; --rows)
    if (range % rows == 0)
      return rows;
  return limit;
}

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

// The body of `op` applied to vectors: each block argument is mapped to
// its vector in `mapping`, scalars from outside the body are broadcast,
// every op is rebuilt with vector results. Returns the yielded vector.
Value cloneBodyOnLanes(RewriterBase &rewriter, Location loc,
                       linalg::LinalgOp op, VectorType type,
                       IRMapping &mapping) {
  Block *body = op.getBlock();
  for (Operation &scalar : body->without_terminator()) {
    SmallVector<Value> operands;
    for (Value operand : scalar.getOperands()) {
      if (Value mapped = mapping.lookupOrNull(operand)) {
        operands.push_back(mapped);
        continue;
      }
      operands.push_back(
          vector::BroadcastOp::create(rewriter, loc, type, operand));
    }
    OperationState state(loc, scalar.getName().getIdentifier(), operands,
                         TypeRange{type}, scalar.getAttrs());
    mapping.map(scalar.getResult(0), rewriter.create(state)->getResult(0));
  }
  return mapping.lookup(
      cast<linalg::YieldOp>(body->getTerminator()).getValues()[0]);
}

// The reduction loop whose cache tiles enclose parallel cache loops (a
// direct convolution's filter chunks, chunkFilterReduction), if any.
std::optional<unsigned> getChunkedReductionLoop(linalg::LinalgOp op,
                                                const ContractionTiles &tiles) {
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  ArrayRef<unsigned> order = tiles.cacheLoopOrder;
  for (auto [index, loop] : llvm::enumerate(order)) {
    if (iterators[loop] != utils::IteratorType::reduction ||
        tiles.cache[loop] == 0)
      continue;
    if (llvm::any_of(order.drop_front(index + 1), [&](unsigned inner) {
          return iterators[inner] == utils::IteratorType::parallel &&
                 tiles.cache[inner] != 0;
        }))
      return loop;
  }
  return std::nullopt;
}

// Prefetches what `view`, the view of `input` that a register tile reads
// at this step, holds in the next chunk along `chunkLoop` (`chunk` steps
// on, clamped into the buffer), into L2. Each chunk then arrives while the
// rows reuse the one before, instead of being waited for by its first row
// (chunks alone did not speed up resnet18's last stage; with the prefetch
// its convolutions ran 7.3 -> 6.1 ms on one thread, 3.6 -> 3.0 on two; a
// prefetch into L1 evicted the chunk in use: 6.4 ms).
void prefetchNextChunk(RewriterBase &rewriter, Location loc,
                       linalg::LinalgOp op, OpOperand *input, Value view,
                       unsigned chunkLoop, int64_t chunk) {
  AffineMap map = op.getMatchingIndexingMap(input);
  std::optional<unsigned> dim =
      map.getResultPosition(getAffineDimExpr(chunkLoop, op.getContext()));
  Value root = getViewRoot(view);
  if (!dim || !root)
    return;
  auto rootType = cast<MemRefType>(root.getType());
  int64_t size = rootType.getDimSize(*dim);
  if (ShapedType::isDynamic(size) || size <= chunk)
    return;
  SmallVector<OpFoldResult> offsets = getOffsetsInRoot(rewriter, loc, view);
  AffineExpr d0 = getAffineDimExpr(0, op.getContext());
  MLIRContext *context = op.getContext();
  offsets[*dim] = affine::makeComposedFoldedAffineMin(
      rewriter, loc,
      AffineMap::get(1, 0,
                     {d0 + chunk, getAffineConstantExpr(size - 1, context)},
                     context),
      {offsets[*dim]});
  memref::PrefetchOp::create(
      rewriter, loc, root,
      getValueOrCreateConstantIndexOp(rewriter, loc, offsets),
      /*isWrite=*/false, /*localityHint=*/2, /*isDataCache=*/true);
}

} // namespace

bool isLaneWiseArithmetic(Operation &op) {
  return op.getDialect() ==
             op.getContext()->getLoadedDialect<arith::ArithDialect>() &&
         op.hasTrait<OpTrait::Elementwise>() && op.getNumResults() == 1 &&
         llvm::all_of(op.getOperandTypes(),
                      [](Type type) { return type.isF32(); }) &&
         op.getResult(0).getType().isF32();
}

bool isLaneWiseReduction(linalg::LinalgOp op) {
  return op.getNumDpsInits() == 1 && op.getNumReductionLoops() > 0 &&
         op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)) &&
         llvm::all_of(op.getBlock()->without_terminator(),
                      isLaneWiseArithmetic);
}

// A direct convolution whose rows are one vector each (the blocked layout's
// output pixels) also spans several output-channel blocks per register
// tile: a loop the lanes operand and the output read but the broadcast
// operand does not. One broadcast of an input element then feeds an FMA
// per block, and the FMAs have enough independent accumulators to hide
// their latency on a 7-pixel row. The block count divides the loop (no
// remainder tiles) and is left to the cache tiles whole.
static void addOutputBlocks(linalg::LinalgOp op, ContractionTiles &tiles,
                            OpOperand *lanes, OpOperand *scalar,
                            unsigned vectorBits) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  AffineMap lanesMap = op.getMatchingIndexingMap(lanes);
  AffineMap scalarMap = op.getMatchingIndexingMap(scalar);
  int64_t budget =
      (vectorBits >= 512 ? kBlockedAccumulators512 : kBlockedAccumulators) /
      tiles.registers[tiles.rowLoop];
  for (unsigned loop = 0; loop < ranges.size(); ++loop) {
    if (iterators[loop] != utils::IteratorType::parallel ||
        loop == tiles.rowLoop || loop == tiles.vectorLoop ||
        ShapedType::isDynamic(ranges[loop]) || ranges[loop] < 2 ||
        !outputMap.isFunctionOfDim(loop) || !lanesMap.isFunctionOfDim(loop) ||
        scalarMap.isFunctionOfDim(loop))
      continue;
    int64_t blocks = std::min(budget, kMaxRegisterBlocks);
    while (blocks > 1 && ranges[loop] % blocks != 0)
      --blocks;
    if (blocks < 2)
      return;
    tiles.registers[loop] = blocks;
    tiles.cache[loop] = blocks;
    return;
  }
}

// A direct convolution's filter slice for one cache tile of output
// channels of more than this many bytes, which a model's other weights
// evict from the caches between calls, is read in chunks...
constexpr int64_t kMinChunkedFilterBytes = 128 * 1024;
// ... of at most this many (a fraction of the 48 KiB L1, beside the input
// rows)...
constexpr int64_t kMaxFilterChunkBytes = 32 * 1024;
// ... where it serves at most this many output pixels: on more, the first
// row's wait for the filter is a small share of the time, and the chunks'
// accumulators going through memory cost more than it (3x3 convolutions
// of 64 channels at 56x56 ran 2-3% slower in chunks; at 14x14 and 7x7,
// 4% and 14% faster in resnet18; mobilenet_v2's 1x1 convolutions at 7x7,
// of 40 and 120 KiB of filter, 3-6% slower).
constexpr int64_t kMaxPixelsPerFilterChunk = 256;

// A direct convolution whose filter slice per cache tile of output channels
// is large (ResNet's last stage: 590 KB for 32 of 512 channels) and serves
// few pixels read it from L2 once per output row, the first row from
// memory at a few bytes per FMA: its rows waited on the filter (111
// GFLOP/s in resnet18 against 165 for the early layers). The outermost
// reduction loop the filter reads that is not a tap of the window (its
// input-channel blocks) is split into chunks of at most
// kMaxFilterChunkBytes of filter, looped outside the rows: each chunk is
// fetched once (prefetched while the rows use the one before,
// prefetchNextChunk) and then read from L1 by every row, and the
// accumulators go through memory once per chunk.
static void chunkFilterReduction(linalg::LinalgOp op, ContractionTiles &tiles,
                                 OpOperand *lanes, OpOperand *scalar) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  AffineMap lanesMap = op.getMatchingIndexingMap(lanes);
  AffineMap scalarMap = op.getMatchingIndexingMap(scalar);
  // A tap loop moves the window (`oh + kh`): chunks of taps would make
  // every row read its input once per chunk.
  auto isChannelLoop = [&](unsigned loop) {
    return llvm::is_contained(scalarMap.getResults(),
                              getAffineDimExpr(loop, op.getContext()));
  };
  auto type = dyn_cast<ShapedType>(lanes->get().getType());
  if (!type || !type.getElementType().isIntOrFloat())
    return;
  int64_t bytes = llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  std::optional<unsigned> chunkLoop;
  for (AffineExpr expr : lanesMap.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(expr);
    if (!dim || ShapedType::isDynamic(ranges[dim.getPosition()]))
      return;
    unsigned loop = dim.getPosition();
    int64_t tile = tiles.cache[loop];
    bytes *= tile == 0 ? ranges[loop] : tile;
    if (!chunkLoop && iterators[loop] == utils::IteratorType::reduction &&
        tile == 0 && ranges[loop] > 1 && isChannelLoop(loop))
      chunkLoop = loop;
  }
  // The output pixels the filter serves, and how many cache tiles (rows
  // of register tiles) they make: a chunk read by one of them only is
  // read once either way.
  int64_t pixels = 1, pixelTiles = 1;
  for (unsigned loop = 0; loop < ranges.size(); ++loop) {
    if (iterators[loop] != utils::IteratorType::parallel ||
        loop == tiles.vectorLoop || lanesMap.isFunctionOfDim(loop))
      continue;
    if (ShapedType::isDynamic(ranges[loop]))
      return;
    pixels *= ranges[loop];
    if (tiles.cache[loop] != 0)
      pixelTiles *= llvm::divideCeil(ranges[loop], tiles.cache[loop]);
  }
  if (bytes <= kMinChunkedFilterBytes || pixels > kMaxPixelsPerFilterChunk ||
      pixelTiles < 2 || !chunkLoop)
    return;
  int64_t range = ranges[*chunkLoop];
  int64_t chunk = 1;
  for (int64_t steps = range - 1; steps > 1; --steps)
    if (range % steps == 0 && bytes / range * steps <= kMaxFilterChunkBytes) {
      chunk = steps;
      break;
    }
  tiles.cache[*chunkLoop] = chunk;
  // The chunk loop goes right after the last parallel loop the filter reads
  // (its output-channel blocks), outside the rows.
  SmallVector<unsigned> &order = tiles.cacheLoopOrder;
  llvm::erase(order, *chunkLoop);
  auto position = order.begin();
  for (auto it = order.begin(); it != order.end(); ++it)
    if (*it != tiles.vectorLoop &&
        iterators[*it] == utils::IteratorType::parallel &&
        lanesMap.isFunctionOfDim(*it))
      position = std::next(it);
  order.insert(position, *chunkLoop);
}

namespace {

struct OutputChannelLanes {
  unsigned vectorLoop;
  OpOperand *lanes, *scalar;
};

} // namespace

// A direct convolution that writes its output channels outside its pixels
// (the split NCHW layout [N, C/b, b, H, W] of a blocked convolution whose
// result leaves the blocked layout, BlockChannels.cpp): its lanes run along
// the output channels that its filter holds innermost, and its rows along
// the output's innermost loop `pixels`, which the other input reads and
// the filter does not. Each row's accumulator is then a column of the
// output, stored transposed (TransposedRowStores.h).
static std::optional<OutputChannelLanes>
findOutputChannelLanes(linalg::LinalgOp op, unsigned pixels) {
  if (op.getNumDpsInputs() != 2)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (unsigned i = 0; i < 2; ++i) {
    OpOperand *lanes = op.getDpsInputOperand(i);
    OpOperand *scalar = op.getDpsInputOperand(1 - i);
    AffineMap lanesMap = op.getMatchingIndexingMap(lanes);
    AffineMap scalarMap = op.getMatchingIndexingMap(scalar);
    if (lanesMap.getNumResults() == 0)
      continue;
    auto channels = dyn_cast<AffineDimExpr>(lanesMap.getResults().back());
    if (!channels)
      continue;
    unsigned loop = channels.getPosition();
    if (loop == pixels || iterators[loop] != utils::IteratorType::parallel ||
        !outputMap.isFunctionOfDim(loop) || scalarMap.isFunctionOfDim(loop) ||
        lanesMap.isFunctionOfDim(pixels) || !scalarMap.isFunctionOfDim(pixels))
      continue;
    return OutputChannelLanes{loop, lanes, scalar};
  }
  return std::nullopt;
}

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
  // Rows along the output's innermost loop, lanes along an outer one.
  std::optional<OutputChannelLanes> channelLanes =
      findOutputChannelLanes(op, *vectorLoop);
  if (channelLanes) {
    vectorLoop = channelLanes->vectorLoop;
    lanes = channelLanes->lanes;
    scalar = channelLanes->scalar;
  }
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (channelLanes)
      break;
    AffineMap map = op.getMatchingIndexingMap(input);
    if (!lanes && map.getNumResults() > 0 &&
        isLoopPlusOffsets(map.getResults().back(), *vectorLoop, iterators))
      lanes = input;
    else
      scalar = input;
  }
  // The other input is a scalar per step, or lanes too (an NHWC depthwise
  // convolution's weights run along the same channels as its input). A
  // reduction of one input along lanes (a global average pool's sum over
  // the pixels of a blocked map) has none: its map reads no loop.
  if (!lanes || (!scalar && op.getNumDpsInputs() != 1))
    return std::nullopt;
  AffineMap scalarMap =
      scalar ? op.getMatchingIndexingMap(scalar)
             : AffineMap::get(op.getNumLoops(), 0, {}, op.getContext());
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

  // Short rows (a blocked map's pixels are one vector each): several
  // output rows per register tile, so that eight independent accumulators
  // hide the FMA latency instead of one chain waiting on itself (the loop
  // of the output's next dimension, which the broadcast operand must not
  // read).
  //
  // When the broadcast operand reads the rows too (a direct convolution:
  // one input element per output pixel, times a vector of output channels'
  // weights, in the blocked channel layout or NHWC), each row broadcasts
  // its own element and all rows share the lanes operand's loads, however
  // many vectors a row has: rows then amortize those loads and hide the FMA
  // latency (up to half the vector registers as accumulators, preferring a
  // count that divides the rows evenly).
  int64_t vectors = llvm::divideCeil(tiles.registers[*vectorLoop], laneCount);
  unsigned outputRank = outputMap.getNumResults();
  auto rowDim =
      outputRank >= 2
          ? dyn_cast<AffineDimExpr>(outputMap.getResult(outputRank - 2))
          : AffineDimExpr(nullptr);
  if (channelLanes)
    rowDim = cast<AffineDimExpr>(outputMap.getResults().back());
  if (!rowDim)
    return tiles;
  unsigned rowLoop = rowDim.getPosition();
  bool scalarPerRow = scalarMap.isFunctionOfDim(rowLoop);
  // (A broadcast operand must read the rows through one index only, for a
  // row's element to be that index's offset.)
  if (ShapedType::isDynamic(ranges[rowLoop]) ||
      (scalarPerRow &&
       llvm::count_if(scalarMap.getResults(), [&](AffineExpr e) {
         return e.isFunctionOfDim(rowLoop);
       }) != 1))
    return tiles;
  int64_t rows = chooseBroadcastRows(
      ranges[rowLoop], std::max<int64_t>(kLanesAccumulators / vectors, 1));
  if (scalarPerRow) {
    int64_t accumulators = vectors > 1 && vectorBits >= 512
                               ? kBroadcastAccumulators512
                               : kBroadcastAccumulators;
    rows = chooseBroadcastRows(ranges[rowLoop],
                               std::max<int64_t>(accumulators / vectors, 1));
  }
  // One row of several vectors (an NCHW depthwise convolution's 56-pixel
  // rows): its taps still loop at the register level, around the row, for
  // its accumulators to stay in registers across them (as cache loops of
  // one tap each, every tap loaded and stored the row: a 5x5 depthwise
  // convolution ran at 51 GFLOP/s, 60 now).
  if (rows == 1)
    for (unsigned loop : reductions)
      tiles.cache[loop] = 0;
  if (rows > 1) {
    // The register tile's row loop must enclose the tap loops for the
    // accumulators to stay in registers across them: the rows and the taps
    // are left whole by the cache tiles and looped over at the register
    // level (rows outermost; static remainders).
    tiles.rowLoop = rowLoop;
    tiles.registers[rowLoop] = rows;
    tiles.cache[rowLoop] = 0;
    for (unsigned loop : reductions)
      tiles.cache[loop] = 0;
  }
  if (rows > 1 && scalarPerRow && vectors == 1) {
    addOutputBlocks(op, tiles, lanes, scalar, vectorBits);
    // (Not where the output is stored transposed: each chunk would then
    // transpose the accumulators out and back in, 10% of a 3x3 convolution
    // of 128 channels at 14x14 output pixels: 387 us against 355 whole.)
    if (!channelLanes)
      chunkFilterReduction(op, tiles, lanes, scalar);
    // With no output-channel blocks to share each broadcast (a grouped
    // convolution's one block per group), more rows hide the FMA latency
    // instead: 8 accumulators are just the 2 x 4 FMAs in flight (a 3x3
    // convolution of 4 groups of 16 channels 0.74 -> 0.84 of oneDNN).
    if (getRegisterBlockLoops(tiles).empty() && vectorBits >= 512)
      tiles.registers[rowLoop] =
          chooseBroadcastRows(ranges[rowLoop], kBroadcastAccumulators512);
  }
  return tiles;
}

namespace {

// Builds a broadcast kernel's register tile (vectorizeBroadcastTile): for
// each row and block of the tile, its factors (read once per distinct
// view), one FMA (or the body on vectors) and the accumulator's store.
class BroadcastTileBuilder {
public:
  BroadcastTileBuilder(RewriterBase &rewriter, linalg::LinalgOp op,
                       const ContractionTiles &tiles,
                       const PaddedSources &padded)
      : rewriter(rewriter), op(op), tiles(tiles), padded(padded),
        loc(op.getLoc()), context(op.getContext()) {}

  LogicalResult build(unsigned kernel);

private:
  // (operand number, row, block); row and block are 0 where the operand
  // does not read them.
  using FactorKey = std::tuple<unsigned, int64_t, int64_t>;

  Value tileView(OpOperand *operand, int64_t row, int64_t block);
  AffineMap getLanesMap(Value memref, OpOperand *operand);
  Value readLanes(Value memref, OpOperand *operand);
  Value broadcastElement(OpOperand *input, int64_t row, int64_t block);
  Value readFactor(OpOperand *input, int64_t row, int64_t block);
  FactorKey getFactorKey(OpOperand *input, int64_t row, int64_t block);
  void collectTileViews(OpOperand *input, SmallVectorImpl<FactorKey> &keys,
                        SmallVectorImpl<Value> &views);
  void readPaddedInputs();
  void buildStep(int64_t row, int64_t block, unsigned kernel);

  RewriterBase &rewriter;
  linalg::LinalgOp op;
  const ContractionTiles &tiles;
  const PaddedSources &padded;
  Location loc;
  MLIRContext *context;
  SmallVector<int64_t> ranges;
  bool hasRows = false;
  int64_t rows = 1;
  // The tile's block loop (output-channel blocks), spanned whole.
  unsigned blockLoop = 0;
  int64_t blocks = 1;
  std::optional<unsigned> chunkLoop;
  bool masked = false;
  bool fma = false;
  VectorType type;
  Value zero, padding;
  DenseMap<FactorKey, Value> factorCache;
  // The inside flags of elements read in place that may lie in the
  // padding: their multiply-adds are masked.
  DenseMap<FactorKey, Value> factorInside;
};

// Row `row` of block `block` of an operand's tile: a view whose innermost
// dimension holds the lanes (or one element) and whose other dimensions
// are unit ones, at the offsets the row and block loops index it by (as
// row * stride + taps: at row * stride); rows and blocks are disjoint
// static subviews, so each accumulator is carried in registers on its
// own.
Value BroadcastTileBuilder::tileView(OpOperand *operand, int64_t row,
                                     int64_t block) {
  AffineMap map = op.getMatchingIndexingMap(operand);
  Value memref = operand->get();
  auto memrefType = cast<MemRefType>(memref.getType());
  SmallVector<OpFoldResult> offsets(memrefType.getRank(),
                                    rewriter.getIndexAttr(0));
  SmallVector<OpFoldResult> sizes =
      memref::getMixedSizes(rewriter, loc, memref);
  SmallVector<OpFoldResult> strides(memrefType.getRank(),
                                    rewriter.getIndexAttr(1));
  bool sliced = false;
  for (auto [index, expr] : llvm::enumerate(map.getResults())) {
    bool byRow = hasRows && expr.isFunctionOfDim(tiles.rowLoop);
    bool byBlock = blocks > 1 && expr.isFunctionOfDim(blockLoop);
    if (!byRow && !byBlock)
      continue;
    SmallVector<AffineExpr> dims(map.getNumDims(),
                                 getAffineConstantExpr(0, context));
    if (hasRows)
      dims[tiles.rowLoop] = getAffineConstantExpr(row, context);
    if (blocks > 1)
      dims[blockLoop] = getAffineConstantExpr(block, context);
    auto offset =
        dyn_cast<AffineConstantExpr>(expr.replaceDimsAndSymbols(dims, {}));
    offsets[index] = rewriter.getIndexAttr(offset ? offset.getValue() : 0);
    sizes[index] = rewriter.getIndexAttr(1);
    sliced = true;
  }
  if (!sliced)
    return memref;
  return memref::SubViewOp::create(rewriter, loc, memref, offsets, sizes,
                                   strides);
}

// The transfer map of `operand`'s lanes in its view `memref`: the dimension
// the vector loop indexes, innermost but for the output of a convolution
// that writes channels outside pixels (findOutputChannelLanes).
AffineMap BroadcastTileBuilder::getLanesMap(Value memref, OpOperand *operand) {
  unsigned rank = cast<MemRefType>(memref.getType()).getRank();
  AffineMap map = op.getMatchingIndexingMap(operand);
  if (map.getNumResults() == rank &&
      !map.getResults().back().isFunctionOfDim(tiles.vectorLoop))
    for (auto [index, expr] : llvm::enumerate(map.getResults()))
      if (expr.isFunctionOfDim(tiles.vectorLoop))
        return AffineMap::get(rank, 0, getAffineDimExpr(index, context));
  return AffineMap::getMinorIdentityMap(rank, 1, context);
}

Value BroadcastTileBuilder::readLanes(Value memref, OpOperand *operand) {
  unsigned rank = cast<MemRefType>(memref.getType()).getRank();
  SmallVector<Value> indices(rank, zero);
  SmallVector<bool> inBounds{!masked};
  return vector::TransferReadOp::create(rewriter, loc, type, memref, indices,
                                        padding, getLanesMap(memref, operand),
                                        ArrayRef<bool>(inBounds));
}

// An input the vector loop walks is read as lanes (per row where it reads
// the row loop), the other as one element broadcast to all lanes. (An
// element the rows share is loaded once.)
Value BroadcastTileBuilder::broadcastElement(OpOperand *input, int64_t row,
                                             int64_t block) {
  Value view = tileView(input, row, block);
  unsigned rank = cast<MemRefType>(view.getType()).getRank();
  Value scalar = memref::LoadOp::create(rewriter, loc, view,
                                        SmallVector<Value>(rank, zero));
  return vector::BroadcastOp::create(rewriter, loc, type, scalar);
}

// Each input's factor for (row, block), read once per distinct view: a
// row's broadcast element serves every block, a block's weight lanes every
// row, and an element neither reads serves the whole tile.
Value BroadcastTileBuilder::readFactor(OpOperand *input, int64_t row,
                                       int64_t block) {
  AffineMap map = op.getMatchingIndexingMap(input);
  if (!map.isFunctionOfDim(tiles.vectorLoop))
    return broadcastElement(input, row, block);
  Value view = tileView(input, row, block);
  Value fromSource = readPaddedLanes(rewriter, loc, view, type,
                                     ranges[tiles.vectorLoop], padded);
  if (fromSource)
    return fromSource;
  if (chunkLoop)
    prefetchNextChunk(rewriter, loc, op, input, view, *chunkLoop,
                      tiles.cache[*chunkLoop]);
  return readLanes(view, input);
}

BroadcastTileBuilder::FactorKey
BroadcastTileBuilder::getFactorKey(OpOperand *input, int64_t row,
                                   int64_t block) {
  AffineMap map = op.getMatchingIndexingMap(input);
  int64_t rowKey = hasRows && map.isFunctionOfDim(tiles.rowLoop) ? row : 0;
  int64_t blockKey = blocks > 1 && map.isFunctionOfDim(blockLoop) ? block : 0;
  return {input->getOperandNumber(), rowKey, blockKey};
}

// The distinct views of `input` that the tile's rows and blocks read, with
// their keys.
void BroadcastTileBuilder::collectTileViews(OpOperand *input,
                                            SmallVectorImpl<FactorKey> &keys,
                                            SmallVectorImpl<Value> &views) {
  for (int64_t step = 0; step < rows * blocks; ++step) {
    FactorKey key = getFactorKey(input, step / blocks, step % blocks);
    if (llvm::is_contained(keys, key))
      continue;
    keys.push_back(key);
    views.push_back(tileView(input, std::get<1>(key), std::get<2>(key)));
  }
}

// The factors of a padded input read in place (PaddedSources.h), all the
// tile's rows at once under one check that they lie inside the source:
// lanes, or one element per row (a direct convolution's input). Where an
// element may lie in the padding, a multiply-add by a zero pad leaves its
// accumulators as they are (a masked FMA, as cheap as a plain one); other
// bodies take the pad value for it.
void BroadcastTileBuilder::readPaddedInputs() {
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!op.payloadUsesValueFromOperand(input))
      continue;
    SmallVector<FactorKey> keys;
    SmallVector<Value> views;
    collectTileViews(input, keys, views);
    if (op.getMatchingIndexingMap(input).isFunctionOfDim(tiles.vectorLoop)) {
      SmallVector<Value> lanesRead = readPaddedTileLanes(
          rewriter, loc, views, type, ranges[tiles.vectorLoop], padded);
      for (auto [key, value] : llvm::zip(keys, lanesRead))
        factorCache[key] = value;
      continue;
    }
    std::optional<PaddedElements> elements =
        readPaddedTileElements(rewriter, loc, views, padded);
    if (!elements)
      continue;
    bool masksAccumulators =
        fma && matchPattern(elements->padValue, m_AnyZeroFloat());
    for (auto [key, value, inside] :
         llvm::zip(keys, elements->values, elements->insides)) {
      if (inside && !masksAccumulators) {
        value = arith::SelectOp::create(rewriter, loc, inside, value,
                                        elements->padValue);
        inside = Value();
      }
      factorCache[key] =
          vector::BroadcastOp::create(rewriter, loc, type, value);
      if (inside)
        factorInside[key] = inside;
    }
  }
}

// Row `row` of block `block`: its factors, the accumulator updated, stored.
void BroadcastTileBuilder::buildStep(int64_t row, int64_t block,
                                     unsigned kernel) {
  SmallVector<Value> factors;
  Value inside;
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (!op.payloadUsesValueFromOperand(input)) {
      factors.push_back(Value());
      continue;
    }
    FactorKey key = getFactorKey(input, row, block);
    auto [operandNumber, rowKey, blockKey] = key;
    Value &factor = factorCache[key];
    if (!factor)
      factor = readFactor(input, rowKey, blockKey);
    factors.push_back(factor);
    if (Value flag = factorInside.lookup(key))
      inside =
          inside ? arith::AndIOp::create(rewriter, loc, inside, flag) : flag;
  }
  OpOperand *init = op.getDpsInitOperand(0);
  Value accView = tileView(init, row, block);
  Value accumulator = readLanes(accView, init);
  accumulator.getDefiningOp()->setAttr(kAccumulatorReadMarker,
                                       rewriter.getIndexAttr(kernel));
  Value result;
  if (fma) {
    result = vector::FMAOp::create(rewriter, loc, factors[0], factors[1],
                                   accumulator);
  } else {
    IRMapping mapping;
    for (auto [arg, factor] : llvm::zip(op.getBlock()->getArguments(), factors))
      if (factor)
        mapping.map(arg, factor);
    mapping.map(op.getBlock()->getArguments().back(), accumulator);
    result = cloneBodyOnLanes(rewriter, loc, op, type, mapping);
  }
  if (inside) {
    Value mask = vector::BroadcastOp::create(
        rewriter, loc, VectorType::get(type.getShape(), inside.getType()),
        inside);
    result = arith::SelectOp::create(rewriter, loc, mask, result, accumulator);
  }
  unsigned accRank = cast<MemRefType>(accView.getType()).getRank();
  SmallVector<bool> inBounds{!masked};
  vector::TransferWriteOp::create(
      rewriter, loc, result, accView, SmallVector<Value>(accRank, zero),
      getLanesMap(accView, init), ArrayRef<bool>(inBounds));
}

LogicalResult BroadcastTileBuilder::build(unsigned kernel) {
  if (!isRegisterTileShape(op, tiles))
    return failure();
  ranges = op.getStaticLoopRanges();
  hasRows = tiles.rowLoop != tiles.vectorLoop;
  rows = hasRows ? ranges[tiles.rowLoop] : 1;
  SmallVector<unsigned> blockLoops = getRegisterBlockLoops(tiles);
  if (blockLoops.size() > 1)
    return failure();
  blockLoop = blockLoops.empty() ? tiles.vectorLoop : blockLoops[0];
  blocks = blockLoops.empty() ? 1 : ranges[blockLoop];
  chunkLoop = getChunkedReductionLoop(op, tiles);
  fma = isPlainMultiplyAdd(op);
  // A lane count that is not a power of two (a partial last vector) runs
  // as the next power of two with the lanes past the tile masked off: the
  // transfers are out of bounds there, and lower to masked loads and
  // stores.
  int64_t lanes = ranges[tiles.vectorLoop];
  masked = !llvm::isPowerOf2_64(lanes);
  Type f32 = rewriter.getF32Type();
  type = VectorType::get({int64_t(llvm::PowerOf2Ceil(lanes))}, f32);
  rewriter.setInsertionPoint(op);
  zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  padding = arith::ConstantOp::create(rewriter, loc, f32,
                                      rewriter.getF32FloatAttr(0));
  readPaddedInputs();
  for (int64_t step = 0; step < rows * blocks; ++step)
    buildStep(step / blocks, step % blocks, kernel);
  rewriter.eraseOp(op);
  return success();
}

} // namespace

// A broadcast kernel's register tile (every loop but the vector loop has
// one iteration): acc[lanes] += broadcast(A) * B[lanes] (or A[lanes]), one
// vector.fma.
LogicalResult vectorizeBroadcastTile(RewriterBase &rewriter,
                                     linalg::LinalgOp op,
                                     const ContractionTiles &tiles,
                                     unsigned kernel,
                                     const PaddedSources &padded) {
  return BroadcastTileBuilder(rewriter, op, tiles, padded).build(kernel);
}

bool readsTapsAsLanes(linalg::LinalgOp op, const ContractionTiles &tiles) {
  return llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    AffineMap map = op.getMatchingIndexingMap(input);
    return map.isFunctionOfDim(tiles.vectorLoop) ||
           tiles.rowLoop == tiles.vectorLoop ||
           !map.isFunctionOfDim(tiles.rowLoop);
  });
}

void unrollTapLoops(func::FuncOp func) {
  // The outermost of each nest.
  SmallVector<scf::ForOp> nests;
  func.walk([&](scf::ForOp loop) {
    Operation *parent = loop->getParentOp();
    if (loop->hasAttr(kRegisterTapLoopMarker) &&
        !(isa<scf::ForOp>(parent) && parent->hasAttr(kRegisterTapLoopMarker)))
      nests.push_back(loop);
  });
  for (scf::ForOp nest : nests) {
    // Innermost first (the walk is post-order), up to the first loop that
    // would take the steps past the limit: the loops around it stay loops.
    SmallVector<scf::ForOp> unrolled;
    int64_t steps = 1;
    bool full = false;
    nest->walk([&](scf::ForOp loop) {
      std::optional<APInt> trips = loop.getStaticTripCount();
      if (full || !trips || trips->getZExtValue() > kMaxUnrolledTaps ||
          steps * std::max<uint64_t>(trips->getZExtValue(), 1) >
              kMaxUnrolledTaps) {
        full = true;
        return;
      }
      steps *= std::max<uint64_t>(trips->getZExtValue(), 1);
      unrolled.push_back(loop);
    });
    for (scf::ForOp loop : unrolled)
      (void)loopUnrollFull(loop);
  }
  func.walk([](scf::ForOp loop) { loop->removeAttr(kRegisterTapLoopMarker); });
}

} // namespace strata
