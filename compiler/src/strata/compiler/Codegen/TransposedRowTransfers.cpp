//===- TransposedRowTransfers.cpp - register tiles moved as rows ----------===//

#include "strata/compiler/Codegen/TransposedRowTransfers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;

namespace strata {
namespace {

// A 1-D transfer of the lanes of a column view: a static, unit-stride,
// rank-preserving subview of `base` whose sizes are 1 but `lanes` along
// `lanesDim` (not the innermost dimension), at zero indices, unmasked and
// in bounds; `base`'s innermost dimension is contiguous.
struct ColumnTransfer {
  VectorTransferOpInterface op;
  Value base;
  SmallVector<int64_t> offsets;
  unsigned lanesDim = 0;
  int64_t lanes = 0;
};

std::optional<ColumnTransfer> matchColumnTransfer(Operation *op) {
  auto transfer = dyn_cast<VectorTransferOpInterface>(op);
  if (!transfer || transfer.getMask() ||
      transfer.getVectorType().getRank() != 1)
    return std::nullopt;
  int64_t lanes = transfer.getVectorType().getDimSize(0);
  if (lanes < 2 || !llvm::isPowerOf2_64(lanes) || !transfer.isDimInBounds(0) ||
      !transfer.getVectorType().getElementType().isF32())
    return std::nullopt;
  auto view = transfer.getBase().getDefiningOp<memref::SubViewOp>();
  if (!view || view.getSourceType().getRank() != view.getType().getRank())
    return std::nullopt;
  unsigned rank = view.getType().getRank();
  AffineMap map = transfer.getPermutationMap();
  auto lanesExpr = map.getNumResults() == 1
                       ? dyn_cast<AffineDimExpr>(map.getResult(0))
                       : AffineDimExpr(nullptr);
  if (!lanesExpr || lanesExpr.getPosition() + 1 >= rank)
    return std::nullopt;
  if (!llvm::all_of(transfer.getIndices(),
                    [](Value index) { return matchPattern(index, m_Zero()); }))
    return std::nullopt;
  ArrayRef<int64_t> offsets = view.getStaticOffsets();
  ArrayRef<int64_t> sizes = view.getStaticSizes();
  if (ShapedType::isDynamicShape(offsets) ||
      ShapedType::isDynamicShape(sizes) ||
      llvm::any_of(view.getStaticStrides(), [](int64_t s) { return s != 1; }))
    return std::nullopt;
  unsigned lanesDim = lanesExpr.getPosition();
  for (auto [dim, size] : llvm::enumerate(sizes))
    if (size != (dim == lanesDim ? lanes : 1))
      return std::nullopt;
  auto [strides, offset] = view.getSourceType().getStridesAndOffset();
  if (strides.back() != 1)
    return std::nullopt;
  return ColumnTransfer{transfer, view.getSource(), llvm::to_vector(offsets),
                        lanesDim, lanes};
}

// Whether `a` and `b` are columns of one base, lanes dimension and width
// that differ at most in their innermost offset.
bool areSameColumnGroup(const ColumnTransfer &a, const ColumnTransfer &b) {
  return a.base == b.base && a.lanesDim == b.lanesDim && a.lanes == b.lanes &&
         isa<vector::TransferWriteOp>(a.op) ==
             isa<vector::TransferWriteOp>(b.op) &&
         ArrayRef(a.offsets).drop_back() == ArrayRef(b.offsets).drop_back();
}

// One round of the transpose: vectors i and i + n/2 interleaved, their
// first halves into vector 2i and their second halves into 2i + 1. After
// log2(P) rounds, P vectors of L lanes (rows x lanes) hold each lane's P
// rows contiguously: lane c in vector c / (L/P), at (c % (L/P)) * P.
SmallVector<Value> interleaveRound(RewriterBase &rewriter, Location loc,
                                   ArrayRef<Value> vectors, int64_t lanes) {
  SmallVector<int64_t> low, high;
  for (int64_t i = 0; i < lanes / 2; ++i) {
    low.append({i, lanes + i});
    high.append({lanes / 2 + i, lanes + lanes / 2 + i});
  }
  size_t half = vectors.size() / 2;
  SmallVector<Value> result;
  for (size_t i = 0; i < half; ++i) {
    Value a = vectors[i], b = vectors[i + half];
    result.push_back(vector::ShuffleOp::create(rewriter, loc, a, b, low));
    result.push_back(vector::ShuffleOp::create(rewriter, loc, a, b, high));
  }
  return result;
}

// The inverse round: vectors 2i and 2i + 1 concatenated, their even
// elements into vector i and their odd ones into i + n/2.
SmallVector<Value> deinterleaveRound(RewriterBase &rewriter, Location loc,
                                     ArrayRef<Value> vectors, int64_t lanes) {
  SmallVector<int64_t> even, odd;
  for (int64_t i = 0; i < lanes; ++i) {
    even.push_back(2 * i);
    odd.push_back(2 * i + 1);
  }
  size_t half = vectors.size() / 2;
  SmallVector<Value> result(vectors.size());
  for (size_t i = 0; i < half; ++i) {
    Value a = vectors[2 * i], b = vectors[2 * i + 1];
    result[i] = vector::ShuffleOp::create(rewriter, loc, a, b, even);
    result[i + half] = vector::ShuffleOp::create(rewriter, loc, a, b, odd);
  }
  return result;
}

// Moves the rows of `run` (consecutive innermost offsets, at most `lanes`
// of them) as one transfer of P = PowerOf2Ceil(rows) elements per lane,
// the rows past the run masked off.
class RowRunBuilder {
public:
  // `run` by row; the new transfers go before `anchor`.
  RowRunBuilder(RewriterBase &rewriter, ArrayRef<ColumnTransfer> run,
                Operation *anchor)
      : rewriter(rewriter), run(llvm::to_vector(run)), anchor(anchor),
        loc(run.front().op->getLoc()), lanes(run.front().lanes),
        rows(run.size()), padded(int64_t(llvm::PowerOf2Ceil(run.size()))) {}

