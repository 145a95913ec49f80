//===- BlockChannels.cpp - convolution chains in a blocked channel layout -===//
//
// An NCHW convolution reads one input channel plane at a time, and its
// vector lanes can only run along pixels: short rows waste lanes, a
// depthwise convolution has no reduction over channels to amortize its
// loads, and as im2col the input is copied Kh*Kw times first. In the
// blocked layout NCHW[b]c, [N, C/b, H, W, b] with b the vector width, every
// pixel holds b consecutive channels in one vector:
//
//   conv:      out[n, f, oh, ow, fi] += x[n, c, oh+kh, ow+kw, ci]
//                                        * w[f, c, kh, kw, ci, fi]
//   depthwise: out[n, c, oh, ow, ci] += x[n, c, oh+kh, ow+kw, ci]
//                                        * w[c, kh, kw, ci]
//
// a broadcast of one input element times a weight vector, or a vector of
// input times a vector of weights, with several output pixels (rows) per
// register tile: no patch matrix, no lane waste.
//
// The pass blocks each convolution, depthwise convolution and pooling whose
// channels divide by b (linalg.pack of its operands, the op in the packed
// iteration space, linalg.unpack of its result), then lets the packs and
// unpacks travel through elementwise ops and pads until they meet and
// cancel: a chain of convolutions changes layout only where it starts and
// ends. Packs of constants (weights, biases) are folded at compile time.
// The packs and unpacks left are lowered to pad/reshape/transpose.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/DispatchCreation/DispatchNames.h"
#include "strata/compiler/GlobalOptimization/FoldPackOfConstant.h"
#include "strata/compiler/Passes.h"
#include "strata/compiler/Utils/Reshapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DEF_BLOCKCHANNELSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// The smallest filter (taps) for which a depthwise convolution with no
// blockable neighbour is blocked anyway (isWorthBlockingAlone): past an 8x8
// window (measured to 7x7, below).
constexpr int64_t kMinDepthwiseTapsAlone = 65;

// Marks the blocked (packed) ops with the kind a profile names them by.
constexpr StringLiteral kBlockedKindConv = "conv2d";
constexpr StringLiteral kBlockedKindDepthwise = "depthwise_conv2d";

// Whether `value` is an f32 tensor whose dimensions are static but for
// the first, the batch of an NCHW value: blocking splits only the
// channels, so a dynamic batch stays an outer dimension of every layout
// (its size taken from an operand's, createEmptyLike). Blocked ops pass
// the layout on to neighbours of any shape (the propagation's).
bool isStaticPastBatchF32(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.getElementType().isF32() &&
         (type.getRank() == 0 ||
          llvm::none_of(type.getShape().drop_front(), ShapedType::isDynamic));
}

bool allStaticPastBatchF32(linalg::LinalgOp op) {
  return llvm::all_of(op->getOperands(), isStaticPastBatchF32);
}

// An empty tensor of `shape` whose dynamic dimensions are `like`'s: those
// in group `d` of `reassociation` (a split of `like`'s dimensions; one
// group per dimension when empty) take `like`'s dimension `d`.
Value createEmptyLike(OpBuilder &builder, Location loc, ArrayRef<int64_t> shape,
                      Type elementType, Value like,
                      ArrayRef<ReassociationIndices> reassociation = {}) {
  SmallVector<Value> dynamicSizes;
  for (auto [dim, size] : llvm::enumerate(shape)) {
    if (!ShapedType::isDynamic(size))
      continue;
    int64_t likeDim = dim;
    for (auto [group, indices] : llvm::enumerate(reassociation))
      if (llvm::is_contained(indices, int64_t(dim)))
        likeDim = group;
    dynamicSizes.push_back(tensor::DimOp::create(builder, loc, like, likeDim));
  }
  return tensor::EmptyOp::create(builder, loc, shape, elementType,
                                 dynamicSizes);
}

int64_t dimOf(Value value, unsigned dim) {
  return cast<RankedTensorType>(value.getType()).getDimSize(dim);
}

// Whether `permutation` keeps every dimension in place (or is empty).
bool isIdentityPermutation(ArrayRef<int64_t> permutation) {
  for (auto [index, dim] : llvm::enumerate(permutation))
    if (dim != int64_t(index))
      return false;
  return true;
}

