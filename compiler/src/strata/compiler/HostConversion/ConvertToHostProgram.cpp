//===- ConvertToHostProgram.cpp - tensors to hal buffers ------------------===//
//
// Rewrites each host function from tensor values into explicit memory:
//   - public arguments and results become !hal.buffer_view; every argument
//     is asserted against its declared shape and element type so a wrong
//     input is a clear error naming it;
//   - intermediates live in one transient slab per call, at offsets the
//     TransientPlanner chose (bytes reused when lifetimes do not overlap),
//     those of dynamic size in a slab per product of dims, its size and
//     their offsets scaled by that product at run time (allocated where
//     the first of them is made); results get their own buffers from the
//     device allocator;
//   - reshapes are views of the same bytes, tensor constants are read-only
//     buffers over module rodata; a contiguous concatenation is a buffer
//     its operands' dispatches write into (copies for the rest);
//   - a run-time conditional's branches call private functions
//     (OutlineConditionals), converted like public ones: tensors cross
//     as buffer views (HostConditionals.cpp);
//   - dispatches are recorded into one command buffer with an execution
//     barrier between commands, submitted once and awaited before the
//     results are wrapped into buffer views (and also before an element
//     the host reads back, a size computed from data: the commands after
//     it go into a new command buffer); each dispatch is a numbered
//     call site (its number in the dispatch flags, for profiles) listed in
//     the module's `strata.dispatch_sites` with its name and FLOP count.
// The original tensor types are kept as `strata.abi.arguments/results` for
// reflection in the module file, and the static slab's size as
// `strata.transient_bytes`.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/DispatchCreation/DispatchNames.h"
#include "strata/compiler/HostConversion/HostFunctionConverter.h"
#include "strata/compiler/Passes.h"
#include "strata/compiler/Utils/ElementTypes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "strata/hal/abi_enums.h"

