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
//   - dispatches are recorded into one command buffer with an execution
//     barrier between commands, submitted once and awaited before the
//     results are wrapped into buffer views; each dispatch is a numbered
//     call site (its number in the dispatch flags, for profiles) listed in
//     the module's `strata.dispatch_sites` with its name and FLOP count.
// The original tensor types are kept as `strata.abi.arguments/results` for
// reflection in the module file, and the static slab's size as
// `strata.transient_bytes`.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/DispatchCreation/DispatchNames.h"
#include "strata/compiler/HostConversion/TransientPlanner.h"
#include "strata/compiler/Passes.h"
#include "strata/compiler/Utils/ContiguousConcat.h"
#include "strata/compiler/Utils/ElementTypes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
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

// Splat constants larger than this are expanded at run time.
constexpr int64_t kSplatBlockBytes = 4096;

// Where a tensor's bytes are: a buffer and a byte offset into it.
struct Storage {
  Value buffer;
  int64_t offset = 0;
  RankedTensorType type;
  // Read-only module constant (must be copied before the caller gets it).
  bool isConstant = false;
  // The values (i64) of the type's dynamic dims, in order.
  SmallVector<Value> dynamicDims = {};
  // The offset (i64) where it is only known at run time (in a scaled slab);
  // `offset` is then unused.
  Value dynamicOffset = {};
};

class HostFunctionConverter {
public:
  // `sites` collects the module's dispatch sites (kDispatchSitesAttr).
  HostFunctionConverter(func::FuncOp func, SmallVectorImpl<Attribute> &sites)
      : func(func), builder(func.getContext()), sites(sites) {}

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
  MLIRContext *context() { return func.getContext(); }

  LogicalResult checkAbiType(Type type, StringRef what, unsigned index);
  LogicalResult convertArguments();
  // The i64 value of an index value of the host function.
  Value getScalar(Value value);
  LogicalResult convertScalarOp(Operation *op);
  LogicalResult convertDim(tensor::DimOp dim);
  // Every dim of a storage (i64 values) and its size in bytes.
  SmallVector<Value> getDims(const Storage &storage);
  Value getByteLength(const Storage &storage);
  LogicalResult convertDispatch(flow::DispatchOp dispatch);
  // Lists the dispatch as the module's next call site; its site number.
  uint32_t recordDispatchSite(flow::DispatchOp dispatch);
  LogicalResult convertConstant(arith::ConstantOp constant);
  LogicalResult convertLargeSplat(arith::ConstantOp constant,
                                  DenseElementsAttr value);
  LogicalResult convertReshape(Operation *reshape);
  LogicalResult convertConcat(tensor::ConcatOp concat);
  LogicalResult convertExtract(tensor::ExtractOp extract);
  LogicalResult convertReturn(func::ReturnOp ret);
  // A new buffer for a dynamically shaped value.
  Value allocate(Value bytes, bool hostVisible = true);
  Value createCommandBuffer();
  // Submits the commands recorded so far and waits for them; the next
  // command starts a new command buffer.
  void submitAndWait();
  // Records a copy of `bytes` bytes (after a barrier, as every command).
  void copyBytes(Value source, Value sourceOffset, Value target,
                 Value targetOffset, Value bytes);
  // The byte offset (i64) of `storage` in its buffer.
  Value getOffset(const Storage &storage);
  // The scaled slab `index` of the plan, allocated at its first use: its
  // buffer and the product of its dims (i64).
  std::pair<Value, Value> getScaledSlab(unsigned index);
  // A new buffer. Only what the caller sees (results) must be host-visible;
  // intermediates may stay in device memory on devices that have it.
  Value allocate(int64_t bytes, bool hostVisible = true);