// Whether `op` is a convolution this pass blocks: static f32 NCHW, output
// channels divisible by `block`.
bool isBlockableConv(Operation *op, int64_t block) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || !allStaticPastBatchF32(linalgOp))
    return false;
  // A grouped convolution, [N, G, C/G, H, W]: blocked per group, so both
  // its channels per group divide. Static only: upstream's propagation of
  // the packs through the group reshapes around it crashes on a dynamic
  // batch (resnext50's, in MLIR 22).
  if (auto grouped = dyn_cast<linalg::Conv2DNgchwGfchwOp>(op))
    return llvm::all_of(linalgOp->getOperandTypes(),
                        [](Type type) {
                          return cast<ShapedType>(type).hasStaticShape();
                        }) &&
           dimOf(grouped.getInputs()[0], 2) % block == 0 &&
           dimOf(grouped.getOutputs()[0], 2) % block == 0;
  if (!isa<linalg::Conv2DNchwFchwOp, linalg::DepthwiseConv2DNchwChwOp>(op))
    return false;
  return dimOf(linalgOp.getDpsInitOperand(0)->get(), 1) % block == 0;
}

// Whether `op` gains from the blocked layout even alone, paying a relayout
// on each side: a convolution whose filter has several taps, a depthwise
// one with a large filter.
bool isWorthBlockingAlone(linalg::LinalgOp op) {
  Value filter = op.getDpsInputOperand(1)->get();
  int64_t rank = cast<RankedTensorType>(filter.getType()).getRank();
  int64_t taps = dimOf(filter, rank - 2) * dimOf(filter, rank - 1);
  // A depthwise convolution does `taps` multiply-adds per element where a
  // convolution does `taps` x channels: in NCHW, rows of pixels as lanes
  // and its taps unrolled, it beats the two relayouts up to 7x7 (alone,
  // 96 channels at 56x56: 5x5 0.185 ms NCHW, 0.283 blocked; 7x7 0.347,
  // 0.378).
  if (isa<linalg::DepthwiseConv2DNchwChwOp>(op))
    return taps >= kMinDepthwiseTapsAlone;
  return isa<linalg::Conv2DNchwFchwOp, linalg::Conv2DNgchwGfchwOp>(op) &&
         taps > 1;
}

// Whether `op` splits NCHW channels into groups or merges them back
// ([N, C, H, W] <-> [N, G, C/G, H, W], around a grouped convolution), of
// static shapes (as the grouped convolutions blocked).
bool isChannelGroupReshape(Operation *op) {
  if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op) ||
      !cast<ShapedType>(op->getResult(0).getType()).hasStaticShape())
    return false;
  SmallVector<ReassociationIndices> reassociation;
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    reassociation = expand.getReassociationIndices();
  else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op))
    reassociation = collapse.getReassociationIndices();
  else
    return false;
  return reassociation ==
         SmallVector<ReassociationIndices>{{0}, {1, 2}, {3}, {4}};
}

// Whether `op` concatenates NCHW values along channels, each operand's
// channels a whole number of blocks: in the blocked layout that is a
// concatenation of the channel blocks.
bool isBlockableChannelConcat(Operation *op, int64_t block) {
  auto concat = dyn_cast<tensor::ConcatOp>(op);
  if (!concat || concat.getDim() != 1 || concat.getRank() != 4)
    return false;
  return llvm::all_of(concat.getInputs(), [&](Value input) {
    return isStaticPastBatchF32(input) && dimOf(input, 1) % block == 0;
  });
}

// Ops a blocked value passes through on its way between convolutions.
bool isLayoutNeutral(Operation *op, int64_t block) {
  if (isa<tensor::PadOp, linalg::PoolingNchwMaxOp, linalg::PoolingNchwSumOp>(
          op) ||
      isChannelGroupReshape(op) || isBlockableChannelConcat(op, block))
    return true;
  auto generic = dyn_cast<linalg::GenericOp>(op);
  return generic && linalg::isElementwise(generic) &&
         generic.getNumDpsInits() == 1;
}