namespace strata {
#define GEN_PASS_DEF_CONVERTTOHOSTPROGRAMPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata::host_conversion {

LogicalResult HostFunctionConverter::checkAbiType(Type type, StringRef what,
                                                  unsigned index) {
  auto tensorType = dyn_cast<RankedTensorType>(type);
  if (!tensorType)
    return func.emitOpError() << what << " " << index << " has type " << type
                              << "; only tensors are supported at the "
                                 "function boundary so far";
  if (!getElementTypeValue(tensorType.getElementType()))
    return func.emitOpError() << what << " " << index
                              << " has an element type the runtime does not "
                                 "support: "
                              << tensorType.getElementType();
  return success();
}

Value HostFunctionConverter::allocate(int64_t bytes, bool hostVisible) {
  return allocate(constI64(bytes), hostVisible);
}

Value HostFunctionConverter::allocate(Value bytes, bool hostVisible) {
  return hal::AllocatorAllocateOp::create(
      builder, loc(), hal::BufferType::get(context()), allocator,
      constI64(STRATA_HAL_QUEUE_AFFINITY_ANY),
      constI32(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL |
               (hostVisible ? STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE : 0)),
      constI32(STRATA_HAL_BUFFER_USAGE_DEFAULT), bytes);
}

SmallVector<Value> HostFunctionConverter::getDims(const Storage &storage) {
  SmallVector<Value> dims;
  unsigned next = 0;
  for (int64_t dim : storage.type.getShape())
    dims.push_back(ShapedType::isDynamic(dim) ? storage.dynamicDims[next++]
                                              : constI64(dim));
  return dims;
}

Value HostFunctionConverter::getByteLength(const Storage &storage) {
  if (storage.type.hasStaticShape())
    return constI64(getStaticByteSize(storage.type));
  // Sub-byte elements are stored one per byte, as getStaticByteSize does.
  int64_t elementBytes = getStaticByteSize(
      RankedTensorType::get({}, storage.type.getElementType()));
  Value bytes = constI64(elementBytes);
  for (Value dim : getDims(storage))
    bytes = arith::MulIOp::create(builder, loc(), bytes, dim);
  return bytes;
}

Value HostFunctionConverter::getScalar(Value value) {
  if (Value known = scalars.lookup(value))
    return known;
  if (auto constant = value.getDefiningOp<arith::ConstantIndexOp>())
    return constI64(constant.value());
  return Value();
}

// Host arithmetic on index values (shapes): the same op on i64.
LogicalResult HostFunctionConverter::convertScalarOp(Operation *op) {
  if (auto cast = dyn_cast<arith::IndexCastOp>(op)) {
    Value in = cast.getIn();
    Value value = in.getType().isIndex() ? getScalar(in) : in;
    if (!value)
      return op->emitOpError("casts a value the host program does not hold");
    // (index is i64 here; an integer of another width is extended or
    // truncated, as index_cast does.)
    Type target =
        cast.getType().isIndex() ? builder.getI64Type() : cast.getType();
    unsigned from = value.getType().getIntOrFloatBitWidth();
    unsigned to = target.getIntOrFloatBitWidth();
    if (from < to)
      value = arith::ExtSIOp::create(builder, loc(), target, value);
    else if (from > to)
      value = arith::TruncIOp::create(builder, loc(), target, value);
    if (cast.getType().isIndex())
      scalars[cast.getResult()] = value;
    else
      cast.getResult().replaceAllUsesWith(value);
    deadOps.push_back(op);
    return success();
  }
  IRMapping mapping;
  for (Value operand : op->getOperands()) {
    if (!operand.getType().isIndex())
      continue;
    Value value = getScalar(operand);
    if (!value)
      return op->emitOpError("uses an index value the host program does not "
                             "hold");
    mapping.map(operand, value);
  }
  Operation *clone = builder.clone(*op, mapping);
  for (auto [oldResult, newResult] :
       llvm::zip(op->getResults(), clone->getResults())) {
    // i1 results (comparisons) are used by later scalar ops directly.
    if (!oldResult.getType().isIndex()) {
      oldResult.replaceAllUsesWith(newResult);
      continue;
    }
    newResult.setType(builder.getI64Type());
    scalars[oldResult] = newResult;
  }
  deadOps.push_back(op);
  return success();
}

LogicalResult HostFunctionConverter::convertDim(tensor::DimOp dim) {
  // (Its source may be a converted argument by now: a buffer view.)
  std::optional<int64_t> index = getConstantIntValue(dim->getOperand(1));
  auto it = storages.find(dim->getOperand(0));
  if (!index || it == storages.end() || *index < 0 ||
      *index >= it->second.type.getRank())
    return dim.emitOpError("reads a dim the host program does not know");
  scalars[dim.getResult()] = getDims(it->second)[*index];
  deadOps.push_back(dim);
  return success();
}

// A dynamic dim is read from the argument's view unless the program ties
// it (kArgumentDimTiesAttr) to a static size or to an earlier argument's
// dim: then the view is checked against that value.
LogicalResult HostFunctionConverter::convertArguments() {
  auto viewType = hal::BufferViewType::get(context());
  auto arguments = func.getBody().front().getArguments();
  SmallVector<SmallVector<Value>> argumentDims;
  for (BlockArgument arg : arguments) {
    auto tensorType = cast<RankedTensorType>(arg.getType());
    RankedTensorType abiType = abiArguments[arg.getArgNumber()];
    auto ties = func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(),
                                                 kArgumentDimTiesAttr);
    if (ties && ties.size() != static_cast<size_t>(tensorType.getRank()))
      return func.emitOpError("argument ")
             << arg.getArgNumber() << " has " << ties.size()
             << " dim ties for rank " << tensorType.getRank();
    SmallVector<Value> dims, dynamicDims;
    for (auto [index, size] : llvm::enumerate(tensorType.getShape())) {
      if (!ShapedType::isDynamic(size)) {
        dims.push_back(constI64(size));
        continue;
      }
      Attribute tie = ties ? ties[index] : Attribute();
      Value dim;
      if (auto staticSize = dyn_cast_or_null<IntegerAttr>(tie)) {
        dim = constI64(staticSize.getInt());
      } else if (auto earlier = dyn_cast_or_null<DenseI64ArrayAttr>(tie)) {
        // An earlier argument's dim, or an earlier dim of this one (a
        // square [n, n] input).
        bool self = earlier.size() == 2 && earlier[0] == arg.getArgNumber();
        ArrayRef<Value> tiedDims =
            self ? ArrayRef<Value>(dims)
            : earlier.size() == 2 && earlier[0] >= 0 &&
                    earlier[0] < arg.getArgNumber()
                ? ArrayRef<Value>(argumentDims[earlier[0]])
                : ArrayRef<Value>();
        if (earlier.size() != 2 || earlier[1] < 0 ||
            earlier[1] >= static_cast<int64_t>(tiedDims.size()))
          return func.emitOpError("argument ")
                 << arg.getArgNumber() << " ties dim " << index
                 << " to a dim of no earlier argument";
        dim = tiedDims[earlier[1]];
      } else {
        dim = hal::BufferViewDimOp::create(builder, loc(), builder.getI64Type(),
                                           arg, constI32(index));
      }
      dims.push_back(dim);
      dynamicDims.push_back(dim);
    }
    argumentDims.push_back(dims);
    func.removeArgAttr(arg.getArgNumber(), kArgumentDimTiesAttr);
    arg.setType(viewType);
    std::string message =
        ("argument " + Twine(arg.getArgNumber()) + " of @" + func.getSymName())
            .str();
    if (!abiArgumentNames[arg.getArgNumber()].empty())
      message += (" ('" + abiArgumentNames[arg.getArgNumber()] + "')").str();
    hal::BufferViewAssertOp::create(
        builder, loc(), arg, builder.getStringAttr(message),
        constI32(*getElementTypeValue(abiType.getElementType())),
        constI32(STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR), dims);
    Value buffer = hal::BufferViewBufferOp::create(
        builder, loc(), hal::BufferType::get(context()), arg);
    storages[arg] = {buffer, 0, tensorType, false, dynamicDims};
  }
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
  for (auto [index, type] : llvm::enumerate(oldType.getInputs()))
    abiArguments.push_back(
        getAbiTensorType(cast<RankedTensorType>(type),
                         func.getArgAttr(index, kUnsignedAbiAttr) != nullptr));
  for (auto [index, type] : llvm::enumerate(oldType.getResults()))
    abiResults.push_back(getAbiTensorType(
        cast<RankedTensorType>(type),
        func.getResultAttr(index, kUnsignedAbiAttr) != nullptr));
  auto nameOf = [](StringAttr name) { return name ? name.getValue() : ""; };
  for (unsigned index = 0; index < oldType.getNumInputs(); ++index)
    abiArgumentNames.push_back(
        nameOf(func.getArgAttrOfType<StringAttr>(index, kAbiNameAttr)));
  for (unsigned index = 0; index < oldType.getNumResults(); ++index)
    abiResultNames.push_back(
        nameOf(func.getResultAttrOfType<StringAttr>(index, kAbiNameAttr)));
  plan = planTransients(func);
  scaledSlabs.resize(plan.scaledSlabs.size());