  func::FuncOp func;
  OpBuilder builder;
  SmallVectorImpl<Attribute> &sites;
  std::optional<Location> currentLoc;
  Value device, allocator, commandBuffer, slab;
  // Whether the host reads values of tensors (tensor.extract): transients
  // must then be host-visible.
  bool readsTensorValues = false;
  TransientPlan plan;
  // getScaledSlab's slabs once allocated, by index (null until then).
  SmallVector<std::pair<Value, Value>> scaledSlabs;
  DenseMap<Value, Storage> storages;
  // The i64 values of the function's index values (dims, shape arithmetic).
  DenseMap<Value, Value> scalars;
  // Converted ops still used by later ones; erased at the end.
  SmallVector<Operation *> deadOps;
  // The boundary's tensor types as callers see them (kUnsignedAbiAttr).
  SmallVector<RankedTensorType> abiArguments, abiResults;
  // Their source names (kAbiNameAttr), "" where there is none.
  SmallVector<StringRef> abiArgumentNames, abiResultNames;
};

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
        if (earlier.size() != 2 || earlier[0] < 0 ||
            earlier[0] >= arg.getArgNumber() || earlier[1] < 0 ||
            earlier[1] >= static_cast<int64_t>(argumentDims[earlier[0]].size()))
          return func.emitOpError("argument ")
                 << arg.getArgNumber() << " ties dim " << index
                 << " to a dim of no earlier argument";
        dim = argumentDims[earlier[0]][earlier[1]];
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

// Tensor constants live in the module's rodata; the buffer views them.
// Splats past kSplatBlockBytes are built at run time instead: a 10^8-element
// ConstantOfShape would otherwise be 400 MB of identical bytes in the file.
LogicalResult
HostFunctionConverter::convertConstant(arith::ConstantOp constant) {
  auto type = dyn_cast<RankedTensorType>(constant.getType());
  auto value = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!type || !value || !type.hasStaticShape() ||
      !getElementTypeValue(type.getElementType()))
    return constant.emitOpError("has a constant the host program cannot "
                                "store yet: ")
           << constant.getType();
  if (value.isSplat() && getStaticByteSize(type) > kSplatBlockBytes)
    return convertLargeSplat(constant, value);
  Value buffer = hal::ConstantBufferOp::create(
      builder, loc(), hal::BufferType::get(context()), value);
  storages[constant.getResult()] = {buffer, 0, type, /*isConstant=*/true};
  deadOps.push_back(constant);
  return success();
}

// A block of the splat's elements (at most kSplatBlockBytes) comes from
// rodata; copies of what the buffer already holds double it until it is
// full: log2(bytes / block) copies, any element type.
LogicalResult
HostFunctionConverter::convertLargeSplat(arith::ConstantOp constant,
                                         DenseElementsAttr value) {
  auto type = cast<RankedTensorType>(value.getType());
  int64_t bytes = getStaticByteSize(type);
  int64_t elementBytes = bytes / type.getNumElements();
  int64_t blockElements = std::max<int64_t>(kSplatBlockBytes / elementBytes, 1);
  auto blockType =
      RankedTensorType::get({blockElements}, type.getElementType());
  Value block = hal::ConstantBufferOp::create(builder, loc(),
                                              hal::BufferType::get(context()),
                                              value.resizeSplat(blockType));
  Value buffer = allocate(bytes);
  int64_t filled = blockElements * elementBytes;
  copyBytes(block, constI64(0), buffer, constI64(0), constI64(filled));
  // (Each copy after a barrier: the next one reads what this one wrote.)
  for (; filled < bytes; filled *= 2)
    copyBytes(buffer, constI64(0), buffer, constI64(filled),
              constI64(std::min(filled, bytes - filled)));
  storages[constant.getResult()] = {buffer, 0, type};
  deadOps.push_back(constant);
  return success();
}