// Whether another blockable convolution is reachable from `conv` through
// layout-neutral ops, upwards from its input or downwards from its result.
bool reachesBlockableConv(linalg::LinalgOp conv, int64_t block) {
  SmallVector<std::pair<Operation *, bool>> worklist;
  DenseSet<Operation *> seen{conv};
  auto visit = [&](Operation *op, bool upwards) {
    if (op && seen.insert(op).second)
      worklist.push_back({op, upwards});
  };
  visit(conv.getDpsInputOperand(0)->get().getDefiningOp(), true);
  for (Operation *user : conv->getUsers())
    visit(user, false);
  while (!worklist.empty()) {
    auto [op, upwards] = worklist.pop_back_val();
    if (isBlockableConv(op, block))
      return true;
    if (!isLayoutNeutral(op, block))
      continue;
    if (upwards) {
      for (Value operand : op->getOperands())
        visit(operand.getDefiningOp(), true);
      continue;
    }
    for (Operation *user : op->getUsers())
      visit(user, false);
  }
  return false;
}

// Rewrites `named` as a generic packed by `sizes` (one per loop, 0 for an
// unpacked loop); the packed op gets `kind`. Returns the packing.
FailureOr<linalg::PackResult> packNamedOp(RewriterBase &rewriter,
                                          linalg::LinalgOp named,
                                          ArrayRef<int64_t> sizes,
                                          StringRef kind) {
  rewriter.setInsertionPoint(named);
  FailureOr<linalg::GenericOp> generic =
      linalg::generalizeNamedOp(rewriter, named);
  if (failed(generic))
    return failure();
  SmallVector<OpFoldResult> packedSizes;
  for (int64_t size : sizes)
    packedSizes.push_back(rewriter.getIndexAttr(size));
  FailureOr<linalg::PackResult> packed =
      linalg::pack(rewriter, *generic, packedSizes);
  if (failed(packed))
    return failure();
  packed->packedLinalgOp->setAttr(kOpKindAttr, rewriter.getStringAttr(kind));
  return packed;
}

// Puts the filter's packed tiles of a blocked convolution as [.., ci, fi]:
// the output channels, the vector lanes, innermost. (The filter's pack is
// the one that tiles two dimensions.)
LogicalResult transposeFilterTiles(RewriterBase &rewriter,
                                   const linalg::PackResult &packed) {
  linalg::PackOp filterPack;
  for (linalg::PackOp pack : packed.packOps)
    if (pack.getInnerDimsPos().size() == 2)
      filterPack = pack;
  if (!filterPack)
    return failure();
  FailureOr<linalg::PackTransposeResult> transposed = linalg::packTranspose(
      rewriter, filterPack, packed.packedLinalgOp, linalg::UnPackOp(),
      /*outerPerm=*/{}, /*innerPerm=*/{1, 0});
  if (failed(transposed))
    return failure();
  transposed->transposedLinalgOp->setAttr(
      kOpKindAttr, rewriter.getStringAttr(kBlockedKindConv));
  return success();
}

// conv_2d_nchw_fchw (a blockable one), loops (n, f, oh, ow, c, kh, kw): the
// output channels by b, and the input channels too when they divide (the first
// layer's three do not: its input stays NCHW). The filter's packed tiles are
// put as [.., ci, fi]: the output channels, the vector lanes, innermost.
LogicalResult blockConv(RewriterBase &rewriter, linalg::Conv2DNchwFchwOp conv,
                        int64_t block) {
  bool blockInput = dimOf(conv.getInputs()[0], 1) % block == 0;
  SmallVector<int64_t> sizes{0, block, 0, 0, blockInput ? block : 0, 0, 0};
  FailureOr<linalg::PackResult> packed =
      packNamedOp(rewriter, conv, sizes, kBlockedKindConv);
  if (failed(packed))
    return failure();
  if (!blockInput)
    return success();
  return transposeFilterTiles(rewriter, *packed);
}

// conv_2d_ngchw_gfchw (a blockable one), loops (n, g, f, oh, ow, c, kh,
// kw): each group a blocked convolution, the filter's tiles [.., ci, fi]
// as blockConv puts them. The group's channel blocks are consecutive
// blocks of the ungrouped channels, so the reshapes around it move the
// packs and unpacks through to its neighbours.
LogicalResult blockGroupedConv(RewriterBase &rewriter,
                               linalg::Conv2DNgchwGfchwOp conv, int64_t block) {
  SmallVector<int64_t> sizes{0, 0, block, 0, 0, block, 0, 0};
  FailureOr<linalg::PackResult> packed =
      packNamedOp(rewriter, conv, sizes, kBlockedKindConv);
  if (failed(packed))
    return failure();
  return transposeFilterTiles(rewriter, *packed);
}

