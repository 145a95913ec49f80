//===- HostValues.cpp - tensors the host holds without a dispatch ---------===//
//
// Constants (rodata views, large splats built by copies), reshapes and
// casts (views of the same bytes), contiguous concatenations (a buffer the
// operands' dispatches write into) and elements the host reads back (a size
// computed from data).
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Dialect/HAL/HALDialect.h"
#include "strata/compiler/HostConversion/HostFunctionConverter.h"
#include "strata/compiler/Utils/ContiguousConcat.h"
#include "strata/compiler/Utils/ElementTypes.h"

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"

using namespace mlir;

namespace strata::host_conversion {

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

} // namespace strata::host_conversion
