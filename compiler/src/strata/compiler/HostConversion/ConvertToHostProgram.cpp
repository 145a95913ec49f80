//===- ConvertToHostProgram.cpp - tensors to hal buffers ------------------===//
//
// Rewrites each host function from tensor values into explicit memory:
//   - public arguments and results become !hal.buffer_view; every argument
//     is asserted against its declared shape and element type so a wrong
//     input is a clear error naming it;
//   - each flow.dispatch gets result buffers from the device allocator and
//     is recorded into the function's command buffer, with an execution
//     barrier between dispatches;
//   - before returning, the command buffer is submitted and its fence
//     awaited, and results are wrapped into buffer views.
// The original tensor types are kept as `strata.abi.arguments/results` for
// reflection in the module file.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"
#include "strata/compiler/Utils/ElementTypes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "strata/hal/abi_enums.h"

namespace strata {
#define GEN_PASS_DEF_CONVERTTOHOSTPROGRAMPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

class HostFunctionConverter {
public:
  HostFunctionConverter(func::FuncOp func)
      : func(func), builder(func.getContext()) {}

  LogicalResult convert();

private:
  Value constI32(int64_t value) {
    return arith::ConstantOp::create(builder, loc(),
                                     builder.getI32IntegerAttr(value));
  }
  Value constI64(int64_t value) {
    return arith::ConstantOp::create(builder, loc(),
                                     builder.getI64IntegerAttr(value));
  }
  Location loc() { return currentLoc ? *currentLoc : func.getLoc(); }

  LogicalResult checkAbiType(Type type, StringRef what, unsigned index);
  LogicalResult convertDispatch(flow::DispatchOp dispatch);
  LogicalResult convertConstant(arith::ConstantOp constant);
  LogicalResult convertReshape(Operation *reshape);
  Value createCommandBuffer();
  LogicalResult convertReturn(func::ReturnOp ret);
  // The buffer holding `tensor` and the tensor's type (block arguments have
  // already been retyped to buffer views).
  Value bufferFor(Value tensor) { return buffers.lookup(tensor).first; }
  RankedTensorType tensorTypeOf(Value tensor) {
    return buffers.lookup(tensor).second;
  }
  SmallVector<Value> shapeValues(RankedTensorType type) {
    SmallVector<Value> dims;
    for (int64_t dim : type.getShape())
      dims.push_back(constI64(dim));
    return dims;
  }

  func::FuncOp func;
  OpBuilder builder;
  std::optional<Location> currentLoc;
  Value device, allocator, commandBuffer;
  DenseMap<Value, std::pair<Value, RankedTensorType>> buffers;
  // Tensors whose buffer is read-only constant data.
  DenseSet<Value> constants;
  SmallVector<Operation *> deadOps;
};

LogicalResult HostFunctionConverter::checkAbiType(Type type, StringRef what,
                                                  unsigned index) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return func.emitOpError() << what << " " << index << " has type " << type
                              << "; only tensors are supported at the "
                                 "function boundary so far";
  if (!tensorType.hasStaticShape())
    return func.emitOpError()
           << what << " " << index << " has dynamic shape " << type
           << "; dynamic shapes are not supported "
              "yet";
  if (!getElementTypeValue(tensorType.getElementType()))
    return func.emitOpError() << what << " " << index
                              << " has an element type the runtime does not "
                                 "support: "
                              << tensorType.getElementType();
  return success();
}

