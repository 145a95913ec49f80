//===- TransientPlanner.cpp -----------------------------------------------===//
#include "strata/compiler/HostConversion/TransientPlanner.h"

#include "strata/compiler/Dialect/Flow/FlowDialect.h"
#include "strata/compiler/Utils/ContiguousConcat.h"
#include "strata/compiler/Utils/ElementTypes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
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
  int64_t index = 0;
  for (Operation &op : block) {
    for (Value operand : op.getOperands()) {
      Value storage = storageOf.lookup(operand);
      if (!storage)
        continue;
      intervals[storage].end = index;
      if (isa<func::ReturnOp>(op))
        escaping.insert(storage);
    }
    if (auto dispatch = dyn_cast<flow::DispatchOp>(op)) {
      for (Value result : dispatch.getResults()) {
        auto type = cast<RankedTensorType>(result.getType());
        if (!type.hasStaticShape())
          continue;
        storageOf[result] = result;
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

  // First fit, in order of definition, among the intervals still live.
  SmallVector<std::pair<Interval, int64_t>> placed;
  for (Value storage : order) {
    if (escaping.contains(storage) || placedIn.contains(storage))
      continue;
    Interval interval = intervals[storage];
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
    plan.offsets[storage] = offset;
    plan.slabBytes = std::max(plan.slabBytes, offset + interval.bytes);
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
  plan.slabBytes = int64_t(llvm::alignTo(plan.slabBytes, kTransientAlignment));
  return plan;
}

} // namespace strata
