//===- OutlineConditionals.cpp - run-time branches as calls ---------------===//
//
// A conditional of the host program (`scf.if` whose condition is known only
// at run time: an ONNX If on data, a program's own scf.if on tensors) runs
// one branch or the other, never both: a branch may be invalid for the
// inputs that select the other one. Each branch that computes something
// becomes a private function of its own, taking the tensors it reads from
// above and returning what it yields; the branch itself is left as one
// `func.call` and its `scf.yield`. Every later phase then sees straight-line
// functions (dispatch regions form and transients are planned within each),
// and only the host program carries control flow: a branch on the
// condition around a call.
//
// Scalars a branch reads from above (a dim, a size computed from dims, an
// element read back) are recomputed inside it from the tensors they come
// from, so that only tensors cross a function boundary; constants (the
// weights) are cloned into it, so that they stay constants there. Inner
// conditionals are outlined first; a branch holding one becomes a function that
// holds its call.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace strata {
#define GEN_PASS_DEF_OUTLINECONDITIONALSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Whether `op` is a conditional of the host program: directly in a
// function, or in a branch of such a conditional.
bool isHostConditional(scf::IfOp op) {
  Operation *parent = op->getParentOp();
  while (auto outer = dyn_cast<scf::IfOp>(parent))
    parent = outer->getParentOp();
  return isa<func::FuncOp>(parent);
}

// Whether the branch does more than yield values defined above (such a
// branch is left as it is: it only picks one of them).
bool computesSomething(Region &region) {
  return !region.empty() && !llvm::hasSingleElement(region.front());
}

// Clones into the branch the constants defined above that it yields: a
// branch that only picked one would yield a view of the module's read-only
// constant data to the caller; as a function returning a constant it gives
// a copy, as every function does.
void cloneYieldedConstants(Region &region) {
  if (region.empty())
    return;
  auto yield = cast<scf::YieldOp>(region.front().getTerminator());
  for (OpOperand &operand : yield->getOpOperands()) {
    Operation *producer = operand.get().getDefiningOp();
    if (!producer || region.isAncestor(producer->getParentRegion()) ||
        !matchPattern(operand.get(), m_Constant()))
      continue;
    OpBuilder builder = OpBuilder::atBlockBegin(&region.front());
    operand.set(builder.clone(*producer)->getResult(
        cast<OpResult>(operand.get()).getResultNumber()));
  }
}

// Whether a value read from above is recomputed in the branch rather than
// passed to its function: constants (weights stay constants the compiler
// can fold and pack) and every scalar.
bool isSunk(Value value) {
  return !isa<RankedTensorType>(value.getType()) ||
         matchPattern(value, m_Constant());
}

// Clones into the branch the producers of the constants and scalars it
// reads from above, until it reads only computed tensors.
LogicalResult sinkProducers(Region &region) {
  Block &block = region.front();
  while (true) {
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(region, captured);
    auto *sunk = llvm::find_if(captured, isSunk);
    if (sunk == captured.end())
      return success();
    Value value = *sunk;
    Operation *producer = value.getDefiningOp();
    if (!producer || producer->getNumRegions() != 0 ||
        !isMemoryEffectFree(producer)) {
      Operation *user = *llvm::find_if(value.getUsers(), [&](Operation *op) {
        return region.isAncestor(op->getParentRegion());
      });
      return user->emitError("a run-time conditional's branch uses a ")
             << value.getType()
             << " computed outside it that cannot be recomputed inside it; "
                "only tensors can be passed into a branch";
    }
    OpBuilder builder = OpBuilder::atBlockBegin(&block);
    Operation *clone = builder.clone(*producer);
    for (auto [original, copy] :
         llvm::zip(producer->getResults(), clone->getResults()))
      replaceAllUsesInRegionWith(original, copy, region);
  }
}

// Moves the ops of `region` into a new private function next to `parent`
// and leaves a call to it.
LogicalResult outlineBranch(Region &region, func::FuncOp parent,
                            StringRef suffix, SymbolTable &symbols) {
  if (failed(sinkProducers(region)))
    return failure();
  Block &block = region.front();
  auto yield = cast<scf::YieldOp>(block.getTerminator());
  for (Value value : yield.getOperands())
    if (!isa<RankedTensorType>(value.getType()))
      return yield.emitOpError("yields a ")
             << value.getType()
             << " from a run-time conditional; only tensors can be its "
                "results";
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(region, captured);

  OpBuilder builder(parent);
  builder.setInsertionPointAfter(parent);
  Location loc = region.getParentOp()->getLoc();
  auto callee = func::FuncOp::create(
      builder, loc, (parent.getSymName() + suffix).str(),
      builder.getFunctionType(ValueRange(captured.getArrayRef()).getTypes(),
                              yield.getOperandTypes()));
  callee.setPrivate();
  symbols.insert(callee);
  Block *entry = callee.addEntryBlock();
  entry->getOperations().splice(entry->end(), block.getOperations());
  for (auto [value, argument] : llvm::zip(captured, entry->getArguments()))
    replaceAllUsesInRegionWith(value, argument, callee.getBody());
  builder.setInsertionPoint(yield);
  func::ReturnOp::create(builder, yield.getLoc(), yield.getOperands());
  yield.erase();

  builder.setInsertionPointToEnd(&block);
  auto call = func::CallOp::create(builder, loc, callee,
                                   ValueRange(captured.getArrayRef()));
  scf::YieldOp::create(builder, loc, call.getResults());
  return success();
}

struct OutlineConditionalsPass
    : public impl::OutlineConditionalsPassBase<OutlineConditionalsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      // Post-order: inner conditionals first.
      SmallVector<scf::IfOp> conditionals;
      func.walk([&](scf::IfOp op) {
        if (isHostConditional(op))
          conditionals.push_back(op);
      });
      for (scf::IfOp op : conditionals) {
        cloneYieldedConstants(op.getThenRegion());
        cloneYieldedConstants(op.getElseRegion());
        if (computesSomething(op.getThenRegion()) &&
            failed(outlineBranch(op.getThenRegion(), func, "_then", symbols)))
          return signalPassFailure();
        if (computesSomething(op.getElseRegion()) &&
            failed(outlineBranch(op.getElseRegion(), func, "_else", symbols)))
          return signalPassFailure();
      }
    }
  }
};

} // namespace
} // namespace strata