// depthwise_conv_2d_nchw_chw (a blockable one), loops (n, oh, ow, c, kh,
// kw).
LogicalResult blockDepthwise(RewriterBase &rewriter,
                             linalg::DepthwiseConv2DNchwChwOp conv,
                             int64_t block) {
  linalg::LinalgOp op = conv;
  // The channel loop is the one the filter's first dimension reads.
  AffineMap filterMap = op.getMatchingIndexingMap(op.getDpsInputOperand(1));
  unsigned channelLoop =
      cast<AffineDimExpr>(filterMap.getResult(0)).getPosition();
  SmallVector<int64_t> sizes(op.getNumLoops(), 0);
  sizes[channelLoop] = block;
  return packNamedOp(rewriter, conv, sizes, kBlockedKindDepthwise);
}

// The blocked value `value` stands for, when it is an unpack of the
// channel blocking (a pad in between is looked through).
bool isUnblocked(Value value, int64_t block) {
  if (auto pad = value.getDefiningOp<tensor::PadOp>())
    value = pad.getSource();
  auto unpack = value.getDefiningOp<linalg::UnPackOp>();
  return unpack && unpack.getInnerDimsPos() == ArrayRef<int64_t>{1} &&
         unpack.getStaticInnerTiles() == ArrayRef<int64_t>{block} &&
         isIdentityPermutation(unpack.getOuterDimsPerm());
}

// A pooling or elementwise op on NCHW values of which one comes from a
// blocked op is blocked too, so that the unpacks before it cancel against
// the packs that blocking it puts on its inputs. (Upstream's propagation
// moves an unpack below an elementwise op only when it is the op's one
// blocked input: a residual add of two convolutions has two.)
struct BlockConsumerOfBlocked : OpInterfaceRewritePattern<linalg::LinalgOp> {
  BlockConsumerOfBlocked(MLIRContext *context, int64_t block)
      : OpInterfaceRewritePattern<linalg::LinalgOp>(context), block(block) {}

  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (op->hasAttr(kOpKindAttr) || op.getNumDpsInits() != 1 ||
        !allStaticPastBatchF32(op))
      return failure();
    std::string kind;
    if (isa<linalg::PoolingNchwMaxOp>(op))
      kind = "maxpool";
    else if (isa<linalg::PoolingNchwSumOp>(op))
      kind = "sumpool";
    else if (!isa<linalg::GenericOp>(op) || !linalg::isElementwise(op))
      return failure();
    // The channel loop: the output's second dimension, NCHW.
    AffineMap outputMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (outputMap.getNumResults() != 4 || !outputMap.isProjectedPermutation())
      return failure();
    unsigned channelLoop =
        cast<AffineDimExpr>(outputMap.getResult(1)).getPosition();
    if (dimOf(op.getDpsInitOperand(0)->get(), 1) % block != 0)
      return failure();
    // Some input is blocked, reads channels as its second dimension, and
    // no input reads them elsewhere.
    bool blockedInput = false;
    for (OpOperand *input : op.getDpsInputOperands()) {
      AffineMap map = op.getMatchingIndexingMap(input);
      std::optional<unsigned> position =
          map.getResultPosition(getAffineDimExpr(channelLoop, getContext()));
      if (!position && map.isFunctionOfDim(channelLoop))
        return failure();
      if (position && *position == 1 && map.getNumResults() == 4 &&
          isUnblocked(input->get(), block))
        blockedInput = true;
    }
    if (!blockedInput)
      return failure();
    SmallVector<OpFoldResult> sizes(op.getNumLoops(), rewriter.getIndexAttr(0));
    sizes[channelLoop] = rewriter.getIndexAttr(block);
    linalg::LinalgOp generic = op;
    if (!isa<linalg::GenericOp>(op)) {
      FailureOr<linalg::GenericOp> generalized =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generalized))
        return failure();
      generic = *generalized;
    }
    FailureOr<linalg::PackResult> packed =
        linalg::pack(rewriter, generic, sizes);
    if (failed(packed))
      return failure();
    if (!kind.empty())
      packed->packedLinalgOp->setAttr(kOpKindAttr,
                                      rewriter.getStringAttr(kind));
    return success();
  }

  int64_t block;
};