LogicalResult HostFunctionConverter::convert() {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("has control flow; only single-block host "
                            "functions are supported so far");
  FunctionType oldType = func.getFunctionType();
  for (auto [index, type] : llvm::enumerate(oldType.getInputs()))
    if (failed(checkAbiType(type, "argument", index)))
      return failure();
  for (auto [index, type] : llvm::enumerate(oldType.getResults()))
    if (failed(checkAbiType(type, "result", index)))
      return failure();

  MLIRContext *context = func.getContext();
  auto viewType = hal::BufferViewType::get(context);
  Block &entry = func.getBody().front();
  builder.setInsertionPointToStart(&entry);
  device = hal::DevicesGetOp::create(
      builder, loc(), hal::DeviceType::get(context), constI32(0));
  allocator = hal::DeviceAllocatorOp::create(
      builder, loc(), hal::AllocatorType::get(context), device);

  for (BlockArgument arg : entry.getArguments()) {
    auto tensorType = cast<RankedTensorType>(arg.getType());
    arg.setType(viewType);
    std::string message =
        ("argument " + Twine(arg.getArgNumber()) + " of @" + func.getSymName())
            .str();
    hal::BufferViewAssertOp::create(
        builder, loc(), arg, builder.getStringAttr(message),
        constI32(*getElementTypeValue(tensorType.getElementType())),
        constI32(STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR),
        shapeValues(tensorType));
    buffers[arg] = {hal::BufferViewBufferOp::create(
                        builder, loc(), hal::BufferType::get(context), arg),
                    tensorType};
  }

  for (Operation &op : llvm::make_early_inc_range(entry)) {
    if (op.getDialect() && isa<hal::HALDialect>(op.getDialect()))
      continue;
    currentLoc = op.getLoc();
    builder.setInsertionPoint(&op);
    if (auto dispatch = dyn_cast<flow::DispatchOp>(op)) {
      if (failed(convertDispatch(dispatch)))
        return failure();
      continue;
    }
    if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      if (failed(convertReturn(ret)))
        return failure();
      continue;
    }
    if (isa<arith::ConstantOp>(op) && !isa<ShapedType>(op.getResultTypes()[0]))
      continue;
    if (isa<tensor::EmptyOp, arith::ConstantOp>(op) && op.use_empty()) {
      op.erase();
      continue;
    }
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      if (failed(convertConstant(constant)))
        return failure();
      continue;
    }
    if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::ReshapeOp>(
            op)) {
      if (failed(convertReshape(&op)))
        return failure();
      continue;
    }
    return op.emitOpError("is not supported in the host program yet (only "
                          "dispatches may use tensors outside executables)");
  }

  for (Operation *op : llvm::reverse(deadOps))
    op->erase();

  SmallVector<Type> resultTypes(oldType.getNumResults(), viewType);
  func.setFunctionType(FunctionType::get(
      context, SmallVector<Type>(oldType.getNumInputs(), viewType),
      resultTypes));
  auto typeArray = [&](ArrayRef<Type> types) {
    SmallVector<Attribute> attrs;
    for (Type type : types)
      attrs.push_back(TypeAttr::get(type));
    return builder.getArrayAttr(attrs);
  };
  func->setAttr("strata.abi.arguments", typeArray(oldType.getInputs()));
  func->setAttr("strata.abi.results", typeArray(oldType.getResults()));
  return success();
}

// The function's one command buffer, created at its first command; later
// commands get a full barrier first (commands run in order; finer
// dependency tracking comes with the buffer planner).
Value HostFunctionConverter::createCommandBuffer() {
  if (commandBuffer) {
    hal::CommandBufferExecutionBarrierOp::create(
        builder, loc(), commandBuffer, constI32(-1), constI32(-1), constI32(0));
    return commandBuffer;
  }
  commandBuffer = hal::CommandBufferCreateOp::create(
      builder, loc(), hal::CommandBufferType::get(func.getContext()), device,
      constI32(STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT),
      constI32(STRATA_HAL_COMMAND_CATEGORY_DISPATCH |
               STRATA_HAL_COMMAND_CATEGORY_TRANSFER),
      constI64(STRATA_HAL_QUEUE_AFFINITY_ANY), constI32(0));
  return commandBuffer;
}

// Tensor constants live in the module's rodata; the buffer views them.
LogicalResult
HostFunctionConverter::convertConstant(arith::ConstantOp constant) {
  auto type = dyn_cast<RankedTensorType>(constant.getType());
  auto value = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!type || !value || !type.hasStaticShape() ||
      !getElementTypeValue(type.getElementType()))
    return constant.emitOpError("has a constant the host program cannot "
                                "store yet: ")
           << constant.getType();
  Value buffer = hal::ConstantBufferOp::create(
      builder, loc(), hal::BufferType::get(func.getContext()), value);
  buffers[constant.getResult()] = {buffer, type};
  constants.insert(constant.getResult());
  deadOps.push_back(constant);
  return success();
}

// Reshapes of dense row-major data keep the bytes: the result is the same
// buffer seen with another shape.
LogicalResult HostFunctionConverter::convertReshape(Operation *reshape) {
  Value source = reshape->getOperand(0);
  Value buffer = bufferFor(source);
  auto type = dyn_cast<RankedTensorType>(reshape->getResult(0).getType());
  if (!buffer || !type || !type.hasStaticShape())
    return reshape->emitOpError("reshapes a tensor the host program does not "
                                "hold");
  buffers[reshape->getResult(0)] = {buffer, type};
  if (constants.contains(source))
    constants.insert(reshape->getResult(0));
  deadOps.push_back(reshape);
  return success();
}

