//===- WorkgroupTiling.cpp ------------------------------------------------===//
#include "strata/compiler/Codegen/WorkgroupTiling.h"
#include "strata/compiler/Codegen/CUDA/ThreadBlocks.h"

#include "strata/compiler/Codegen/ContractionStrategy.h"
#include "strata/compiler/Utils/IndexingMaps.h"

#include <functional>

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace strata {

// Below this many loop iterations per workgroup, spreading costs more than
// it gains; above 64 workgroups the grid only adds scheduling overhead for
// the core counts we target.
static constexpr int64_t kMinIterationsPerWorkgroup = 1 << 14;
static constexpr int64_t kMaxWorkgroups = 64;
static constexpr int64_t kMaxGpuWorkgroups = 4096;

// A thread block of 256 threads is worth launching from a few iterations
// per thread; a CPU workgroup must pay for a worker's wake-up.
static constexpr int64_t kMinGpuIterationsPerWorkgroup = 1 << 12;

static int64_t getMaxWorkgroups(WorkgroupGrid grid) {
  return grid == WorkgroupGrid::gpuBlocks ? kMaxGpuWorkgroups : kMaxWorkgroups;
}

static int64_t getMinIterations(WorkgroupGrid grid, int64_t cpuIterations) {
  return grid == WorkgroupGrid::gpuBlocks ? kMinGpuIterationsPerWorkgroup
                                          : cpuIterations;
}
// Tiles of the vectorized (output-innermost) loop narrower than this lose
// the vector loop.
static constexpr int64_t kMinVectorLoopTileSize = 64;
// A pad split along its innermost dimension: elements per workgroup row.
static constexpr int64_t kMinInnermostPadTile = 16;

bool isConstantPadOfStaticAmounts(tensor::PadOp pad) {
  if (!pad.getConstantPaddingValue() || !pad.getLow().empty() ||
      !pad.getHigh().empty())
    return false;
  RankedTensorType type = pad.getResultType();
  for (int64_t dim = 0; dim < type.getRank(); ++dim)
    if (type.isDynamicDim(dim) &&
        (pad.getStaticLow()[dim] != 0 || pad.getStaticHigh()[dim] != 0))
      return false;
  return true;
}

bool isStaticConstantPad(tensor::PadOp pad) {
  return isConstantPadOfStaticAmounts(pad) &&
         pad.getResultType().hasStaticShape();
}

tensor::PadOp findPaddedDispatchResult(Operation *terminator) {
  if (!terminator || terminator->getNumOperands() != 1)
    return nullptr;
  auto pad = terminator->getOperand(0).getDefiningOp<tensor::PadOp>();
  if (!pad || !isStaticConstantPad(pad) || !pad.getSource().hasOneUse())
    return nullptr;
  auto source = pad.getSource().getDefiningOp<linalg::LinalgOp>();
  if (!source || source->getNumResults() != 1 ||
      source->getBlock() != pad->getBlock())
    return nullptr;
  return pad;
}

linalg::LinalgOp findDispatchRoot(Operation *terminator) {
  if (!terminator || terminator->getNumOperands() != 1)
    return nullptr;
  Value result = terminator->getOperand(0);
  if (tensor::PadOp pad = findPaddedDispatchResult(terminator))
    result = pad.getSource();
  auto root = result.getDefiningOp<linalg::LinalgOp>();
  if (!root || root->getNumResults() != 1)
    return nullptr;
  return root;
}

// Elements of `op`'s operands that splitting loop `loop` divides. With
// `depth` > 0, looks through operands produced by linalg ops of the same
// dispatch too (the convolution under an elementwise epilogue).
static int64_t splitDataSize(linalg::LinalgOp op, unsigned loop, int depth) {
  int64_t size = 0;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<ShapedType>(operand.get().getType());
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!type || !type.hasStaticShape() || !map.isFunctionOfDim(loop))
      continue;
    size += type.getNumElements();
    auto producer = operand.get().getDefiningOp<linalg::LinalgOp>();
    if (depth == 0 || !producer || producer->getNumResults() != 1 ||
        producer->getBlock() != op->getBlock())
      continue;
    // The producer loop that makes the same result dimension.
    AffineMap producerMap =
        producer.getIndexingMapMatchingResult(producer->getResult(0));
    for (auto [index, expr] : llvm::enumerate(map.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim || dim.getPosition() != loop)
        continue;
      if (auto producerDim =
              dyn_cast<AffineDimExpr>(producerMap.getResult(index)))
        size += splitDataSize(producer, producerDim.getPosition(), depth - 1);
    }
  }
  return size;
}

