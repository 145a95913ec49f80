//===- BlockTileKernel.cpp - many-row contractions as block tiles ---------===//
//
// Each thread block computes 64 x 128 tiles of C: it stages a 64 x 16
// slice of A and a 16 x 128 slice of B in shared memory (the next slices
// loaded into registers while the current ones are used), then every
// thread reads them as 4-wide vectors into a 4 x 8 tile of accumulators it
// keeps in registers over the whole reduction. The tile leaves through
// shared memory so that a warp stores whole rows, the epilogues applied on
// the way.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/CUDA/ContractionKernels.h"
#include "strata/compiler/Codegen/WorkgroupTiling.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

using namespace mlir;

namespace strata {
namespace {

// The block's threads as a 16 x 16 grid, each with a register tile of 4
// rows (one 4-wide shared load) by 8 columns (two, 64 columns apart, so a
// warp's loads of B cover 256 contiguous bytes).
constexpr int64_t kThreadRows = 16;
constexpr int64_t kThreadColumns = 16;
constexpr int64_t kLanes = 4;
constexpr int64_t kTileRows = 4;
constexpr int64_t kTileColumnVectors = 2;
constexpr int64_t kTileColumns = kTileColumnVectors * kLanes;
constexpr int64_t kBlockRows = kThreadRows * kTileRows;
constexpr int64_t kBlockColumns = kThreadColumns * kTileColumns;
// The reduction staged per step.
constexpr int64_t kBlockDepth = 16;
// Shared rows padded by one vector, so the 16 steps of a slice start in
// different banks when threads store along the reduction.
constexpr int64_t kSharedPad = kLanes;

static_assert(kThreadRows * kThreadColumns == kCudaThreadsPerBlock);
static_assert(kBlockRows == kGpuContractionRowTile);
static_assert(kBlockRows * kBlockDepth % kCudaThreadsPerBlock == 0 &&
              kBlockColumns * kBlockDepth % kCudaThreadsPerBlock == 0);

using ContractionLoops = ThreadBlockContractionLoops;

// Writes one ContractionKernel as block-cooperative loops.
class KernelBuilder : KernelArithmetic {
public:
  KernelBuilder(const ContractionKernel &kernel, OpBuilder &builder)
      : KernelArithmetic(builder, kernel.contraction->getLoc()),
        kernel(kernel) {}

  // Emits the kernel at the builder's point; returns its outermost op and
  // the blocks per workgroup it was written for.
  BuiltKernel build(Value aShared, Value bShared, Value cShared);

private:
  // Input `which` (0: A, 1: B) is staged `getSliceSteps` elements per
  // thread; step `step`'s place in the shared slice (depth, across).
  int64_t getSliceSteps(unsigned which);
  std::pair<Value, Value> getSlicePosition(unsigned which, int64_t step);
  // This thread's elements of the slice of `which` at k0 (zero outside).
  SmallVector<Value> loadSlice(unsigned which, Value k0, Value outerStart);
  void storeSlice(unsigned which, Value shared, ValueRange values);

