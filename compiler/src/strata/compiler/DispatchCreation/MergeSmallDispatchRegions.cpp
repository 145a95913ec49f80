//===- MergeSmallDispatchRegions.cpp - small dependent dispatches as one --===//
//
// A dispatch too small to split over workgroups still costs the runtime
// about a microsecond to record and run, whatever it computes: a
// recurrence unrolled into steps of a few microseconds (an LSTM's 2 x 32
// steps, each a matrix-vector product and its gates) pays it on every
// step. A small region that consumes results of the small region just
// before it joins that region: the merged dispatch runs both in order on
// one workgroup, and the values only the second one read stay inside it
// (stack temporaries) instead of going through memory the host allocates.
//
// Regions are merged only when each would run as one workgroup anyway
// (the workgroup split ConfigureExecutables would choose), so no
// parallelism is lost, and when every other value the later region reads
// is available before the earlier one, so the merged region can take the
// earlier one's place.
//
// One exception: a region that would split but does little work on little
// data (a recurrence's input projection) joins the one-workgroup region
// after it that reads its result, and the merged region runs as one
// workgroup (kSingleWorkgroupAttr). Split, it would save at most half of a
// few microseconds, while the one workgroup after it reads every result
// another core wrote: lstm's projections, 11 and 21 us in 4 workgroups,
// ran no faster on two workers than on one, and the model 5-9% slower on
// two. (A product streaming a matrix larger than a core's cache still
// splits: each core then streams half from its own, mlp's first layer
// 17.8 -> 8.8 us.)
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/WorkgroupTiling.h"
#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace strata {
#define GEN_PASS_DEF_MERGESMALLDISPATCHREGIONSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Linalg ops in one merged region at most: bounds the executable's size
// and compile time (an LSTM step has two).
constexpr int64_t kMaxMergedLinalgOps = 96;
// A value passed between merged regions becomes a stack temporary of the
// executable: only small ones are.
constexpr int64_t kMaxInternalBytes = 64 * 1024;

// A split region joins the one-workgroup region reading it with at most
// this many loop iterations (multiply-adds: about 20 us on one core) ...
constexpr int64_t kMaxSerialFeedIterations = int64_t(1) << 22;
// ... reading at most this many bytes from outside (within a core's share
// of L2).
constexpr int64_t kMaxSerialFeedInputBytes = 512 * 1024;

int64_t countLinalgOps(flow::DispatchRegionOp region) {
  int64_t count = 0;
  region.getBody().walk([&](linalg::LinalgOp) { ++count; });
  return count;
}

int64_t getByteSize(Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return std::numeric_limits<int64_t>::max();
  return shaped.getNumElements() *
         llvm::divideCeil(shaped.getElementTypeBitWidth(), 8);
}

// The loop iterations of every linalg op in `region`.
int64_t countIterations(flow::DispatchRegionOp region) {
  int64_t iterations = 0;
  region.getBody().walk([&](linalg::LinalgOp op) {
    int64_t opIterations = 1;
    for (int64_t range : op.getStaticLoopRanges())
      opIterations *= std::max<int64_t>(range, 1);
    iterations += opIterations;
  });
  return iterations;
}

// The bytes the linalg ops of `region` read from outside it or from
// constants (a matrix it multiplies by), each value once.
int64_t countInputBytes(flow::DispatchRegionOp region) {
  llvm::SmallDenseSet<Value> seen;
  int64_t bytes = 0;
  region.getBody().walk([&](linalg::LinalgOp op) {
    for (Value input : op.getDpsInputs()) {
      Operation *def = input.getDefiningOp();
      bool fromOutside = !def || !region->isProperAncestor(def);
      if ((fromOutside || isa<arith::ConstantOp>(def)) &&
          isa<RankedTensorType>(input.getType()) && seen.insert(input).second)
        bytes += getByteSize(input.getType());
    }
  });
  return bytes;
}

// How a region merges with its neighbours.
enum class RegionKind {
  // Anything else: merges with nothing.
  Other,
  // Runs as one workgroup: joins the one before it when it reads it.
  OneWorkgroup,
  // Would split, but does little on little data: the one-workgroup region
  // after it that reads it may join it (then one workgroup as well).
  SmallSplit,
};

