//===- TransientPlanner.cpp -----------------------------------------------===//
#include "strata/compiler/HostConversion/TransientPlanner.h"

#include "strata/compiler/Dialect/Flow/FlowDialect.h"
#include "strata/compiler/Utils/ContiguousConcat.h"
#include "strata/compiler/Utils/ElementTypes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace strata {

namespace {

struct Interval {
  Value storage;
  int64_t begin, end; // op indices, inclusive
  int64_t bytes;
};

bool isReshape(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ReshapeOp>(
      op);
}

// Places `storages` first fit, in order of definition, among the intervals
// still live; returns the bytes they span.
int64_t placeFirstFit(ArrayRef<Value> storages,
                      const DenseMap<Value, Interval> &intervals,
                      function_ref<void(Value, int64_t)> setOffset) {
  int64_t slabBytes = 0;
  SmallVector<std::pair<Interval, int64_t>> placed;
  for (Value storage : storages) {
    Interval interval = intervals.lookup(storage);
    SmallVector<std::pair<int64_t, int64_t>> busy;
    for (auto &[other, offset] : placed)
      if (other.end >= interval.begin && other.begin <= interval.end)
        busy.push_back({offset, offset + other.bytes});
    llvm::sort(busy);
    int64_t offset = 0;
    for (auto [begin, end] : busy) {
      if (offset + interval.bytes <= begin)
        break;
      offset =
          std::max<int64_t>(offset, llvm::alignTo(end, kTransientAlignment));
    }
    placed.push_back({interval, offset});
    setOffset(storage, offset);
    slabBytes = std::max(slabBytes, offset + interval.bytes);
  }
  return int64_t(llvm::alignTo(slabBytes, kTransientAlignment));
}

// The bytes of `type` with each dynamic dim taken as 1.
int64_t getUnitByteSize(RankedTensorType type) {
  SmallVector<int64_t> shape(type.getShape());
  for (int64_t &dim : shape)
    if (ShapedType::isDynamic(dim))
      dim = 1;
  return getStaticByteSize(type.clone(shape));
}

} // namespace

TransientPlan planTransients(func::FuncOp func) {
  TransientPlan plan;
  if (!func.getBody().hasOneBlock())
    return plan;
  Block &block = func.getBody().front();

  // Storage of every tensor value: a dispatch result, or what a reshape
  // chain starts from.
  DenseMap<Value, Value> storageOf;
  DenseMap<Value, Interval> intervals;
  SmallVector<Value> order;
  DenseSet<Value> escaping;
  // Storages written inside a contiguous concatenation: the concatenation's
  // result and the byte offset there.
  DenseMap<Value, std::pair<Value, int64_t>> placedIn;
  // Dynamically sized storages, per scaled slab, in order of definition.
  SmallVector<SmallVector<Value>> scaledStorages;
  int64_t index = 0;
  for (Operation &op : block) {
    // What a conditional's branches read is passed to the functions they
    // call, which may return it: it gets its own buffer, like a result.
    llvm::SetVector<Value> readByBranches;
    getUsedValuesDefinedAbove(op.getRegions(), readByBranches);
    SmallVector<Value> operands(op.getOperands());
    llvm::append_range(operands, readByBranches);
    for (Value operand : operands) {
      Value storage = storageOf.lookup(operand);
      if (!storage)
        continue;
      intervals[storage].end = index;
      if (isa<func::ReturnOp>(op) || readByBranches.contains(operand))
        escaping.insert(storage);
    }
    if (auto dispatch = dyn_cast<flow::DispatchOp>(op)) {
      ValueRange resultDims = dispatch.getResultDims();
      for (Value result : dispatch.getResults()) {
        auto type = cast<RankedTensorType>(result.getType());
        storageOf[result] = result;
        if (!type.hasStaticShape()) {
          // Its slab: the one of the same product of dims.
          SmallVector<Value> factors(
              resultDims.take_front(type.getNumDynamicDims()));
          resultDims = resultDims.drop_front(type.getNumDynamicDims());
          llvm::sort(factors, [](Value a, Value b) {
            return a.getAsOpaquePointer() < b.getAsOpaquePointer();
          });
          auto *slab = llvm::find_if(plan.scaledSlabs,
                                     [&](const ScaledTransientSlab &candidate) {
                                       return candidate.factors == factors;
                                     });
          unsigned slabIndex = slab - plan.scaledSlabs.begin();
          if (slab == plan.scaledSlabs.end()) {
            plan.scaledSlabs.push_back({factors, 0});
            scaledStorages.emplace_back();
          }
          scaledStorages[slabIndex].push_back(result);
          intervals[result] = {result, index, index, getUnitByteSize(type)};
          continue;
        }
        intervals[result] = {result, index, index, getStaticByteSize(type)};
        order.push_back(result);
      }
    } else if (auto concat = dyn_cast<tensor::ConcatOp>(op);
               concat && isContiguousConcat(concat)) {
      Value result = concat.getResult();
      storageOf[result] = result;
      intervals[result] = {result, index, index,
                           getStaticByteSize(concat.getResultType())};
      order.push_back(result);
      int64_t offset = 0;
      for (Value input : concat.getInputs()) {
        // A dispatch result (or an inner concatenation) with no other use,
        // at an offset as aligned as any storage's.
        if (storageOf.lookup(input) == input && input.hasOneUse() &&
            offset % kHostConcatAlignment == 0)
          placedIn[input] = {result, offset};
        offset += getStaticByteSize(cast<ShapedType>(input.getType()));
      }
    } else if (isReshape(&op)) {
      if (Value storage = storageOf.lookup(op.getOperand(0)))
        storageOf[op.getResult(0)] = storage;
    }
    ++index;
  }

  // A concatenation the function returns has its own buffer: its operands
  // are copied there. The others start where their first in-place operand
  // is written (in order of definition, so an inner concatenation's start
  // is known before the outer one's).
  for (Value storage : order) {
    auto it = placedIn.find(storage);
    if (it == placedIn.end())
      continue;
    if (escaping.contains(it->second.first)) {
      placedIn.erase(it);
      continue;
    }
    Interval &outer = intervals[it->second.first];
    outer.begin = std::min(outer.begin, intervals[storage].begin);
  }

  SmallVector<Value> planned;
  for (Value storage : order)
    if (!escaping.contains(storage) && !placedIn.contains(storage))
      planned.push_back(storage);
  plan.slabBytes =
      placeFirstFit(planned, intervals, [&](Value storage, int64_t offset) {
        plan.offsets[storage] = offset;
      });
  for (auto [slabIndex, slab] : llvm::enumerate(plan.scaledSlabs)) {
    SmallVector<Value> inSlab;
    for (Value storage : scaledStorages[slabIndex])
      if (!escaping.contains(storage))
        inSlab.push_back(storage);
    slab.unitBytes =
        placeFirstFit(inSlab, intervals, [&](Value storage, int64_t offset) {
          plan.scaledOffsets[storage] = {unsigned(slabIndex), offset};
        });
  }
  // In-place operands lie at their offset inside the concatenation (inner
  // concatenations resolved before their operands: definition order
  // reversed).
  for (Value storage : llvm::reverse(order)) {
    auto it = placedIn.find(storage);
    if (it == placedIn.end())
      continue;
    plan.offsets[storage] =
        plan.offsets.lookup(it->second.first) + it->second.second;
    plan.inPlaceConcatOperands.insert(storage);
  }
  return plan;
}

} // namespace strata