  void buildWrites();
  void buildReads();

private:
  SmallVector<Value> getLaneIndices(int64_t lane);
  Value getRowMask();

  RewriterBase &rewriter;
  SmallVector<ColumnTransfer> run;
  Operation *anchor;
  Location loc;
  int64_t lanes, rows, padded;
};

// The base's indices of lane `lane`'s first row.
SmallVector<Value> RowRunBuilder::getLaneIndices(int64_t lane) {
  const ColumnTransfer &first = run.front();
  SmallVector<Value> indices;
  for (auto [dim, offset] : llvm::enumerate(first.offsets))
    indices.push_back(arith::ConstantIndexOp::create(
        rewriter, loc, offset + (dim == first.lanesDim ? lane : 0)));
  return indices;
}

Value RowRunBuilder::getRowMask() {
  if (rows == padded)
    return Value();
  return vector::ConstantMaskOp::create(
      rewriter, loc, VectorType::get({padded}, rewriter.getI1Type()),
      rewriter.getDenseI64ArrayAttr({rows}));
}

void RowRunBuilder::buildWrites() {
  rewriter.setInsertionPoint(anchor);
  VectorType type = run.front().op.getVectorType();
  SmallVector<Value> vectors;
  for (const ColumnTransfer &row : run)
    vectors.push_back(cast<vector::TransferWriteOp>(*row.op).getVector());
  Value zero = arith::ConstantOp::create(rewriter, loc, type,
                                         DenseElementsAttr::get(type, 0.0f));
  vectors.resize(padded, zero);
  for (int64_t width = padded; width > 1; width /= 2)
    vectors = interleaveRound(rewriter, loc, vectors, lanes);
  Value mask = getRowMask();
  AffineMap map = AffineMap::getMinorIdentityMap(run.front().offsets.size(), 1,
                                                 rewriter.getContext());
  int64_t perVector = lanes / padded;
  for (int64_t lane = 0; lane < lanes; ++lane) {
    Value laneRows = vectors[lane / perVector];
    if (perVector > 1)
      laneRows = vector::ExtractStridedSliceOp::create(
          rewriter, loc, laneRows, {(lane % perVector) * padded}, {padded},
          {1});
    vector::TransferWriteOp::create(
        rewriter, loc, laneRows, run.front().base, getLaneIndices(lane),
        AffineMapAttr::get(map), mask, rewriter.getBoolArrayAttr({true}));
  }
  for (const ColumnTransfer &row : run)
    rewriter.eraseOp(row.op);
}

void RowRunBuilder::buildReads() {
  rewriter.setInsertionPoint(anchor);
  // (Masked-off rows are never used.)
  Value padding =
      arith::ConstantOp::create(rewriter, loc, rewriter.getF32FloatAttr(0));
  Value mask = getRowMask();
  AffineMap map = AffineMap::getMinorIdentityMap(run.front().offsets.size(), 1,
                                                 rewriter.getContext());
  auto rowsType = VectorType::get({padded}, rewriter.getF32Type());
  SmallVector<Value> chunks;
  for (int64_t lane = 0; lane < lanes; ++lane)
    chunks.push_back(vector::TransferReadOp::create(
        rewriter, loc, rowsType, run.front().base, getLaneIndices(lane),
        AffineMapAttr::get(map), padding, mask,
        rewriter.getBoolArrayAttr({true})));
  // Neighbouring lanes' rows concatenated into vectors of `lanes`.
  for (int64_t width = padded; width < lanes; width *= 2) {
    SmallVector<int64_t> concat =
        llvm::to_vector(llvm::seq<int64_t>(0, 2 * width));
    SmallVector<Value> wider;
    for (size_t i = 0; i + 1 < chunks.size(); i += 2)
      wider.push_back(vector::ShuffleOp::create(rewriter, loc, chunks[i],
                                                chunks[i + 1], concat));
    chunks = std::move(wider);
  }
  for (int64_t width = padded; width > 1; width /= 2)
    chunks = deinterleaveRound(rewriter, loc, chunks, lanes);
  for (auto [row, value] : llvm::zip(run, chunks))
    rewriter.replaceOp(row.op, value);
}

// Whether `op`, between two transfers of a run, keeps the run's transfers
// movable to one point: it has no memory effects, or it is a column
// transfer of the same base (for writes: a disjoint column, as the run's
// own are; for reads: another read).
bool isTransparent(Operation *op, const ColumnTransfer &first) {
  if (isMemoryEffectFree(op))
    return true;
  std::optional<ColumnTransfer> other = matchColumnTransfer(op);
  if (!other || other->base != first.base || other->lanesDim != first.lanesDim)
    return false;
  return isa<vector::TransferWriteOp>(*first.op) ==
         isa<vector::TransferWriteOp>(*other->op);
}

// The first and the last transfer of `run` in program order.
std::pair<Operation *, Operation *>
getProgramSpan(ArrayRef<ColumnTransfer> run) {
  Operation *first = run.front().op, *last = run.front().op;
  for (const ColumnTransfer &column : run) {
    if (column.op->isBeforeInBlock(first))
      first = column.op;
    if (last->isBeforeInBlock(column.op))
      last = column.op;
  }
  return {first, last};
}

// The runs of `block`: column transfers of one group at consecutive
// innermost offsets, at most `lanes` long, with only transparent ops
// between their first and last. Each group in program order.
SmallVector<SmallVector<ColumnTransfer>> collectRuns(Block &block) {
  SmallVector<SmallVector<ColumnTransfer>> groups;
  for (Operation &op : block) {
    std::optional<ColumnTransfer> column = matchColumnTransfer(&op);
    if (!column)
      continue;
    auto it = llvm::find_if(groups, [&](const auto &group) {
      return areSameColumnGroup(group.front(), *column);
    });
    if (it == groups.end())
      groups.push_back({*column});
    else
      it->push_back(*column);
  }
  SmallVector<SmallVector<ColumnTransfer>> runs;
  for (SmallVector<ColumnTransfer> &group : groups) {
    // Ordered by row; a run ends at a gap or a repeated row.
    SmallVector<ColumnTransfer> sorted = group;
    llvm::sort(sorted, [](const auto &a, const auto &b) {
      if (a.offsets.back() != b.offsets.back())
        return a.offsets.back() < b.offsets.back();
      return a.op->isBeforeInBlock(b.op);
    });
    SmallVector<ColumnTransfer> run;
    auto flush = [&]() {
      if (run.size() >= 2)
        runs.push_back(run);
      run.clear();
    };
    for (ColumnTransfer &column : sorted) {
      if (!run.empty() &&
          (column.offsets.back() != run.back().offsets.back() + 1 ||
           int64_t(run.size()) == column.lanes))
        flush();
      run.push_back(column);
    }
    flush();
  }
  // Each run's transfers move to its first (reads) or last (writes) one:
  // only transparent ops may lie between.
  llvm::erase_if(runs, [](const SmallVector<ColumnTransfer> &run) {
    auto [first, last] = getProgramSpan(run);
    for (Operation *op = first->getNextNode(); op != last;
         op = op->getNextNode())
      if (!isTransparent(op, run.front()))
        return true;
    return false;
  });
  return runs;
}

} // namespace

void transposeRowTransfers(func::FuncOp func) {
  SmallVector<Block *> blocks;
  func.walk([&](Block *block) { blocks.push_back(block); });
  IRRewriter rewriter(func.getContext());
  for (Block *block : blocks) {
    for (const SmallVector<ColumnTransfer> &run : collectRuns(*block)) {
      // Reads move to the first of the run, writes to the last.
      bool writes = isa<vector::TransferWriteOp>(*run.front().op);
      auto [first, last] = getProgramSpan(run);
      RowRunBuilder builder(rewriter, run, writes ? last : first);
      if (writes)
        builder.buildWrites();
      else
        builder.buildReads();
    }
  }
}

} // namespace strata