// A channel concatenation of which some operand comes from a blocked op
// runs in the blocked layout: its operands are packed (the packs cancel
// against their unpacks), the blocks concatenated, the result unpacked
// for consumers that the propagation then moves it through. Inception
// modules, fire modules and dense blocks keep their layout this way.
struct BlockConcatOfBlocked : OpRewritePattern<tensor::ConcatOp> {
  BlockConcatOfBlocked(MLIRContext *context, int64_t block)
      : OpRewritePattern<tensor::ConcatOp>(context), block(block) {}

  LogicalResult matchAndRewrite(tensor::ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    if (!isBlockableChannelConcat(concat, block) ||
        llvm::none_of(concat.getInputs(),
                      [&](Value input) { return isUnblocked(input, block); }))
      return failure();
    Location loc = concat.getLoc();
    SmallVector<OpFoldResult> tiles{rewriter.getIndexAttr(block)};
    SmallVector<int64_t> innerDims{1};
    SmallVector<Value> blocked;
    for (Value input : concat.getInputs()) {
      Value dest = linalg::PackOp::createDestinationTensor(
          rewriter, loc, input, tiles, innerDims, /*outerDimsPerm=*/{});
      blocked.push_back(
          linalg::PackOp::create(rewriter, loc, input, dest, innerDims, tiles)
              .getResult());
    }
    Value joined = tensor::ConcatOp::create(rewriter, loc, /*dim=*/1, blocked);
    Value dest = createEmptyLike(
        rewriter, loc, concat.getResultType().getShape(),
        concat.getResultType().getElementType(), concat.getInputs().front());
    rewriter.replaceOpWithNewOp<linalg::UnPackOp>(concat, joined, dest,
                                                  innerDims, tiles);
    return success();
  }

  int64_t block;
};

// An unpacked shape with each tiled dimension split in two (outer, tile),
// and the permutation that takes that shape to the packed layout (the
// tiles moved innermost, in the order the pack lists them).
struct SplitTiles {
  SmallVector<int64_t> shape;
  SmallVector<ReassociationIndices> reassociation;
  SmallVector<int64_t> toPacked;
};

// The split of `unpacked` for a pack or unpack that keeps the outer order
// and whose static tiles divide their static dimensions (an untiled one
// may be dynamic); failure otherwise.
FailureOr<SplitTiles> splitTiledDims(RankedTensorType unpacked,
                                     ArrayRef<int64_t> outerPerm,
                                     ArrayRef<int64_t> innerPos,
                                     ArrayRef<int64_t> tiles) {
  if (!isIdentityPermutation(outerPerm))
    return failure();
  SplitTiles split;
  // Where each dimension's tile lands in the split shape.
  SmallVector<int64_t> tilePosition(unpacked.getRank(), -1);
  for (int64_t dim = 0; dim < unpacked.getRank(); ++dim) {
    int64_t size = unpacked.getDimSize(dim);
    ReassociationIndices group{int64_t(split.shape.size())};
    split.toPacked.push_back(split.shape.size());
    const auto *tile = llvm::find(innerPos, dim);
    if (tile == innerPos.end()) {
      split.shape.push_back(size);
    } else {
      int64_t tileSize = tiles[tile - innerPos.begin()];
      if (ShapedType::isDynamic(tileSize) || ShapedType::isDynamic(size) ||
          size % tileSize != 0)
        return failure();
      split.shape.push_back(size / tileSize);
      tilePosition[dim] = split.shape.size();
      group.push_back(split.shape.size());
      split.shape.push_back(tileSize);
    }
    split.reassociation.push_back(group);
  }
  for (int64_t dim : innerPos)
    split.toPacked.push_back(tilePosition[dim]);
  return split;
}

// The split of a pack's source by its tiles (a pack without padding).
FailureOr<SplitTiles> splitPackSource(linalg::PackOp pack) {
  if (pack.getPaddingValue())
    return failure();
  return splitTiledDims(pack.getSourceType(), pack.getOuterDimsPerm(),
                        pack.getInnerDimsPos(), pack.getStaticInnerTiles());
}

// The pack's source reshaped to `split` (its first half: no data moves).
Value expandPackSource(OpBuilder &builder, linalg::PackOp pack,
                       const SplitTiles &split) {
  return tensor::ExpandShapeOp::create(
      builder, pack.getLoc(),
      RankedTensorType::get(split.shape, pack.getSourceType().getElementType()),
      pack.getSource(), split.reassociation);
}

