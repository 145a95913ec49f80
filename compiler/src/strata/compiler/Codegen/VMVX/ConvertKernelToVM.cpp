//===- ConvertKernelToVM.cpp - a vmvx kernel module into a vm.module ------===//
//
// The last step of the vmvx target: a kernel module on buffers, lowered to
// unstructured control flow (cf, arith, math, memref.load/store, calls of
// vmvx microkernels), becomes one vm.module whose public functions are
// dispatch entry points (runtime/src/strata/hal/local/vmvx_abi.h).
//
// Values live in VM register banks: index and i64 in i64 registers, i1..i32
// in i32 registers, f32 and f64 in their own. Integers narrower than 32 bits
// are kept zero-extended (masked to their width) and sign-extended on the
// fly where an op is signed. Memrefs become the vm.buffer of their root
// (binding, alloca or global) plus an element offset and strides, so loads
// and stores compute byte offsets with plain i64 arithmetic.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"
#include "strata/compiler/Serialization/BytecodeEncoder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/UB/IR/UBOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/RegionGraphTraits.h"
#include "strata/hal/local/vmvx_abi.h"
#include "llvm/ADT/PostOrderIterator.h"
#include "llvm/ADT/TypeSwitch.h"

namespace strata {
#define GEN_PASS_DEF_VMVXCONVERTKERNELTOVMPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Integer width of an integer or index type.
unsigned getIntWidth(Type type) {
  if (type.isIndex())
    return 64;
  return cast<IntegerType>(type).getWidth();
}

// Bytes one element of a memref takes in memory (i1 takes a byte).
int64_t getElementBytes(Type type) {
  if (type.isIndex())
    return 8;
  return std::max<int64_t>(1, type.getIntOrFloatBitWidth() / 8);
}

// A memref as the VM sees it: the vm.buffer of its root allocation and an
// element offset, sizes and strides (i64 values).
struct StridedBuffer {
  Value buffer;
  Value offset;
  SmallVector<Value> sizes;
  SmallVector<Value> strides;
};

class FunctionTranslator;

class KernelTranslator {
public:
  explicit KernelTranslator(ModuleOp kernel)
      : kernel(kernel), builder(kernel.getContext()) {}

  LogicalResult run();

  Type bufferType() {
    return vm::RefType::get(kernel.getContext(),
                            vm::BufferType::get(kernel.getContext()));
  }
  FailureOr<FlatSymbolRefAttr> getImport(func::FuncOp declaration,
                                         FunctionType vmType);
  FailureOr<FlatSymbolRefAttr> getGlobalRodata(memref::GetGlobalOp op);

  // The VM type of a scalar or memref type; null if the VM has no bank.
  Type convertType(Type type);

private:
  ModuleOp kernel;
  OpBuilder builder;
  vm::ModuleOp vmModule;
  llvm::StringMap<FlatSymbolRefAttr> imports;
  llvm::StringMap<FlatSymbolRefAttr> globalRodata;
  bool needsMicrokernels = false;
};

class FunctionTranslator {
public:
  FunctionTranslator(KernelTranslator &module, func::FuncOp func,
                     vm::FuncOp vmFunc)
      : module(module), func(func), vmFunc(vmFunc), builder(func.getContext()),
        constants(func.getContext()) {}

  LogicalResult run();

private:
  Location loc() { return currentLoc; }

  // Emits `vm.<mnemonic>` with the given results and operands.
  Value emit(StringRef mnemonic, Type resultType, ValueRange operands,
             ArrayRef<NamedAttribute> attributes = {});
  void emitVoid(StringRef mnemonic, ValueRange operands);
  Value constI32(int32_t value);
  Value constI64(int64_t value);
  Value constFloat(Type type, double value);
  // i64 arithmetic for addresses, folded where operands are constants.
  Value addI64(Value lhs, Value rhs);
  Value mulI64(Value lhs, Value rhs);
  std::optional<int64_t> getConstantI64(Value value) {
    auto it = i64ConstantValues.find(value);
    if (it == i64ConstantValues.end())
      return std::nullopt;
    return it->second;
  }

  // Bank suffix of a VM scalar type: "i32", "i64", "f32", "f64".
  static StringRef suffix(Type vmType);
  Value mask(Value value, unsigned width);
  Value signExtend(Value value, unsigned width);
  Value logicalNot(Value value) {
    return emit("xor.i32", i32(), {value, constI32(1)});
  }
  Type i32() { return builder.getI32Type(); }
  Type i64() { return builder.getI64Type(); }

  Value get(Value value) { return mapping.lookup(value); }
  FailureOr<StridedBuffer> getBuffer(Operation *user, Value memref);
  StridedBuffer rootBuffer(Value buffer, MemRefType type,
                           ArrayRef<Value> dynamicSizes);
  FailureOr<Value> byteOffset(Operation *op, const StridedBuffer &buffer,
                              ValueRange indices, Type elementType);

  LogicalResult translate(Operation *op);
  LogicalResult translateConstant(arith::ConstantOp op);
  LogicalResult translateIntegerBinary(Operation *op);
  LogicalResult translateFloatBinary(Operation *op);
  LogicalResult translateCmpI(arith::CmpIOp op);
  LogicalResult translateCmpF(arith::CmpFOp op);
  LogicalResult translateCast(Operation *op);
  LogicalResult translateMath(Operation *op);
  LogicalResult translateMemRef(Operation *op);
  LogicalResult translateCall(func::CallOp op);