LogicalResult
HostFunctionConverter::convertDispatch(flow::DispatchOp dispatch) {
  MLIRContext *context = func.getContext();
  createCommandBuffer();

  SmallVector<Value> bindingBuffers, bindingOffsets, bindingLengths;
  for (Value operand : dispatch.getArguments()) {
    Value buffer = bufferFor(operand);
    if (!buffer)
      return dispatch.emitOpError("uses a tensor that is not produced by a "
                                  "dispatch or a function argument");
    bindingBuffers.push_back(buffer);
    bindingOffsets.push_back(constI64(0));
    bindingLengths.push_back(
        constI64(getStaticByteSize(tensorTypeOf(operand))));
  }
  for (Value result : dispatch.getResults()) {
    auto type = cast<RankedTensorType>(result.getType());
    if (!type.hasStaticShape())
      return dispatch.emitOpError("produces a dynamically shaped tensor; not "
                                  "supported yet");
    int64_t size = getStaticByteSize(type);
    Value buffer = hal::AllocatorAllocateOp::create(
        builder, loc(), hal::BufferType::get(context), allocator,
        constI64(STRATA_HAL_QUEUE_AFFINITY_ANY),
        constI32(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL |
                 STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE),
        constI32(STRATA_HAL_BUFFER_USAGE_DEFAULT), constI64(size));
    buffers[result] = {buffer, type};
    bindingBuffers.push_back(buffer);
    bindingOffsets.push_back(constI64(0));
    bindingLengths.push_back(constI64(size));
  }

  auto executable = hal::ExecutableLookupOp::create(
      builder, loc(), hal::ExecutableType::get(context),
      FlatSymbolRefAttr::get(dispatch.getExecutable().getRootReference()));
  ArrayRef<int64_t> workgroups = dispatch.getWorkgroupCount();
  hal::CommandBufferDispatchOp::create(
      builder, loc(), commandBuffer, executable, constI32(0),
      constI32(workgroups[0]), constI32(workgroups[1]), constI32(workgroups[2]),
      constI64(0), ValueRange{}, bindingBuffers, bindingOffsets,
      bindingLengths);
  // Later ops still use the results; erased once the function is done.
  deadOps.push_back(dispatch);
  return success();
}

LogicalResult HostFunctionConverter::convertReturn(func::ReturnOp ret) {
  MLIRContext *context = func.getContext();
  // Results are the caller's to keep and write; constant data is read-only
  // and shared, so the caller gets a copy.
  DenseMap<Value, Value> copies;
  for (Value operand : ret.getOperands()) {
    if (!constants.contains(operand) || copies.count(operand))
      continue;
    int64_t size = getStaticByteSize(tensorTypeOf(operand));
    Value copy = hal::AllocatorAllocateOp::create(
        builder, loc(), hal::BufferType::get(context), allocator,
        constI64(STRATA_HAL_QUEUE_AFFINITY_ANY),
        constI32(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL |
                 STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE),
        constI32(STRATA_HAL_BUFFER_USAGE_DEFAULT), constI64(size));
    createCommandBuffer();
    hal::CommandBufferCopyBufferOp::create(builder, loc(), commandBuffer,
                                           bufferFor(operand), constI64(0),
                                           copy, constI64(0), constI64(size));
    copies[operand] = copy;
  }
  if (commandBuffer) {
    hal::CommandBufferFinalizeOp::create(builder, loc(), commandBuffer);
    Value fence = hal::FenceCreateOp::create(
        builder, loc(), hal::FenceType::get(context), device, constI32(0));
    Value noFence =
        hal::NullFenceOp::create(builder, loc(), hal::FenceType::get(context));
    hal::DeviceQueueExecuteOp::create(
        builder, loc(), device, constI64(STRATA_HAL_QUEUE_AFFINITY_ANY),
        noFence, fence, ValueRange{commandBuffer});
    // A failed dispatch fails the await, which fails the call.
    hal::FenceAwaitOp::create(builder, loc(), builder.getI32Type(),
                              constI32(STRATA_HAL_WAIT_FOREVER),
                              ValueRange{fence});
  }
  SmallVector<Value> views;
  for (Value operand : ret.getOperands()) {
    Value buffer = copies.lookup(operand);
    if (!buffer)
      buffer = bufferFor(operand);
    if (!buffer)
      return ret.emitOpError("returns a tensor that is not produced by a "
                             "dispatch or a function argument");
    RankedTensorType type = tensorTypeOf(operand);
    views.push_back(hal::BufferViewCreateOp::create(
        builder, loc(), hal::BufferViewType::get(context), buffer, constI64(0),
        constI64(getStaticByteSize(type)),
        constI32(*getElementTypeValue(type.getElementType())),
        constI32(STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR), shapeValues(type)));
  }
  func::ReturnOp::create(builder, ret.getLoc(), views);
  ret.erase();
  return success();
}

struct ConvertToHostProgramPass
    : public impl::ConvertToHostProgramPassBase<ConvertToHostProgramPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.isPublic()) {
        func.emitOpError("private host functions are not supported yet");
        return signalPassFailure();
      }
      if (failed(HostFunctionConverter(func).convert()))
        return signalPassFailure();
    }
  }
};

} // namespace
} // namespace strata
