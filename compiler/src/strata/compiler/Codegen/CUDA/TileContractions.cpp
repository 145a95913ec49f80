//===- TileContractions.cpp - contractions as thread-block kernels --------===//
//
// The per-element lowering gives a matrix product one thread per output
// element, each reading a whole row of A and column of B from memory (3 of
// an H200's 51 TFLOP/s at 4096^3). Here a kernel whose work is one f32
// contraction is written for the thread block instead: the block stages a
// 64 x 16 slice of A and a 16 x 128 slice of B in shared memory, then every
// thread reads them as 4-wide vectors into a 4 x 8 tile of accumulators it
// keeps in registers over the whole reduction. A fill of C before the
// contraction starts the accumulators; the tile leaves through shared
// memory so that a warp stores whole rows, and elementwise epilogues on C
// run on each element on its way out. The columns are spread over several
// blocks of a workgroup (kBlocksPerWorkgroupAttr), whose rows
// WorkgroupTiling already cut to one block tile.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/CUDA/ContractionKernels.h"
#include "strata/compiler/Codegen/CUDA/ThreadBlocks.h"
#include "strata/compiler/Codegen/WorkgroupTiling.h"
#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace strata {
#define GEN_PASS_DEF_CUDATILECONTRACTIONSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

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
constexpr int64_t kMaxBlocksPerWorkgroup = 65536;

static_assert(kThreadRows * kThreadColumns == kCudaThreadsPerBlock);
static_assert(kBlockRows == kGpuContractionRowTile);
static_assert(kBlockRows * kBlockDepth % kCudaThreadsPerBlock == 0 &&
              kBlockColumns * kBlockDepth % kCudaThreadsPerBlock == 0);

using ContractionLoops = ThreadBlockContractionLoops;

// `value` is `arg`, or `arg` extended to f32.
bool isInputOrExtension(Value value, BlockArgument arg) {
  if (value == arg)
    return true;
  auto extension = value.getDefiningOp<arith::ExtFOp>();
  return extension && extension.getIn() == arg;
}

// The body is `out + x * y` of the two inputs, each possibly extended, and
// nothing else.
bool isMultiplyAccumulate(linalg::LinalgOp op) {
  Block &body = *op.getBlock();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (yield.getNumOperands() != 1 || body.getNumArguments() != 3)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  BlockArgument out = body.getArgument(2);
  Value product = add.getLhs() == out   ? add.getRhs()
                  : add.getRhs() == out ? add.getLhs()
                                        : Value();
  auto multiply = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!multiply)
    return false;
  BlockArgument x = body.getArgument(0), y = body.getArgument(1);
  bool inOrder = isInputOrExtension(multiply.getLhs(), x) &&
                 isInputOrExtension(multiply.getRhs(), y);
  bool swapped = isInputOrExtension(multiply.getLhs(), y) &&
                 isInputOrExtension(multiply.getRhs(), x);
  if (!inOrder && !swapped)
    return false;
  size_t expected = 3 + (multiply.getLhs() != x && multiply.getLhs() != y) +
                    (multiply.getRhs() != x && multiply.getRhs() != y);
  return body.getOperations().size() == expected;
}

std::optional<ContractionLoops> classifyLoops(linalg::LinalgOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps,
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return std::nullopt;
  SmallVector<unsigned> m, n, k;
  ContractionLoops loops;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop) {
    bool inA = maps[0].isFunctionOfDim(loop);
    bool inB = maps[1].isFunctionOfDim(loop);
    bool inC = maps[2].isFunctionOfDim(loop);
    // A parallel loop of one iteration is a batch of one, whichever
    // operands it indexes (a convolution product's image, absent from its
    // filter).
    if (iterators[loop] == utils::IteratorType::parallel && ranges[loop] == 1) {
      loops.batch.push_back(loop);
      continue;
    }
    if (iterators[loop] == utils::IteratorType::reduction) {
      if (!inA || !inB || inC)
        return std::nullopt;
      k.push_back(loop);
    } else if (inA && !inB) {
      m.push_back(loop);
    } else if (inB && !inA) {
      n.push_back(loop);
    } else {
      loops.batch.push_back(loop);
    }
  }
  if (m.size() != 1 || n.size() != 1 || k.size() != 1)
    return std::nullopt;
  loops.m = m.front();
  loops.n = n.front();
  loops.k = k.front();
  return loops;
}

} // namespace