// Whether `loop` appears under a floordiv, ceildiv or mod in an indexing
// map of `op` (an im2col gather's `(c * 9 + t) floordiv 9`). Tiling slices
// an operand by the map's value at the tile's first iteration and applies
// the same map to tile-local indices, which is only right for sums of
// scaled loops: such a loop is never split.
static bool isUsedNonlinearly(linalg::LinalgOp op, unsigned loop) {
  std::function<bool(AffineExpr, bool)> visit = [&](AffineExpr expr,
                                                    bool underDivision) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      return underDivision && dim.getPosition() == loop;
    auto binary = dyn_cast<AffineBinaryOpExpr>(expr);
    if (!binary)
      return false;
    bool divides = expr.getKind() == AffineExprKind::FloorDiv ||
                   expr.getKind() == AffineExprKind::CeilDiv ||
                   expr.getKind() == AffineExprKind::Mod;
    return visit(binary.getLHS(), underDivision || divides) ||
           visit(binary.getRHS(), underDivision || divides);
  };
  return llvm::any_of(op.getIndexingMapsArray(), [&](AffineMap map) {
    return llvm::any_of(map.getResults(),
                        [&](AffineExpr e) { return visit(e, false); });
  });
}

// Whether `map` reads loop `loop` inside a compound index (a sliding window
// such as `oh + kh`).
static bool readsThroughWindow(AffineMap map, unsigned loop) {
  return llvm::any_of(map.getResults(), [&](AffineExpr expr) {
    return !isa<AffineDimExpr>(expr) && expr.isFunctionOfDim(loop);
  });
}

// Whether an input of `op` reads loop `loop` through a window.
static bool isReadThroughWindow(linalg::LinalgOp op, unsigned loop) {
  return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    return readsThroughWindow(op.getMatchingIndexingMap(input), loop);
  });
}

// Whether an input of `op` that loop `loop` reads through a window is read
// as vector lanes (along `vectorLoop`), one load per multiply-add, rather
// than broadcast one element at a time to many lanes.
static bool isWindowReadAsLanes(linalg::LinalgOp op, unsigned loop,
                                unsigned vectorLoop) {
  return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *input) {
    AffineMap map = op.getMatchingIndexingMap(input);
    return map.isFunctionOfDim(vectorLoop) && readsThroughWindow(map, loop);
  });
}

// The bytes of the inputs of `op` that do not read loop `loop`: a split
// along it makes every workgroup read all of them.
static int64_t getBytesReadByEveryTile(linalg::LinalgOp op, unsigned loop) {
  int64_t bytes = 0;
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<RankedTensorType>(input->get().getType());
    if (!type || !type.hasStaticShape() ||
        op.getMatchingIndexingMap(input).isFunctionOfDim(loop))
      continue;
    bytes += type.getNumElements() *
             llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  }
  return bytes;
}

// The most bytes every workgroup of a split along a window's loop may read
// whole (a direct convolution's filter): within a core's share of L2, each
// re-read is cheap (resnet18's 3x3 convolutions of 64 channels at 56x56,
// 147 KiB of filter, split by output rows 864 -> 730 us on two workers;
// those of 256 channels, 2.3 MiB, 782 -> 884 us).
static constexpr int64_t kMaxWindowSplitRereadBytes = 512 * 1024;

// Below this many multiply-adds per workgroup a contraction is not split.
static constexpr int64_t kMinContractionIterationsPerWorkgroup = 1 << 17;
static constexpr int64_t kMinBroadcastIterationsPerWorkgroup = 1 << 15;
// Balance scores (see splitLoop) closer than this count as equal.
static constexpr double kBalanceMargin = 0.15;
// Two-worker balances closer than this count as equal.
static constexpr double kTwoWorkerMargin = 0.1;

namespace {
struct ScoredTiling {
  WorkgroupTiling tiling;
  double imbalance;
  // The busiest of two workers' share over the even share.
  double twoWorkerImbalance;
};
} // namespace