// Reshapes of dense row-major data keep the bytes: the result is the same
// storage seen with another shape.
LogicalResult HostFunctionConverter::convertReshape(Operation *reshape) {
  auto it = storages.find(reshape->getOperand(0));
  auto type = dyn_cast<RankedTensorType>(reshape->getResult(0).getType());
  if (it == storages.end() || !type)
    return reshape->emitOpError("reshapes a tensor the host program does not "
                                "hold");
  Storage storage = it->second;
  SmallVector<Value> sourceDims = getDims(storage);
  // (The operand may be converted by now: its type is the storage's.)
  RankedTensorType sourceType = storage.type;
  storage.type = type;
  storage.dynamicDims.clear();
  if (!type.hasStaticShape()) {
    // The result's dynamic dims: an expansion states them, a collapse
    // multiplies its groups.
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(reshape)) {
      SmallVector<Value> dims;
      for (OpFoldResult size : expand.getMixedOutputShape()) {
        auto value = dyn_cast<Value>(size);
        if (!value) {
          dims.push_back(
              constI64(cast<IntegerAttr>(cast<Attribute>(size)).getInt()));
          continue;
        }
        Value dim = getScalar(value);
        if (!dim)
          return reshape->emitOpError("has a size the host program does not "
                                      "hold");
        storage.dynamicDims.push_back(dim);
        dims.push_back(dim);
      }
      // The sizes the program computed must split each source dim exactly
      // (as the caller's tensor has it), or the call fails.
      for (auto [index, group] :
           llvm::enumerate(expand.getReassociationIndices())) {
        if (llvm::all_of(group,
                         [&](int64_t dim) { return !type.isDynamicDim(dim); }))
          continue;
        Value product = constI64(1);
        for (int64_t dim : group)
          product = arith::MulIOp::create(builder, loc(), product, dims[dim]);
        Value equal =
            arith::CmpIOp::create(builder, loc(), arith::CmpIPredicate::eq,
                                  product, sourceDims[index]);
        std::string message;
        llvm::raw_string_ostream os(message);
        os << "the sizes a reshape computes";
        if (auto file = dyn_cast<FileLineColLoc>(reshape->getLoc()))
          os << " at " << file.getFilename().getValue() << ":" << file.getLine()
             << ":" << file.getColumn();
        os << " do not multiply to dim " << index << " of its " << sourceType
           << " operand";
        cf::AssertOp::create(builder, loc(), equal, message);
      }
    } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(reshape)) {
      for (auto [index, group] :
           llvm::enumerate(collapse.getReassociationIndices())) {
        if (!type.isDynamicDim(index))
          continue;
        Value dim = constI64(1);
        for (int64_t source : group)
          dim = arith::MulIOp::create(builder, loc(), dim, sourceDims[source]);
        storage.dynamicDims.push_back(dim);
      }
    } else if (isa<tensor::CastOp>(reshape)) {
      for (auto [index, size] : llvm::enumerate(type.getShape()))
        if (ShapedType::isDynamic(size))
          storage.dynamicDims.push_back(sourceDims[index]);
    } else {
      return reshape->emitOpError("reshapes to a dynamic shape from a shape "
                                  "tensor; only dispatches can so far");
    }
  }
  // A cast to static sizes asserts them: the call fails where they differ.
  if (isa<tensor::CastOp>(reshape)) {
    for (auto [index, size] : llvm::enumerate(type.getShape())) {
      if (ShapedType::isDynamic(size) || !sourceType.isDynamicDim(index))
        continue;
      Value equal =
          arith::CmpIOp::create(builder, loc(), arith::CmpIPredicate::eq,
                                sourceDims[index], constI64(size));
      std::string message;
      llvm::raw_string_ostream os(message);
      os << "dim " << index << " of a " << sourceType
         << " computed at run time is not the " << size
         << " the program declares";
      cf::AssertOp::create(builder, loc(), equal, message);
    }
  }
  storages[reshape->getResult(0)] = storage;
  deadOps.push_back(reshape);
  return success();
}

