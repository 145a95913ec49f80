//===- KernelTranslator.h - vmvx kernel module to vm.module -----*- C++ -*-===//
//
// Internal to the vmvx target: the translator behind
// strata-vmvx-convert-kernel-to-vm, split over ConvertKernelToVM.cpp (module,
// functions, control flow, calls), TranslateMemRefOps.cpp (buffers and
// addresses) and TranslateScalarOps.cpp (arith and math).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_VMVX_KERNELTRANSLATOR_H_
#define STRATA_COMPILER_CODEGEN_VMVX_KERNELTRANSLATOR_H_

#include "strata/compiler/Dialect/VM/VMDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"

namespace strata::vmvx {

// Internal to this directory's translator files, which all spell MLIR
// types unqualified.
using namespace mlir;

// Integer width of an integer or index type.
inline unsigned getIntWidth(Type type) {
  if (type.isIndex())
    return 64;
  return cast<IntegerType>(type).getWidth();
}

// Bytes one element of a memref takes in memory (i1 takes a byte).
inline int64_t getElementBytes(Type type) {
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
  // f16 and bf16 live as their bits in i32 registers and compute in f32:
  // `widen` turns such a value into f32 (other floats pass), `narrow` an
  // f32 back into `type`'s bits (rounding to nearest even).
  static bool isHalfFloat(Type type) { return type.isF16() || type.isBF16(); }
  Value widen(Value value, Type type);
  Value narrow(Value value, Type type);
  // The type a float op of `type` computes in.
  Type computeType(Type type) {
    return isHalfFloat(type) ? builder.getF32Type() : type;
  }
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
  // A static or dynamic index (offsets, sizes, strides) as an i64 value.
  Value getIndex(OpFoldResult result);
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

} // namespace strata::vmvx

#endif // STRATA_COMPILER_CODEGEN_VMVX_KERNELTRANSLATOR_H_
