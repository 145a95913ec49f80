//===- HostConditionals.cpp - run-time branches of the host program -------===//
//
// A conditional of the host program holds, in each branch, calls of the
// functions OutlineConditionals made of its branches (or nothing but a
// choice among values defined above). It becomes a conditional on the
// host's condition whose results are buffer views: the branch passes its
// tensors to the callee as views (the callee checks them as any function
// checks its arguments) and yields the views the callee returns. After it,
// each result's buffer and dynamic dims are read off its view.
//
// The commands recorded so far are submitted and awaited first: the callee
// records and submits its own, which read what they write.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Dialect/HAL/HALDialect.h"
#include "strata/compiler/HostConversion/HostFunctionConverter.h"
#include "strata/compiler/Utils/ElementTypes.h"

#include "strata/hal/abi_enums.h"

using namespace mlir;

namespace strata::host_conversion {

FailureOr<Value> HostFunctionConverter::createView(Value tensor,
                                                   Operation *user) {
  auto it = storages.find(tensor);
  if (it == storages.end())
    return user->emitOpError("passes a tensor the host program does not hold");
  const Storage &storage = it->second;
  std::optional<int32_t> elementType =
      getElementTypeValue(storage.type.getElementType());
  if (!elementType)
    return user->emitOpError("passes a tensor of element type ")
           << storage.type.getElementType()
           << " that the runtime does not support";
  return hal::BufferViewCreateOp::create(
             builder, loc(), hal::BufferViewType::get(context()),
             storage.buffer, getOffset(storage), getByteLength(storage),
             constI32(*elementType),
             constI32(STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR),
             getDims(storage))
      .getResult();
}

LogicalResult HostFunctionConverter::convertBranch(Region &from, Region &to) {
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&to.front());
  auto viewType = hal::BufferViewType::get(context());
  // The views the calls in this branch return, by the tensor they stand for.
  DenseMap<Value, Value> views;
  for (Operation &op : from.front()) {
    currentLoc = op.getLoc();
    if (auto call = dyn_cast<func::CallOp>(op)) {
      SmallVector<Value> arguments;
      for (Value operand : call.getOperands()) {
        FailureOr<Value> view = createView(operand, call);
        if (failed(view))
          return failure();
        arguments.push_back(*view);
      }
      auto converted = func::CallOp::create(
          builder, loc(), call.getCallee(),
          SmallVector<Type>(call.getNumResults(), viewType), arguments);
      for (auto [result, view] :
           llvm::zip(call.getResults(), converted.getResults()))
        views[result] = view;
      continue;
    }
    if (auto yield = dyn_cast<scf::YieldOp>(op)) {
      SmallVector<Value> yielded;
      for (Value operand : yield.getOperands()) {
        if (Value view = views.lookup(operand)) {
          yielded.push_back(view);
          continue;
        }
        FailureOr<Value> view = createView(operand, yield);
        if (failed(view))
          return failure();
        yielded.push_back(*view);
      }
      scf::YieldOp::create(builder, loc(), yielded);
      continue;
    }
    return op.emitOpError("is in a branch of a run-time conditional; the "
                          "host program expects only calls there (the "
                          "branches outlined into functions)");
  }
  return success();
}

LogicalResult HostFunctionConverter::convertConditional(scf::IfOp conditional) {
  for (Type type : conditional.getResultTypes())
    if (!isa<RankedTensorType>(type))
      return conditional.emitOpError("has a result of type ")
             << type << "; only tensors can be the results of a run-time "
             << "conditional";
  if (commandBuffer)
    submitAndWait();
  auto viewType = hal::BufferViewType::get(context());
  auto converted = scf::IfOp::create(
      builder, loc(), SmallVector<Type>(conditional.getNumResults(), viewType),
      conditional.getCondition(), /*withElseRegion=*/true);
  // (Built without results, its branches already end in a yield.)
  for (Region &region : converted->getRegions())
    if (!region.front().empty())
      region.front().getTerminator()->erase();
  if (failed(convertBranch(conditional.getThenRegion(),
                           converted.getThenRegion())))
    return failure();
  if (conditional.getElseRegion().empty()) {
    OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointToStart(&converted.getElseRegion().front());
    scf::YieldOp::create(builder, loc());
  } else if (failed(convertBranch(conditional.getElseRegion(),
                                  converted.getElseRegion()))) {
    return failure();
  }
  currentLoc = conditional.getLoc();
  for (auto [result, view] :
       llvm::zip(conditional.getResults(), converted.getResults())) {
    auto type = cast<RankedTensorType>(result.getType());
    Storage storage{hal::BufferViewBufferOp::create(
                        builder, loc(), hal::BufferType::get(context()), view),
                    0, type};
    for (auto [index, size] : llvm::enumerate(type.getShape()))
      if (ShapedType::isDynamic(size))
        storage.dynamicDims.push_back(hal::BufferViewDimOp::create(
            builder, loc(), builder.getI64Type(), view, constI32(index)));
    storages[result] = storage;
  }
  deadOps.push_back(conditional);
  return success();
}

} // namespace strata::host_conversion
