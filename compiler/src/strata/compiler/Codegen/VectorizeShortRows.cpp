//===- VectorizeShortRows.cpp - elementwise ops over short innermost rows -===//
//
// An elementwise op whose innermost loop is a few vectors long (a blocked
// channel layout's 16 channels, or a pad's copy of them) lowers to loops
// that LLVM's loop vectorizer leaves scalar: a 16-trip loop is not worth
// vectorizing in its cost model once the body has a maximum or minimum
// (ReLU, clip), and 16 scalar steps then cost 3-4x the whole vector's.
// Copies count too (a pad's interior: rows of 7 or 14 were copied
// element by element).
// Such ops are tiled by one on every outer loop and each tile, one
// innermost row, is vectorized directly (transfer reads and writes of the
// row, the body on vectors). The transposes into and out of that layout
// (16 channels innermost on one side, pixels on the other) are tiled into
// blocks of up to 16 x 16 read with the permutation: LLVM's loops moved
// them one element at a time (a stem's output 0.6 -> 0.2 ms).
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/BroadcastKernels.h"
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

// The tile of a transposed input's innermost loop: a divisor of its range
// from 8 to 16 (a 16x16 or 14x16 block transposed in registers), or the
// whole range up to 16.
int64_t chooseTransposeTile(int64_t range) {
  if (range <= 16)
    return range;
  // Whole vectors first: a 14-wide block's rows legalize into partial
  // vectors.
  for (int64_t tile : {16, 8})
    if (range % tile == 0)
      return tile;
  for (int64_t tile = 15; tile > 8; --tile)
    if (range % tile == 0)
      return tile;
  return 0;
}

// The tile sizes that make `op` one short row per tile, or none: `op` is an
// elementwise f32 op on buffers whose innermost loop is a short static row
// that every operand reading it walks contiguously, except that inputs may
// all read it transposed against one other loop (a blocked layout's pack
// or unpack), which is then tiled into blocks transposed in registers.
std::optional<SmallVector<int64_t>> getShortRowTiles(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() < 2 ||
      op.getNumParallelLoops() != op.getNumLoops() || op.getNumDpsInits() != 1)
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned innermost = ranges.size() - 1;
  int64_t row = ranges[innermost];
  if (ShapedType::isDynamic(row) || row < 4)
    return std::nullopt;
  std::optional<unsigned> transposedLoop;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!getElementTypeOrSelf(operand.get().getType()).isF32())
      return std::nullopt;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    if (!map.isProjectedPermutation())
      return std::nullopt;
    if (!map.isFunctionOfDim(innermost) ||
        map.getResults().back() == getAffineDimExpr(innermost, op.getContext()))
      continue;
    // Read across the row: its own innermost loop is the other tiled one.
    unsigned loop = cast<AffineDimExpr>(map.getResults().back()).getPosition();
    if (op.isDpsInit(&operand) || (transposedLoop && *transposedLoop != loop) ||
        ShapedType::isDynamic(ranges[loop]))
      return std::nullopt;
    transposedLoop = loop;
  }
  if (!op.getMatchingIndexingMap(op.getDpsInitOperand(0))
           .isFunctionOfDim(innermost) ||
      !llvm::all_of(op.getBlock()->without_terminator(), isLaneWiseArithmetic))
    return std::nullopt;
  SmallVector<int64_t> sizes(op.getNumLoops(), 1);
  sizes.back() = 0;
  if (!transposedLoop)
    return row <= kMaxShortRow ? std::optional(sizes) : std::nullopt;
  // A transpose: blocks of both loops (an unpack's long output rows too).
  for (unsigned loop : {*transposedLoop, innermost}) {
    int64_t tile = chooseTransposeTile(ranges[loop]);
    if (tile == 0)
      return std::nullopt;
    sizes[loop] = tile == ranges[loop] ? 0 : tile;
  }
  return sizes;
}

struct VectorizeShortRowsPass
    : public impl::VectorizeShortRowsPassBase<VectorizeShortRowsPass> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // A copy (a pad's interior, from bufferization) is an elementwise op
    // like any other here.
    SmallVector<linalg::CopyOp> copies;
    getOperation().walk([&](linalg::CopyOp copy) { copies.push_back(copy); });
    for (linalg::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      if (failed(linalg::generalizeNamedOp(rewriter, copy))) {
        copy.emitOpError("could not be generalized");
        return signalPassFailure();
      }
    }
    SmallVector<std::pair<linalg::GenericOp, SmallVector<int64_t>>> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (std::optional<SmallVector<int64_t>> sizes = getShortRowTiles(op))
        ops.push_back({op, std::move(*sizes)});
    });
    for (auto &[op, sizes] : ops) {
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
