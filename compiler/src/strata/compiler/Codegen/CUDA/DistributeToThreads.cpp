//===- DistributeToThreads.cpp - one workgroup's loops over its threads ---===//
//
// The cuda target runs each workgroup as one thread block. After linalg
// became parallel loops, this pass spreads each outermost scf.parallel over
// the block's threads (thread t runs iterations t, t + blockDim, ... of the
// flattened iteration space, the innermost loop fastest so neighbouring
// threads touch neighbouring elements), runs every other write once (on
// thread 0), and separates the phases with barriers, so a phase reads what
// the previous one wrote. Control flow outside the distributed loops
// depends on nothing but the workgroup id, so every thread takes the same
// path and reaches the same barriers. Temporaries the whole workgroup
// shares (allocas outside the loops) move to the block's shared memory.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/CUDA/ThreadBlocks.h"
#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace strata {
#define GEN_PASS_DEF_CUDADISTRIBUTETOTHREADSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// NVVM's address space of a thread block's shared memory.
constexpr unsigned kSharedAddressSpace = 3;
// What a kernel may declare statically (more needs dynamic shared memory).
constexpr int64_t kMaxStaticSharedBytes = 48 * 1024;

// Whether `op` holds work for the whole block: parallel loops to
// distribute, or code already written for the block.
bool containsBlockWork(Operation *op) {
  return op
      ->walk([](Operation *inner) {
        return isa<scf::ParallelOp>(inner) ||
                       inner->hasAttr(kBlockCooperativeAttr)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

// Whether running `op` on every thread could write memory twice or race.
bool mayWrite(Operation *op) {
  if (isPure(op))
    return false;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return !op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() ||
           op->walk([](Operation *inner) {
               if (inner->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
                 return WalkResult::advance();
               return mayWrite(inner) ? WalkResult::interrupt()
                                      : WalkResult::advance();
             }).wasInterrupted();
  return effects.hasEffect<MemoryEffects::Write>() ||
         effects.hasEffect<MemoryEffects::Free>();
}

class ThreadDistributor {
public:
  ThreadDistributor(func::FuncOp func, SymbolTable &symbols)
      : func(func), symbols(symbols) {}

  LogicalResult run() {
    OpBuilder builder(func.getBody().front().getParentOp()->getContext());
    builder.setInsertionPointToStart(&func.getBody().front());
    Location loc = func.getLoc();
    Type i32 = builder.getI32Type();
    threadId = arith::IndexCastUIOp::create(
        builder, loc, builder.getIndexType(),
        NVVM::ThreadIdXOp::create(builder, loc, i32));
    threadCount = arith::IndexCastUIOp::create(
        builder, loc, builder.getIndexType(),
        NVVM::BlockDimXOp::create(builder, loc, i32));
    return distributeBlock(func.getBody().front());
  }

private:
  LogicalResult distributeBlock(Block &block);
  LogicalResult distributeParallelLoop(scf::ParallelOp loop);
  LogicalResult runOnFirstThread(Operation *op);
  LogicalResult moveToSharedMemory(memref::AllocaOp alloca);

  void barrierAfter(Operation *op) {
    OpBuilder builder(op->getContext());
    builder.setInsertionPointAfter(op);
    NVVM::Barrier0Op::create(builder, op->getLoc());
  }

  func::FuncOp func;
  SymbolTable &symbols;
  Value threadId, threadCount;
  int64_t sharedBytes = 0;
};

LogicalResult ThreadDistributor::distributeBlock(Block &block) {
  for (Operation &op : llvm::make_early_inc_range(block.without_terminator())) {
    if (&op == threadId.getDefiningOp() || &op == threadCount.getDefiningOp() ||
        isa<NVVM::ThreadIdXOp, NVVM::BlockDimXOp>(op))
      continue;
    // Written for the whole block already (TileContractions.cpp).
    if (op.hasAttr(kBlockCooperativeAttr)) {
      op.removeAttr(kBlockCooperativeAttr);
      barrierAfter(&op);
      continue;
    }
    if (auto loop = dyn_cast<scf::ParallelOp>(op)) {
      if (failed(distributeParallelLoop(loop)))
        return failure();
      continue;
    }
    if (auto alloca = dyn_cast<memref::AllocaOp>(op)) {
      if (failed(moveToSharedMemory(alloca)))
        return failure();
      continue;
    }
    if (op.getNumRegions() > 0 && containsBlockWork(&op)) {
      // Uniform control flow around parallel work: every thread runs it and
      // distributes the loops inside.
      if (!isa<scf::ForOp, scf::IfOp>(op))
        return op.emitOpError("holds parallel loops the cuda target cannot "
                              "distribute over threads");
      for (Region &region : op.getRegions())
        for (Block &inner : region)
          if (failed(distributeBlock(inner)))
            return failure();
      continue;
    }
    if (mayWrite(&op) && failed(runOnFirstThread(&op)))
      return failure();
  }
  return success();
}

LogicalResult ThreadDistributor::distributeParallelLoop(scf::ParallelOp loop) {
  if (loop.getNumResults() != 0)
    return loop.emitOpError("reduces into results; the cuda target "
                            "distributes only loops without results");
  OpBuilder builder(loop);
  Location loc = loop.getLoc();
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  SmallVector<Value> tripCounts;
  Value total = one;
  for (auto [lower, upper, step] :
       llvm::zip(loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
    Value span = builder.createOrFold<arith::SubIOp>(loc, upper, lower);
    Value trips = builder.createOrFold<arith::CeilDivUIOp>(loc, span, step);
    // An empty range (upper below lower) runs nothing.
    trips = builder.createOrFold<arith::SelectOp>(
        loc,
        builder.createOrFold<arith::CmpIOp>(loc, arith::CmpIPredicate::slt,
                                            upper, lower),
        zero, trips);
    tripCounts.push_back(trips);
    total = builder.createOrFold<arith::MulIOp>(loc, total, trips);
  }
  auto threadLoop =
      scf::ForOp::create(builder, loc, threadId, total, threadCount);
  builder.setInsertionPointToStart(threadLoop.getBody());
  // The innermost dimension varies fastest between neighbouring threads.
  IRMapping mapping;
  Value remaining = threadLoop.getInductionVar();
  for (int64_t i = loop.getNumLoops() - 1; i >= 0; --i) {
    Value index = remaining;
    if (i > 0) {
      index = arith::RemUIOp::create(builder, loc, remaining, tripCounts[i]);
      remaining =
          arith::DivUIOp::create(builder, loc, remaining, tripCounts[i]);
    }
    Value scaled =
        builder.createOrFold<arith::MulIOp>(loc, index, loop.getStep()[i]);
    mapping.map(loop.getInductionVars()[i],
                builder.createOrFold<arith::AddIOp>(
                    loc, loop.getLowerBound()[i], scaled));
  }
  for (Operation &op : loop.getBody()->without_terminator())
    builder.clone(op, mapping);
  barrierAfter(threadLoop);
  loop.erase();
  return success();
}

LogicalResult ThreadDistributor::runOnFirstThread(Operation *op) {
  if (op->getNumResults() != 0)
    return op->emitOpError("writes memory and returns values outside any "
                           "parallel loop; the cuda target cannot run it on "
                           "one thread");
  OpBuilder builder(op);
  Location loc = op->getLoc();
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value isFirst = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq,
                                        threadId, zero);
  auto guard = scf::IfOp::create(builder, loc, isFirst, /*withElse=*/false);
  op->moveBefore(guard.thenBlock()->getTerminator());
  barrierAfter(guard);
  return success();
}

LogicalResult ThreadDistributor::moveToSharedMemory(memref::AllocaOp alloca) {
  MemRefType type = alloca.getType();
  if (!type.hasStaticShape() || !type.getLayout().isIdentity())
    return alloca.emitOpError("is a workgroup temporary of type ")
           << type << "; the cuda target needs a static shape";
  int64_t bytes = type.getNumElements() *
                  llvm::divideCeil(type.getElementTypeBitWidth(), 8);
  sharedBytes += llvm::alignTo(bytes, 16);
  if (sharedBytes > kMaxStaticSharedBytes)
    return alloca.emitOpError("needs ")
           << sharedBytes << " bytes of workgroup temporaries in all; a "
           << "thread block of the cuda target has " << kMaxStaticSharedBytes
           << " bytes of shared memory";
  MLIRContext *context = alloca.getContext();
  auto sharedType = MemRefType::get(
      type.getShape(), type.getElementType(), MemRefLayoutAttrInterface(),
      IntegerAttr::get(IntegerType::get(context, 64), kSharedAddressSpace));
  OpBuilder moduleBuilder(context);
  auto global = memref::GlobalOp::create(
      moduleBuilder, alloca.getLoc(), "__workgroup_temporary",
      moduleBuilder.getStringAttr("private"), sharedType,
      /*initial_value=*/UnitAttr::get(context), /*constant=*/false,
      moduleBuilder.getI64IntegerAttr(16));
  symbols.insert(global, symbols.getOp()->getRegion(0).front().begin());
  OpBuilder builder(alloca);
  Value shared = memref::GetGlobalOp::create(builder, alloca.getLoc(),
                                             sharedType, global.getSymName());
  Value generic =
      memref::MemorySpaceCastOp::create(builder, alloca.getLoc(), type, shared);
  alloca.replaceAllUsesWith(generic);
  alloca.erase();
  return success();
}

struct CUDADistributeToThreadsPass
    : public impl::CUDADistributeToThreadsPassBase<
          CUDADistributeToThreadsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      if (func.isPrivate() || func.isExternal())
        continue;
      if (failed(ThreadDistributor(func, symbols).run()))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace strata