// A pack as the source split by its tiles, then transposed.
FailureOr<Value> lowerPackToTranspose(RewriterBase &rewriter,
                                      linalg::PackOp pack) {
  FailureOr<SplitTiles> split = splitPackSource(pack);
  if (failed(split))
    return failure();
  Value expanded = expandPackSource(rewriter, pack, *split);
  return linalg::TransposeOp::create(rewriter, pack.getLoc(), expanded,
                                     pack.getDest(), split->toPacked)
      ->getResult(0);
}

// The inverse: the tiles transposed back beside their outer dimensions,
// then each pair merged.
FailureOr<Value> lowerUnPackToTranspose(RewriterBase &rewriter,
                                        linalg::UnPackOp unpack) {
  RankedTensorType destType = unpack.getDestType();
  FailureOr<SplitTiles> split =
      splitTiledDims(destType, unpack.getOuterDimsPerm(),
                     unpack.getInnerDimsPos(), unpack.getStaticInnerTiles());
  if (failed(split))
    return failure();
  Location loc = unpack.getLoc();
  Value init =
      createEmptyLike(rewriter, loc, split->shape, destType.getElementType(),
                      unpack.getDest(), split->reassociation);
  auto transpose =
      linalg::TransposeOp::create(rewriter, loc, unpack.getSource(), init,
                                  invertPermutationVector(split->toPacked));
  return tensor::CollapseShapeOp::create(rewriter, loc, destType,
                                         transpose->getResult(0),
                                         split->reassociation)
      .getResult();
}

