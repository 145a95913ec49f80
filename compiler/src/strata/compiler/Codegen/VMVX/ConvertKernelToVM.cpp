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

#include "strata/compiler/Codegen/VMVX/KernelTranslator.h"
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
namespace strata::vmvx {

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

Value FunctionTranslator::widen(Value value, Type type) {
  if (type.isF16())
    return emit("ext.f16.f32", builder.getF32Type(), {value});
  if (type.isBF16()) {
    // bf16 is the high half of an f32.
    Value high = emit("shl.i32", i32(), {value, constI32(16)});
    return emit("bitcast.i32.f32", builder.getF32Type(), {high});
  }
  return value;
}

Value FunctionTranslator::narrow(Value value, Type type) {
  if (type.isF16())
    return emit("trunc.f32.f16", i32(), {value});
  if (!type.isBF16())
    return value;
  // Round to nearest even on the low 16 bits; NaNs become the quiet NaN.
  Value bits = emit("bitcast.f32.i32", i32(), {value});
  Value lowestKept =
      emit("and.i32", i32(),
           {emit("shr.i32.u", i32(), {bits, constI32(16)}), constI32(1)});
  Value bias = emit("add.i32", i32(), {constI32(0x7FFF), lowestKept});
  Value rounded = emit("shr.i32.u", i32(),
                       {emit("add.i32", i32(), {bits, bias}), constI32(16)});
  Value isNumber = emit("cmp.eq.f32", i32(), {value, value});
  return emit("select.i32", i32(), {isNumber, rounded, constI32(0x7FC0)});
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
        if (type.isF32() || type.isF64())
          mapping.map(poison.getResult(), constFloat(type, 0.0));
        else if (isHalfFloat(type))
          mapping.map(poison.getResult(), constI32(0));
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
  // f16 / bf16: their bits, zero-extended.
  if (type.isF16() || type.isBF16())
    return builder.getI32Type();
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

} // namespace strata::vmvx

namespace strata {
namespace {

struct VMVXConvertKernelToVMPass
    : public impl::VMVXConvertKernelToVMPassBase<VMVXConvertKernelToVMPass> {
  void runOnOperation() override {
    if (failed(vmvx::KernelTranslator(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace
} // namespace strata
