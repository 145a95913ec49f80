//===- TileContractions.cpp - contractions as thread-block kernels --------===//
//
// The per-element lowering gives a matrix product one thread per output
// element, each reading a whole row of A and column of B from memory (3 of
// an H200's 51 TFLOP/s at 4096^3). This pass finds a kernel whose work is
// one f32 contraction, optionally after a fill of its result and before
// elementwise epilogues on it, and writes it for the thread block instead:
// as block tiles (BlockTileKernel.cpp) when it has 16 rows or more, else as
// a few-rows kernel (FewRowsKernel.cpp). The fill becomes the sums' start
// and the epilogues run on each element on its way out. The columns are
// spread over several blocks of a workgroup (kBlocksPerWorkgroupAttr),
// whose rows WorkgroupTiling already cut to one block tile.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/CUDA/ContractionKernels.h"
#include "strata/compiler/Codegen/CUDA/ThreadBlocks.h"
#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace strata {
#define GEN_PASS_DEF_CUDATILECONTRACTIONSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

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

// C += A * B in f32: two inputs, one init, the body isMultiplyAccumulate.
bool isF32MultiplyAccumulate(linalg::LinalgOp op) {
  return op.getNumDpsInputs() == 2 && op.getNumDpsInits() == 1 &&
         getElementTypeOrSelf(op.getDpsInitOperand(0)->get().getType())
             .isF32() &&
         isMultiplyAccumulate(op);
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
  if (!isF32MultiplyAccumulate(op))
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
  if (!isF32MultiplyAccumulate(op))
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

// The ops of `block` that touch memory (a top-level load, whose value
// could steer control flow, counts too).
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

// The kernel `block` is when all it writes is one contraction's C (after a
// fill, before epilogues), or nullopt.
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
      return memref::AllocaOp::create(
          builder, loc, type, builder.getI64IntegerAttr(kSharedAlignment));
    };
    SmallVector<Value> shared;
    if (kernel->fewRows)
      shared.push_back(allocate(getFewRowsPartialsType(func.getContext())));
    else
      for (MemRefType type : getBlockTileSharedTypes(func.getContext()))
        shared.push_back(allocate(type));
    // After the last op it replaces, where everything they read is defined.
    Operation *last = kernel->epilogues.empty()
                          ? kernel->contraction.getOperation()
                          : kernel->epilogues.back().getOperation();
    builder.setInsertionPointAfter(last);
    BuiltKernel built = kernel->fewRows
                            ? buildFewRowsKernel(builder, *kernel, shared[0])
                            : buildBlockTileKernel(builder, *kernel, shared[0],
                                                   shared[1], shared[2]);
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
