//===- VectorizeShortRows.cpp - elementwise ops over short innermost rows -===//
//
// An elementwise op whose innermost loop is a few vectors long (a blocked
// channel layout's 16 channels, or a pad's copy of them) lowers to loops
// that LLVM's loop vectorizer leaves scalar: a 16-trip loop is not worth
// vectorizing in its cost model once the body has a maximum or minimum
// (ReLU, clip), and 16 scalar steps then cost 3-4x the whole vector's.
// Such ops are tiled by one on every outer loop and each tile, one
// innermost row, is vectorized directly (transfer reads and writes of the
// row, the body on vectors).
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace strata {
#define GEN_PASS_DEF_VECTORIZESHORTROWSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Rows up to this many elements are vectorized whole; longer ones are left
// to LLVM, which vectorizes long loops well.
constexpr int64_t kMaxShortRow = 64;

bool isF32Arithmetic(Operation &op) {
  return op.getDialect() == op.getContext()->getLoadedDialect("arith") &&
         op.hasTrait<OpTrait::Elementwise>() &&
         llvm::all_of(op.getOperandTypes(),
                      [](Type type) { return type.isF32(); }) &&
         llvm::all_of(op.getResultTypes(),
                      [](Type type) { return type.isF32(); });
}

// Whether `op` is an elementwise f32 op on buffers whose innermost loop is
// a short static row that every operand reading it walks contiguously.
bool hasShortRows(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() < 2 ||
      op.getNumParallelLoops() != op.getNumLoops() || op.getNumDpsInits() != 1)
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned innermost = ranges.size() - 1;
  int64_t row = ranges[innermost];
  if (ShapedType::isDynamic(row) || row > kMaxShortRow || row < 4)
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!getElementTypeOrSelf(operand.get().getType()).isF32())
      return false;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation())
      return false;
    if (map.isFunctionOfDim(innermost) &&
        map.getResults().back() != getAffineDimExpr(innermost, op.getContext()))
      return false;
  }
  if (!op.getMatchingIndexingMap(op.getDpsInitOperand(0))
           .isFunctionOfDim(innermost))
    return false;
  return llvm::all_of(op.getBlock()->without_terminator(), isF32Arithmetic);
}

struct VectorizeShortRowsPass
    : public impl::VectorizeShortRowsPassBase<VectorizeShortRowsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (hasShortRows(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops) {
      SmallVector<int64_t> sizes(op.getNumLoops(), 1);
      sizes.back() = 0;
      linalg::LinalgTilingOptions options;
      options.setTileSizes(sizes);
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::TiledLinalgOp> tiled =
          linalg::tileLinalgOp(rewriter, op, options);
      if (failed(tiled)) {
        op.emitOpError("could not be tiled into rows");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
      rewriter.setInsertionPoint(tiled->op);
      FailureOr<linalg::VectorizationResult> vectorized =
          linalg::vectorize(rewriter, tiled->op);
      if (failed(vectorized)) {
        tiled->op.emitOpError("row could not be vectorized");
        return signalPassFailure();
      }
      // On buffers the vector writes replace the op; it has no results.
      rewriter.eraseOp(tiled->op);
    }
  }
};

} // namespace
} // namespace strata