  // Integer conversion of `value` (of `from` width, canonical form) to an
  // integer of `to` width; `isSigned` picks sign or zero extension.
  Value convertInteger(Value value, unsigned from, unsigned to, bool isSigned);

  KernelTranslator &module;
  func::FuncOp func;
  vm::FuncOp vmFunc;
  OpBuilder builder;
  OpBuilder constants;
  Location currentLoc = UnknownLoc::get(func.getContext());
  IRMapping mapping;
  DenseMap<Value, StridedBuffer> buffers;
  DenseMap<Block *, Block *> blocks;
  DenseMap<int64_t, Value> i32Constants, i64Constants;
  DenseMap<Value, int64_t> i64ConstantValues;
  Block *entryBlock = nullptr;
};

//===----------------------------------------------------------------------===//
// Emission helpers
//===----------------------------------------------------------------------===//

Value FunctionTranslator::emit(StringRef mnemonic, Type resultType,
                               ValueRange operands,
                               ArrayRef<NamedAttribute> attributes) {
  OperationState state(loc(), ("vm." + mnemonic).str());
  state.addOperands(operands);
  state.addTypes(resultType);
  state.addAttributes(attributes);
  return builder.create(state)->getResult(0);
}

void FunctionTranslator::emitVoid(StringRef mnemonic, ValueRange operands) {
  OperationState state(loc(), ("vm." + mnemonic).str());
  state.addOperands(operands);
  builder.create(state);
}

Value FunctionTranslator::constI32(int32_t value) {
  Value &cached = i32Constants[value];
  // At the top of the entry block, which dominates every use.
  constants.setInsertionPointToStart(entryBlock);
  if (!cached)
    cached = vm::ConstI32Op::create(constants, func.getLoc(),
                                    constants.getI32IntegerAttr(value));
  return cached;
}

Value FunctionTranslator::constI64(int64_t value) {
  Value &cached = i64Constants[value];
  constants.setInsertionPointToStart(entryBlock);
  if (!cached) {
    cached = vm::ConstI64Op::create(constants, func.getLoc(),
                                    constants.getI64IntegerAttr(value));
    i64ConstantValues[cached] = value;
  }
  return cached;
}

Value FunctionTranslator::addI64(Value lhs, Value rhs) {
  std::optional<int64_t> a = getConstantI64(lhs), b = getConstantI64(rhs);
  if (a && b)
    return constI64(static_cast<int64_t>(uint64_t(*a) + uint64_t(*b)));
  if (a == 0)
    return rhs;
  if (b == 0)
    return lhs;
  return emit("add.i64", i64(), {lhs, rhs});
}

Value FunctionTranslator::mulI64(Value lhs, Value rhs) {
  std::optional<int64_t> a = getConstantI64(lhs), b = getConstantI64(rhs);
  if (a && b)
    return constI64(static_cast<int64_t>(uint64_t(*a) * uint64_t(*b)));
  if (a == 0 || b == 0)
    return constI64(0);
  if (a == 1)
    return rhs;
  if (b == 1)
    return lhs;
  return emit("mul.i64", i64(), {lhs, rhs});
}

Value FunctionTranslator::constFloat(Type type, double value) {
  if (type.isF32())
    return vm::ConstF32Op::create(builder, loc(),
                                  builder.getF32FloatAttr(value));
  return vm::ConstF64Op::create(builder, loc(), builder.getF64FloatAttr(value));
}

StringRef FunctionTranslator::suffix(Type vmType) {
  if (vmType.isInteger(32))
    return "i32";
  if (vmType.isInteger(64))
    return "i64";
  if (vmType.isF32())
    return "f32";
  return "f64";
}

Value FunctionTranslator::mask(Value value, unsigned width) {
  if (width >= 32)
    return value;
  return emit("and.i32", i32(),
              {value, constI32(static_cast<int32_t>((1u << width) - 1))});
}

Value FunctionTranslator::signExtend(Value value, unsigned width) {
  if (width >= 32)
    return value;
  Value shift = constI32(32 - width);
  Value high = emit("shl.i32", i32(), {value, shift});
  return emit("shr.i32.s", i32(), {high, shift});
}

Value FunctionTranslator::convertInteger(Value value, unsigned from,
                                         unsigned to, bool isSigned) {
  if (from == to)
    return value;
  if (to < from) { // truncation
    if (from == 64)
      value = emit("trunc.i64.i32", i32(), {value});
    return mask(value, to);
  }
  if (isSigned) {
    value = signExtend(value, from);
    if (to == 64)
      return emit("ext.i32.i64.s", i64(), {value});
    return mask(value, to);
  }
  // Zero extension: the canonical form already is zero-extended.
  if (to == 64)
    return emit("ext.i32.i64.u", i64(), {value});
  return value;
}

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
        else if (type.isInteger(16))
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
        else if (type.isInteger(16))
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
        auto value = [&](OpFoldResult result) {
          if (auto attr = dyn_cast<Attribute>(result))
            return constI64(cast<IntegerAttr>(attr).getInt());
          return get(cast<Value>(result));
        };
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
        auto value = [&](OpFoldResult result) {
          if (auto attr = dyn_cast<Attribute>(result))
            return constI64(llvm::cast<IntegerAttr>(attr).getInt());
          return get(llvm::cast<Value>(result));
        };
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

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

LogicalResult FunctionTranslator::translateConstant(arith::ConstantOp op) {
  Type type = op.getType();
  if (auto integer = dyn_cast<IntegerAttr>(op.getValue())) {
    unsigned width = getIntWidth(type);
    APInt bits = integer.getValue();
    if (width == 64) {
      mapping.map(op.getResult(), constI64(bits.getSExtValue()));
      return success();
    }
    // Zero-extended canonical form.
    mapping.map(op.getResult(),
                constI32(static_cast<int32_t>(bits.getZExtValue())));
    return success();
  }
  if (auto floating = dyn_cast<FloatAttr>(op.getValue())) {
    if (!type.isF32() && !type.isF64())
      return op.emitOpError("has type ")
             << type << ", which the vmvx target does not support yet";
    mapping.map(op.getResult(), constFloat(type, floating.getValueAsDouble()));
    return success();
  }
  return op.emitOpError("is not a scalar constant; the vmvx target needs "
                        "scalars here");
}

LogicalResult FunctionTranslator::translateIntegerBinary(Operation *op) {
  Type type = op->getResult(0).getType();
  unsigned width = getIntWidth(type);
  Type vmType = width == 64 ? i64() : i32();
  StringRef bank = suffix(vmType);
  Value lhs = get(op->getOperand(0)), rhs = get(op->getOperand(1));
  auto binary = [&](StringRef name, Value a, Value b) {
    return emit((name + "." + bank).str(), vmType, {a, b});
  };
  auto signedBinary = [&](StringRef name) {
    // name.<bank>.s on sign-extended operands, masked back.
    Value result = emit((name + "." + bank + ".s").str(), vmType,
                        {signExtend(lhs, width), signExtend(rhs, width)});
    return mask(result, width);
  };
  Value result =
      TypeSwitch<Operation *, Value>(op)
          .Case([&](arith::AddIOp) {
            return mask(binary("add", lhs, rhs), width);
          })
          .Case([&](arith::SubIOp) {
            return mask(binary("sub", lhs, rhs), width);
          })
          .Case([&](arith::MulIOp) {
            return mask(binary("mul", lhs, rhs), width);
          })
          .Case([&](arith::AndIOp) { return binary("and", lhs, rhs); })
          .Case([&](arith::OrIOp) { return binary("or", lhs, rhs); })
          .Case([&](arith::XOrIOp) { return binary("xor", lhs, rhs); })
          .Case([&](arith::ShLIOp) {
            return mask(binary("shl", lhs, rhs), width);
          })
          .Case([&](arith::ShRUIOp) {
            return emit(("shr." + bank + ".u").str(), vmType, {lhs, rhs});
          })
          .Case([&](arith::ShRSIOp) {
            Value shifted = emit(("shr." + bank + ".s").str(), vmType,
                                 {signExtend(lhs, width), rhs});
            return mask(shifted, width);
          })
          .Case([&](arith::DivSIOp) { return signedBinary("div"); })
          .Case([&](arith::RemSIOp) { return signedBinary("rem"); })
          .Case([&](arith::MaxSIOp) { return signedBinary("max"); })
          .Case([&](arith::MinSIOp) { return signedBinary("min"); })
          .Case([&](arith::DivUIOp) {
            return emit(("div." + bank + ".u").str(), vmType, {lhs, rhs});
          })
          .Case([&](arith::RemUIOp) {
            return emit(("rem." + bank + ".u").str(), vmType, {lhs, rhs});
          })
          .Case<arith::MaxUIOp, arith::MinUIOp>([&](Operation *minmax) {
            Value less =
                emit(("cmp.lt." + bank + ".u").str(), i32(), {lhs, rhs});
            bool isMax = isa<arith::MaxUIOp>(minmax);
            return emit(("select." + bank).str(), vmType,
                        {less, isMax ? rhs : lhs, isMax ? lhs : rhs});
          })
          .Default([](Operation *) { return Value(); });
  if (!result)
    return op->emitOpError("is not supported by the vmvx target");
  mapping.map(op->getResult(0), result);
  return success();
}

LogicalResult FunctionTranslator::translateFloatBinary(Operation *op) {
  Type type = op->getResult(0).getType();
  StringRef bank = suffix(type);
  Value lhs = get(op->getOperand(0));
  Value rhs = op->getNumOperands() > 1 ? get(op->getOperand(1)) : Value();
  auto binary = [&](StringRef name, Value a, Value b) {
    return emit((name + "." + bank).str(), type, {a, b});
  };
  Value result =
      TypeSwitch<Operation *, Value>(op)
          .Case([&](arith::AddFOp) { return binary("add", lhs, rhs); })
          .Case([&](arith::SubFOp) { return binary("sub", lhs, rhs); })
          .Case([&](arith::MulFOp) { return binary("mul", lhs, rhs); })
          .Case([&](arith::DivFOp) { return binary("div", lhs, rhs); })
          .Case([&](arith::MaximumFOp) { return binary("max", lhs, rhs); })
          .Case([&](arith::MinimumFOp) { return binary("min", lhs, rhs); })
          .Case([&](arith::NegFOp) {
            return emit(("neg." + bank).str(), type, {lhs});
          })
          .Case([&](arith::RemFOp) {
            return emit(("math2." + bank).str(), type, {lhs, rhs},
                        {builder.getNamedAttr("function",
                                              builder.getStringAttr("fmod"))});
          })
          .Case<arith::MaxNumFOp, arith::MinNumFOp>([&](Operation *minmax) {
            // A NaN operand yields the other operand.
            Value both =
                binary(isa<arith::MaxNumFOp>(minmax) ? "max" : "min", lhs, rhs);
            Value rhsIsNumber =
                emit(("cmp.eq." + bank).str(), i32(), {rhs, rhs});
            Value lhsIsNumber =
                emit(("cmp.eq." + bank).str(), i32(), {lhs, lhs});
            Value result =
                emit(("select." + bank).str(), type, {rhsIsNumber, both, lhs});
            return emit(("select." + bank).str(), type,
                        {lhsIsNumber, result, rhs});
          })
          .Default([](Operation *) { return Value(); });
  if (!result)
    return op->emitOpError("is not supported by the vmvx target");
  mapping.map(op->getResult(0), result);
  return success();
}

LogicalResult FunctionTranslator::translateCmpI(arith::CmpIOp op) {
  Type type = op.getLhs().getType();
  unsigned width = getIntWidth(type);
  StringRef bank = width == 64 ? "i64" : "i32";
  Value lhs = get(op.getLhs()), rhs = get(op.getRhs());
  auto compare = [&](StringRef name, Value a, Value b) {
    return emit(("cmp." + name + "." + bank).str(), i32(), {a, b});
  };
  auto compareSigned = [&](StringRef name, Value a, Value b) {
    return emit(("cmp." + name + "." + bank + ".s").str(), i32(),
                {signExtend(a, width), signExtend(b, width)});
  };
  auto compareUnsigned = [&](StringRef name, Value a, Value b) {
    return emit(("cmp." + name + "." + bank + ".u").str(), i32(), {a, b});
  };
  Value result;
  switch (op.getPredicate()) {
  case arith::CmpIPredicate::eq:
    result = compare("eq", lhs, rhs);
    break;
  case arith::CmpIPredicate::ne:
    result = compare("ne", lhs, rhs);
    break;
  case arith::CmpIPredicate::slt:
    result = compareSigned("lt", lhs, rhs);
    break;
  case arith::CmpIPredicate::sle:
    result = compareSigned("le", lhs, rhs);
    break;
  case arith::CmpIPredicate::sgt:
    result = compareSigned("lt", rhs, lhs);
    break;
  case arith::CmpIPredicate::sge:
    result = compareSigned("le", rhs, lhs);
    break;
  case arith::CmpIPredicate::ult:
    result = compareUnsigned("lt", lhs, rhs);
    break;
  case arith::CmpIPredicate::ule:
    result = compareUnsigned("le", lhs, rhs);
    break;
  case arith::CmpIPredicate::ugt:
    result = compareUnsigned("lt", rhs, lhs);
    break;
  case arith::CmpIPredicate::uge:
    result = compareUnsigned("le", rhs, lhs);
    break;
  }
  mapping.map(op.getResult(), result);
  return success();
}

LogicalResult FunctionTranslator::translateCmpF(arith::CmpFOp op) {
  StringRef bank = suffix(op.getLhs().getType());
  Value lhs = get(op.getLhs()), rhs = get(op.getRhs());
  auto compare = [&](StringRef name, Value a, Value b) {
    return emit(("cmp." + name + "." + bank).str(), i32(), {a, b});
  };
  // Ordered predicates map onto eq/lt/le (false on NaN); each unordered
  // one is the negation of the opposite ordered one.
  auto ordered = [&](arith::CmpFPredicate predicate) -> Value {
    switch (predicate) {
    case arith::CmpFPredicate::OEQ:
      return compare("eq", lhs, rhs);
    case arith::CmpFPredicate::OLT:
      return compare("lt", lhs, rhs);
    case arith::CmpFPredicate::OLE:
      return compare("le", lhs, rhs);
    case arith::CmpFPredicate::OGT:
      return compare("lt", rhs, lhs);
    case arith::CmpFPredicate::OGE:
      return compare("le", rhs, lhs);
    case arith::CmpFPredicate::ONE:
      return emit("or.i32", i32(),
                  {compare("lt", lhs, rhs), compare("lt", rhs, lhs)});
    case arith::CmpFPredicate::ORD:
      return emit("and.i32", i32(),
                  {compare("eq", lhs, lhs), compare("eq", rhs, rhs)});
    default:
      return Value();
    }
  };
  using P = arith::CmpFPredicate;
  Value result;
  switch (op.getPredicate()) {
  case P::AlwaysFalse:
    result = constI32(0);
    break;
  case P::AlwaysTrue:
    result = constI32(1);
    break;
  case P::UEQ:
    result = logicalNot(ordered(P::ONE));
    break;
  case P::UNE:
    result = logicalNot(ordered(P::OEQ));
    break;
  case P::ULT:
    result = logicalNot(ordered(P::OGE));
    break;
  case P::ULE:
    result = logicalNot(ordered(P::OGT));
    break;
  case P::UGT:
    result = logicalNot(ordered(P::OLE));
    break;
  case P::UGE:
    result = logicalNot(ordered(P::OLT));
    break;
  case P::UNO:
    result = logicalNot(ordered(P::ORD));
    break;
  default:
    result = ordered(op.getPredicate());
  }
  mapping.map(op.getResult(), result);
  return success();
}

LogicalResult FunctionTranslator::translateCast(Operation *op) {
  Value input = op->getOperand(0);
  Type from = input.getType(), to = op->getResult(0).getType();
  Value value = get(input);
  Value result =
      TypeSwitch<Operation *, Value>(op)
          .Case<arith::ExtSIOp, arith::IndexCastOp>([&](Operation *) {
            return convertInteger(value, getIntWidth(from), getIntWidth(to),
                                  /*isSigned=*/true);
          })
          .Case<arith::ExtUIOp, arith::TruncIOp, arith::IndexCastUIOp>(
              [&](Operation *) {
                return convertInteger(value, getIntWidth(from), getIntWidth(to),
                                      /*isSigned=*/false);
              })
          .Case([&](arith::SIToFPOp) -> Value {
            unsigned width = getIntWidth(from);
            if (width < 64 && to.isF32())
              return emit("cast.si32.f32", to, {signExtend(value, width)});
            Value wide = convertInteger(value, width, 64, /*isSigned=*/true);
            return emit(to.isF32() ? "cast.si64.f32" : "cast.si64.f64", to,
                        {wide});
          })
          .Case([&](arith::UIToFPOp) -> Value {
            unsigned width = getIntWidth(from);
            if (width == 64)
              return emit(to.isF32() ? "cast.ui64.f32" : "cast.ui64.f64", to,
                          {value});
            Value wide = convertInteger(value, width, 64, /*isSigned=*/false);
            return emit(to.isF32() ? "cast.si64.f32" : "cast.si64.f64", to,
                        {wide});
          })
          .Case([&](arith::FPToSIOp) -> Value {
            unsigned width = getIntWidth(to);
            if (width == 64)
              return emit(from.isF32() ? "cast.f32.si64" : "cast.f64.si64",
                          i64(), {value});
            if (from.isF32())
              return mask(emit("cast.f32.si32", i32(), {value}), width);
            Value wide = emit("cast.f64.si64", i64(), {value});
            return convertInteger(wide, 64, width, /*isSigned=*/false);
          })
          .Case([&](arith::FPToUIOp) -> Value {
            unsigned width = getIntWidth(to);
            if (width == 64)
              return emit(from.isF32() ? "cast.f32.ui64" : "cast.f64.ui64",
                          i64(), {value});
            Value wide = emit(from.isF32() ? "cast.f32.si64" : "cast.f64.si64",
                              i64(), {value});
            return convertInteger(wide, 64, width, /*isSigned=*/false);
          })
          .Case([&](arith::ExtFOp) -> Value {
            if (!from.isF32() || !to.isF64())
              return Value();
            return emit("ext.f32.f64", to, {value});
          })
          .Case([&](arith::TruncFOp) -> Value {
            if (!from.isF64() || !to.isF32())
              return Value();
            return emit("trunc.f64.f32", to, {value});
          })
          .Case([&](arith::BitcastOp) -> Value {
            if (from == to)
              return value;
            if (from.isF32() && to.isInteger(32))
              return emit("bitcast.f32.i32", i32(), {value});
            if (from.isInteger(32) && to.isF32())
              return emit("bitcast.i32.f32", to, {value});
            if (from.isF64() && to.isInteger(64))
              return emit("bitcast.f64.i64", i64(), {value});
            if (from.isInteger(64) && to.isF64())
              return emit("bitcast.i64.f64", to, {value});
            return Value();
          })
          .Default([](Operation *) { return Value(); });
  if (!result)
    return op->emitOpError("from ")
           << from << " to " << to << " is not supported by the vmvx target";
  mapping.map(op->getResult(0), result);
  return success();
}

// Math functions the VM computes by name (math_functions.def).
bool isVMUnaryMathFunction(StringRef name) {
  for (const char *candidate : ::strata::vm::kUnaryMathFunctionNames)
    if (name == candidate)
      return true;
  return false;
}

LogicalResult FunctionTranslator::translateMath(Operation *op) {
  Type type = op->getResult(0).getType();
  StringRef name = op->getName().stripDialect();
  auto function = [&](StringRef functionName) {
    return builder.getNamedAttr("function",
                                builder.getStringAttr(functionName));
  };
  if (isa<math::AbsIOp>(op)) {
    unsigned width = getIntWidth(type);
    Type vmType = width == 64 ? i64() : i32();
    StringRef bank = suffix(vmType);
    Value value = signExtend(get(op->getOperand(0)), width);
    Value zero = width == 64 ? constI64(0) : constI32(0);
    Value negative =
        emit(("cmp.lt." + bank + ".s").str(), i32(), {value, zero});
    Value negated = emit(("sub." + bank).str(), vmType, {zero, value});
    Value result =
        emit(("select." + bank).str(), vmType, {negative, negated, value});
    mapping.map(op->getResult(0), mask(result, width));
    return success();
  }
  if (isa<math::IsNaNOp, math::IsInfOp, math::IsFiniteOp>(op)) {
    Value value = get(op->getOperand(0));
    Type operandType = op->getOperand(0).getType();
    StringRef bank = suffix(operandType);
    Value result;
    if (isa<math::IsNaNOp>(op)) {
      result =
          logicalNot(emit(("cmp.eq." + bank).str(), i32(), {value, value}));
    } else {
      Value magnitude = emit(("abs." + bank).str(), operandType, {value});
      Value infinity =
          constFloat(operandType, std::numeric_limits<double>::infinity());
      result =
          emit((isa<math::IsInfOp>(op) ? "cmp.eq." : "cmp.lt.") + bank.str(),
               i32(), {magnitude, infinity});
    }
    mapping.map(op->getResult(0), result);
    return success();
  }
  if (!type.isF32() && !type.isF64())
    return op->emitOpError("on ")
           << type << " is not supported by the vmvx target";
  StringRef bank = suffix(type);
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(get(operand));
  Value result;
  if (isa<math::SqrtOp>(op))
    result = emit(("sqrt." + bank).str(), type, operands);
  else if (isa<math::AbsFOp>(op))
    result = emit(("abs." + bank).str(), type, operands);
  else if (isa<math::FmaOp>(op))
    result = emit(("fma." + bank).str(), type, operands);
  else if (isa<math::RsqrtOp>(op))
    result = emit(
        ("div." + bank).str(), type,
        {constFloat(type, 1.0), emit(("sqrt." + bank).str(), type, operands)});
  else if (isa<math::PowFOp, math::Atan2Op, math::CopySignOp>(op))
    result = emit(("math2." + bank).str(), type, operands, {function(name)});
  else if (isVMUnaryMathFunction(name) && operands.size() == 1)
    result = emit(("math." + bank).str(), type, operands, {function(name)});
  else
    return op->emitOpError("is not supported by the vmvx target");
  mapping.map(op->getResult(0), result);
  return success();
}

LogicalResult FunctionTranslator::translateCall(func::CallOp call) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  if (!callee)
    return call.emitOpError("calls an unknown function");
  SmallVector<Value> operands;
  SmallVector<Type> operandTypes;
  for (Value operand : call.getOperands()) {
    if (isa<MemRefType>(operand.getType())) {
      // Microkernels take the buffer; its offset and strides are explicit
      // operands (extract_strided_metadata) next to it.
      FailureOr<StridedBuffer> buffer = getBuffer(call, operand);
      if (failed(buffer))
        return failure();
      operands.push_back(buffer->buffer);
      operandTypes.push_back(module.bufferType());
      continue;
    }
    operands.push_back(get(operand));
    operandTypes.push_back(operands.back().getType());
  }
  SmallVector<Type> resultTypes;
  for (Type type : call.getResultTypes()) {
    Type converted = module.convertType(type);
    if (!converted || isa<vm::RefType>(converted))
      return call.emitOpError("returns ")
             << type << ", which the vmvx target cannot pass";
    resultTypes.push_back(converted);
  }
  FlatSymbolRefAttr target = call.getCalleeAttr();
  if (callee.isDeclaration()) {
    FailureOr<FlatSymbolRefAttr> import = module.getImport(
        callee, builder.getFunctionType(operandTypes, resultTypes));
    if (failed(import))
      return failure();
    target = *import;
  }
  auto vmCall =
      vm::CallOp::create(builder, loc(), resultTypes, target, operands);
  for (auto [result, vmResult] :
       llvm::zip(call.getResults(), vmCall.getResults()))
    mapping.map(result, vmResult);
  return success();
}