std::optional<ThreadBlockContractionLoops>
getThreadBlockContractionLoops(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType()).isF32() ||
      !isMultiplyAccumulate(op))
    return std::nullopt;
  std::optional<ContractionLoops> loops = classifyLoops(op);
  if (!loops)
    return std::nullopt;
  int64_t rows = op.getStaticLoopRanges()[loops->m];
  if (!ShapedType::isDynamic(rows) && rows < kMinBlockTileRows)
    return std::nullopt;
  return loops;
}

std::optional<ThreadBlockContractionLoops>
getFewRowsContractionLoops(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType()).isF32() ||
      !isMultiplyAccumulate(op))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps,
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<unsigned> columns, reductions;
  ThreadBlockContractionLoops loops;
  int64_t rows = 1;
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop) {
    bool inA = maps[0].isFunctionOfDim(loop);
    bool inB = maps[1].isFunctionOfDim(loop);
    bool inC = maps[2].isFunctionOfDim(loop);
    if (iterators[loop] == utils::IteratorType::reduction) {
      if (!inA || !inB || inC)
        return std::nullopt;
      reductions.push_back(loop);
    } else if (inB && !inA && ranges[loop] != 1) {
      columns.push_back(loop);
    } else {
      if (ShapedType::isDynamic(ranges[loop]))
        return std::nullopt;
      rows *= ranges[loop];
      loops.batch.push_back(loop);
    }
  }
  if (columns.size() != 1 || reductions.size() != 1 ||
      rows >= kMinBlockTileRows)
    return std::nullopt;
  loops.n = columns.front();
  loops.k = reductions.front();
  return loops;
}

namespace {

// The buffer `view` is a view of (through subviews, casts, reshapes).
Value getBufferRoot(Value view) {
  while (auto viewLike = view.getDefiningOp<ViewLikeOpInterface>())
    view = viewLike.getViewSource();
  return view;
}

bool isIdentityOnC(linalg::GenericOp op, OpOperand &operand) {
  return op.getMatchingIndexingMap(&operand).isIdentity();
}

// A fill of `c`: nothing read but a value defined outside, written to all
// of it. The value, or null.
Value getFillValue(linalg::GenericOp op, Value c) {
  if (op.getNumDpsInits() != 1 || op.getDpsInitOperand(0)->get() != c ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !isIdentityOnC(op, *op.getDpsInitOperand(0)))
    return {};
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 1)
    return {};
  Value yielded = body.getTerminator()->getOperand(0);
  if (auto arg = dyn_cast<BlockArgument>(yielded)) {
    if (arg.getOwner() != &body || arg.getArgNumber() >= op.getNumDpsInputs())
      return {};
    Value input = op.getDpsInputOperand(arg.getArgNumber())->get();
    return isa<ShapedType>(input.getType()) ? Value() : input;
  }
  return yielded;
}

// An elementwise op that rewrites `c` in place from values of `c` at the
// same element and of other buffers.
bool isEpilogueOn(linalg::GenericOp op, Value c) {
  if (op.getNumDpsInits() != 1 || op.getDpsInitOperand(0)->get() != c ||
      op.getNumParallelLoops() != op.getNumLoops() ||
      !isIdentityOnC(op, *op.getDpsInitOperand(0)))
    return false;
  Value root = getBufferRoot(c);
  for (OpOperand *input : op.getDpsInputOperands()) {
    if (input->get() == c) {
      if (!isIdentityOnC(op, *input))
        return false;
      continue;
    }
    if (isa<ShapedType>(input->get().getType()) &&
        getBufferRoot(input->get()) == root)
      return false;
  }
  return llvm::all_of(
      op.getRegion().front().without_terminator(), [](Operation &inner) {
        return isMemoryEffectFree(&inner) && inner.getNumRegions() == 0;
      });
}

