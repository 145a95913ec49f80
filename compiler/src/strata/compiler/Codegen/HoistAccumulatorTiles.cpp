//===- HoistAccumulatorTiles.cpp - accumulators carried in registers ------===//
#include "strata/compiler/Codegen/HoistAccumulatorTiles.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/CSE.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

using namespace mlir;

namespace strata {
namespace {

// The buffer `memref` is a view of, when that buffer has no other alias in
// the function: a binding (bindings are distinct, LowerExecutables marks
// them noalias) or a temporary.
Value getDistinctRootBuffer(Value memref) {
  while (auto view = memref.getDefiningOp<ViewLikeOpInterface>())
    memref = view.getViewSource();
  if (auto arg = dyn_cast<BlockArgument>(memref))
    return isa<FunctionOpInterface>(arg.getOwner()->getParentOp()) ? memref
                                                                   : Value();
  if (memref.getDefiningOp<memref::AllocaOp>() ||
      memref.getDefiningOp<memref::AllocOp>())
    return memref;
  return Value();
}

// A view as a box in the view it was carved from: static-offset, unit-
// stride, rank-preserving subviews are looked through (their offsets add
// up); the first other view or buffer is the base.
struct ViewBox {
  Value base;
  SmallVector<int64_t> offsets, sizes;
};

std::optional<ViewBox> getViewBox(Value view) {
  auto subview = view.getDefiningOp<memref::SubViewOp>();
  if (!subview)
    return std::nullopt;
  ViewBox box;
  box.sizes = llvm::to_vector(subview.getStaticSizes());
  box.offsets.assign(box.sizes.size(), 0);
  while (subview && !ShapedType::isDynamicShape(subview.getStaticOffsets()) &&
         !ShapedType::isDynamicShape(subview.getStaticSizes()) &&
         llvm::all_of(subview.getStaticStrides(),
                      [](int64_t s) { return s == 1; }) &&
         subview.getSourceType().getRank() == subview.getType().getRank()) {
    for (auto [total, offset] :
         llvm::zip(box.offsets, subview.getStaticOffsets()))
      total += offset;
    view = subview.getSource();
    subview = view.getDefiningOp<memref::SubViewOp>();
  }
  box.base = view;
  if (ShapedType::isDynamicShape(box.sizes))
    return std::nullopt;
  return box;
}

// Whether views `a` and `b` are carved from one view at static offsets
// that do not overlap (the power-of-two parts of one row of lanes).
bool areDisjointSubviews(Value a, Value b) {
  std::optional<ViewBox> boxA = getViewBox(a), boxB = getViewBox(b);
  if (!boxA || !boxB || boxA->base != boxB->base ||
      boxA->offsets.size() != boxB->offsets.size())
    return false;
  for (size_t i = 0; i < boxA->offsets.size(); ++i)
    if (boxA->offsets[i] + boxA->sizes[i] <= boxB->offsets[i] ||
        boxB->offsets[i] + boxB->sizes[i] <= boxA->offsets[i])
      return true;
  return false;
}

// Whether an op in `loop` other than `read` and `write` accesses (a view
// of) `root`, other than vector transfers on a provably disjoint view.
bool othersAccess(scf::ForOp loop, Value root, vector::TransferReadOp read,
                  Operation *write) {
  WalkResult result = loop.getBody()->walk([&](Operation *op) {
    if (op == read || op == write || isa<ViewLikeOpInterface>(op))
      return WalkResult::advance();
    if (auto transfer = dyn_cast<VectorTransferOpInterface>(op);
        transfer && areDisjointSubviews(transfer.getBase(), read.getBase()))
      return WalkResult::advance();
    for (Value operand : op->getOperands())
      if (isa<MemRefType>(operand.getType()) &&
          getDistinctRootBuffer(operand) == root)
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return result.wasInterrupted();
}

// Moves a read of an accumulator tile at the loop's start and the write of
// its new value at the loop's end out of `loop`: the value is carried in
// registers. Only where nothing else in the loop touches that buffer.
// (Upstream's hoistRedundantVectorTransfers refuses transfers on views,
// and buffers with views anywhere in the function.) Returns the new loop,
// or null when there was nothing to hoist.
scf::ForOp hoistAccumulatorTile(RewriterBase &rewriter, scf::ForOp loop) {
  for (Operation &op : loop.getBody()->without_terminator()) {
    auto read = dyn_cast<vector::TransferReadOp>(op);
    if (!read || read.getMask() ||
        !llvm::all_of(read->getOperands(),
                      [&](Value v) { return loop.isDefinedOutsideOfLoop(v); }))
      continue;
    Value root = getDistinctRootBuffer(read.getBase());
    if (!root)
      continue;
    vector::TransferWriteOp write;
    for (Operation *user : read.getBase().getUsers()) {
      auto candidate = dyn_cast<vector::TransferWriteOp>(user);
      if (candidate && candidate->getBlock() == loop.getBody() &&
          !candidate.getMask() && candidate.getIndices() == read.getIndices() &&
          candidate.getVectorType() == read.getVectorType() &&
          candidate.getPermutationMap() == read.getPermutationMap()) {
        write = candidate;
        break;
      }
    }
    if (!write || !read->isBeforeInBlock(write) ||
        othersAccess(loop, root, read, write))
      continue;
    rewriter.moveOpBefore(read, loop);
    // The new loop keeps the old one's markers (which loop is a register
    // tile's reduction loop).
    DictionaryAttr markers = loop->getDiscardableAttrDictionary();
    auto newLoop = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
        rewriter, read.getResult(), /*replaceInitOperandUsesInLoop=*/true,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
          return SmallVector<Value>{write.getVector()};
        }));
    newLoop->setDiscardableAttrs(markers);
    rewriter.moveOpAfter(write, newLoop);
    rewriter.modifyOpInPlace(write, [&] {
      write.getValueToStoreMutable().assign(newLoop.getResults().back());
    });
    return newLoop;
  }
  return nullptr;
}

} // namespace

void hoistAccumulatorTiles(func::FuncOp func) {
  MLIRContext *context = func.getContext();
  // The read and the write of C's tile must use the same view and index
  // values, defined outside the reduction loop.
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

} // namespace strata
