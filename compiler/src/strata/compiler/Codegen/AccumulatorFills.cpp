//===- AccumulatorFills.cpp - fills folded into register accumulators -----===//

#include "strata/compiler/Codegen/AccumulatorFills.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace strata {
namespace {

// The constant a fill of `op`'s only output writes, if `op` is one.
FloatAttr getFillValue(Operation *op) {
  Value value;
  if (auto fill = dyn_cast<linalg::FillOp>(op)) {
    value = fill.getInputs().front();
  } else if (auto generic = dyn_cast<linalg::GenericOp>(op)) {
    // Generalized fills: the value yielded, or a scalar input yielded.
    if (generic.getNumDpsInits() != 1 || generic.getNumReductionLoops() != 0 ||
        !generic.getIndexingMapsArray().back().isIdentity())
      return {};
    Block &body = generic.getRegion().front();
    if (body.getOperations().size() != 1)
      return {};
    value = cast<linalg::YieldOp>(body.getTerminator()).getOperand(0);
    if (auto argument = dyn_cast<BlockArgument>(value)) {
      if (argument.getOwner() != &body ||
          argument.getArgNumber() >= generic.getNumDpsInputs())
        return {};
      value = generic.getDpsInputOperand(argument.getArgNumber())->get();
      if (isa<ShapedType>(value.getType()))
        return {};
    }
  } else {
    return {};
  }
  FloatAttr constant;
  if (!matchPattern(value, m_Constant(&constant)))
    return {};
  return constant;
}

// The nearest enclosing register reduction loop of `op`, or null.
scf::ForOp getRegisterReductionLoop(Operation *op) {
  // The outermost: a broadcast kernel nests several.
  scf::ForOp outermost;
  for (auto loop = op->getParentOfType<scf::ForOp>(); loop;
       loop = loop->getParentOfType<scf::ForOp>())
    if (loop->hasAttr(kRegisterReductionLoopMarker))
      outermost = loop;
  return outermost;
}

} // namespace

std::optional<AccumulatorFill>
findAccumulatorFill(linalg::LinalgOp op, const ContractionTiles &tiles) {
  if (op.getNumDpsInits() != 1 || !op.hasPureBufferSemantics())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (auto [loop, type] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (type != utils::IteratorType::reduction)
      continue;
    // A broadcast kernel's register tile runs every reduction loop.
    if (loop != tiles.reductionLoop && !tiles.broadcast) {
      if (ranges[loop] != 1)
        return std::nullopt;
      continue;
    }
    int64_t cacheTile = tiles.cache[loop];
    if (ShapedType::isDynamic(ranges[loop]) ||
        (cacheTile != 0 && cacheTile < ranges[loop]))
      return std::nullopt;
  }
  Value output = op.getDpsInitOperand(0)->get();
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (isMemoryEffectFree(prev))
      continue;
    auto fill = dyn_cast<linalg::LinalgOp>(prev);
    if (!fill || fill.getNumDpsInits() != 1 ||
        fill.getDpsInitOperand(0)->get() != output)
      return std::nullopt;
    FloatAttr value = getFillValue(prev);
    if (!value)
      return std::nullopt;
    return AccumulatorFill{prev, value};
  }
  return std::nullopt;
}

void foldAccumulatorFills(
    func::FuncOp func, ArrayRef<std::optional<AccumulatorFill>> fills,
    ArrayRef<std::pair<linalg::LinalgOp, unsigned>> unvectorized) {
  SmallVector<bool> foldable;
  for (const std::optional<AccumulatorFill> &fill : fills)
    foldable.push_back(fill.has_value());
  // A read still inside its reduction loop (not hoisted) runs every step.
  SmallVector<std::pair<vector::TransferReadOp, unsigned>> reads;
  func.walk([&](vector::TransferReadOp read) {
    auto kernel = read->getAttrOfType<IntegerAttr>(kAccumulatorReadMarker);
    if (!kernel)
      return;
    read->removeAttr(kAccumulatorReadMarker);
    unsigned index = kernel.getInt();
    if (getRegisterReductionLoop(read))
      foldable[index] = false;
    else
      reads.push_back({read, index});
  });
  // Tiles left as loops fill their own output tile before their reduction
  // loop, which needs that tile's view defined outside it.
  SmallVector<std::tuple<Operation *, linalg::LinalgOp, unsigned>> tileFills;
  for (auto [op, index] : unvectorized) {
    if (!fills[index])
      continue;
    Operation *insertionPoint = op;
    if (scf::ForOp loop = getRegisterReductionLoop(op))
      insertionPoint = loop;
    Value output = op.getDpsInitOperand(0)->get();
    Operation *def = output.getDefiningOp();
    if (insertionPoint != op && def && insertionPoint->isAncestor(def))
      foldable[index] = false;
    else
      tileFills.push_back({insertionPoint, op, index});
  }
  func.walk(
      [](scf::ForOp loop) { loop->removeAttr(kRegisterReductionLoopMarker); });

  IRRewriter rewriter(func.getContext());
  for (auto [read, index] : reads) {
    if (!foldable[index])
      continue;
    rewriter.setInsertionPoint(read);
    auto splat = DenseElementsAttr::get(read.getVectorType(),
                                        fills[index]->value.getValue());
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(read, splat);
  }
  for (auto [insertionPoint, op, index] : tileFills) {
    if (!foldable[index])
      continue;
    rewriter.setInsertionPoint(insertionPoint);
    Value value =
        arith::ConstantOp::create(rewriter, op.getLoc(), fills[index]->value);
    linalg::FillOp::create(rewriter, op.getLoc(), value,
                           op.getDpsInitOperand(0)->get());
  }
  for (auto [index, fill] : llvm::enumerate(fills))
    if (fill && foldable[index])
      rewriter.eraseOp(fill->fill);
}

} // namespace strata