// The loop of `root` that walks the same result dimension as loop
// `contractionLoop` of `contraction` (root itself, or the producer of one
// of root's operands), if there is one.
static std::optional<unsigned> mapToRootLoop(linalg::LinalgOp root,
                                             linalg::LinalgOp contraction,
                                             unsigned contractionLoop) {
  if (root == contraction)
    return contractionLoop;
  AffineMap producerMap =
      contraction.getIndexingMapMatchingResult(contraction->getResult(0));
  for (OpOperand &operand : root->getOpOperands()) {
    if (operand.get() != contraction->getResult(0))
      continue;
    AffineMap map = root.getMatchingIndexingMap(&operand);
    for (auto [index, expr] : llvm::enumerate(producerMap.getResults())) {
      auto dim = dyn_cast<AffineDimExpr>(expr);
      if (!dim || dim.getPosition() != contractionLoop)
        continue;
      if (auto rootDim = dyn_cast<AffineDimExpr>(map.getResult(index)))
        return rootDim.getPosition();
    }
  }
  return std::nullopt;
}

// The contraction of a dispatch rooted at `root`: root itself, or the
// producer of one of its operands (a convolution under its elementwise
// epilogue), with its tiles.
static linalg::LinalgOp
findRootContraction(linalg::LinalgOp root, unsigned vectorBits,
                    std::optional<ContractionTiles> &tiles) {
  auto consider = [&](linalg::LinalgOp op) {
    if (!op || op->getNumResults() != 1)
      return false;
    tiles = chooseContractionTiles(op, vectorBits);
    return tiles.has_value();
  };
  if (consider(root))
    return root;
  for (Value operand : root->getOperands())
    if (auto producer = operand.getDefiningOp<linalg::LinalgOp>();
        consider(producer))
      return producer;
  return nullptr;
}

