//===- TranslateMemRefOps.cpp - vmvx kernels: buffers and addresses -----===//
//
// Memrefs become the vm.buffer of their root (binding, alloca or global)
// plus an element offset, sizes and strides (i64 values), so loads and
// stores compute byte offsets with plain i64 arithmetic.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/VMVX/KernelTranslator.h"

#include "llvm/ADT/TypeSwitch.h"

namespace strata::vmvx {

//===----------------------------------------------------------------------===//
// Memrefs
//===----------------------------------------------------------------------===//

StridedBuffer FunctionTranslator::rootBuffer(Value buffer, MemRefType type,
                                             ArrayRef<Value> dynamicSizes) {
  StridedBuffer result;
  result.buffer = buffer;
  result.offset = constI64(0);
  unsigned dynamicIndex = 0;
  for (int64_t size : type.getShape())
    result.sizes.push_back(ShapedType::isDynamic(size)
                               ? dynamicSizes[dynamicIndex++]
                               : constI64(size));
  // Row-major strides: the product of the inner sizes.
  result.strides.resize(type.getRank());
  Value stride = constI64(1);
  int64_t staticStride = 1;
  for (int64_t dim = type.getRank() - 1; dim >= 0; --dim) {
    result.strides[dim] = stride;
    int64_t size = type.getDimSize(dim);
    if (!ShapedType::isDynamic(size) && staticStride >= 0) {
      staticStride *= size;
      stride = constI64(staticStride);
    } else {
      staticStride = -1;
      stride = mulI64(stride, result.sizes[dim]);
    }
  }
  return result;
}

Value FunctionTranslator::getIndex(OpFoldResult result) {
  if (auto attr = dyn_cast<Attribute>(result))
    return constI64(cast<IntegerAttr>(attr).getInt());
  return get(cast<Value>(result));
}

FailureOr<StridedBuffer> FunctionTranslator::getBuffer(Operation *user,
                                                       Value memref) {
  auto it = buffers.find(memref);
  if (it == buffers.end())
    return user->emitOpError("uses a memref the vmvx target cannot "
                             "trace to a binding, alloca or global"),
           failure();
  return it->second;
}

FailureOr<Value> FunctionTranslator::byteOffset(Operation *op,
                                                const StridedBuffer &buffer,
                                                ValueRange indices,
                                                Type elementType) {
  if (indices.size() != buffer.strides.size())
    return op->emitOpError("has ") << indices.size() << " indices for a rank-"
                                   << buffer.strides.size() << " memref",
           failure();
  Value offset = buffer.offset;
  for (auto [index, stride] : llvm::zip(indices, buffer.strides))
    offset = addI64(offset, mulI64(get(index), stride));
  return mulI64(offset, constI64(getElementBytes(elementType)));
}

LogicalResult FunctionTranslator::translateMemRef(Operation *op) {
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](memref::LoadOp load) -> LogicalResult {
        FailureOr<StridedBuffer> buffer = getBuffer(op, load.getMemref());
        if (failed(buffer))
          return failure();
        Type type = load.getType();
        FailureOr<Value> offset =
            byteOffset(op, *buffer, load.getIndices(), type);
        if (failed(offset))
          return failure();
        Value value;
        Value ref = buffer->buffer;
        if (type.isInteger(1))
          value = mask(emit("buffer.load.i8.u", i32(), {ref, *offset}), 1);
        else if (type.isInteger(8))
          value = emit("buffer.load.i8.u", i32(), {ref, *offset});
        else if (type.isInteger(16) || isHalfFloat(type))
          value = emit("buffer.load.i16.u", i32(), {ref, *offset});
        else if (type.isInteger(32))
          value = emit("buffer.load.i32", i32(), {ref, *offset});
        else if (type.isInteger(64) || type.isIndex())
          value = emit("buffer.load.i64", i64(), {ref, *offset});
        else if (type.isF32())
          value = emit("buffer.load.f32", type, {ref, *offset});
        else if (type.isF64())
          value = emit("buffer.load.f64", type, {ref, *offset});
        else
          return load.emitOpError("loads ")
                 << type << ", which the vmvx target does not support yet";
        mapping.map(load.getResult(), value);
        return success();
      })
      .Case([&](memref::StoreOp store) -> LogicalResult {
        FailureOr<StridedBuffer> buffer = getBuffer(op, store.getMemref());
        if (failed(buffer))
          return failure();
        Type type = store.getValue().getType();
        FailureOr<Value> offset =
            byteOffset(op, *buffer, store.getIndices(), type);
        if (failed(offset))
          return failure();
        StringRef mnemonic;
        if (type.isInteger(1) || type.isInteger(8))
          mnemonic = "buffer.store.i8";
        else if (type.isInteger(16) || isHalfFloat(type))
          mnemonic = "buffer.store.i16";
        else if (type.isInteger(32))
          mnemonic = "buffer.store.i32";
        else if (type.isInteger(64) || type.isIndex())
          mnemonic = "buffer.store.i64";
        else if (type.isF32())
          mnemonic = "buffer.store.f32";
        else if (type.isF64())
          mnemonic = "buffer.store.f64";
        else
          return store.emitOpError("stores ")
                 << type << ", which the vmvx target does not support yet";
        emitVoid(mnemonic, {buffer->buffer, *offset, get(store.getValue())});
        return success();
      })
      .Case<memref::AllocaOp, memref::AllocOp>([&](auto alloc) {
        MemRefType type = alloc.getType();
        SmallVector<Value> dynamicSizes;
        for (Value size : alloc.getDynamicSizes())
          dynamicSizes.push_back(get(size));
        Value length = constI64(getElementBytes(type.getElementType()));
        unsigned dynamicIndex = 0;
        for (int64_t size : type.getShape())
          length = mulI64(length, ShapedType::isDynamic(size)
                                      ? dynamicSizes[dynamicIndex++]
                                      : constI64(size));
        Value buffer = vm::BufferAllocOp::create(builder, loc(),
                                                 module.bufferType(), length);
        buffers[alloc.getResult()] = rootBuffer(buffer, type, dynamicSizes);
        return success();
      })
      .Case([&](memref::DeallocOp) { return success(); })
      .Case([&](memref::GetGlobalOp getGlobal) -> LogicalResult {
        FailureOr<FlatSymbolRefAttr> rodata = module.getGlobalRodata(getGlobal);
        if (failed(rodata))
          return failure();
        Value buffer = vm::ConstRefRodataOp::create(
            builder, loc(), module.bufferType(), *rodata);
        buffers[getGlobal.getResult()] =
            rootBuffer(buffer, getGlobal.getType(), {});
        return success();
      })
      .Case([&](memref::SubViewOp subview) -> LogicalResult {
        FailureOr<StridedBuffer> source = getBuffer(op, subview.getSource());
        if (failed(source))
          return failure();
        auto value = [&](OpFoldResult result) { return getIndex(result); };
        StridedBuffer result;
        result.buffer = source->buffer;
        result.offset = source->offset;
        llvm::SmallBitVector dropped = subview.getDroppedDims();
        for (auto [dim, offset, size, stride] :
             llvm::enumerate(subview.getMixedOffsets(), subview.getMixedSizes(),
                             subview.getMixedStrides())) {
          result.offset = addI64(result.offset,
                                 mulI64(value(offset), source->strides[dim]));
          if (dropped.test(dim))
            continue;
          result.sizes.push_back(value(size));
          result.strides.push_back(mulI64(value(stride), source->strides[dim]));
        }
        buffers[subview.getResult()] = result;
        return success();
      })
      .Case([&](memref::ReinterpretCastOp cast) -> LogicalResult {
        FailureOr<StridedBuffer> source = getBuffer(op, cast.getSource());
        if (failed(source))
          return failure();
        auto value = [&](OpFoldResult result) { return getIndex(result); };
        // Offsets of a reinterpret_cast count from the root allocation.
        StridedBuffer result;
        result.buffer = source->buffer;
        result.offset = value(cast.getMixedOffsets()[0]);
        for (OpFoldResult size : cast.getMixedSizes())
          result.sizes.push_back(value(size));
        for (OpFoldResult stride : cast.getMixedStrides())
          result.strides.push_back(value(stride));
        buffers[cast.getResult()] = result;
        return success();
      })
      .Case([&](memref::CastOp cast) -> LogicalResult {
        FailureOr<StridedBuffer> source = getBuffer(op, cast.getSource());
        if (failed(source))
          return failure();
        buffers[cast.getResult()] = *source;
        return success();
      })
      .Case([&](memref::ExtractStridedMetadataOp metadata) -> LogicalResult {
        FailureOr<StridedBuffer> source = getBuffer(op, metadata.getSource());
        if (failed(source))
          return failure();
        StridedBuffer base;
        base.buffer = source->buffer;
        base.offset = constI64(0);
        buffers[metadata.getBaseBuffer()] = base;
        mapping.map(metadata.getOffset(), source->offset);
        for (auto [result, size] :
             llvm::zip(metadata.getSizes(), source->sizes))
          mapping.map(result, size);
        for (auto [result, stride] :
             llvm::zip(metadata.getStrides(), source->strides))
          mapping.map(result, stride);
        return success();
      })
      .Case([&](memref::DimOp dim) -> LogicalResult {
        FailureOr<StridedBuffer> source = getBuffer(op, dim.getSource());
        if (failed(source))
          return failure();
        std::optional<int64_t> index = dim.getConstantIndex();
        if (!index || *index < 0 ||
            *index >= static_cast<int64_t>(source->sizes.size()))
          return dim.emitOpError("needs a constant dimension index in range");
        mapping.map(dim.getResult(), source->sizes[*index]);
        return success();
      })
      .Default([&](Operation *other) {
        return other->emitOpError("is not supported by the vmvx target");
      });
}

} // namespace strata::vmvx
