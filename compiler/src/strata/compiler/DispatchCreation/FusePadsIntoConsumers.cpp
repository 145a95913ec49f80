//===- FusePadsIntoConsumers.cpp - small padded inputs padded in place ----===//
//
// A pad that no dispatch can write padded (of a function argument, or of a
// value with other uses) runs as a dispatch of its own: a pass over memory
// that writes the padded copy, which the consumer then reads back. Two
// kinds of consumer take the pad into their own region instead, one
// dispatch and one pass over memory fewer (a lone 3x3 depthwise
// convolution of a 112x112 map spent 45% of its time in its pad dispatch):
//
// - a broadcast kernel (a depthwise or direct convolution) whose register
//   tiles read the padded operand, as lanes or one element per row, reads
//   its source in place, the lanes masked (an element's multiply-adds
//   skipped) where they fall in the padding (Codegen/PaddedSources.h): the
//   padded tensor is never built, so the pad stays whole, outside the
//   workgroup loop, however the workgroups split (marked
//   `kPadReadInPlaceAttr`; codegen fails rather than build it);
// - any other consumer whose workgroups split along a dimension the pad
//   does not pad (a pooling split by channels) pads its own slice into a
//   stack temporary, in cache, right before it reads it, where that slice
//   is small.
//
// The workgroup split is the one ConfigureExecutables will choose
// (`chooseDispatchWorkgroupTiling`); the pad's slice in every workgroup
// then has a static shape.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/ContractionStrategy.h"
#include "strata/compiler/Codegen/PaddedSources.h"
#include "strata/compiler/Codegen/WorkgroupTiling.h"
#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace strata {
#define GEN_PASS_DEF_FUSEPADSINTOCONSUMERSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// The most bytes of padded input one workgroup pads for itself: it lives
// on the workgroup's stack and must stay in L1 while the consumer reads it
// (one 112x112 channel plane padded to 114x114, 51 KiB, ran no faster
// than its pad dispatch).
constexpr int64_t kMaxFusedPadTileBytes = 32 * 1024;

// Whether `op` computes nothing per element (what a pad region holds next
// to its pad and copy).
bool isTrivialOp(Operation &op) {
  if (isa<tensor::EmptyOp, arith::ConstantOp>(op))
    return true;
  return op.getNumRegions() == 0 && isMemoryEffectFree(&op) &&
         llvm::none_of(op.getResultTypes(), llvm::IsaPred<ShapedType>);
}

// Whether `op` copies its only input unchanged (FormDispatchRegions pads a
// copy of a value it cannot write padded).
bool isPlainCopy(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || !generic.hasPureTensorSemantics() ||
      generic.getNumParallelLoops() != generic.getNumLoops() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return false;
  Block *body = generic.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  return body->getOperations().size() == 1 &&
         yield.getOperand(0) == body->getArgument(0);
}

// The constant pad `region` consists of (with, at most, a plain copy of
// the pad's source and trivial ops) and returns alone, or null.
tensor::PadOp getPadOnlyRegion(flow::DispatchRegionOp region) {
  Block &body = region.getBody().front();
  Operation *terminator = body.getTerminator();
  if (terminator->getNumOperands() != 1)
    return nullptr;
  auto pad = terminator->getOperand(0).getDefiningOp<tensor::PadOp>();
  if (!pad || !isConstantPadOfStaticAmounts(pad))
    return nullptr;
  Operation *copy = pad.getSource().getDefiningOp();
  for (Operation &op : body.without_terminator()) {
    if (&op == pad.getOperation() || isTrivialOp(op))
      continue;
    if (&op != copy || !isPlainCopy(copy) || !copy->hasOneUse())
      return nullptr;
  }
  return pad;
}

// The value the pad pads: the copy's input when the region copies first.
Value getPaddedValue(tensor::PadOp pad) {
  Operation *source = pad.getSource().getDefiningOp();
  if (source && isPlainCopy(source))
    return source->getOperand(0);
  return pad.getSource();
}

int64_t getByteSize(RankedTensorType type) {
  return type.getNumElements() *
         llvm::divideCeil(type.getElementTypeBitWidth(), 8);
}

enum class PadFusion { none, readInPlace, perWorkgroup };

// Whether the register tiles of `kernel` (`op`'s), which read an input
// one element per step by `map` (a direct convolution's), loop innermost
// over a channel of it: a loop it reads as a plain dimension, not a tap's
// `oh + kh`. A border tile's checks of the element's position then stay
// the same along that loop and are hoisted out of it. An NCHW stem's taps
// loop innermost, its elements checked at every one: 1.52 -> 1.64 ms, pad
// dispatch included.
bool hasChannelsInnermost(linalg::LinalgOp op, const ContractionTiles &kernel,
                          AffineMap map) {
  std::optional<unsigned> innermost;
  for (unsigned loop : getRegisterLoopOrder(kernel, op.getNumLoops()))
    if (kernel.registers[loop] != 0)
      innermost = loop;
  return innermost &&
         llvm::is_contained(map.getResults(),
                            getAffineDimExpr(*innermost, op.getContext()));
}