// The kernel of `func` when all it writes is one contraction's C (after a
// fill, before epilogues), or nullopt.
// The ops of `block` that write memory.
SmallVector<Operation *> getWriters(Block &block) {
  SmallVector<Operation *> writers;
  for (Operation &op : block.without_terminator())
    if (!isMemoryEffectFree(&op))
      writers.push_back(&op);
  return writers;
}

// Where the kernel's work is: the function's body, or the body of the one
// guard around it (a dispatch of one workgroup runs its work if the
// workgroup id is 0, uniform over the block).
Block &getWorkBlock(func::FuncOp func) {
  Block &body = func.getBody().front();
  SmallVector<Operation *> writers = getWriters(body);
  if (writers.size() == 1)
    if (auto guard = dyn_cast<scf::IfOp>(writers.front()))
      if (guard.getNumResults() == 0 && guard.getElseRegion().empty())
        return *guard.thenBlock();
  return body;
}

std::optional<ContractionKernel> matchKernel(Block &block) {
  SmallVector<Operation *> writers = getWriters(block);
  ContractionKernel kernel;
  auto contractionAt = llvm::find_if(writers, [](Operation *op) {
    auto generic = dyn_cast<linalg::GenericOp>(op);
    return generic && generic.getNumReductionLoops() > 0;
  });
  if (contractionAt == writers.end())
    return std::nullopt;
  kernel.contraction = cast<linalg::GenericOp>(*contractionAt);
  linalg::GenericOp contraction = kernel.contraction;
  std::optional<ContractionLoops> loops =
      getThreadBlockContractionLoops(contraction);
  if (!loops) {
    loops = getFewRowsContractionLoops(contraction);
    kernel.fewRows = true;
  }
  if (!contraction.hasPureBufferSemantics() || !loops)
    return std::nullopt;
  Value c = contraction.getDpsInitOperand(0)->get();
  auto cType = cast<MemRefType>(c.getType());
  for (OpOperand *input : contraction.getDpsInputOperands())
    if (!isa<MemRefType>(input->get().getType()) ||
        getBufferRoot(input->get()) == getBufferRoot(c))
      return std::nullopt;
  kernel.loops = *loops;

  size_t position = contractionAt - writers.begin();
  if (position > 1)
    return std::nullopt;
  if (position == 1) {
    kernel.fill = dyn_cast<linalg::GenericOp>(writers.front());
    if (!kernel.fill || !(kernel.fillValue = getFillValue(kernel.fill, c)) ||
        kernel.fillValue.getType() != cType.getElementType())
      return std::nullopt;
  }
  for (Operation *op : llvm::drop_begin(writers, position + 1)) {
    auto epilogue = dyn_cast<linalg::GenericOp>(op);
    if (!epilogue || !epilogue.hasPureBufferSemantics() ||
        !isEpilogueOn(epilogue, c))
      return std::nullopt;
    kernel.epilogues.push_back(epilogue);
  }
  return kernel;
}

} // namespace

Value applyEpilogues(OpBuilder &b, Location loc,
                     const ContractionKernel &kernel, Value value,
                     ArrayRef<Value> loopIndex) {
  linalg::GenericOp contraction = kernel.contraction;
  Value c = contraction.getDpsInitOperand(0)->get();
  AffineMap cMap =
      contraction.getMatchingIndexingMap(contraction.getDpsInitOperand(0));
  // An epilogue's loops are C's dimensions.
  SmallVector<Value> cIndex;
  for (AffineExpr expr : cMap.getResults())
    cIndex.push_back(loopIndex[cast<AffineDimExpr>(expr).getPosition()]);
  for (linalg::GenericOp epilogue : kernel.epilogues) {
    Block &body = epilogue.getRegion().front();
    IRMapping mapping;
    for (OpOperand &operand : epilogue->getOpOperands()) {
      BlockArgument arg = epilogue.getMatchingBlockArgument(&operand);
      Value source = operand.get();
      if (source == c) {
        mapping.map(arg, value);
        continue;
      }
      if (!isa<ShapedType>(source.getType())) {
        mapping.map(arg, source);
        continue;
      }
      AffineMap map = epilogue.getMatchingIndexingMap(&operand);
      SmallVector<Value> indices;
      for (AffineExpr expr : map.getResults())
        indices.push_back(affine::makeComposedAffineApply(
                              b, loc, AffineMap::get(map.getNumDims(), 0, expr),
                              getAsOpFoldResult(cIndex))
                              ->getResult(0));
      mapping.map(arg, memref::LoadOp::create(b, loc, source, indices));
    }
    for (Operation &op : body.without_terminator()) {
      if (auto loopIndexOp = dyn_cast<linalg::IndexOp>(op)) {
        mapping.map(loopIndexOp.getResult(), cIndex[loopIndexOp.getDim()]);
        continue;
      }
      b.clone(op, mapping);
    }
    value = mapping.lookup(body.getTerminator()->getOperand(0));
  }
  return value;
}