// A blocked direct convolution broadcasts its input one element at a time,
// so it reads any layout of it equally: an input that would be packed for
// it alone (the graph's NCHW input to a lone convolution) is read through
// the reshape that splits its channels into blocks instead (the pack's
// first half, splitTiledDims), in place, and its relayout (a pass over
// memory, 9% of a lone 3x3 convolution of 128 channels at 28x28) goes. A
// pad between them pads the reshaped input. The convolution's innermost
// reduction loop stays the channels within a block, so the reads of a
// tile's rows stay on one cache line each step.
struct ReadUnpackedConvInput : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp conv,
                                PatternRewriter &rewriter) const override {
    auto kind = conv->getAttrOfType<StringAttr>(kOpKindAttr);
    if (!kind || kind.getValue() != kBlockedKindConv ||
        conv.getNumDpsInputs() != 2)
      return failure();
    OpOperand *input = conv.getDpsInputOperand(0);
    Value value = input->get();
    auto pad = value.getDefiningOp<tensor::PadOp>();
    if (pad) {
      if (!pad->hasOneUse())
        return failure();
      value = pad.getSource();
    }
    auto pack = value.getDefiningOp<linalg::PackOp>();
    if (!pack || !value.hasOneUse())
      return failure();
    FailureOr<SplitTiles> split = splitPackSource(pack);
    if (failed(split))
      return failure();
    int64_t sourceRank = pack.getSourceType().getRank();
    // The packed dimension `d` is the split one `split->toPacked[d]`. A pad
    // of the packed value must leave its tiles alone.
    int64_t packedRank = split->toPacked.size();
    auto padsTiles = [&](ArrayRef<int64_t> amounts) {
      return llvm::any_of(amounts.drop_front(sourceRank),
                          [](int64_t amount) { return amount != 0; });
    };
    if (pad &&
        (padsTiles(pad.getStaticLow()) || padsTiles(pad.getStaticHigh()) ||
         llvm::is_contained(pad.getStaticLow(), ShapedType::kDynamic) ||
         llvm::is_contained(pad.getStaticHigh(), ShapedType::kDynamic) ||
         !pad.getConstantPaddingValue()))
      return failure();
    AffineMap map = conv.getMatchingIndexingMap(input);
    if (map.getNumResults() != packedRank)
      return failure();

    Location loc = conv.getLoc();
    rewriter.setInsertionPoint(conv);
    Value unpacked = expandPackSource(rewriter, pack, *split);
    if (pad) {
      SmallVector<OpFoldResult> low(packedRank), high(packedRank);
      for (auto [d, position] : llvm::enumerate(split->toPacked)) {
        low[position] = rewriter.getIndexAttr(pad.getStaticLow()[d]);
        high[position] = rewriter.getIndexAttr(pad.getStaticHigh()[d]);
      }
      unpacked = tensor::PadOp::create(rewriter, loc, Type(), unpacked, low,
                                       high, pad.getConstantPaddingValue())
                     .getResult();
    }
    // The convolution reads the split layout by the same indices, placed.
    SmallVector<AffineExpr> results(packedRank);
    for (auto [d, position] : llvm::enumerate(split->toPacked))
      results[position] = map.getResult(d);
    SmallVector<AffineMap> maps = conv.getIndexingMapsArray();
    maps[input->getOperandNumber()] = AffineMap::get(
        map.getNumDims(), map.getNumSymbols(), results, rewriter.getContext());
    rewriter.modifyOpInPlace(conv, [&] {
      input->set(unpacked);
      conv.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    return success();
  }
};

// The mirror image for the output: a blocked direct convolution whose
// result only leaves the blocked layout (the graph's NCHW output, a lone
// convolution) writes the split layout, [N, C/16, 16, H, W], itself: its
// register tiles transpose their accumulators before they store them
// (Codegen/TransposedRowStores.h), and the unpack (a pass over the output,
// 14% of a lone 7x7 stem's time) goes. Only where the convolution starts
// from a fill, which is then a fill of the split layout.
struct WriteUnpackedConvOutput : OpRewritePattern<linalg::UnPackOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::UnPackOp unpack,
                                PatternRewriter &rewriter) const override {
    auto conv = unpack.getSource().getDefiningOp<linalg::GenericOp>();
    if (!conv || !conv->hasOneUse() || conv.getNumDpsInits() != 1)
      return failure();
    auto kind = conv->getAttrOfType<StringAttr>(kOpKindAttr);
    if (!kind || kind.getValue() != kBlockedKindConv)
      return failure();
    auto fill =
        conv.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
    if (!fill)
      return failure();
    FailureOr<SplitTiles> split =
        splitTiledDims(unpack.getDestType(), unpack.getOuterDimsPerm(),
                       unpack.getInnerDimsPos(), unpack.getStaticInnerTiles());
    if (failed(split))
      return failure();
    AffineMap map = conv.getMatchingIndexingMap(conv.getDpsInitOperand(0));
    if (map.getNumResults() != int64_t(split->toPacked.size()))
      return failure();

    Location loc = conv.getLoc();
    rewriter.setInsertionPoint(conv);
    Type elementType = unpack.getDestType().getElementType();
    Value empty = createEmptyLike(rewriter, loc, split->shape, elementType,
                                  unpack.getDest(), split->reassociation);
    Value init = linalg::FillOp::create(rewriter, loc, fill.getInputs(), empty)
                     ->getResult(0);
    // The convolution writes the split layout by the same indices, placed.
    SmallVector<AffineExpr> results(map.getNumResults());
    for (auto [d, position] : llvm::enumerate(split->toPacked))
      results[position] = map.getResult(d);
    SmallVector<AffineMap> maps = conv.getIndexingMapsArray();
    maps.back() = AffineMap::get(map.getNumDims(), map.getNumSymbols(), results,
                                 rewriter.getContext());
    auto splitConv = linalg::GenericOp::create(
        rewriter, loc, init.getType(), conv.getInputs(), ValueRange{init}, maps,
        conv.getIteratorTypesArray());
    rewriter.inlineRegionBefore(conv.getRegion(), splitConv.getRegion(),
                                splitConv.getRegion().begin());
    splitConv->setAttr(kOpKindAttr, kind);
    rewriter.replaceOpWithNewOp<tensor::CollapseShapeOp>(
        unpack, unpack.getDestType(), splitConv->getResult(0),
        split->reassociation);
    rewriter.eraseOp(conv);
    return success();
  }
};

