//===- CacheTileEpilogues.cpp - epilogues run per cache tile --------------===//

#include "strata/compiler/Codegen/CacheTileEpilogues.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace strata {

linalg::GenericOp findCacheTileEpilogue(linalg::LinalgOp op,
                                        const ContractionTiles &tiles) {
  if (op.getNumDpsInits() != 1 || !op.hasPureBufferSemantics())
    return nullptr;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (auto [loop, type] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (type != utils::IteratorType::reduction)
      continue;
    int64_t cacheTile = tiles.cache[loop];
    if (ShapedType::isDynamic(ranges[loop]) ||
        (cacheTile != 0 && cacheTile < ranges[loop]))
      return nullptr;
  }
  Value output = op.getDpsInitOperand(0)->get();
  Operation *next = op->getNextNode();
  while (next && isMemoryEffectFree(next))
    next = next->getNextNode();
  auto epilogue = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!epilogue || !epilogue.hasPureBufferSemantics() ||
      epilogue.getNumDpsInits() != 1 ||
      epilogue.getDpsInitOperand(0)->get() != output ||
      epilogue.getNumParallelLoops() != epilogue.getNumLoops())
    return nullptr;
  AffineMap outputMap =
      epilogue.getMatchingIndexingMap(epilogue.getDpsInitOperand(0));
  if (!outputMap.isIdentity())
    return nullptr;
  bool readsOutput = false;
  for (OpOperand *input : epilogue.getDpsInputOperands()) {
    AffineMap map = epilogue.getMatchingIndexingMap(input);
    if (!map.isProjectedPermutation() ||
        !isa<MemRefType>(input->get().getType()))
      return nullptr;
    if (input->get() == output) {
      if (map != outputMap)
        return nullptr;
      readsOutput = true;
    }
  }
  return readsOutput ? epilogue : nullptr;
}

LogicalResult applyEpilogueToTile(RewriterBase &rewriter,
                                  linalg::GenericOp epilogue,
                                  Value tileOutput) {
  Value output = epilogue.getDpsInitOperand(0)->get();
  auto outputType = cast<MemRefType>(output.getType());
  unsigned rank = outputType.getRank();
  Location loc = epilogue.getLoc();
  // The tile's offsets in the output: the sum over its subview chain.
  SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
  Value view = tileOutput;
  while (view != output) {
    auto subview = view.getDefiningOp<memref::SubViewOp>();
    if (!subview || subview.getSourceType().getRank() != rank ||
        cast<MemRefType>(subview.getType()).getRank() != rank ||
        llvm::any_of(subview.getStaticStrides(),
                     [](int64_t stride) { return stride != 1; }))
      return failure();
    AffineExpr a, b;
    bindDims(rewriter.getContext(), a, b);
    for (auto [dim, offset] : llvm::enumerate(subview.getMixedOffsets()))
      offsets[dim] = affine::makeComposedFoldedAffineApply(
          rewriter, loc, a + b, {offsets[dim], offset});
    view = subview.getSource();
  }
  SmallVector<OpFoldResult> sizes =
      memref::getMixedSizes(rewriter, loc, tileOutput);
  // Each operand's part: its map picks the output dimensions it reads.
  SmallVector<Value> operands;
  for (OpOperand &operand : epilogue->getOpOperands()) {
    if (operand.get() == output) {
      operands.push_back(tileOutput);
      continue;
    }
    AffineMap map = epilogue.getMatchingIndexingMap(&operand);
    SmallVector<OpFoldResult> partOffsets, partSizes;
    for (AffineExpr result : map.getResults()) {
      unsigned dim = cast<AffineDimExpr>(result).getPosition();
      partOffsets.push_back(offsets[dim]);
      partSizes.push_back(sizes[dim]);
    }
    SmallVector<OpFoldResult> strides(map.getNumResults(),
                                      rewriter.getIndexAttr(1));
    operands.push_back(memref::SubViewOp::create(
        rewriter, loc, operand.get(), partOffsets, partSizes, strides));
  }
  Operation *clone = rewriter.clone(*epilogue);
  clone->setOperands(operands);
  return success();
}

} // namespace strata
