//===- FewRowsKernel.cpp - products of a few rows as warp-split sums ------===//
//
// A product of one row (a Linear layer at batch 1, an LSTM step) has too
// little work per column for block tiles, and one thread per column walking
// the whole reduction waits on one load after another (a 1 x 512 x 1000
// Gemm took 107 us on an H200). Here each warp takes 32 neighbouring
// columns (its loads of B coalesce, A's element is one broadcast) and an
// eighth of the reduction, so the eight warps of a block wait on their
// loads together; their partial sums meet in shared memory, where the
// block adds them, starts from the fill (or C), applies the epilogues and
// stores. Blocks of a workgroup take different column groups.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/CUDA/ContractionKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;

namespace strata {
namespace {

constexpr int64_t kWarpSize = 32;
constexpr int64_t kWarps = kCudaThreadsPerBlock / kWarpSize;
constexpr int64_t kMaxRows = kMinBlockTileRows - 1;

class FewRowsBuilder : KernelArithmetic {
public:
  FewRowsBuilder(OpBuilder &b, const ContractionKernel &kernel)
      : KernelArithmetic(b, kernel.contraction->getLoc()), kernel(kernel),
        op(kernel.contraction) {}

  BuiltKernel build(Value partials);

private:
  // The loop indices of row `row` (static), column `column` and
  // reduction step `k`.
  SmallVector<Value> getLoopIndex(ArrayRef<Value> rowIndex, Value column,
                                  Value k);
  // The row loops' indices of row `row` (row-major over the row loops).
  SmallVector<Value> getRowIndex(Value row);

  const ContractionKernel &kernel;
  linalg::GenericOp op;
  SmallVector<Value> ranges;
  SmallVector<int64_t> staticRanges;
};

SmallVector<Value> FewRowsBuilder::getLoopIndex(ArrayRef<Value> rowIndex,
                                                Value column, Value k) {
  SmallVector<Value> loopIndex(op.getNumLoops(), index(0));
  for (auto [loop, value] : llvm::zip(kernel.loops.batch, rowIndex))
    loopIndex[loop] = value;
  loopIndex[kernel.loops.n] = column;
  loopIndex[kernel.loops.k] = k;
  return loopIndex;
}

SmallVector<Value> FewRowsBuilder::getRowIndex(Value row) {
  SmallVector<Value> rowIndex(kernel.loops.batch.size());
  for (int64_t i = kernel.loops.batch.size() - 1; i >= 0; --i) {
    Value range = index(staticRanges[kernel.loops.batch[i]]);
    rowIndex[i] = b.createOrFold<arith::RemUIOp>(loc, row, range);
    row = b.createOrFold<arith::DivUIOp>(loc, row, range);
  }
  return rowIndex;
}

BuiltKernel FewRowsBuilder::build(Value partials) {
  const ThreadBlockContractionLoops &loops = kernel.loops;
  staticRanges = op.getStaticLoopRanges();
  ranges = getLoopSizes(b, loc, op);
  int64_t rows = 1;
  for (unsigned loop : loops.batch)
    rows *= staticRanges[loop];
  Value threadId = getThreadIndex(b, loc);
  Value lane = arith::RemUIOp::create(b, loc, threadId, index(kWarpSize));
  Value warp = arith::DivUIOp::create(b, loc, threadId, index(kWarpSize));
  ColumnBlocks columnBlocks =
      getColumnBlocks(b, loc, staticRanges[loops.n], kWarpSize);
  int64_t blocks = columnBlocks.count;
  Value blockInWorkgroup = columnBlocks.index;
  auto columnLoop = scf::ForOp::create(
      b, loc,
      b.createOrFold<arith::MulIOp>(loc, blockInWorkgroup, index(kWarpSize)),
      ranges[loops.n], index(blocks * kWarpSize));
  b.setInsertionPointToStart(columnLoop.getBody());
  Value firstColumn = columnLoop.getInductionVar();

  // This lane's column (clamped: a lane past the edge computes a sum it
  // never stores) and this warp's part of the reduction.
  Value column = add(firstColumn, lane);
  Value clampedColumn = clamp(column, ranges[loops.n]);
  Value reduction = ranges[loops.k];
  Value part = arith::CeilDivUIOp::create(b, loc, reduction, index(kWarps));
  Value begin = arith::MulIOp::create(b, loc, warp, part);
  Value end = arith::MinUIOp::create(b, loc, add(begin, part), reduction);
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  SmallVector<SmallVector<Value>> rowIndices;
  for (int64_t row = 0; row < rows; ++row)
    rowIndices.push_back(getRowIndex(index(row)));
  auto sum = scf::ForOp::create(b, loc, begin, end, index(1),
                                SmallVector<Value>(rows, zero));
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(sum.getBody());
    Value k = sum.getInductionVar();
    // B's element is the same for every row unless a row loop indexes it.
    OpOperand &aOperand = *op.getDpsInputOperand(0);
    OpOperand &bOperand = *op.getDpsInputOperand(1);
    AffineMap bMap = op.getMatchingIndexingMap(&bOperand);
    bool bPerRow = llvm::any_of(
        loops.batch, [&](unsigned loop) { return bMap.isFunctionOfDim(loop); });
    Value bValue;
    SmallVector<Value> next;
    for (int64_t row = 0; row < rows; ++row) {
      SmallVector<Value> at = getLoopIndex(rowIndices[row], clampedColumn, k);
      if (bPerRow || !bValue)
        bValue = loadAsF32(bOperand, at);
      // LLVM's fma directly: ExpandMath would split a math.fma.
      next.push_back(LLVM::FMAOp::create(b, loc, loadAsF32(aOperand, at),
                                         bValue, sum.getRegionIterArgs()[row]));
    }
    scf::YieldOp::create(b, loc, next);
  }
  for (int64_t row = 0; row < rows; ++row)
    memref::StoreOp::create(b, loc, sum.getResult(row), partials,
                            ValueRange{warp, index(row), lane});
  NVVM::Barrier0Op::create(b, loc);