  Block &entry = func.getBody().front();
  readsTensorValues = llvm::any_of(
      entry, [](Operation &op) { return isa<tensor::ExtractOp>(op); });
  builder.setInsertionPointToStart(&entry);
  device = hal::DevicesGetOp::create(
      builder, loc(), hal::DeviceType::get(context()), constI32(0));
  allocator = hal::DeviceAllocatorOp::create(
      builder, loc(), hal::AllocatorType::get(context()), device);
  if (failed(convertArguments()))
    return failure();
  if (plan.slabBytes > 0)
    slab = allocate(plan.slabBytes, /*hostVisible=*/readsTensorValues);

  auto isShaped = [](Type type) { return isa<ShapedType>(type); };
  for (Operation &op : llvm::make_early_inc_range(entry)) {
    if (op.getDialect() && isa<hal::HALDialect>(op.getDialect()))
      continue;
    if (isa<cf::AssertOp>(op))
      continue;
    currentLoc = op.getLoc();
    builder.setInsertionPoint(&op);
    LogicalResult result = success();
    if (auto dispatch = dyn_cast<flow::DispatchOp>(op))
      result = convertDispatch(dispatch);
    else if (auto ret = dyn_cast<func::ReturnOp>(op))
      result = convertReturn(ret);
    else if (isa<arith::ConstantOp>(op) &&
             !isa<ShapedType>(op.getResultTypes()[0]))
      continue;
    else if (auto dim = dyn_cast<tensor::DimOp>(op))
      result = convertDim(dim);
    else if (op.getDialect() && isa<arith::ArithDialect>(op.getDialect()) &&
             llvm::none_of(op.getOperandTypes(), isShaped) &&
             llvm::none_of(op.getResultTypes(), isShaped))
      result = convertScalarOp(&op);
    else if (isa<tensor::EmptyOp, arith::ConstantOp>(op) && op.use_empty())
      op.erase();
    else if (auto constant = dyn_cast<arith::ConstantOp>(op))
      result = convertConstant(constant);
    else if (auto extract = dyn_cast<tensor::ExtractOp>(op))
      result = convertExtract(extract);
    else if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                 tensor::ReshapeOp, tensor::CastOp>(op))
      result = convertReshape(&op);
    else if (auto concat = dyn_cast<tensor::ConcatOp>(op))
      result = convertConcat(concat);
    else if (auto conditional = dyn_cast<scf::IfOp>(op))
      result = convertConditional(conditional);
    else
      return op.emitOpError("is not supported in the host program yet (only "
                            "dispatches may use tensors outside "
                            "executables)");
    if (failed(result))
      return failure();
  }
  for (Operation *op : llvm::reverse(deadOps))
    op->erase();

  auto viewType = hal::BufferViewType::get(context());
  func.setFunctionType(FunctionType::get(
      context(), SmallVector<Type>(oldType.getNumInputs(), viewType),
      SmallVector<Type>(oldType.getNumResults(), viewType)));
  auto typeArray = [&](ArrayRef<RankedTensorType> types) {
    SmallVector<Attribute> attrs;
    for (Type type : types)
      attrs.push_back(TypeAttr::get(type));
    return builder.getArrayAttr(attrs);
  };
  func->setAttr("strata.abi.arguments", typeArray(abiArguments));
  func->setAttr("strata.abi.results", typeArray(abiResults));
  if (!llvm::all_of(abiArgumentNames, [](StringRef n) { return n.empty(); }) ||
      !llvm::all_of(abiResultNames, [](StringRef n) { return n.empty(); })) {
    func->setAttr(kAbiArgumentNamesAttr,
                  builder.getStrArrayAttr(abiArgumentNames));
    func->setAttr(kAbiResultNamesAttr, builder.getStrArrayAttr(abiResultNames));
  }
  func->setAttr("strata.transient_bytes",
                builder.getI64IntegerAttr(plan.slabBytes));
  return success();
}