LogicalResult FunctionTranslator::translate(Operation *op) {
  currentLoc = op->getLoc();
  if (isa_and_nonnull<math::MathDialect>(op->getDialect()))
    return translateMath(op);
  if (isa_and_nonnull<memref::MemRefDialect>(op->getDialect()))
    return translateMemRef(op);
  return TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](arith::ConstantOp constant) {
        return translateConstant(constant);
      })
      .Case<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::AndIOp,
            arith::OrIOp, arith::XOrIOp, arith::ShLIOp, arith::ShRUIOp,
            arith::ShRSIOp, arith::DivSIOp, arith::RemSIOp, arith::MaxSIOp,
            arith::MinSIOp, arith::DivUIOp, arith::RemUIOp, arith::MaxUIOp,
            arith::MinUIOp>(
          [&](Operation *binary) { return translateIntegerBinary(binary); })
      .Case<arith::AddFOp, arith::SubFOp, arith::MulFOp, arith::DivFOp,
            arith::MaximumFOp, arith::MinimumFOp, arith::NegFOp, arith::RemFOp,
            arith::MaxNumFOp, arith::MinNumFOp>(
          [&](Operation *binary) { return translateFloatBinary(binary); })
      .Case([&](arith::CmpIOp cmp) { return translateCmpI(cmp); })
      .Case([&](arith::CmpFOp cmp) { return translateCmpF(cmp); })
      .Case([&](arith::SelectOp select) -> LogicalResult {
        Type type = module.convertType(select.getType());
        if (!type || isa<vm::RefType>(type))
          return select.emitOpError("selects ")
                 << select.getType() << ", which the vmvx target cannot";
        mapping.map(
            select.getResult(),
            emit(("select." + suffix(type)).str(), type,
                 {get(select.getCondition()), get(select.getTrueValue()),
                  get(select.getFalseValue())}));
        return success();
      })
      .Case<arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp, arith::IndexCastOp,
            arith::IndexCastUIOp, arith::SIToFPOp, arith::UIToFPOp,
            arith::FPToSIOp, arith::FPToUIOp, arith::ExtFOp, arith::TruncFOp,
            arith::BitcastOp>(
          [&](Operation *cast) { return translateCast(cast); })
      .Case([&](ub::PoisonOp poison) -> LogicalResult {
        Type type = poison.getType();
        if (isa<FloatType>(type))
          mapping.map(poison.getResult(), constFloat(type, 0.0));
        else if (type.isIntOrIndex())
          mapping.map(poison.getResult(),
                      getIntWidth(type) == 64 ? constI64(0) : constI32(0));
        else
          return poison.emitOpError("of this type is not supported by the "
                                    "vmvx target");
        return success();
      })
      .Case([&](cf::BranchOp br) {
        SmallVector<Value> operands;
        for (Value operand : br.getDestOperands())
          operands.push_back(get(operand));
        vm::BranchOp::create(builder, loc(), operands, blocks[br.getDest()]);
        return success();
      })
      .Case([&](cf::CondBranchOp br) {
        SmallVector<Value> trueOperands, falseOperands;
        for (Value operand : br.getTrueDestOperands())
          trueOperands.push_back(get(operand));
        for (Value operand : br.getFalseDestOperands())
          falseOperands.push_back(get(operand));
        vm::CondBranchOp::create(
            builder, loc(), get(br.getCondition()), trueOperands, falseOperands,
            blocks[br.getTrueDest()], blocks[br.getFalseDest()]);
        return success();
      })
      .Case([&](cf::AssertOp assertion) {
        // Continue in a new block; a failing assertion fails the workgroup.
        Block *current = builder.getInsertionBlock();
        Block *next = new Block();
        Block *failure = new Block();
        vmFunc.getBody().getBlocks().insertAfter(current->getIterator(), next);
        vmFunc.getBody().getBlocks().insertAfter(next->getIterator(), failure);
        vm::CondBranchOp::create(builder, loc(), get(assertion.getArg()),
                                 ValueRange{}, ValueRange{}, next, failure);
        builder.setInsertionPointToStart(failure);
        vm::FailOp::create(
            builder, loc(),
            constI32(static_cast<int32_t>(9)), // FAILED_PRECONDITION
            assertion.getMsg());
        builder.setInsertionPointToStart(next);
        return success();
      })
      .Case([&](func::ReturnOp ret) -> LogicalResult {
        SmallVector<Value> operands;
        for (Value operand : ret.getOperands()) {
          if (isa<MemRefType>(operand.getType()))
            return ret.emitOpError("returns a memref; vmvx kernels write "
                                   "results to bindings");
          operands.push_back(get(operand));
        }
        vm::ReturnOp::create(builder, loc(), operands);
        return success();
      })
      .Case([&](func::CallOp call) { return translateCall(call); })
      .Default([&](Operation *other) {
        return other->emitOpError("is not supported by the vmvx target");
      });
}