// A contraction splits along whole cache tiles of its row or vector loop
// (or one batch at a time), so each workgroup reuses what it loads: the
// option that gives the most workgroups, at most kMaxWorkgroups.
static std::optional<WorkgroupTiling>
chooseContractionWorkgroupTiling(linalg::LinalgOp root, unsigned vectorBits,
                                 WorkgroupGrid grid) {
  std::optional<ContractionTiles> tiles;
  linalg::LinalgOp contraction = findRootContraction(root, vectorBits, tiles);
  if (!contraction)
    return std::nullopt;
  // A dynamic loop (a batch, perhaps of one) counts as one iteration and
  // is not split here (chooseDynamicWorkgroupTiling).
  SmallVector<int64_t> ranges = contraction.getStaticLoopRanges();
  for (int64_t &range : ranges)
    if (ShapedType::isDynamic(range))
      range = 1;
  int64_t iterations = 1;
  for (int64_t range : ranges)
    iterations *= std::max<int64_t>(range, 1);
  // A broadcast kernel's multiply-add costs several times a matrix
  // product's (a load per FMA, short loops): it splits from less work.
  int64_t minIterations = getMinIterations(
      grid, tiles->broadcast ? kMinBroadcastIterationsPerWorkgroup
                             : kMinContractionIterationsPerWorkgroup);
  int64_t wanted = std::min(getMaxWorkgroups(grid), iterations / minIterations);
  if (wanted < 2)
    return WorkgroupTiling();
  bool narrow = grid == WorkgroupGrid::gpuBlocks;
  // A GPU contraction written as a thread-block kernel tiles rows and
  // columns itself (it shares a column tile's loads across a block and
  // launches the columns as several blocks of one workgroup): workgroups
  // take whole row tiles of that kernel, or one batch each where that makes
  // more of them. (Finer row tiles where whole ones make few blocks were
  // measured and dropped: a block's time is its reduction's steps, which
  // more blocks of fewer rows do not shorten; resnet18's 512-channel
  // layers at 7x7 ran 322 us in 32 blocks of 16 rows as in 8 of 64, and
  // transformer_encoder went 0.71 -> 0.81 ms.)
  if (narrow && !tiles->broadcast) {
    if (std::optional<ThreadBlockContractionLoops> loops =
            getThreadBlockContractionLoops(contraction)) {
      std::optional<WorkgroupTiling> best;
      auto consider = [&](unsigned loop, int64_t tile) {
        std::optional<unsigned> rootLoop =
            mapToRootLoop(root, contraction, loop);
        if (!rootLoop)
          return;
        int64_t count = llvm::divideCeil(ranges[loop], tile);
        if (count < 2 || count > getMaxWorkgroups(grid))
          return;
        if (!best || count > best->count)
          best = WorkgroupTiling{*rootLoop, tile, count};
      };
      for (unsigned batch : loops->batch)
        consider(batch, 1);
      consider(loops->m, kGpuContractionRowTile);
      return best ? *best : WorkgroupTiling();
    }
  }

  // The split of `loop` into tiles of a multiple of `smallest`, at most
  // `preferred` (or as few as `wanted` allows), that balances best over 2 and 4
  // workers (the busiest worker's share when workgroups are dealt out in turn,
  // over the even share); narrower tiles only for a clearly better balance,
  // since wide ones reuse more of what they load. 96 rows split 4 x 24 rather
  // than 64 + 32.
  auto splitLoop = [&](unsigned loop, int64_t preferred, int64_t smallest,
                       bool exact = false) -> std::optional<ScoredTiling> {
    std::optional<unsigned> rootLoop = mapToRootLoop(root, contraction, loop);
    if (!rootLoop)
      return std::nullopt;
    int64_t range = ranges[loop];
    // GPU blocks take the narrowest tiles: many blocks hide latency.
    if (narrow)
      preferred = smallest;
    // Wider than `preferred` only where that many workgroups are too many.
    int64_t widest = std::max(
        preferred,
        int64_t(llvm::alignTo(llvm::divideCeil(range, wanted), smallest)));
    std::optional<ScoredTiling> best;
    for (int64_t count = 2; count <= wanted; ++count) {
      int64_t tile = llvm::alignTo(llvm::divideCeil(range, count), smallest);
      if (tile > widest)
        continue;
      int64_t tiles = llvm::divideCeil(range, tile);
      if (tiles < 2 || tiles > wanted || (exact && range % tile != 0))
        continue;
      // Time of the busiest of `workers`, in tile-rows, over the ideal.
      auto imbalance = [&](int64_t workers) {
        return double(llvm::divideCeil(tiles, workers) * tile) * workers /
               double(range);
      };
      double score = imbalance(2) + 0.5 * imbalance(4);
      if (best && (tile == best->tiling.tileSize ||
                   score >= best->imbalance - kBalanceMargin))
        continue;
      best = ScoredTiling{{*rootLoop, tile, tiles}, score, imbalance(2)};
    }
    return best;
  };
  SmallVector<ScoredTiling> options;
  SmallVector<utils::IteratorType> iterators =
      contraction.getIteratorTypesArray();
  // Batch loops: parallel loops other than the row and vector loops. A
  // loop that an input read as lanes reads through a window (a depthwise
  // convolution's output rows, at row + tap) splits only when no other
  // batch loop does: every tile would re-read its neighbours' rows, a few
  // rows from each of many channels, where a channel split reads whole
  // planes once (a depthwise convolution split by rows gained nothing from
  // a second thread). A direct convolution's rows, whose input elements
  // are broadcast to many output channels, split like any batch loop where
  // its filter is small (isWindowReadAsLanes, kMaxWindowSplitRereadBytes).
  // A loop whose register tiles span several iterations (a direct
  // convolution's output-channel blocks) splits into whole register tiles.
  SmallVector<ScoredTiling> windowedOptions;
  auto splitsOnlyAlone = [&](unsigned loop) {
    return isReadThroughWindow(contraction, loop) &&
           (isWindowReadAsLanes(contraction, loop, tiles->vectorLoop) ||
            getBytesReadByEveryTile(contraction, loop) >
                kMaxWindowSplitRereadBytes);
  };
  for (unsigned loop = 0; loop < ranges.size(); ++loop)
    if (iterators[loop] == utils::IteratorType::parallel &&
        loop != tiles->rowLoop && loop != tiles->vectorLoop)
      if (int64_t block = std::max<int64_t>(tiles->registers[loop], 1);
          auto option = splitLoop(loop, block, block, /*exact=*/block > 1))
        (splitsOnlyAlone(loop) ? windowedOptions : options).push_back(*option);
  // A broadcast kernel's rows (output pixels) split into whole register
  // tiles that divide them: a partial workgroup tile would have a dynamic
  // row count, and such a kernel keeps no rows in registers at all. Rows
  // read through a window as lanes (a blocked depthwise convolution's
  // pixels) are a windowed split like the batch loops' (a 28-pixel row in
  // 4 strips of 7 over 9 channel blocks: 54 -> 77 us).
  if (tiles->rowLoop != tiles->vectorLoop) {
    std::optional<ScoredTiling> option =
        tiles->broadcast
            ? splitLoop(tiles->rowLoop, 64, tiles->registers[tiles->rowLoop],
                        /*exact=*/true)
        : narrow ? splitLoop(tiles->rowLoop, 64, 8)
                 // Whole cache tiles of rows, else whole register tiles.
                 : splitLoop(tiles->rowLoop, tiles->cache[tiles->rowLoop],
                             tiles->registers[tiles->rowLoop]);
    if (option)
      (tiles->broadcast && splitsOnlyAlone(tiles->rowLoop) ? windowedOptions
                                                           : options)
          .push_back(*option);
  }
  if (options.empty())
    options = std::move(windowedOptions);
  if (auto option = splitLoop(tiles->vectorLoop, 256, kMinVectorLoopTileSize))
    options.push_back(*option);
  if (options.empty())
    return WorkgroupTiling();
  // The best balance; within the margin, the best for two workers, then
  // the most workgroups (96 output channels as 6 blocks of 16 rather than
  // 112 pixels as 7 tiles of 16: 7 leave one worker of two idle an eighth
  // of the time; but 25 tiles of 128 pixels, 6% over the even share,
  // rather than 4 blocks of 16 output channels, each of which would stream
  // the whole right operand).
  double bestImbalance = llvm::min_element(options, [](const ScoredTiling &a,
                                                       const ScoredTiling &b) {
                           return a.imbalance < b.imbalance;
                         })->imbalance;
  std::optional<ScoredTiling> chosen;
  for (const ScoredTiling &option : options)
    if (option.imbalance < bestImbalance + kBalanceMargin &&
        (!chosen ||
         option.twoWorkerImbalance <
             chosen->twoWorkerImbalance - kTwoWorkerMargin ||
         (option.twoWorkerImbalance <
              chosen->twoWorkerImbalance + kTwoWorkerMargin &&
          option.tiling.count > chosen->tiling.count)))
      chosen = option;
  return chosen->tiling;
}