// The function's one command buffer, created at its first command; later
// commands get a full barrier first (commands run in order; finer
// dependency tracking can come later).
Value HostFunctionConverter::createCommandBuffer() {
  if (commandBuffer) {
    hal::CommandBufferExecutionBarrierOp::create(
        builder, loc(), commandBuffer, constI32(-1), constI32(-1), constI32(0));
    return commandBuffer;
  }
  commandBuffer = hal::CommandBufferCreateOp::create(
      builder, loc(), hal::CommandBufferType::get(context()), device,
      constI32(STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT),
      constI32(STRATA_HAL_COMMAND_CATEGORY_DISPATCH |
               STRATA_HAL_COMMAND_CATEGORY_TRANSFER),
      constI64(STRATA_HAL_QUEUE_AFFINITY_ANY), constI32(0));
  return commandBuffer;
}

void HostFunctionConverter::submitAndWait() {
  hal::CommandBufferFinalizeOp::create(builder, loc(), commandBuffer);
  Value fence = hal::FenceCreateOp::create(
      builder, loc(), hal::FenceType::get(context()), device, constI32(0));
  Value noFence =
      hal::NullFenceOp::create(builder, loc(), hal::FenceType::get(context()));
  hal::DeviceQueueExecuteOp::create(builder, loc(), device,
                                    constI64(STRATA_HAL_QUEUE_AFFINITY_ANY),
                                    noFence, fence, ValueRange{commandBuffer});
  // A failed dispatch fails the await, which fails the call.
  hal::FenceAwaitOp::create(builder, loc(), builder.getI32Type(),
                            constI32(STRATA_HAL_WAIT_FOREVER),
                            ValueRange{fence});
  commandBuffer = Value();
}