  const ContractionKernel &kernel;
  Value threadId;
  SmallVector<Value> ranges; // per loop of the contraction
  SmallVector<Value> loopIndex;
};

std::pair<Value, Value> KernelBuilder::getSlicePosition(unsigned which,
                                                        int64_t step) {
  linalg::GenericOp op = kernel.contraction;
  int64_t width = which == 0 ? kBlockRows : kBlockColumns;
  // Neighbouring threads read neighbouring elements of memory: along the
  // reduction when it is the operand's innermost dimension.
  AffineMap map = op.getMatchingIndexingMap(op.getDpsInputOperand(which));
  bool reductionInnermost =
      cast<AffineDimExpr>(map.getResults().back()).getPosition() ==
      kernel.loops.k;
  Value element = add(threadId, index(step * kCudaThreadsPerBlock));
  if (reductionInnermost)
    return {arith::RemUIOp::create(b, loc, element, index(kBlockDepth)),
            arith::DivUIOp::create(b, loc, element, index(kBlockDepth))};
  return {arith::DivUIOp::create(b, loc, element, index(width)),
          arith::RemUIOp::create(b, loc, element, index(width))};
}

int64_t KernelBuilder::getSliceSteps(unsigned which) {
  return (which == 0 ? kBlockRows : kBlockColumns) * kBlockDepth /
         kCudaThreadsPerBlock;
}

SmallVector<Value> KernelBuilder::loadSlice(unsigned which, Value k0,
                                            Value outerStart) {
  linalg::GenericOp op = kernel.contraction;
  OpOperand &operand = *op.getDpsInputOperand(which);
  unsigned outer = which == 0 ? kernel.loops.m : kernel.loops.n;
  Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
  SmallVector<Value> values;
  for (int64_t step = 0; step < getSliceSteps(which); ++step) {
    auto [depth, across] = getSlicePosition(which, step);
    Value k = add(k0, depth);
    Value position = add(outerStart, across);
    Value inside = arith::AndIOp::create(
        b, loc, less(k, ranges[kernel.loops.k]), less(position, ranges[outer]));
    SmallVector<Value> at(loopIndex);
    at[kernel.loops.k] = clamp(k, ranges[kernel.loops.k]);
    at[outer] = clamp(position, ranges[outer]);
    Value value = loadAsF32(operand, at);
    values.push_back(arith::SelectOp::create(b, loc, inside, value, zero));
  }
  return values;
}

void KernelBuilder::storeSlice(unsigned which, Value shared,
                               ValueRange values) {
  for (int64_t step = 0; step < getSliceSteps(which); ++step) {
    auto [depth, across] = getSlicePosition(which, step);
    memref::StoreOp::create(b, loc, values[step], shared,
                            ValueRange{depth, across});
  }
}

BuiltKernel KernelBuilder::build(Value aShared, Value bShared, Value cShared) {
  linalg::GenericOp op = kernel.contraction;
  const ContractionLoops &loops = kernel.loops;
  threadId = getThreadIndex(b, loc);
  Value threadColumn =
      arith::RemUIOp::create(b, loc, threadId, index(kThreadColumns));
  Value threadRow =
      arith::DivUIOp::create(b, loc, threadId, index(kThreadColumns));
  ranges = getLoopSizes(b, loc, op);
  ColumnBlocks columnBlocks =
      getColumnBlocks(b, loc, op.getStaticLoopRanges()[loops.n], kBlockColumns);
  int64_t blocks = columnBlocks.count;
  Value blockInWorkgroup = columnBlocks.index;

  loopIndex.assign(op.getNumLoops(), index(0));
  Operation *outermost = nullptr;
  auto openLoop = [&](Value lower, Value upper, Value step) {
    auto loop = scf::ForOp::create(b, loc, lower, upper, step);
    if (!outermost)
      outermost = loop;
    b.setInsertionPointToStart(loop.getBody());
    return loop.getInductionVar();
  };
  for (unsigned batch : loops.batch)
    loopIndex[batch] = openLoop(index(0), ranges[batch], index(1));
  Value m0 = openLoop(index(0), ranges[loops.m], index(kBlockRows));
  Value n0 = openLoop(mul(blockInWorkgroup, kBlockColumns), ranges[loops.n],
                      index(blocks * kBlockColumns));

  // This thread's rows and columns of the block tile.
  SmallVector<Value> rows, columnsAt;
  for (int64_t i = 0; i < kTileRows; ++i)
    rows.push_back(add(m0, add(mul(threadRow, kTileRows), index(i))));
  for (int64_t v = 0; v < kTileColumnVectors; ++v)
    for (int64_t lane = 0; lane < kLanes; ++lane)
      columnsAt.push_back(
          add(n0, add(mul(threadColumn, kLanes),
                      index(v * kThreadColumns * kLanes + lane))));

  OpOperand *cOperand = op.getDpsInitOperand(0);
  SmallVector<Value> accumulators;
  for (Value row : rows) {
    for (Value column : columnsAt) {
      if (kernel.fillValue) {
        accumulators.push_back(kernel.fillValue);
        continue;
      }
      SmallVector<Value> at(loopIndex);
      at[loops.m] = clamp(row, ranges[loops.m]);
      at[loops.n] = clamp(column, ranges[loops.n]);
      accumulators.push_back(loadContractionOperand(b, loc, *cOperand, at));
    }
  }

  // The first slices, loaded ahead: each step stores the slices it was
  // given, loads the next ones into registers while it computes (their
  // latency hidden behind the multiply-adds), and hands them on. Loads
  // only where there is a reduction at all: a clamped position in an
  // empty operand would still be outside it.
  int64_t aSteps = getSliceSteps(0), bSteps = getSliceSteps(1);
  Value hasReduction = less(index(0), ranges[loops.k]);
  auto firstSlices = scf::IfOp::create(
      b, loc, SmallVector<Type>(aSteps + bSteps, b.getF32Type()), hasReduction,
      /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(firstSlices.thenBlock());
    SmallVector<Value> slices = loadSlice(0, index(0), m0);
    llvm::append_range(slices, loadSlice(1, index(0), n0));
    scf::YieldOp::create(b, loc, slices);
    b.setInsertionPointToStart(firstSlices.elseBlock());
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    scf::YieldOp::create(b, loc, SmallVector<Value>(aSteps + bSteps, zero));
  }
  SmallVector<Value> carried(accumulators);
  llvm::append_range(carried, firstSlices.getResults());
  int64_t accumulatorCount = accumulators.size();
  auto reduction = scf::ForOp::create(b, loc, index(0), ranges[loops.k],
                                      index(kBlockDepth), carried);
  {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(reduction.getBody());
    Value k0 = reduction.getInductionVar();
    ValueRange staged =
        reduction.getRegionIterArgs().drop_front(accumulatorCount);
    storeSlice(0, aShared, staged.take_front(aSteps));
    storeSlice(1, bShared, staged.drop_front(aSteps));
    NVVM::Barrier0Op::create(b, loc);
    Value nextK = add(k0, index(kBlockDepth));
    SmallVector<Value> nextSlices = loadSlice(0, nextK, m0);
    llvm::append_range(nextSlices, loadSlice(1, nextK, n0));
    auto step = scf::ForOp::create(
        b, loc, index(0), index(kBlockDepth), index(1),
        reduction.getRegionIterArgs().take_front(accumulatorCount));
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(step.getBody());
      Value depth = step.getInductionVar();
      auto vectorType = VectorType::get({kLanes}, b.getF32Type());
      auto loadVector = [&](Value shared, Value column) {
        return vector::LoadOp::create(
            b, loc, vectorType, shared, ValueRange{depth, column},
            /*nontemporal=*/false, llvm::MaybeAlign(kSharedAlignment));
      };
      Value aVector = loadVector(aShared, mul(threadRow, kTileRows));
      SmallVector<Value> bVectors;
      for (int64_t v = 0; v < kTileColumnVectors; ++v)
        bVectors.push_back(
            loadVector(bShared, add(mul(threadColumn, kLanes),
                                    index(v * kThreadColumns * kLanes))));
      SmallVector<Value> next;
      ValueRange current = step.getRegionIterArgs();
      for (int64_t i = 0; i < kTileRows; ++i) {
        Value a = vector::ExtractOp::create(b, loc, aVector, i);
        for (int64_t j = 0; j < kTileColumns; ++j) {
          Value bValue = vector::ExtractOp::create(b, loc, bVectors[j / kLanes],
                                                   j % kLanes);
          // LLVM's fma directly: ExpandMath would split a math.fma.
          next.push_back(LLVM::FMAOp::create(b, loc, a, bValue,
                                             current[i * kTileColumns + j]));
        }
      }
      scf::YieldOp::create(b, loc, next);
    }
    // The next slice overwrites what this one read.
    NVVM::Barrier0Op::create(b, loc);
    SmallVector<Value> yielded(step.getResults());
    llvm::append_range(yielded, nextSlices);
    scf::YieldOp::create(b, loc, yielded);
  }