  // The block adds the warps' parts of each (row, column), from the fill
  // value or C's element, and stores it through the epilogues.
  OpOperand *cOperand = op.getDpsInitOperand(0);
  for (int64_t step = 0;
       step < llvm::divideCeil(rows * kWarpSize, kCudaThreadsPerBlock);
       ++step) {
    Value element = add(threadId, index(step * kCudaThreadsPerBlock));
    Value row = arith::DivUIOp::create(b, loc, element, index(kWarpSize));
    Value partLane = arith::RemUIOp::create(b, loc, element, index(kWarpSize));
    Value partColumn = add(firstColumn, partLane);
    Value inside = arith::AndIOp::create(b, loc, less(row, index(rows)),
                                         less(partColumn, ranges[loops.n]));
    auto store = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(store.thenBlock()->getTerminator());
    SmallVector<Value> at =
        getLoopIndex(getRowIndex(row), partColumn, index(0));
    Value value = kernel.fillValue
                      ? kernel.fillValue
                      : loadContractionOperand(b, loc, *cOperand, at);
    for (int64_t w = 0; w < kWarps; ++w)
      value = arith::AddFOp::create(
          b, loc, value,
          memref::LoadOp::create(b, loc, partials,
                                 ValueRange{index(w), row, partLane}));
    storeThroughEpilogues(b, loc, kernel, value, at);
  }
  // The next column group's parts overwrite these.
  NVVM::Barrier0Op::create(b, loc);
  return {columnLoop, blocks};
}

} // namespace

MemRefType getFewRowsPartialsType(MLIRContext *context) {
  return MemRefType::get({kWarps, kMaxRows, kWarpSize},
                         Float32Type::get(context));
}

BuiltKernel buildFewRowsKernel(OpBuilder &b, const ContractionKernel &kernel,
                               Value partials) {
  return FewRowsBuilder(b, kernel).build(partials);
}

} // namespace strata