// A contiguous concatenation is a buffer (in the slab where the plan put
// it, its own where the function returns it): the operands written there
// in place by their dispatches are already in it, the others (arguments,
// constants, values used elsewhere too) are copied in.
LogicalResult HostFunctionConverter::convertConcat(tensor::ConcatOp concat) {
  // (Its operands may be converted arguments by now: their sizes come from
  // their storages.)
  RankedTensorType type = concat.getResultType();
  if (!isContiguousConcatResult(type, concat.getDim()))
    return concat.emitOpError("concatenates along a dimension with non-unit "
                              "dimensions before it; only a dispatch can");
  auto planned = plan.offsets.find(concat.getResult());
  Storage result = planned != plan.offsets.end()
                       ? Storage{slab, planned->second, type}
                       : Storage{allocate(getStaticByteSize(type)), 0, type};
  int64_t offset = result.offset;
  for (Value input : concat.getInputs()) {
    auto it = storages.find(input);
    if (it == storages.end())
      return concat.emitOpError("concatenates a tensor that is not produced "
                                "by a dispatch or a function argument");
    int64_t bytes = getStaticByteSize(it->second.type);
    if (!plan.inPlaceConcatOperands.contains(input))
      copyBytes(it->second.buffer, getOffset(it->second), result.buffer,
                constI64(offset), constI64(bytes));
    offset += bytes;
  }
  storages[concat.getResult()] = result;
  deadOps.push_back(concat);
  return success();
}

// The host reads one element of a tensor (a size computed from data): the
// commands recorded so far run to completion first, then its bytes are
// loaded. Only what the host computes with (i1, i32, i64) can be read.
LogicalResult HostFunctionConverter::convertExtract(tensor::ExtractOp extract) {
  // (Its operand may be a converted argument by now: a buffer view.)
  auto it = storages.find(extract->getOperand(0));
  if (it == storages.end())
    return extract.emitOpError("reads a tensor the host program does not "
                               "hold");
  Type type = extract.getType();
  if (!type.isInteger(1) && !type.isInteger(32) && !type.isInteger(64) &&
      !type.isIndex())
    return extract.emitOpError("reads a ")
           << type << " element on the host; only i1, i32 and i64 values "
           << "can be read there so far";
  const Storage &storage = it->second;
  Value linear = constI64(0);
  for (auto [index, dim] : llvm::zip(extract.getIndices(), getDims(storage))) {
    Value at = getScalar(index);
    if (!at)
      return extract.emitOpError("reads at an index the host program does "
                                 "not hold");
    linear = arith::AddIOp::create(
        builder, loc(), arith::MulIOp::create(builder, loc(), linear, dim), at);
  }
  int64_t elementBytes =
      type.isIndex() ? 8 : getStaticByteSize(RankedTensorType::get({}, type));
  Value offset = arith::AddIOp::create(
      builder, loc(), getOffset(storage),
      arith::MulIOp::create(builder, loc(), linear, constI64(elementBytes)));
  if (commandBuffer && !storage.isConstant)
    submitAndWait();
  Value value =
      hal::BufferLoadOp::create(builder, loc(), builder.getI64Type(),
                                storage.buffer, offset, constI32(elementBytes));
  if (type.isIndex()) {
    scalars[extract.getResult()] = value;
  } else {
    if (!type.isInteger(64))
      value = arith::TruncIOp::create(builder, loc(), type, value);
    extract.getResult().replaceAllUsesWith(value);
  }
  deadOps.push_back(extract);
  return success();
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
        // (Constants have static shapes.)
        int64_t size = getStaticByteSize(storage.type);
        Storage target{allocate(size), 0, storage.type};
        copyBytes(storage.buffer, getOffset(storage), target.buffer,
                  constI64(0), constI64(size));
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

struct ConvertToHostProgramPass
    : public impl::ConvertToHostProgramPassBase<ConvertToHostProgramPass> {
  void runOnOperation() override {
    SmallVector<Attribute> sites;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      if (!func.isPublic()) {
        func.emitOpError("private host functions are not supported yet");
        return signalPassFailure();
      }
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