std::optional<WorkgroupTiling> chooseWorkgroupTiling(linalg::LinalgOp root,
                                                     unsigned vectorBits,
                                                     WorkgroupGrid grid) {
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  int64_t iterations = 0;
  for (Operation &op : *root->getBlock()) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp)
      continue;
    int64_t opIterations = 1;
    for (int64_t range : linalgOp.getStaticLoopRanges())
      opIterations *=
          ShapedType::isDynamic(range) ? 1 : std::max<int64_t>(range, 1);
    iterations += opIterations;
  }
  // A fused producer is sliced through its own maps: with a loop under a
  // division it would be sliced wrongly whatever loop the root splits.
  for (Operation &op : *root->getBlock()) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp || linalgOp == root)
      continue;
    for (unsigned loop = 0; loop < linalgOp.getNumLoops(); ++loop)
      if (isUsedNonlinearly(linalgOp, loop))
        return std::nullopt;
  }
  if (std::optional<WorkgroupTiling> tiling =
          chooseContractionWorkgroupTiling(root, vectorBits, grid)) {
    if (tiling->count < 2)
      return std::nullopt;
    return tiling;
  }
  int64_t wanted =
      std::min(getMaxWorkgroups(grid),
               iterations / getMinIterations(grid, kMinIterationsPerWorkgroup));
  if (wanted < 2)
    return std::nullopt;

  // Split the parallel loop that divides the most operand data, so each
  // workgroup reads only its part of the large operands (for an NCHW
  // convolution that is the output rows, not the output channels: every
  // channel needs the whole input). Ties go to the outermost loop.
  // The output's innermost loop is the one kernels vectorize, and a fused
  // producer computed on an operand it does not index (the activation of
  // a matmul's input, say) would be recomputed by every tile: it is split
  // only into tiles of at least kMinVectorLoopTileSize, or when no other
  // loop can be.
  SmallVector<utils::IteratorType> iterators = root.getIteratorTypesArray();
  std::optional<unsigned> vectorLoop;
  if (root.getNumDpsInits() == 1)
    vectorLoop = getInnermostLoop(
        root.getMatchingIndexingMap(root.getDpsInitOperand(0)));
  // The best other loop, and the vector loop's own score.
  std::optional<unsigned> best;
  int64_t bestScore = -1, vectorScore = -1;
  for (auto [loop, range] : llvm::enumerate(ranges)) {
    if (iterators[loop] != utils::IteratorType::parallel || range < 2 ||
        isUsedNonlinearly(root, loop))
      continue;
    int64_t score = splitDataSize(root, loop, /*depth=*/1);
    if (vectorLoop == loop) {
      vectorScore = score;
      continue;
    }
    if (score > bestScore) {
      bestScore = score;
      best = loop;
    }
  }
  // The vector loop when no other loop splits, or when splitting it divides
  // far more data (the im2col matrix of a convolution, streamed once per
  // output channel otherwise) and its tiles stay wide.
  bool wideVectorSplit =
      vectorScore >= 0 && ranges[*vectorLoop] / kMinVectorLoopTileSize >= 2;
  bool useVectorLoop =
      vectorScore >= 0 &&
      (!best || (wideVectorSplit && vectorScore > 2 * bestScore));
  if (useVectorLoop)
    best = vectorLoop;
  // GPU blocks read what they need from L2 whichever loop splits; what
  // matters is enough of them: the loop that makes the most workgroups
  // (an im2col gather of 3 input channels split by channel ran as 3 blocks,
  // 439 us; its 112 output rows make 112).
  if (grid == WorkgroupGrid::gpuBlocks && best &&
      std::min(ranges[*best], wanted) < wanted) {
    for (auto [loop, range] : llvm::enumerate(ranges))
      if (iterators[loop] == utils::IteratorType::parallel &&
          !isUsedNonlinearly(root, loop) &&
          std::min(range, wanted) > std::min(ranges[*best], wanted))
        best = loop;
  }
  if (!best)
    return std::nullopt;
  int64_t range = ranges[*best];
  int64_t count = std::min(range, wanted);
  // The vectorized loop splits into tiles of at least a vector loop's worth
  // (fewer workgroups rather than narrow ones).
  if (vectorLoop == *best && wideVectorSplit)
    count = std::min(count, range / kMinVectorLoopTileSize);
  // Prefer a count that divides the loop evenly: every tile then has a
  // static shape (better code, no dynamically sized temporaries).
  for (int64_t candidate = count; candidate >= std::max<int64_t>(2, count / 2);
       --candidate)
    if (range % candidate == 0) {
      count = candidate;
      break;
    }
  WorkgroupTiling tiling;
  tiling.loop = *best;
  tiling.tileSize = llvm::divideCeil(range, count);
  tiling.count = llvm::divideCeil(range, tiling.tileSize);
  if (tiling.count < 2)
    return std::nullopt;
  return tiling;
}