Value loadContractionOperand(OpBuilder &b, Location loc, OpOperand &operand,
                             ArrayRef<Value> loopIndex) {
  auto op = cast<linalg::LinalgOp>(operand.getOwner());
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults())
    indices.push_back(loopIndex[cast<AffineDimExpr>(expr).getPosition()]);
  return memref::LoadOp::create(b, loc, operand.get(), indices);
}

namespace {

// Writes one ContractionKernel as block-cooperative loops.
class KernelBuilder {
public:
  KernelBuilder(ContractionKernel kernel, OpBuilder &builder)
      : kernel(kernel), b(builder), loc(kernel.contraction.getLoc()) {}

  // Emits the kernel at the builder's point; returns its outermost op and
  // the blocks per workgroup it was written for.
  BuiltKernel build(Value aShared, Value bShared, Value cShared);

private:
  Value index(int64_t value) {
    return arith::ConstantIndexOp::create(b, loc, value);
  }
  Value add(Value x, Value y) {
    return b.createOrFold<arith::AddIOp>(loc, x, y);
  }
  Value mul(Value x, int64_t y) {
    return b.createOrFold<arith::MulIOp>(loc, x, index(y));
  }
  Value less(Value x, Value bound) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, bound);
  }
  // `x` kept inside [0, bound): the load of a lane past the edge reads a
  // valid element, which a select then discards.
  Value clamp(Value x, Value bound) {
    return arith::MinUIOp::create(
        b, loc, x, arith::SubIOp::create(b, loc, bound, index(1)));
  }
  Value loadOperand(OpOperand &operand, ArrayRef<Value> loopIndex) {
    return loadContractionOperand(b, loc, operand, loopIndex);
  }
  // Input `which` (0: A, 1: B) is staged `getSliceSteps` elements per
  // thread; step `step`'s place in the shared slice (depth, across).
  int64_t getSliceSteps(unsigned which);
  std::pair<Value, Value> getSlicePosition(unsigned which, int64_t step);
  // This thread's elements of the slice of `which` at k0 (zero outside).
  SmallVector<Value> loadSlice(unsigned which, Value k0, Value outerStart);
  void storeSlice(unsigned which, Value shared, ValueRange values);
  Value applyEpilogues(Value value, ArrayRef<Value> loopIndex) {
    return strata::applyEpilogues(b, loc, kernel, value, loopIndex);
  }

  ContractionKernel kernel;
  OpBuilder &b;
  Location loc;
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
  Type elementType = getElementTypeOrSelf(operand.get().getType());
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
    Value value = loadOperand(operand, at);
    if (elementType != b.getF32Type())
      value = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
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
  Type i32 = b.getI32Type();
  threadId = arith::IndexCastUIOp::create(
      b, loc, b.getIndexType(), NVVM::ThreadIdXOp::create(b, loc, i32));
  Value threadColumn =
      arith::RemUIOp::create(b, loc, threadId, index(kThreadColumns));
  Value threadRow =
      arith::DivUIOp::create(b, loc, threadId, index(kThreadColumns));
  for (Range range :
       cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc))
    ranges.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));

  // The columns are split between the workgroup's blocks where their count
  // is known; a block otherwise walks every column tile.
  int64_t columns = op.getStaticLoopRanges()[loops.n];
  int64_t blocks =
      ShapedType::isDynamic(columns)
          ? 1
          : std::clamp<int64_t>(llvm::divideCeil(columns, kBlockColumns), 1,
                                kMaxBlocksPerWorkgroup);
  Value blockInWorkgroup = index(0);
  if (blocks > 1)
    blockInWorkgroup = arith::RemUIOp::create(
        b, loc,
        arith::IndexCastUIOp::create(b, loc, b.getIndexType(),
                                     NVVM::BlockIdXOp::create(b, loc, i32)),
        index(blocks));

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
      accumulators.push_back(loadOperand(*cOperand, at));
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
            /*nontemporal=*/false, llvm::MaybeAlign(kLanes * 4));
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
                              llvm::MaybeAlign(kLanes * 4));
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
    Value value =
        applyEpilogues(memref::LoadOp::create(b, loc, cShared,
                                              ValueRange{tileRow, tileColumn}),
                       at);
    AffineMap cMap = op.getMatchingIndexingMap(cOperand);
    SmallVector<Value> indices;
    for (AffineExpr expr : cMap.getResults())
      indices.push_back(at[cast<AffineDimExpr>(expr).getPosition()]);
    memref::StoreOp::create(b, loc, value, cOperand->get(), indices);
  }
  // The next tile's results overwrite this one's in shared memory.
  NVVM::Barrier0Op::create(b, loc);
  return {outermost, blocks};
}