struct BlockChannelsPass
    : public impl::BlockChannelsPassBase<BlockChannelsPass> {
  using BlockChannelsPassBase::BlockChannelsPassBase;

  void runOnOperation() override {
    if (block < 2)
      return;
    func::FuncOp func = getOperation();
    MLIRContext *context = &getContext();
    IRRewriter rewriter(context);
    SmallVector<linalg::LinalgOp> convs;
    func.walk([&](linalg::LinalgOp op) {
      if (isBlockableConv(op, block))
        convs.push_back(op);
    });
    // A convolution alone pays a layout change on both sides for its own
    // gain: convolutions that reach another one (through elementwise ops,
    // pads and pooling) change layout, and lone ones whose filter has
    // several taps (a lone 3x3 convolution 2.7 -> 2.2 ms with its two
    // transposes, a 7x7 stem 3.0 -> 2.3; a lone 1x1 or 3x3 depthwise one
    // would lose: 0.91 -> 1.22 ms, 0.19 -> 0.32).
    SmallVector<linalg::LinalgOp> chained;
    for (linalg::LinalgOp op : convs)
      if (reachesBlockableConv(op, block) || isWorthBlockingAlone(op))
        chained.push_back(op);
    for (linalg::LinalgOp op : chained) {
      if (auto conv = dyn_cast<linalg::Conv2DNchwFchwOp>(*op))
        (void)blockConv(rewriter, conv, block);
      else if (auto dw = dyn_cast<linalg::DepthwiseConv2DNchwChwOp>(*op))
        (void)blockDepthwise(rewriter, dw, block);
      else if (auto grouped = dyn_cast<linalg::Conv2DNgchwGfchwOp>(*op))
        (void)blockGroupedConv(rewriter, grouped, block);
    }

    RewritePatternSet patterns(context);
    // An unpack is not pushed down through a pad of a dynamic shape, nor a
    // reshape that splits or joins a dynamic dim: upstream's patterns crash
    // on those in MLIR 22 (resnext50's unpacked 1x1 convolution, padded and
    // split into groups for the next one, over a dynamic batch). A reshape
    // that leaves a dynamic batch whole is fine (an average pool's view of
    // a blocked map over a dynamic batch). Packs still move up through all.
    linalg::populateDataLayoutPropagationPatterns(
        patterns, [](OpOperand *operand) {
          Operation *owner = operand->getOwner();
          if (auto expand = dyn_cast<tensor::ExpandShapeOp>(owner))
            return leavesDynamicDimsWhole(expand);
          if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(owner))
            return leavesDynamicDimsWhole(collapse);
          return !isa<tensor::PadOp>(owner) ||
                 cast<ShapedType>(owner->getResult(0).getType())
                     .hasStaticShape();
        });
    linalg::populateSimplifyPackAndUnpackPatterns(patterns);
    linalg::PackOp::getCanonicalizationPatterns(patterns, context);
    linalg::UnPackOp::getCanonicalizationPatterns(patterns, context);
    linalg::FillOp::getCanonicalizationPatterns(patterns, context);
    tensor::PadOp::getCanonicalizationPatterns(patterns, context);
    tensor::EmptyOp::getCanonicalizationPatterns(patterns, context);
    linalg::populateFoldPackUnpackIntoTensorEmptyPatterns(patterns);
    populateFoldPackOfConstantPatterns(patterns);
    patterns.add<BlockConsumerOfBlocked, BlockConcatOfBlocked>(context, block);
    if (failed(applyPatternsGreedily(func, std::move(patterns))))
      return signalPassFailure();

    {
      RewritePatternSet unpacked(context);
      unpacked.add<ReadUnpackedConvInput, WriteUnpackedConvOutput>(context);
      if (failed(applyPatternsGreedily(func, std::move(unpacked))))
        return signalPassFailure();
    }

    // The layout changes left run as transposes.
    SmallVector<Operation *> relayouts;
    func.walk([&](Operation *op) {
      if (isa<linalg::PackOp, linalg::UnPackOp>(op))
        relayouts.push_back(op);
    });
    for (Operation *op : relayouts) {
      rewriter.setInsertionPoint(op);
      FailureOr<Value> lowered =
          isa<linalg::PackOp>(op)
              ? lowerPackToTranspose(rewriter, cast<linalg::PackOp>(op))
              : lowerUnPackToTranspose(rewriter, cast<linalg::UnPackOp>(op));
      if (failed(lowered)) {
        op->emitOpError("could not be lowered to a transpose");
        return signalPassFailure();
      }
      rewriter.replaceOp(op, *lowered);
    }
    // The sizes of a dynamic batch read off a relayout's result are read
    // off its source, so that no relayout stays for its sizes alone.
    {
      RewritePatternSet dims(context);
      memref::populateResolveRankedShapedTypeResultDimsPatterns(dims);
      tensor::DimOp::getCanonicalizationPatterns(dims, context);
      if (failed(applyPatternsGreedily(func, std::move(dims))))
        return signalPassFailure();
    }
    // A value packed for several consumers is packed once.
    DominanceInfo dominance(func);
    eliminateCommonSubExpressions(rewriter, dominance, func);
  }
};

} // namespace
} // namespace strata