LogicalResult FunctionTranslator::run() {
  Region &body = func.getBody();
  // Blocks in reverse post-order: every value is translated before its
  // uses. Unreachable blocks are dropped.
  llvm::ReversePostOrderTraversal<Block *> order(&body.front());
  bool exported = func.isPublic();
  for (Block *block : order) {
    Block *vmBlock = new Block();
    vmFunc.getBody().push_back(vmBlock);
    blocks[block] = vmBlock;
    if (block == &body.front())
      continue;
    for (BlockArgument arg : block->getArguments()) {
      Type type = module.convertType(arg.getType());
      if (!type || isa<vm::RefType>(type))
        return func.emitOpError("has a block argument of type ")
               << arg.getType() << " the vmvx target cannot carry";
      mapping.map(arg, vmBlock->addArgument(type, arg.getLoc()));
    }
  }

  // Entry arguments: memrefs become buffers, scalars registers. Dispatch
  // entry points get the ABI's workgroup arguments: the function's own
  // (id, count) are the x components.
  Block *entry = blocks[&body.front()];
  entryBlock = entry;
  unsigned bindingCount = 0;
  for (BlockArgument arg : func.getArguments()) {
    Type type = arg.getType();
    if (auto memref = dyn_cast<MemRefType>(type)) {
      if (!memref.hasStaticShape() || !memref.getLayout().isIdentity())
        return func.emitOpError("binding ")
               << arg.getArgNumber() << " has type " << type
               << "; the vmvx target needs static shapes";
      BlockArgument buffer =
          entry->addArgument(module.bufferType(), arg.getLoc());
      ++bindingCount;
      buffers[arg] = rootBuffer(buffer, memref, {});
      continue;
    }
    Type converted = module.convertType(type);
    if (!converted)
      return func.emitOpError("has an argument of type ")
             << type << " the vmvx target cannot pass";
    if (!exported) {
      mapping.map(arg, entry->addArgument(converted, arg.getLoc()));
      continue;
    }
  }
  if (exported) {
    // (bindings..., workgroup_id, workgroup_count) -> ABI order.
    if (func.getNumArguments() != bindingCount + 2)
      return func.emitOpError("is not a dispatch entry point (bindings, "
                              "workgroup id, workgroup count)");
    SmallVector<Value> workgroup;
    for (int i = 0; i < STRATA_HAL_VMVX_WORKGROUP_ARGUMENT_COUNT; ++i)
      workgroup.push_back(entry->addArgument(i64(), func.getLoc()));
    mapping.map(func.getArgument(bindingCount), workgroup[0]);
    mapping.map(func.getArgument(bindingCount + 1), workgroup[3]);
  }
  SmallVector<Type> argTypes(entry->getArgumentTypes());
  SmallVector<Type> resultTypes;
  for (Type type : func.getResultTypes())
    resultTypes.push_back(module.convertType(type));
  vmFunc.setFunctionTypeAttr(
      TypeAttr::get(builder.getFunctionType(argTypes, resultTypes)));

  for (Block *block : order) {
    builder.setInsertionPointToEnd(blocks[block]);
    for (Operation &op : *block)
      if (failed(translate(&op)))
        return failure();
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Module
//===----------------------------------------------------------------------===//

Type KernelTranslator::convertType(Type type) {
  if (isa<MemRefType>(type))
    return bufferType();
  if (type.isIndex())
    return builder.getI64Type();
  if (auto integer = dyn_cast<IntegerType>(type)) {
    if (integer.getWidth() <= 32)
      return builder.getI32Type();
    if (integer.getWidth() == 64)
      return builder.getI64Type();
    return nullptr;
  }
  if (type.isF32() || type.isF64())
    return type;
  return nullptr;
}

FailureOr<FlatSymbolRefAttr>
KernelTranslator::getImport(func::FuncOp declaration, FunctionType vmType) {
  StringRef name = declaration.getSymName();
  if (auto it = imports.find(name); it != imports.end())
    return it->second;
  if (!name.starts_with(STRATA_HAL_VMVX_MODULE_NAME "."))
    return declaration.emitOpError("is not a vmvx microkernel; vmvx "
                                   "kernels can only call those"),
           failure();
  FailureOr<std::string> cconv = getCallingConvention(vmType);
  if (failed(cconv))
    return declaration.emitOpError("has a signature the VM cannot call"),
           failure();
  // The runtime's table is the contract: name and calling convention.
  std::optional<StringRef> expected;
#define STRATA_VMVX_MICROKERNEL(kernel, full_name, calling_convention)         \
  if (name == full_name)                                                       \
    expected = calling_convention;
#include "strata/hal/local/vmvx_microkernels.def"
  if (!expected)
    return declaration.emitOpError("is not a microkernel the runtime's vmvx "
                                   "module provides"),
           failure();
  if (*expected != *cconv)
    return declaration.emitOpError("is called with calling convention '")
               << *cconv << "' but the runtime's is '" << *expected << "'",
           failure();
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToStart(&vmModule.getBody().front());
  if (!needsMicrokernels) {
    vm::DependencyOp::create(builder, declaration.getLoc(),
                             STRATA_HAL_VMVX_MODULE_NAME,
                             STRATA_HAL_VMVX_MODULE_VERSION);
    needsMicrokernels = true;
  }
  vm::ImportOp::create(builder, declaration.getLoc(), name, vmType, *cconv);
  auto symbol = FlatSymbolRefAttr::get(builder.getContext(), name);
  imports[name] = symbol;
  return symbol;
}

FailureOr<FlatSymbolRefAttr>
KernelTranslator::getGlobalRodata(memref::GetGlobalOp op) {
  StringRef name = op.getName();
  if (auto it = globalRodata.find(name); it != globalRodata.end())
    return it->second;
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
      op, op.getNameAttr());
  auto value =
      global ? dyn_cast_or_null<DenseElementsAttr>(global.getInitialValueAttr())
             : DenseElementsAttr();
  if (!global || !global.getConstant() || !value)
    return op.emitOpError("reads a global that is not a constant with dense "
                          "contents"),
           failure();
  if (value.getElementType().isInteger(1))
    return op.emitOpError("reads an i1 constant; the vmvx target stores "
                          "booleans as bytes"),
           failure();
  // Splats are stored expanded: kernels index every element.
  if (value.isSplat()) {
    auto type = cast<ShapedType>(value.getType());
    SmallVector<Attribute> elements(type.getNumElements(),
                                    value.getSplatValue<Attribute>());
    value = DenseElementsAttr::get(type, elements);
  }
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(&vmModule.getBody().front());
  std::string rodataName = ("global_" + name).str();
  vm::RodataOp::create(builder, global.getLoc(),
                       builder.getStringAttr(rodataName), value,
                       builder.getI64IntegerAttr(16));
  auto symbol = FlatSymbolRefAttr::get(builder.getContext(), rodataName);
  globalRodata[name] = symbol;
  return symbol;
}

LogicalResult KernelTranslator::run() {
  builder.setInsertionPointToEnd(kernel.getBody());
  StringRef name = "kernel";
  if (auto executableName =
          kernel->getAttrOfType<StringAttr>("strata.executable_name"))
    name = executableName.getValue();
  vmModule = vm::ModuleOp::create(builder, kernel.getLoc(),
                                  builder.getStringAttr(name),
                                  builder.getI32IntegerAttr(0));
  vmModule.getBody().push_back(new Block());

  SmallVector<Operation *> translated;
  for (Operation &op : kernel.getBody()->without_terminator()) {
    if (&op == vmModule.getOperation())
      continue;
    if (isa<memref::GlobalOp>(op)) {
      translated.push_back(&op);
      continue;
    }
    auto func = dyn_cast<func::FuncOp>(op);
    if (!func)
      return op.emitOpError("is not supported in a vmvx kernel module");
    translated.push_back(&op);
    if (func.isDeclaration())
      continue;
    builder.setInsertionPointToEnd(&vmModule.getBody().front());
    auto vmFunc = vm::FuncOp::create(builder, func.getLoc(), func.getSymName(),
                                     builder.getFunctionType({}, {}));
    vmFunc.setExported(func.isPublic());
    if (failed(FunctionTranslator(*this, func, vmFunc).run()))
      return failure();
  }
  for (Operation *op : translated)
    op->erase();
  return success();
}

struct VMVXConvertKernelToVMPass
    : public impl::VMVXConvertKernelToVMPassBase<VMVXConvertKernelToVMPass> {
  void runOnOperation() override {
    if (failed(KernelTranslator(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace
} // namespace strata