struct CUDATileContractionsPass
    : public impl::CUDATileContractionsPassBase<CUDATileContractionsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    std::optional<ContractionKernel> kernel = matchKernel(getWorkBlock(func));
    if (!kernel)
      return;
    OpBuilder builder(func.getContext());
    Location loc = kernel->contraction.getLoc();
    // Shared memory at the top of the kernel: DistributeToThreads moves the
    // allocas there.
    builder.setInsertionPointToStart(&func.getBody().front());
    auto allocate = [&](MemRefType type) -> Value {
      return memref::AllocaOp::create(builder, loc, type,
                                      builder.getI64IntegerAttr(kLanes * 4));
    };
    SmallVector<Value> shared;
    if (kernel->fewRows) {
      shared.push_back(allocate(getFewRowsPartialsType(func.getContext())));
    } else {
      // The staged slices, K-major: a thread's rows (columns) are one
      // vector; then the block's results on their way out.
      Type f32 = builder.getF32Type();
      shared.push_back(allocate(
          MemRefType::get({kBlockDepth, kBlockRows + kSharedPad}, f32)));
      shared.push_back(allocate(
          MemRefType::get({kBlockDepth, kBlockColumns + kSharedPad}, f32)));
      shared.push_back(allocate(
          MemRefType::get({kBlockRows, kBlockColumns + kSharedPad}, f32)));
    }
    // After the last op it replaces, where everything they read is defined.
    Operation *last = kernel->epilogues.empty()
                          ? kernel->contraction.getOperation()
                          : kernel->epilogues.back().getOperation();
    builder.setInsertionPointAfter(last);
    BuiltKernel built = kernel->fewRows
                            ? buildFewRowsKernel(builder, *kernel, shared[0])
                            : KernelBuilder(*kernel, builder)
                                  .build(shared[0], shared[1], shared[2]);
    Operation *outermost = built.outermost;
    int64_t blocks = built.blocksPerWorkgroup;
    outermost->setAttr(kBlockCooperativeAttr, builder.getUnitAttr());
    if (blocks > 1)
      func->setAttr(kBlocksPerWorkgroupAttr, builder.getI64IntegerAttr(blocks));
    for (linalg::GenericOp epilogue : llvm::reverse(kernel->epilogues))
      epilogue.erase();
    kernel->contraction.erase();
    if (kernel->fill)
      kernel->fill.erase();
  }
};

} // namespace
} // namespace strata