// How `pad`, read by `reader` through `operand`, joins `region`: read in
// place by a broadcast kernel, or, when `reader` is the region's root,
// padded by each workgroup for its own slice when the split loop reads the
// padded operand along one unpadded dimension only and each workgroup's
// slice is small.
PadFusion choosePadFusion(tensor::PadOp pad, linalg::LinalgOp reader,
                          bool isRoot, OpOperand &operand,
                          flow::DispatchRegionOp region, unsigned vectorBits) {
  std::optional<ContractionTiles> kernel =
      chooseContractionTiles(reader, vectorBits);
  AffineMap map = reader.getMatchingIndexingMap(&operand);
  // (Over a dynamic batch too: the padded dims are static, so are the
  // masks of lanes read through them.)
  if (kernel && kernel->broadcast &&
      pad.getSourceType().getElementType().isF32() &&
      (map.isFunctionOfDim(kernel->vectorLoop) ||
       hasChannelsInnermost(reader, *kernel, map)))
    return PadFusion::readInPlace;
  // A workgroup pads its own slice into a static temporary only.
  if (!isRoot || !pad.getResultType().hasStaticShape())
    return PadFusion::none;
  RankedTensorType paddedType = pad.getResultType();
  int64_t bytes = getByteSize(paddedType);
  std::optional<WorkgroupTiling> tiling = chooseDispatchWorkgroupTiling(
      region.getBody().front().getTerminator(), vectorBits);
  if (!tiling || tiling->count < 2)
    return bytes <= kMaxFusedPadTileBytes ? PadFusion::perWorkgroup
                                          : PadFusion::none;
  ArrayRef<int64_t> low = pad.getStaticLow(), high = pad.getStaticHigh();
  std::optional<unsigned> splitDim;
  for (auto [dim, expr] : llvm::enumerate(map.getResults())) {
    if (!expr.isFunctionOfDim(tiling->loop))
      continue;
    auto plain = dyn_cast<AffineDimExpr>(expr);
    if (splitDim || !plain || low[dim] != 0 || high[dim] != 0)
      return PadFusion::none;
    splitDim = dim;
  }
  // A workgroup that reads the whole operand would pad all of it.
  if (!splitDim)
    return PadFusion::none;
  int64_t size = paddedType.getDimSize(*splitDim);
  return bytes / size * std::min(tiling->tileSize, size) <=
                 kMaxFusedPadTileBytes
             ? PadFusion::perWorkgroup
             : PadFusion::none;
}

// Moves the pad of `producer` into `consumer`, which is its only reader.
void fusePad(tensor::PadOp pad, flow::DispatchRegionOp producer,
             flow::DispatchRegionOp consumer, PadFusion fusion) {
  Block &body = consumer.getBody().front();
  OpBuilder builder(&body, body.begin());
  IRMapping mapping;
  mapping.map(pad.getSource(), getPaddedValue(pad));
  // The padding value, when computed in the producer region.
  SetVector<Value> padOperands;
  getUsedValuesDefinedAbove(pad.getRegion(), padOperands);
  for (Value value : padOperands)
    if (Operation *def = value.getDefiningOp();
        def && producer->isProperAncestor(def))
      mapping.map(value, builder.clone(*def)->getResult(0));
  Operation *clone = builder.clone(*pad, mapping);
  if (fusion == PadFusion::readInPlace)
    clone->setAttr(kPadReadInPlaceAttr, builder.getUnitAttr());
  producer->getResult(0).replaceAllUsesWith(clone->getResult(0));
  producer.erase();
}

struct FusePadsIntoConsumersPass
    : public impl::FusePadsIntoConsumersPassBase<FusePadsIntoConsumersPass> {
  using FusePadsIntoConsumersPassBase::FusePadsIntoConsumersPassBase;

  void runOnOperation() override {
    if (vectorBits == 0)
      return;
    SmallVector<flow::DispatchRegionOp> consumers;
    getOperation().walk(
        [&](flow::DispatchRegionOp region) { consumers.push_back(region); });
    for (flow::DispatchRegionOp consumer : consumers) {
      linalg::LinalgOp root =
          findDispatchRoot(consumer.getBody().front().getTerminator());
      if (!root)
        continue;
      // A kernel under an elementwise epilogue (a convolution's bias and
      // ReLU) reads its own inputs.
      SmallVector<linalg::LinalgOp> readers = {root};
      for (Value input : root.getDpsInputs())
        if (auto kernel = input.getDefiningOp<linalg::LinalgOp>();
            kernel && kernel->getNumResults() == 1 &&
            consumer->isProperAncestor(kernel))
          readers.push_back(kernel);
      for (linalg::LinalgOp reader : readers) {
        for (OpOperand *operand : reader.getDpsInputOperands()) {
          auto producer =
              operand->get().getDefiningOp<flow::DispatchRegionOp>();
          if (!producer || producer->getNumResults() != 1 ||
              !operand->get().hasOneUse())
            continue;
          tensor::PadOp pad = getPadOnlyRegion(producer);
          if (!pad)
            continue;
          PadFusion fusion = choosePadFusion(pad, reader, reader == root,
                                             *operand, consumer, vectorBits);
          if (fusion != PadFusion::none)
            fusePad(pad, producer, consumer, fusion);
        }
      }
    }
  }
};

} // namespace
} // namespace strata