// Whether `region` computes only with linalg ops (and views, constants,
// empty tensors), returns only their results, and how it would split over
// workgroups. (A dynamically shaped region's size is known only at run
// time: it is never small.)
RegionKind classifyRegion(flow::DispatchRegionOp region, unsigned vectorBits) {
  if (llvm::any_of(region.getResultTypes(), [](Type type) {
        return !cast<RankedTensorType>(type).hasStaticShape();
      }))
    return RegionKind::Other;
  Block &body = region.getBody().front();
  for (Operation &op : body.without_terminator()) {
    if (isa<linalg::LinalgOp, tensor::EmptyOp, tensor::ExtractSliceOp,
            tensor::ExpandShapeOp, tensor::CollapseShapeOp, arith::ConstantOp>(
            op))
      continue;
    if (op.getNumRegions() == 0 && isMemoryEffectFree(&op) &&
        llvm::none_of(op.getResultTypes(), llvm::IsaPred<ShapedType>))
      continue;
    return RegionKind::Other;
  }
  Operation *terminator = body.getTerminator();
  if (terminator->getNumOperands() == 0 ||
      llvm::any_of(terminator->getOperands(), [](Value value) {
        Operation *def = value.getDefiningOp();
        return !isa_and_present<linalg::LinalgOp, tensor::ExtractSliceOp,
                                tensor::ExpandShapeOp, tensor::CollapseShapeOp>(
            def);
      }))
    return RegionKind::Other;
  if (region->hasAttr(kSingleWorkgroupAttr))
    return RegionKind::OneWorkgroup;
  std::optional<WorkgroupTiling> tiling =
      chooseDispatchWorkgroupTiling(terminator, vectorBits);
  if (!tiling || tiling->count < 2)
    return RegionKind::OneWorkgroup;
  if (countIterations(region) <= kMaxSerialFeedIterations &&
      countInputBytes(region) <= kMaxSerialFeedInputBytes)
    return RegionKind::SmallSplit;
  return RegionKind::Other;
}

// Whether `value` can be read at `first`'s place: a block argument, a
// value of an enclosing block, or one defined before `first` in its block.
bool isAvailableBefore(Value value, Operation *first) {
  Operation *def = value.getDefiningOp();
  return !def || def->getBlock() != first->getBlock() ||
         def->isBeforeInBlock(first);
}

// The host reshapes (expand/collapse) `value` is made by, source first:
// empty when it is not a reshape.
SmallVector<Operation *> getReshapeChain(Value value) {
  SmallVector<Operation *> chain;
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(def))
      break;
    chain.push_back(def);
    value = def->getOperand(0);
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

// Whether `chain` (getReshapeChain) reshapes a result of `first` or a
// value available before it, each reshape's other operands (dynamic sizes)
// available before it too: the merged region reshapes the value itself.
bool isReshapeOfFirst(ArrayRef<Operation *> chain,
                      flow::DispatchRegionOp first) {
  if (chain.empty())
    return false;
  Value source = chain.front()->getOperand(0);
  if (source.getDefiningOp() != first.getOperation() &&
      !isAvailableBefore(source, first))
    return false;
  return llvm::all_of(chain, [&](Operation *reshape) {
    return llvm::all_of(reshape->getOperands().drop_front(), [&](Value size) {
      return isAvailableBefore(size, first);
    });
  });
}

// Whether only `next` reads `value`, directly or through reshapes (which
// the merge clones into it): merged, the value is a stack temporary.
bool isReadOnlyBy(Value value, flow::DispatchRegionOp next) {
  return llvm::all_of(value.getUsers(), [&](Operation *user) {
    if (next->isProperAncestor(user))
      return true;
    return isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(user) &&
           isReadOnlyBy(user->getResult(0), next);
  });
}

// Whether `next` may join `first`: it reads a result of `first`, every
// other value it reads is available before `first` (or reshapes of such
// a value or of a result of `first`), the results only it reads are small,
// and the merged region stays within bounds.
bool canMerge(flow::DispatchRegionOp first, flow::DispatchRegionOp next) {
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(next.getBody(), captured);
  bool readsFirst = false;
  for (Value value : captured) {
    if (value.getDefiningOp() == first.getOperation()) {
      readsFirst = true;
      continue;
    }
    SmallVector<Operation *> chain = getReshapeChain(value);
    if (isReshapeOfFirst(chain, first)) {
      readsFirst |=
          chain.front()->getOperand(0).getDefiningOp() == first.getOperation();
      continue;
    }
    if (!isAvailableBefore(value, first))
      return false;
  }
  if (!readsFirst ||
      countLinalgOps(first) + countLinalgOps(next) > kMaxMergedLinalgOps)
    return false;
  for (OpResult result : first->getResults())
    if (isReadOnlyBy(result, next) &&
        getByteSize(result.getType()) > kMaxInternalBytes)
      return false;
  return true;
}