TilingInterface findTileableDispatchRoot(Operation *terminator) {
  if (linalg::LinalgOp root = findDispatchRoot(terminator))
    return cast<TilingInterface>(root.getOperation());
  if (!terminator || terminator->getNumOperands() != 1)
    return nullptr;
  if (auto pad = terminator->getOperand(0).getDefiningOp<tensor::PadOp>())
    return cast<TilingInterface>(pad.getOperation());
  return nullptr;
}

// A pad is a fill and a copy: it splits along its outermost dimension of
// two or more that is not padded (channels), so every workgroup copies a
// whole slab.
static std::optional<WorkgroupTiling>
choosePadWorkgroupTiling(tensor::PadOp pad, WorkgroupGrid grid) {
  RankedTensorType type = pad.getResultType();
  if (!type.hasStaticShape())
    return std::nullopt;
  int64_t wanted =
      std::min(getMaxWorkgroups(grid),
               type.getNumElements() /
                   getMinIterations(grid, kMinIterationsPerWorkgroup));
  if (wanted < 2)
    return std::nullopt;
  ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
  for (unsigned dim = 0; dim < type.getRank(); ++dim) {
    int64_t size = type.getDimSize(dim);
    if (size < 2 || low[dim] != 0 || high[dim] != 0)
      continue;
    int64_t count = std::min(size, wanted);
    // Split along the innermost dimension (NHWC channels), a workgroup
    // copies whole cache lines at least, not a few elements per row.
    if (dim + 1 == type.getRank())
      count = std::min(count, size / kMinInnermostPadTile);
    if (count < 2)
      return std::nullopt;
    for (int64_t candidate = count;
         candidate >= std::max<int64_t>(2, count / 2); --candidate)
      if (size % candidate == 0) {
        count = candidate;
        break;
      }
    WorkgroupTiling tiling;
    tiling.loop = dim;
    tiling.tileSize = llvm::divideCeil(size, count);
    tiling.count = llvm::divideCeil(size, tiling.tileSize);
    if (tiling.count < 2)
      return std::nullopt;
    return tiling;
  }
  return std::nullopt;
}

