//===- TileAndDistribute.cpp ----------------------------------------------===//
#include "strata/compiler/Codegen/TileAndDistribute.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;

namespace strata {
namespace {

// Ops that may stay outside the workgroup loop: they compute nothing per
// element.
bool isAllowedOutsideLoop(Operation *op) {
  return isa<scf::ForallOp, func::ReturnOp, tensor::EmptyOp, arith::ConstantOp>(
             op) ||
         (op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
          llvm::none_of(op->getResultTypes(), llvm::IsaPred<ShapedType>));
}

LogicalResult tileInPlace(func::FuncOp func, const WorkgroupTiling &tiling) {
  // expand_shape(tensor.empty) is just an empty tensor; folding it lets a
  // fill on it fuse into the tile.
  {
    RewritePatternSet patterns(func.getContext());
    tensor::populateFoldTensorEmptyPatterns(patterns);
    (void)applyPatternsGreedily(func, std::move(patterns));
  }
  TilingInterface root =
      findTileableDispatchRoot(func.getBody().front().getTerminator());
  if (!root)
    return failure();
  // The split must make exactly the grid the host launches.
  {
    OpBuilder builder(root);
    SmallVector<Range> domain = root.getIterationDomain(builder);
    if (tiling.loop >= domain.size() || tiling.tileSize <= 0)
      return failure();
    std::optional<int64_t> size = getConstantIntValue(domain[tiling.loop].size);
    if (!size || llvm::divideCeil(*size, tiling.tileSize) != tiling.count)
      return failure();
  }

  IRRewriter rewriter(func.getContext());
  // An init the root only overwrites (elementwise ops often reuse an input
  // as their init) would become the loop's shared output and keep its
  // producer outside the loop; a fresh empty tensor lets it fuse.
  if (auto linalgRoot = dyn_cast<linalg::LinalgOp>(root.getOperation())) {
    for (OpOperand &init : linalgRoot.getDpsInitsMutable()) {
      if (linalgRoot.payloadUsesValueFromOperand(&init))
        continue;
      auto type = cast<RankedTensorType>(init.get().getType());
      rewriter.setInsertionPoint(root);
      init.set(tensor::EmptyOp::create(rewriter, root.getLoc(), type.getShape(),
                                       type.getElementType()));
    }
  }
  SmallVector<OpFoldResult> tileSizes(root.getLoopIteratorTypes().size(),
                                      rewriter.getIndexAttr(0));
  tileSizes[tiling.loop] = rewriter.getIndexAttr(tiling.tileSize);
  scf::SCFTilingOptions tilingOptions;
  tilingOptions.setTileSizes(tileSizes);
  tilingOptions.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
  scf::SCFTileAndFuseOptions options;
  options.setTilingOptions(tilingOptions);
  rewriter.setInsertionPoint(root);
  FailureOr<scf::SCFTileAndFuseResult> result =
      scf::tileConsumerAndFuseProducersUsingSCF(rewriter, root, options);
  if (failed(result) || result->loops.size() != 1)
    return failure();
  for (OpResult value : root->getResults())
    if (Value replacement = result->replacements.lookup(value))
      rewriter.replaceAllUsesWith(value, replacement);

  // Drop what the fusion made dead (also the slices it left in the loop),
  // then require that nothing computing remains outside the loop.
  (void)runRegionDCE(rewriter, func.getBody());
  // A pad tile as a fill of its output slice and a copy of its input slice
  // into it: bufferized in place, instead of through a whole-tile
  // temporary copied out afterwards.
  {
    RewritePatternSet patterns(func.getContext());
    linalg::populateDecomposePadPatterns(patterns);
    (void)applyPatternsGreedily(func, std::move(patterns));
  }
  for (Operation &op : func.getBody().front())
    if (!isAllowedOutsideLoop(&op)) {
      return failure();
    }
  return success();
}

} // namespace

LogicalResult tileToWorkgroups(func::FuncOp func,
                               const WorkgroupTiling &tiling) {
  // Tile a copy so a failure leaves the original untouched.
  OpBuilder builder(func);
  auto copy = cast<func::FuncOp>(builder.clone(*func));
  if (failed(tileInPlace(copy, tiling))) {
    copy.erase();
    return failure();
  }
  func.getBody().takeBody(copy.getBody());
  copy.erase();
  return success();
}

LogicalResult distributeToWorkgroups(func::FuncOp func, bool tiled) {
  MLIRContext *context = func.getContext();
  Block &entry = func.getBody().front();
  Type indexType = IndexType::get(context);
  Location loc = func.getLoc();
  Value workgroupId = entry.addArgument(indexType, loc);
  entry.addArgument(indexType, loc); // workgroup count
  SmallVector<Type> argTypes(func.getArgumentTypes());
  argTypes.append({indexType, indexType});
  func.setFunctionType(
      FunctionType::get(context, argTypes, func.getResultTypes()));

  SmallVector<scf::ForallOp> loops;
  for (Operation &op : entry)
    if (auto forall = dyn_cast<scf::ForallOp>(op))
      loops.push_back(forall);

  IRRewriter rewriter(context);
  if (tiled) {
    if (loops.size() != 1 || loops.front().getRank() != 1)
      return func.emitOpError("lost its workgroup loop during bufferization");
    scf::ForallOp forall = loops.front();
    rewriter.setInsertionPoint(forall);
    Value lower = getValueOrCreateConstantIndexOp(
        rewriter, loc, forall.getMixedLowerBound()[0]);
    Value step = getValueOrCreateConstantIndexOp(rewriter, loc,
                                                 forall.getMixedStep()[0]);
    Value iv = arith::AddIOp::create(
        rewriter, loc, lower,
        arith::MulIOp::create(rewriter, loc, workgroupId, step));
    Block *body = forall.getBody();
    rewriter.eraseOp(body->getTerminator());
    rewriter.inlineBlockBefore(body, forall, ValueRange{iv});
    rewriter.eraseOp(forall);
    return success();
  }

  // One workgroup does all the work.
  Operation *terminator = entry.getTerminator();
  rewriter.setInsertionPointToStart(&entry);
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value isFirst = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                        workgroupId, zero);
  auto ifOp = scf::IfOp::create(rewriter, loc, isFirst, /*withElse=*/false);
  Block *thenBlock = ifOp.thenBlock();
  for (Operation &op : llvm::make_early_inc_range(entry)) {
    if (&op == terminator || &op == ifOp || &op == zero.getDefiningOp() ||
        &op == isFirst.getDefiningOp())
      continue;
    op.moveBefore(thenBlock->getTerminator());
  }
  return success();
}

} // namespace strata