  // The tile goes out through shared memory, so that neighbouring threads
  // store neighbouring elements of C (a thread's own 4-column runs would
  // make each warp store a quarter-used segment at a time: over PCIe, where
  // results may live, that cost 10x the product).
  auto vectorType = VectorType::get({kLanes}, b.getF32Type());
  for (int64_t i = 0; i < kTileRows; ++i) {
    Value row = add(mul(threadRow, kTileRows), index(i));
    for (int64_t v = 0; v < kTileColumnVectors; ++v) {
      SmallVector<Value> lanes;
      for (int64_t lane = 0; lane < kLanes; ++lane)
        lanes.push_back(
            reduction.getResult(i * kTileColumns + v * kLanes + lane));
      Value vector = vector::FromElementsOp::create(b, loc, vectorType, lanes);
      Value column =
          add(mul(threadColumn, kLanes), index(v * kThreadColumns * kLanes));
      vector::StoreOp::create(b, loc, vector, cShared, ValueRange{row, column},
                              /*nontemporal=*/false,
                              llvm::MaybeAlign(kSharedAlignment));
    }
  }
  NVVM::Barrier0Op::create(b, loc);
  for (int64_t step = 0;
       step < kBlockRows * kBlockColumns / kCudaThreadsPerBlock; ++step) {
    Value element = add(threadId, index(step * kCudaThreadsPerBlock));
    Value tileRow =
        arith::DivUIOp::create(b, loc, element, index(kBlockColumns));
    Value tileColumn =
        arith::RemUIOp::create(b, loc, element, index(kBlockColumns));
    Value row = add(m0, tileRow);
    Value column = add(n0, tileColumn);
    Value inside = arith::AndIOp::create(b, loc, less(row, ranges[loops.m]),
                                         less(column, ranges[loops.n]));
    auto store = scf::IfOp::create(b, loc, inside, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(store.thenBlock()->getTerminator());
    SmallVector<Value> at(loopIndex);
    at[loops.m] = row;
    at[loops.n] = column;
    storeThroughEpilogues(b, loc, kernel,
                          memref::LoadOp::create(
                              b, loc, cShared, ValueRange{tileRow, tileColumn}),
                          at);
  }
  // The next tile's results overwrite this one's in shared memory.
  NVVM::Barrier0Op::create(b, loc);
  return {outermost, blocks};
}

} // namespace

SmallVector<MemRefType> getBlockTileSharedTypes(MLIRContext *context) {
  // The staged slices, K-major: a thread's rows (columns) are one vector;
  // then the block's results on their way out.
  Type f32 = Float32Type::get(context);
  return {MemRefType::get({kBlockDepth, kBlockRows + kSharedPad}, f32),
          MemRefType::get({kBlockDepth, kBlockColumns + kSharedPad}, f32),
          MemRefType::get({kBlockRows, kBlockColumns + kSharedPad}, f32)};
}

BuiltKernel buildBlockTileKernel(OpBuilder &b, const ContractionKernel &kernel,
                                 Value aShared, Value bShared, Value cShared) {
  return KernelBuilder(kernel, b).build(aShared, bShared, cShared);
}

} // namespace strata