std::optional<WorkgroupTiling>
chooseDispatchWorkgroupTiling(Operation *terminator, unsigned vectorBits,
                              WorkgroupGrid grid) {
  TilingInterface root = findTileableDispatchRoot(terminator);
  if (!root)
    return std::nullopt;
  if (auto linalgRoot = dyn_cast<linalg::LinalgOp>(root.getOperation()))
    return chooseWorkgroupTiling(linalgRoot, vectorBits, grid);
  if (auto pad = dyn_cast<tensor::PadOp>(root.getOperation()))
    return choosePadWorkgroupTiling(pad, grid);
  return std::nullopt;
}

// A dynamic contraction splits its static vector loop from this many cache
// tiles of it.
static constexpr int64_t kMinStaticContractionTiles = 4;

// A dynamic dispatch whose root is `contraction` or its epilogue splits
// along whole cache tiles of the contraction: of its vector loop when that
// is static and has a few of them (the grid then does not depend on the
// rows, which may be few), else of its static rows, of another static loop
// it tiles whole, or of its dynamic rows or vector loop. Under an
// epilogue, the root's loop over the same result dimension splits.
static std::optional<WorkgroupTiling> chooseDynamicContractionTiling(
    linalg::LinalgOp root, linalg::LinalgOp contraction,
    const ContractionTiles &tiles, unsigned vectorBits) {
  SmallVector<int64_t> ranges = contraction.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators =
      contraction.getIteratorTypesArray();
  auto isSplittable = [&](unsigned loop) {
    return ShapedType::isDynamic(ranges[loop]) &&
           iterators[loop] == utils::IteratorType::parallel &&
           !isUsedNonlinearly(contraction, loop);
  };
  auto tileOf = [&](unsigned loop) {
    return tiles.cache[loop] > 0 ? tiles.cache[loop] : tiles.registers[loop];
  };
  auto staticIterations = [](linalg::LinalgOp op) {
    int64_t iterations = 1;
    for (int64_t range : op.getStaticLoopRanges())
      iterations *=
          ShapedType::isDynamic(range) ? 1 : std::max<int64_t>(range, 1);
    return iterations;
  };
  int64_t workPerIteration = std::max<int64_t>(
      1, staticIterations(contraction) / staticIterations(root));
  auto split = [&](unsigned loop,
                   int64_t tile) -> std::optional<WorkgroupTiling> {
    std::optional<unsigned> rootLoop = mapToRootLoop(root, contraction, loop);
    if (!rootLoop || isUsedNonlinearly(root, *rootLoop))
      return std::nullopt;
    return WorkgroupTiling{*rootLoop, tile, ShapedType::kDynamic,
                           workPerIteration};
  };
  // A broadcast kernel (a blocked convolution over a dynamic batch)
  // splits its static loops as it would at a batch of one: its output
  // channel blocks or rows, which hold the work when the batch is small.
  if (tiles.broadcast)
    if (std::optional<WorkgroupTiling> tiling =
            chooseContractionWorkgroupTiling(root, vectorBits,
                                             WorkgroupGrid::cpuCores);
        tiling && tiling->count >= 2)
      return WorkgroupTiling{tiling->loop, tiling->tileSize,
                             ShapedType::kDynamic, workPerIteration};
  unsigned vectorLoop = tiles.vectorLoop;
  int64_t registerTile = tiles.registers[vectorLoop];
  if (tiles.rowLoop != vectorLoop &&
      !ShapedType::isDynamic(ranges[vectorLoop]) &&
      iterators[vectorLoop] == utils::IteratorType::parallel &&
      !isUsedNonlinearly(contraction, vectorLoop) && registerTile > 0 &&
      ranges[vectorLoop] >= 2 * registerTile) {
    // About kMinStaticContractionTiles tiles of whole register tiles.
    int64_t tile = std::clamp<int64_t>(
        ranges[vectorLoop] / kMinStaticContractionTiles / registerTile *
            registerTile,
        registerTile, std::max(tileOf(vectorLoop), registerTile));
    return split(vectorLoop, tile);
  }
  // Else of its static rows the same way (a convolution's filters, when
  // its pixels are few and its batch may be 1).
  unsigned rowLoop = tiles.rowLoop;
  int64_t rowTile = tiles.registers[rowLoop];
  if (rowLoop != vectorLoop && !ShapedType::isDynamic(ranges[rowLoop]) &&
      iterators[rowLoop] == utils::IteratorType::parallel &&
      !isUsedNonlinearly(contraction, rowLoop) && rowTile > 0 &&
      ranges[rowLoop] >= 2 * rowTile) {
    int64_t tile = std::clamp<int64_t>(
        ranges[rowLoop] / kMinStaticContractionTiles / rowTile * rowTile,
        rowTile, std::max(tileOf(rowLoop), rowTile));
    return split(rowLoop, tile);
  }
  // Else of another static parallel loop it tiles whole (the panels of a
  // packed constant matrix, when the rows are a batch and the panel is
  // one register tile wide).
  for (unsigned loop = 0; loop < ranges.size(); ++loop) {
    if (loop == rowLoop || loop == vectorLoop ||
        ShapedType::isDynamic(ranges[loop]) ||
        ranges[loop] < kMinStaticContractionTiles ||
        iterators[loop] != utils::IteratorType::parallel ||
        isUsedNonlinearly(contraction, loop) || tileOf(loop) != 1)
      continue;
    if (std::optional<WorkgroupTiling> tiling = split(
            loop, llvm::divideCeil(ranges[loop], kMinStaticContractionTiles)))
      return tiling;
  }
  for (unsigned loop : {tiles.rowLoop, vectorLoop})
    if (isSplittable(loop) && tileOf(loop) > 0)
      return split(loop, tileOf(loop));
  return std::nullopt;
}

