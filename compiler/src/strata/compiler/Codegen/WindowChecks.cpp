//===- WindowChecks.cpp - one bounds check per convolution window ---------===//

#include "strata/compiler/Codegen/WindowChecks.h"
#include "strata/compiler/Codegen/AccumulatorFills.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/CSE.h"

using namespace mlir;

namespace strata {
namespace {

// On the branch of a window check (readPaddedTileLanes) whose condition
// holds for every iteration of the tap loops around it: they are
// unswitched on it (unswitchWindowChecks).
constexpr llvm::StringLiteral kWindowCheckAttr = "strata.window_check";

// The register tile's tap loops around `op`: the marked reduction loops of
// constant bounds that enclose it directly, innermost first.
SmallVector<scf::ForOp> getEnclosingTapLoops(Operation *op) {
  SmallVector<scf::ForOp> loops;
  for (auto loop = dyn_cast_or_null<scf::ForOp>(op->getParentOp());
       loop && loop->hasAttr(kRegisterReductionLoopMarker) &&
       getConstantIntValue(loop.getLowerBound()) &&
       getConstantIntValue(loop.getUpperBound()) &&
       getConstantIntValue(loop.getStep());
       loop = dyn_cast_or_null<scf::ForOp>(loop->getParentOp()))
    loops.push_back(loop);
  return loops;
}

// The coefficient of dimension `dim` in `expr` when `expr` is linear in it
// (no division or modulo of it).
std::optional<int64_t> getLinearCoefficient(AffineExpr expr, unsigned dim,
                                            unsigned numDims,
                                            unsigned numSymbols) {
  bool linear = true;
  expr.walk([&](AffineExpr sub) {
    auto binary = dyn_cast<AffineBinaryOpExpr>(sub);
    if (binary && binary.getKind() != AffineExprKind::Add &&
        binary.getKind() != AffineExprKind::Mul && binary.isFunctionOfDim(dim))
      linear = false;
  });
  if (!linear || !expr.isPureAffine())
    return std::nullopt;
  MLIRContext *context = expr.getContext();
  auto evaluate = [&](int64_t value) -> std::optional<int64_t> {
    SmallVector<AffineExpr> dims(numDims, getAffineConstantExpr(0, context));
    SmallVector<AffineExpr> symbols(numSymbols,
                                    getAffineConstantExpr(0, context));
    dims[dim] = getAffineConstantExpr(value, context);
    auto result = dyn_cast<AffineConstantExpr>(
        simplifyAffineExpr(expr.replaceDimsAndSymbols(dims, symbols), 0, 0));
    return result ? std::optional(result.getValue()) : std::nullopt;
  };
  std::optional<int64_t> at0 = evaluate(0), at1 = evaluate(1);
  if (!at0 || !at1)
    return std::nullopt;
  return *at1 - *at0;
}

// The least and greatest value `position` (an index inside `loops`) takes
// over every iteration of `loops`, built before the outermost of them; none
// when it is not an affine function of their induction variables and of
// values defined outside them.
std::optional<std::pair<OpFoldResult, OpFoldResult>>
getRangeOverLoops(OpBuilder &builder, Location loc, OpFoldResult position,
                  ArrayRef<scf::ForOp> loops) {
  auto value = dyn_cast<Value>(position);
  if (!value)
    return std::pair(position, position);
  Operation *outermost = loops.back();
  auto isInside = [&](Value v) {
    Operation *owner = isa<BlockArgument>(v)
                           ? cast<BlockArgument>(v).getOwner()->getParentOp()
                           : v.getDefiningOp();
    return outermost->isAncestor(owner);
  };
  AffineMap map;
  SmallVector<Value> operands;
  if (auto apply = value.getDefiningOp<affine::AffineApplyOp>()) {
    map = apply.getAffineMap();
    operands = llvm::to_vector(apply.getMapOperands());
  } else {
    map = AffineMap::get(1, 0, getAffineDimExpr(0, builder.getContext()));
    operands = {value};
  }
  SmallVector<AffineExpr> least, greatest;
  MLIRContext *context = builder.getContext();
  for (auto [index, operand] : llvm::enumerate(operands)) {
    AffineExpr kept =
        index < map.getNumDims()
            ? getAffineDimExpr(index, context)
            : getAffineSymbolExpr(index - map.getNumDims(), context);
    const scf::ForOp *found = llvm::find_if(
        loops, [&](scf::ForOp l) { return l.getInductionVar() == operand; });
    if (found == loops.end()) {
      if (isInside(operand))
        return std::nullopt;
      least.push_back(kept);
      greatest.push_back(kept);
      continue;
    }
    std::optional<int64_t> coefficient =
        index < map.getNumDims()
            ? getLinearCoefficient(map.getResult(0), index, map.getNumDims(),
                                   map.getNumSymbols())
            : std::nullopt;
    if (!coefficient)
      return std::nullopt;
    scf::ForOp loop = *found;
    int64_t lb = *getConstantIntValue(loop.getLowerBound());
    int64_t ub = *getConstantIntValue(loop.getUpperBound());
    int64_t step = *getConstantIntValue(loop.getStep());
    if (ub <= lb)
      return std::nullopt;
    int64_t last = lb + (ub - 1 - lb) / step * step;
    AffineExpr first = getAffineConstantExpr(lb, context);
    AffineExpr final = getAffineConstantExpr(last, context);
    least.push_back(*coefficient >= 0 ? first : final);
    greatest.push_back(*coefficient >= 0 ? final : first);
  }
  auto build = [&](ArrayRef<AffineExpr> replacements) {
    AffineExpr expr = map.getResult(0).replaceDimsAndSymbols(
        replacements.take_front(map.getNumDims()),
        replacements.drop_front(map.getNumDims()));
    auto replaced =
        AffineMap::get(map.getNumDims(), map.getNumSymbols(), expr, context);
    // The loops' variables are constants in `expr` now; none of them may
    // be an operand before the loops.
    SmallVector<OpFoldResult> foldOperands;
    for (Value operand : operands)
      foldOperands.push_back(isInside(operand)
                                 ? OpFoldResult(builder.getIndexAttr(0))
                                 : OpFoldResult(operand));
    return affine::makeComposedFoldedAffineApply(builder, loc, replaced,
                                                 foldOperands);
  };
  return std::pair(build(least), build(greatest));
}

// The ops of `block` that `read` needs, itself last, in block order, when
// all of them but `read` are side-effect free and everything else they use
// is defined outside `versions`; empty otherwise.
SmallVector<Operation *> getReadSlice(Operation *read, Block *block,
                                      scf::IfOp versions) {
  SmallVector<Operation *> slice;
  SmallVector<Operation *> worklist = {read};
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (llvm::is_contained(slice, op))
      continue;
    if (op->getNumRegions() != 0 || (op != read && !isPure(op)))
      return {};
    slice.push_back(op);
    for (Value operand : op->getOperands()) {
      Operation *owner = operand.getParentBlock()->getParentOp();
      if (!versions->isAncestor(owner))
        continue;
      Operation *producer = operand.getDefiningOp();
      if (!producer || producer->getBlock() != block)
        return {};
      worklist.push_back(producer);
    }
  }
  llvm::sort(slice,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  return slice;
}

// Moves above `versions` the reads that `canReadAhead` allows in either of
// its (unrolled) versions, a filter's vectors but never the padded source,
// in bounds only where the check holds, with the index arithmetic and views
// they need. Both versions then share those reads, and LLVM keeps them out
// of the loop over tiles as it did when only the input loads were
// conditional (a 3x3 NHWC depthwise convolution reloaded its 18 filter
// vectors per tile, 8%). What only one version needs stays in it.
void hoistSharedReads(scf::IfOp versions,
                      function_ref<bool(Value)> canReadAhead) {
  for (Block *block : {versions.thenBlock(), versions.elseBlock()}) {
    SmallVector<Operation *> reads;
    for (Operation &op : block->without_terminator()) {
      Value memref;
      if (auto read = dyn_cast<vector::TransferReadOp>(op))
        memref = read.getBase();
      else if (auto load = dyn_cast<memref::LoadOp>(op))
        memref = load.getMemRef();
      if (memref && canReadAhead(memref))
        reads.push_back(&op);
    }
    for (Operation *read : reads)
      for (Operation *op : getReadSlice(read, block, versions))
        op->moveBefore(versions);
  }
}

// Marks the versions of an unswitched window (unswitchWindowChecks).
constexpr llvm::StringLiteral kWindowVersionsAttr = "strata.window_versions";

// The outermost tap loop around `branch` (a window check) that its
// condition is defined outside of, or null.
scf::ForOp getUnswitchedLoop(scf::IfOp branch) {
  Operation *definedIn = branch.getCondition().getParentBlock()->getParentOp();
  scf::ForOp outermost;
  for (scf::ForOp loop : getEnclosingTapLoops(branch)) {
    if (loop->isAncestor(definedIn))
      break;
    outermost = loop;
  }
  return outermost;
}

// Tiles of a row peeled at most: from 3 to this many, its first and last
// tile are a sixteenth or more of its work (a 56-pixel row's 14 tiles of
// 4: 0.131 -> 0.112 ms for a 5x5 depthwise convolution). Past it, the
// masked tiles cost little and the copies more (a 112-pixel row's 56
// tiles of 2: 0.133 -> 0.144 ms).
constexpr int64_t kMaxPeeledRow = 32;

// The first and the last tile of the loop over tiles around `taps` (the
// tap loops of a window check) as iterations of their own, when the check
// depends on that loop and it has 3 to kMaxPeeledRow iterations: their
// positions are then constants, and so are the checks and masks along the
// loop's dimension (a row of pixels' first and last tiles meet its
// padding; those between lie inside it). No-op otherwise.
void peelBorderTiles(RewriterBase &rewriter, scf::ForOp taps, Value condition) {
  auto tiles = dyn_cast_or_null<scf::ForOp>(taps->getParentOp());
  if (!tiles || !tiles->isAncestor(condition.getParentBlock()->getParentOp()))
    return;
  std::optional<APInt> trips = tiles.getStaticTripCount();
  std::optional<int64_t> lb = getConstantIntValue(tiles.getLowerBound());
  std::optional<int64_t> step = getConstantIntValue(tiles.getStep());
  if (!trips || !lb || !step || trips->getZExtValue() < 3 ||
      trips->getZExtValue() > kMaxPeeledRow)
    return;
  // The last tile: the loop stops one step short, and a copy of it runs
  // that step.
  int64_t lastStart = *lb + (int64_t(trips->getZExtValue()) - 1) * *step;
  rewriter.setInsertionPointAfter(tiles);
  Location loc = tiles.getLoc();
  auto last = cast<scf::ForOp>(rewriter.clone(*tiles));
  rewriter.modifyOpInPlace(last, [&] {
    last.setLowerBound(
        arith::ConstantIndexOp::create(rewriter, loc, lastStart));
    last.getInitArgsMutable().assign(tiles.getResults());
  });
  for (auto [result, replacement] :
       llvm::zip(tiles.getResults(), last.getResults()))
    rewriter.replaceAllUsesExcept(result, replacement, last);
  rewriter.setInsertionPoint(tiles);
  rewriter.modifyOpInPlace(tiles, [&] {
    tiles.setUpperBound(
        arith::ConstantIndexOp::create(rewriter, loc, lastStart));
  });
  scf::ForOp first;
  (void)scf::peelForLoopFirstIteration(rewriter, tiles, first);
  if (first)
    (void)first.promoteIfSingleIteration(rewriter);
  (void)last.promoteIfSingleIteration(rewriter);
}

// Versions the loop nest `outermost` on the condition of `branch` inside
// it: plain loads in one copy, `branch`'s other reads in the other.
void unswitchWindowCheck(RewriterBase &rewriter, scf::IfOp branch,
                         scf::ForOp outermost) {
  rewriter.setInsertionPoint(outermost);
  Location loc = outermost.getLoc();
  auto versions = scf::IfOp::create(
      rewriter, loc, outermost.getResultTypes(), branch.getCondition(),
      /*addThenBlock=*/true, /*addElseBlock=*/true);
  versions->setAttr(kWindowVersionsAttr, rewriter.getUnitAttr());
  for (bool taken : {true, false}) {
    Block *block = taken ? versions.thenBlock() : versions.elseBlock();
    bool hasTerminator = block->mightHaveTerminator();
    if (hasTerminator)
      rewriter.setInsertionPoint(block->getTerminator());
    else
      rewriter.setInsertionPointToEnd(block);
    IRMapping mapping;
    Operation *clone = rewriter.clone(*outermost, mapping);
    auto copy = cast<scf::IfOp>(mapping.lookup(branch.getOperation()));
    copy->removeAttr(kWindowCheckAttr);
    Block *chosen = taken ? copy.thenBlock() : copy.elseBlock();
    auto yield = cast<scf::YieldOp>(chosen->getTerminator());
    SmallVector<Value> yielded(yield.getOperands());
    rewriter.eraseOp(yield);
    rewriter.inlineBlockBefore(chosen, copy);
    rewriter.replaceOp(copy, yielded);
    if (!hasTerminator)
      scf::YieldOp::create(rewriter, loc, clone->getResults());
  }
  rewriter.replaceOp(outermost, versions.getResults());
}

SmallVector<scf::IfOp> collectWindowChecks(func::FuncOp func) {
  SmallVector<scf::IfOp> branches;
  func.walk([&](scf::IfOp branch) {
    if (branch->hasAttr(kWindowCheckAttr))
      branches.push_back(branch);
  });
  return branches;
}

} // namespace

Value buildInsideCheck(OpBuilder &builder, Location loc,
                       ArrayRef<std::pair<OpFoldResult, int64_t>> positions) {
  Value inside;
  for (auto [position, size] : positions) {
    std::optional<int64_t> constant = getConstantIntValue(position);
    if (constant && *constant >= 0 && *constant < size)
      continue;
    Value ok = arith::CmpIOp::create(
        builder, loc, arith::CmpIPredicate::ult,
        getValueOrCreateConstantIndexOp(builder, loc, position),
        arith::ConstantIndexOp::create(builder, loc, size));
    inside = inside ? arith::AndIOp::create(builder, loc, inside, ok) : ok;
  }
  return inside;
}

Value buildWindowCheck(OpBuilder &builder, Location loc,
                       ArrayRef<std::pair<OpFoldResult, int64_t>> positions) {
  Block::iterator point = builder.getInsertionPoint();
  if (point == builder.getInsertionBlock()->end())
    return nullptr;
  SmallVector<scf::ForOp> loops = getEnclosingTapLoops(&*point);
  if (loops.empty())
    return nullptr;
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPoint(loops.back());
  SmallVector<std::pair<OpFoldResult, int64_t>> extremes;
  for (auto [position, size] : positions) {
    auto range = getRangeOverLoops(builder, loc, position, loops);
    if (!range)
      return nullptr;
    extremes.push_back({range->first, size});
    extremes.push_back({range->second, size});
  }
  return buildInsideCheck(builder, loc, extremes);
}

void markWindowCheck(scf::IfOp branch) {
  branch->setAttr(kWindowCheckAttr, UnitAttr::get(branch.getContext()));
}

void unswitchWindowChecks(RewriterBase &rewriter, func::FuncOp func) {
  // Border tiles first: their copies of the checks are unswitched too.
  llvm::SmallPtrSet<Operation *, 8> peeled;
  for (scf::IfOp branch : collectWindowChecks(func)) {
    scf::ForOp taps = getUnswitchedLoop(branch);
    if (taps && peeled.insert(taps->getParentOp()).second)
      peelBorderTiles(rewriter, taps, branch.getCondition());
  }
  // One check at a time: unswitching clones the loop nest, with any other
  // check in it.
  while (true) {
    SmallVector<scf::IfOp> branches = collectWindowChecks(func);
    if (branches.empty())
      break;
    scf::IfOp branch = branches.front();
    if (scf::ForOp outermost = getUnswitchedLoop(branch))
      unswitchWindowCheck(rewriter, branch, outermost);
    else
      branch->removeAttr(kWindowCheckAttr);
  }
}

void hoistWindowSharedReads(RewriterBase &rewriter, func::FuncOp func,
                            function_ref<bool(Value)> canReadAhead) {
  bool hoisted = false;
  func.walk([&](scf::IfOp versions) {
    if (!versions->hasAttr(kWindowVersionsAttr))
      return;
    versions->removeAttr(kWindowVersionsAttr);
    hoistSharedReads(versions, canReadAhead);
    hoisted = true;
  });
  // The two versions' copies of a read are one read now (only where there
  // were versions: hoistAccumulatorTiles ran CSE over the rest).
  if (!hoisted)
    return;
  DominanceInfo dominance(func);
  eliminateCommonSubExpressions(rewriter, dominance, func);
}

} // namespace strata