void HostFunctionConverter::copyBytes(Value source, Value sourceOffset,
                                      Value target, Value targetOffset,
                                      Value bytes) {
  createCommandBuffer();
  hal::CommandBufferCopyBufferOp::create(builder, loc(), commandBuffer, source,
                                         sourceOffset, target, targetOffset,
                                         bytes);
}

Value HostFunctionConverter::getOffset(const Storage &storage) {
  return storage.dynamicOffset ? storage.dynamicOffset
                               : constI64(storage.offset);
}

std::pair<Value, Value> HostFunctionConverter::getScaledSlab(unsigned index) {
  if (scaledSlabs[index].first)
    return scaledSlabs[index];
  // (The first result placed there is being converted: its dims, the
  // product's factors, are held.)
  const ScaledTransientSlab &planned = plan.scaledSlabs[index];
  Value product;
  for (Value factor : planned.factors)
    product = product ? arith::MulIOp::create(builder, loc(), product,
                                              getScalar(factor))
                            .getResult()
                      : getScalar(factor);
  Value bytes = arith::MulIOp::create(builder, loc(), product,
                                      constI64(planned.unitBytes));
  std::pair<Value, Value> slab = {
      allocate(bytes, /*hostVisible=*/readsTensorValues), product};
  scaledSlabs[index] = slab;
  return slab;
}

uint32_t HostFunctionConverter::recordDispatchSite(flow::DispatchOp dispatch) {
  StringAttr executable = dispatch.getExecutable().getRootReference();
  auto name = dispatch->getAttrOfType<StringAttr>(kDispatchNameAttr);
  SmallVector<NamedAttribute> fields = {
      builder.getNamedAttr("name", name ? name : executable),
      builder.getNamedAttr("executable", executable)};
  if (auto flops = dispatch->getAttrOfType<IntegerAttr>(kDispatchFlopsAttr))
    fields.push_back(builder.getNamedAttr("flops", flops));
  sites.push_back(builder.getDictionaryAttr(fields));
  return uint32_t(sites.size());
}