// Replaces `first` and `next` by one region in `first`'s place: `first`'s
// body, then `next`'s reading `first`'s values directly. It returns the
// results of `first` something else still reads, then those of `next`.
flow::DispatchRegionOp merge(flow::DispatchRegionOp first,
                             flow::DispatchRegionOp next) {
  Block &firstBody = first.getBody().front();
  Block &nextBody = next.getBody().front();
  Operation *firstReturn = firstBody.getTerminator();
  Operation *nextReturn = nextBody.getTerminator();

  // Reshapes `next` reads from between the two regions: cloned into it,
  // source first.
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(next.getBody(), captured);
  OpBuilder cloner(&nextBody, nextBody.begin());
  for (Value value : captured) {
    if (value.getDefiningOp() == first.getOperation() ||
        isAvailableBefore(value, first))
      continue;
    SmallVector<Operation *> chain = getReshapeChain(value);
    IRMapping mapping;
    Operation *clone = nullptr;
    for (Operation *reshape : chain)
      clone = cloner.clone(*reshape, mapping);
    value.replaceUsesWithIf(clone->getResult(0), [&](OpOperand &use) {
      return next->isProperAncestor(use.getOwner());
    });
    // Read by nothing else, they no longer keep `first`'s result live.
    for (Operation *reshape : llvm::reverse(chain))
      if (reshape->use_empty())
        reshape->erase();
  }

  SmallVector<Value> returned;
  SmallVector<OpResult> replacedResults;
  for (OpResult result : first->getResults()) {
    bool readOutside = llvm::any_of(result.getUsers(), [&](Operation *user) {
      return !next->isProperAncestor(user);
    });
    if (!readOutside)
      continue;
    returned.push_back(firstReturn->getOperand(result.getResultNumber()));
    replacedResults.push_back(result);
  }
  for (OpResult result : next->getResults()) {
    returned.push_back(nextReturn->getOperand(result.getResultNumber()));
    replacedResults.push_back(result);
  }

  // `next` reads what `first` computed, not its results.
  for (OpResult result : first->getResults())
    result.replaceUsesWithIf(
        firstReturn->getOperand(result.getResultNumber()),
        [&](OpOperand &use) { return next->isProperAncestor(use.getOwner()); });

  OpBuilder builder(first);
  SmallVector<Type> types;
  for (Value value : returned)
    types.push_back(value.getType());
  auto merged = flow::DispatchRegionOp::create(builder, first.getLoc(), types);
  merged->setDiscardableAttrs(first->getDiscardableAttrDictionary());
  Block *body = new Block();
  merged.getBody().push_back(body);
  body->getOperations().splice(body->end(), firstBody.getOperations(),
                               firstBody.begin(), Block::iterator(firstReturn));
  body->getOperations().splice(body->end(), nextBody.getOperations(),
                               nextBody.begin(), Block::iterator(nextReturn));
  builder.setInsertionPointToEnd(body);
  flow::ReturnOp::create(builder, next.getLoc(), returned);

  for (auto [old, replacement] :
       llvm::zip(replacedResults, merged.getResults()))
    old.replaceAllUsesWith(replacement);
  next.erase();
  first.erase();
  return merged;
}

struct MergeSmallDispatchRegionsPass
    : public impl::MergeSmallDispatchRegionsPassBase<
          MergeSmallDispatchRegionsPass> {
  using MergeSmallDispatchRegionsPassBase::MergeSmallDispatchRegionsPassBase;

  void runOnOperation() override {
    if (vectorBits == 0)
      return;
    func::FuncOp func = getOperation();
    for (Block &block : func.getBody()) {
      flow::DispatchRegionOp current;
      for (Operation &op : llvm::make_early_inc_range(block)) {
        auto region = dyn_cast<flow::DispatchRegionOp>(op);
        if (!region)
          continue;
        RegionKind kind = classifyRegion(region, vectorBits);
        if (kind == RegionKind::Other) {
          current = nullptr;
          continue;
        }
        if (kind == RegionKind::OneWorkgroup && current &&
            canMerge(current, region)) {
          // (A small split region before it now runs as one workgroup
          // too; merge keeps the mark.)
          current->setAttr(kSingleWorkgroupAttr,
                           UnitAttr::get(region.getContext()));
          current = merge(current, region);
          continue;
        }
        current = region;
      }
    }
  }
};

} // namespace
} // namespace strata