std::optional<WorkgroupTiling>
chooseDynamicWorkgroupTiling(Operation *terminator, unsigned vectorBits) {
  linalg::LinalgOp root = findDispatchRoot(terminator);
  if (!root || findPaddedDispatchResult(terminator))
    return std::nullopt;
  std::optional<ContractionTiles> tiles;
  if (linalg::LinalgOp contraction =
          findRootContraction(root, vectorBits, tiles))
    return chooseDynamicContractionTiling(root, contraction, *tiles,
                                          vectorBits);
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = root.getIteratorTypesArray();
  auto isSplittable = [&](unsigned loop) {
    return ShapedType::isDynamic(ranges[loop]) &&
           iterators[loop] == utils::IteratorType::parallel &&
           !isUsedNonlinearly(root, loop);
  };
  // Where the static loops alone make enough work for several workgroups
  // (an image's channels and pixels, the batch being dynamic and perhaps
  // 1), along the outermost static parallel loop, in about
  // kMinStaticContractionTiles tiles.
  int64_t staticIterations = 1;
  for (int64_t range : ranges)
    staticIterations *=
        ShapedType::isDynamic(range) ? 1 : std::max<int64_t>(range, 1);
  if (staticIterations >=
      kMinStaticContractionTiles * kMinIterationsPerWorkgroup)
    for (unsigned loop = 0; loop < ranges.size(); ++loop)
      if (!ShapedType::isDynamic(ranges[loop]) &&
          ranges[loop] >= kMinStaticContractionTiles &&
          iterators[loop] == utils::IteratorType::parallel &&
          !isUsedNonlinearly(root, loop))
        return WorkgroupTiling{loop,
                               static_cast<int64_t>(llvm::divideCeil(
                                   ranges[loop], kMinStaticContractionTiles)),
                               ShapedType::kDynamic};
  // Anything else along its outermost dynamic parallel loop, in tiles of
  // about a thousand iterations where the other loops' sizes are known.
  for (unsigned loop = 0; loop < ranges.size(); ++loop) {
    if (!isSplittable(loop))
      continue;
    int64_t others = 1;
    for (auto [other, range] : llvm::enumerate(ranges))
      if (other != loop && !ShapedType::isDynamic(range))
        others *= std::max<int64_t>(range, 1);
    int64_t tile = std::clamp<int64_t>(
        llvm::PowerOf2Ceil(llvm::divideCeil(1024, others)), 1, 64);
    return WorkgroupTiling{loop, tile, ShapedType::kDynamic};
  }
  return std::nullopt;
}

int64_t getDynamicMinIterationsPerWorkgroup() {
  return kMinIterationsPerWorkgroup;
}

int64_t getDynamicMaxWorkgroups() { return kMaxWorkgroups; }

} // namespace strata