LogicalResult
HostFunctionConverter::convertDispatch(flow::DispatchOp dispatch) {
  createCommandBuffer();
  SmallVector<Value> bindingBuffers, bindingOffsets, bindingLengths;
  auto bind = [&](const Storage &storage) {
    bindingBuffers.push_back(storage.buffer);
    bindingOffsets.push_back(getOffset(storage));
    bindingLengths.push_back(getByteLength(storage));
  };
  for (Value operand : dispatch.getArguments()) {
    auto it = storages.find(operand);
    if (it == storages.end())
      return dispatch.emitOpError("uses a tensor that is not produced by a "
                                  "dispatch or a function argument");
    bind(it->second);
  }
  // Index values are two 32-bit push constants each, low word first.
  SmallVector<Value> constants;
  for (Value constant : dispatch.getConstants()) {
    Value value = getScalar(constant);
    if (!value)
      return dispatch.emitOpError("passes an index value the host program "
                                  "does not hold");
    Value high = arith::ShRUIOp::create(builder, loc(), value, constI64(32));
    for (Value word : {value, high})
      constants.push_back(
          arith::TruncIOp::create(builder, loc(), builder.getI32Type(), word));
  }
  ValueRange resultDims = dispatch.getResultDims();
  for (Value result : dispatch.getResults()) {
    auto type = cast<RankedTensorType>(result.getType());
    if (!type.hasStaticShape()) {
      Storage storage{Value(), 0, type};
      for (Value dim : resultDims.take_front(type.getNumDynamicDims())) {
        Value value = getScalar(dim);
        if (!value)
          return dispatch.emitOpError("has a result dim the host program "
                                      "does not hold");
        storage.dynamicDims.push_back(value);
      }
      resultDims = resultDims.drop_front(type.getNumDynamicDims());
      auto planned = plan.scaledOffsets.find(result);
      if (planned != plan.scaledOffsets.end()) {
        auto [buffer, product] = getScaledSlab(planned->second.slab);
        storage.buffer = buffer;
        storage.dynamicOffset =
            planned->second.unitOffset == 0
                ? constI64(0)
                : arith::MulIOp::create(builder, loc(), product,
                                        constI64(planned->second.unitOffset))
                      .getResult();
      } else {
        storage.buffer = allocate(getByteLength(storage));
      }
      storages[result] = storage;
      bind(storage);
      continue;
    }
    auto planned = plan.offsets.find(result);
    Storage storage = planned != plan.offsets.end()
                          ? Storage{slab, planned->second, type}
                          : Storage{allocate(getStaticByteSize(type)), 0, type};
    storages[result] = storage;
    bind(storage);
  }

  auto executable = hal::ExecutableLookupOp::create(
      builder, loc(), hal::ExecutableType::get(context()),
      FlatSymbolRefAttr::get(dispatch.getExecutable().getRootReference()));
  ArrayRef<int64_t> workgroups = dispatch.getWorkgroupCount();
  // A grid sized at run time (a dispatch over dynamic shapes).
  Value workgroupsX = constI32(workgroups[0]);
  if (Value count = dispatch.getWorkgroupsX()) {
    Value value = getScalar(count);
    if (!value)
      return dispatch.emitOpError("has a workgroup count the host program "
                                  "does not hold");
    workgroupsX =
        arith::TruncIOp::create(builder, loc(), builder.getI32Type(), value);
  }
  hal::CommandBufferDispatchOp::create(
      builder, loc(), commandBuffer, executable, constI32(0), workgroupsX,
      constI32(workgroups[1]), constI32(workgroups[2]),
      constI64(int64_t(recordDispatchSite(dispatch))
               << STRATA_HAL_DISPATCH_SITE_SHIFT),
      constants, bindingBuffers, bindingOffsets, bindingLengths);
  // Later ops still use the results; erased once the function is done.
  deadOps.push_back(dispatch);
  return success();
}

LogicalResult HostFunctionConverter::convertReturn(func::ReturnOp ret) {
  // Results are the caller's to keep and write: constant data (read-only,
  // shared) is copied; everything else already has its own buffer.
  SmallVector<Storage> results;
  DenseMap<Value, Storage> copies;
  for (Value operand : ret.getOperands()) {
    auto it = storages.find(operand);
    if (it == storages.end())
      return ret.emitOpError("returns a tensor that is not produced by a "
                             "dispatch or a function argument");
    Storage storage = it->second;
    if (storage.isConstant) {
      auto copy = copies.find(operand);
      if (copy == copies.end()) {
        // (A constant cast to a dynamic type has its dims as values.)
        Value size = getByteLength(storage);
        Storage target{allocate(size), 0, storage.type, false,
                       storage.dynamicDims};
        copyBytes(storage.buffer, getOffset(storage), target.buffer,
                  constI64(0), size);
        copy = copies.insert({operand, target}).first;
      }
      storage = copy->second;
    }
    results.push_back(storage);
  }

  if (commandBuffer)
    submitAndWait();
  SmallVector<Value> views;
  for (auto [index, storage] : llvm::enumerate(results))
    views.push_back(hal::BufferViewCreateOp::create(
        builder, loc(), hal::BufferViewType::get(context()), storage.buffer,
        getOffset(storage), getByteLength(storage),
        constI32(*getElementTypeValue(abiResults[index].getElementType())),
        constI32(STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR), getDims(storage)));
  func::ReturnOp::create(builder, ret.getLoc(), views);
  ret.erase();
  return success();
}

} // namespace strata::host_conversion

namespace strata {
namespace {

using host_conversion::HostFunctionConverter;

struct ConvertToHostProgramPass
    : public impl::ConvertToHostProgramPassBase<ConvertToHostProgramPass> {
  void runOnOperation() override {
    SmallVector<Attribute> sites;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (failed(HostFunctionConverter(func, sites).convert()))
        return signalPassFailure();
    }
    if (!sites.empty())
      getOperation()->setAttr(kDispatchSitesAttr,
                              ArrayAttr::get(&getContext(), sites));
  }
};

} // namespace
} // namespace strata
