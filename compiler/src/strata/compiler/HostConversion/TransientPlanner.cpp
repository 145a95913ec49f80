//===- TransientPlanner.cpp -----------------------------------------------===//
#include "strata/compiler/HostConversion/TransientPlanner.h"

#include "strata/compiler/Dialect/Flow/FlowDialect.h"
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
    } else if (isReshape(&op)) {
      if (Value storage = storageOf.lookup(op.getOperand(0)))
        storageOf[op.getResult(0)] = storage;
    }
    ++index;
  }

  // First fit, in order of definition, among the intervals still live.
  SmallVector<std::pair<Interval, int64_t>> placed;
  for (Value storage : order) {
    if (escaping.contains(storage))
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
  plan.slabBytes = int64_t(llvm::alignTo(plan.slabBytes, kTransientAlignment));
  return plan;
}

} // namespace strata
