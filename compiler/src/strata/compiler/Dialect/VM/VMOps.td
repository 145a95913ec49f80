//===- VMOps.td - the VM's instruction set as IR -----------*- tablegen -*-===//
//
// The vm dialect mirrors the runtime's bytecode
// (runtime/src/strata/vm/bytecode_ops.def): a vm.module is serialized
// one-to-one into a module file. Values live in typed registers: i32, i64,
// f32, f64 and refs (!vm.ref<T>).
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_VM_OPS
#define STRATA_VM_OPS

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def VM_Dialect : Dialect {
  let name = "vm";
  let cppNamespace = "::strata::vm";
  let summary = "Register-based VM bytecode as IR";
  let useDefaultTypePrinterParser = 1;
}

class VM_Type<string name, string typeMnemonic> : TypeDef<VM_Dialect, name> {
  let mnemonic = typeMnemonic;
}

def VM_RefType : VM_Type<"Ref", "ref"> {
  let summary = "A reference-counted object";
  let parameters = (ins "::mlir::Type":$objectType);
  let assemblyFormat = "`<` $objectType `>`";
}

def VM_BufferType : VM_Type<"Buffer", "buffer"> {
  let summary = "A byte buffer (vm.buffer), e.g. a rodata segment";
}

def VM_AnyRef : Type<CPred<"::llvm::isa<::strata::vm::RefType>($_self)">,
                     "ref">;
def VM_Primitive : AnyTypeOf<[I32, I64, F32, F64]>;
def VM_AnyValue : AnyTypeOf<[VM_Primitive, VM_AnyRef]>;

class VM_Op<string mnemonic, list<Trait> traits = []>
    : Op<VM_Dialect, mnemonic, traits>;

def VM_ModuleOp : VM_Op<"module", [
    IsolatedFromAbove, SymbolTable, Symbol, SingleBlock, NoTerminator]> {
  let summary = "A module: what one .smod file holds";
  let arguments = (ins SymbolNameAttr:$sym_name,
                       DefaultValuedAttr<I32Attr, "0">:$version);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
}

def VM_FuncOp : VM_Op<"func", [
    IsolatedFromAbove, FunctionOpInterface, OpAsmOpInterface]> {
  let summary = "A bytecode function";
  let description = [{
    `exported` makes the function callable from outside the module under
    its name. `strata.abi` attributes on arguments and results record the
    tensor types of an export for reflection.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       UnitAttr:$exported);
  let regions = (region AnyRegion:$body);
  let hasCustomAssemblyFormat = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
                                 "::mlir::FunctionType":$type), [{
    build($_builder, $_state, $_builder.getStringAttr(name),
          ::mlir::TypeAttr::get(type), /*sym_visibility=*/nullptr,
          /*arg_attrs=*/nullptr, /*res_attrs=*/nullptr, /*exported=*/nullptr);
  }]>];
  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    static ::llvm::StringRef getDefaultDialect() { return "vm"; }
  }];
}

def VM_ImportOp : VM_Op<"import", [Symbol]> {
  let summary = "A function of another module, resolved at load time";
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       StrAttr:$calling_convention);
  let assemblyFormat = [{
    $sym_name `:` $function_type `cconv` $calling_convention attr-dict
  }];
}

def VM_DependencyOp : VM_Op<"dependency"> {
  let summary = "A module that must be registered before this one";
  let arguments = (ins StrAttr:$name, I32Attr:$minimum_version);
  let assemblyFormat = "$name `version` $minimum_version attr-dict";
}

def VM_GlobalRefOp : VM_Op<"global.ref", [Symbol]> {
  let summary = "A mutable ref slot in the module state";
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttr:$type);
  let assemblyFormat = "$sym_name `:` $type attr-dict";
}

def VM_GlobalLoadRefOp : VM_Op<"global.load.ref"> {
  let arguments = (ins FlatSymbolRefAttr:$global);
  let results = (outs VM_AnyRef:$result);
  let assemblyFormat = "$global attr-dict `:` type($result)";
}

def VM_GlobalStoreRefOp : VM_Op<"global.store.ref"> {
  let arguments = (ins VM_AnyRef:$value, FlatSymbolRefAttr:$global);
  let assemblyFormat = "$value `,` $global attr-dict `:` type($value)";
}

def VM_RodataOp : VM_Op<"rodata", [Symbol]> {
  let summary = "Read-only bytes stored in the module file";
  let description = [{
    `value` is a string (raw bytes) or a dense elements attribute whose raw
    data is stored as is.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, AnyAttr:$value,
                       DefaultValuedAttr<I64Attr, "16">:$alignment);
  let assemblyFormat = "$sym_name $value attr-dict";
}

def VM_ConstRefRodataOp : VM_Op<"const.ref.rodata", [Pure]> {
  let arguments = (ins FlatSymbolRefAttr:$rodata);
  let results = (outs VM_AnyRef:$result);
  let assemblyFormat = "$rodata attr-dict `:` type($result)";
}

def VM_ConstRefZeroOp : VM_Op<"const.ref.zero", [Pure]> {
  let results = (outs VM_AnyRef:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
}

class VM_ConstOp<string mnemonic, Type type, Attr attr>
    : VM_Op<mnemonic, [Pure, ConstantLike]> {
  let arguments = (ins attr:$value);
  let results = (outs type:$result);
  let builders = [OpBuilder<(ins attr.storageType:$value), [{
    build($_builder, $_state, value.getType(), value);
  }]>];
  let assemblyFormat = "$value attr-dict";
}
def VM_ConstI32Op : VM_ConstOp<"const.i32", I32, I32Attr>;
def VM_ConstI64Op : VM_ConstOp<"const.i64", I64, I64Attr>;
def VM_ConstF32Op : VM_ConstOp<"const.f32", F32, F32Attr>;
def VM_ConstF64Op : VM_ConstOp<"const.f64", F64, F64Attr>;

def VM_CallOp : VM_Op<"call", [CallOpInterface]> {
  let summary = "Calls a function of this module or an import";
  let description = [{
    When the callee has variadic segments, `segment_sizes` says how many
    tuples each segment has and the call becomes call.variadic.
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Variadic<VM_AnyValue>:$operands,
                       OptionalAttr<DenseI32ArrayAttr>:$segment_sizes,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let results = (outs Variadic<VM_AnyValue>:$results);
  let builders = [OpBuilder<(ins "::mlir::TypeRange":$resultTypes,
                                 "::mlir::FlatSymbolRefAttr":$callee,
                                 "::mlir::ValueRange":$operands), [{
    build($_builder, $_state, resultTypes, callee, operands,
          /*segment_sizes=*/nullptr, /*arg_attrs=*/nullptr,
          /*res_attrs=*/nullptr);
  }]>];
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` functional-type($operands, $results)
  }];
  let extraClassDeclaration = [{
    ::mlir::CallInterfaceCallable getCallableForCallee() {
      return (*this)->getAttrOfType<::mlir::SymbolRefAttr>("callee");
    }
    void setCalleeFromCallable(::mlir::CallInterfaceCallable callee) {
      (*this)->setAttr("callee", ::llvm::cast<::mlir::SymbolRefAttr>(callee));
    }
    ::mlir::Operation::operand_range getArgOperands() { return getOperands(); }
    ::mlir::MutableOperandRange getArgOperandsMutable() {
      return getOperandsMutable();
    }
  }];
}

def VM_ReturnOp : VM_Op<"return", [Pure, Terminator, ReturnLike,
                                   HasParent<"FuncOp">]> {
  let arguments = (ins Variadic<VM_AnyValue>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
}

def VM_BranchOp : VM_Op<"br", [Terminator, Pure,
    DeclareOpInterfaceMethods<BranchOpInterface>]> {
  let arguments = (ins Variadic<VM_AnyValue>:$destOperands);
  let successors = (successor AnySuccessor:$dest);
  let assemblyFormat = "$dest (`(` $destOperands^ `:` type($destOperands) `)`)? attr-dict";
}

def VM_CondBranchOp : VM_Op<"cond_br", [Terminator, Pure,
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<BranchOpInterface>]> {
  let arguments = (ins I32:$condition,
                       Variadic<VM_AnyValue>:$trueDestOperands,
                       Variadic<VM_AnyValue>:$falseDestOperands);
  let successors = (successor AnySuccessor:$trueDest, AnySuccessor:$falseDest);
  let assemblyFormat = [{
    $condition `,` $trueDest (`(` $trueDestOperands^ `:` type($trueDestOperands) `)`)?
    `,` $falseDest (`(` $falseDestOperands^ `:` type($falseDestOperands) `)`)?
    attr-dict
  }];
}

def VM_FailOp : VM_Op<"fail", [Terminator]> {
  let summary = "Fails the invocation with a status code and message";
  let arguments = (ins I32:$status, StrAttr:$message);
  let assemblyFormat = "$status `,` $message attr-dict";
}

// Binary arithmetic on one register bank; `opcode` names the bytecode op.
class VM_BinaryOp<string mnemonic, Type type> : VM_Op<mnemonic, [Pure]> {
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs type:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict";
}
def VM_AddI32Op : VM_BinaryOp<"add.i32", I32>;
def VM_SubI32Op : VM_BinaryOp<"sub.i32", I32>;
def VM_MulI32Op : VM_BinaryOp<"mul.i32", I32>;
def VM_AddI64Op : VM_BinaryOp<"add.i64", I64>;
def VM_SubI64Op : VM_BinaryOp<"sub.i64", I64>;
def VM_MulI64Op : VM_BinaryOp<"mul.i64", I64>;
def VM_CmpNeI64Op : VM_Op<"cmp.ne.i64", [Pure]> {
  let arguments = (ins I64:$lhs, I64:$rhs);
  let results = (outs I32:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict";
}
def VM_CmpNzI32Op : VM_Op<"cmp.nz.i32", [Pure]> {
  let arguments = (ins I32:$operand);
  let results = (outs I32:$result);
  let assemblyFormat = "$operand attr-dict";
}


// Instructions that only read and write registers. Their bytecode encoding
// is generic (BytecodeEncoder): the op name minus "vm." is the mnemonic of
// bytecode_ops.def, results are encoded before operands, and a `function`
// attribute fills a math function operand (m/n).
class VM_UnaryOp<string mnemonic, Type resultType, Type operandType>
    : VM_Op<mnemonic, [Pure]> {
  let arguments = (ins operandType:$operand);
  let results = (outs resultType:$result);
  let assemblyFormat = "$operand attr-dict";
}
class VM_CompareOp<string mnemonic, Type type> : VM_Op<mnemonic, [Pure]> {
  let arguments = (ins type:$lhs, type:$rhs);
  let results = (outs I32:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict";
}
class VM_SelectOp<string mnemonic, Type type> : VM_Op<mnemonic, [Pure]> {
  let arguments = (ins I32:$condition, type:$trueValue, type:$falseValue);
  let results = (outs type:$result);
  let assemblyFormat = "$condition `,` $trueValue `,` $falseValue attr-dict";
}
class VM_MathOp<string mnemonic, Type type> : VM_Op<mnemonic, [Pure]> {
  let summary = "A unary math function (math_functions.def) by name";
  let arguments = (ins type:$operand, StrAttr:$function);
  let results = (outs type:$result);
  let assemblyFormat = "$function $operand attr-dict";
}
class VM_Math2Op<string mnemonic, Type type> : VM_Op<mnemonic, [Pure]> {
  let summary = "A binary math function (math_functions.def) by name";
  let arguments = (ins type:$lhs, type:$rhs, StrAttr:$function);
  let results = (outs type:$result);
  let assemblyFormat = "$function $lhs `,` $rhs attr-dict";
}
class VM_FmaOp<string mnemonic, Type type> : VM_Op<mnemonic, [Pure]> {
  let arguments = (ins type:$a, type:$b, type:$c);
  let results = (outs type:$result);
  let assemblyFormat = "$a `,` $b `,` $c attr-dict";
}
// Byte offsets; out-of-range accesses fail the invocation.
class VM_BufferLoadOp<string mnemonic, Type type> : VM_Op<mnemonic> {
  let arguments = (ins VM_AnyRef:$buffer, I64:$offset);
  let results = (outs type:$result);
  let assemblyFormat = "$buffer `[` $offset `]` attr-dict `:` type($buffer)";
}
class VM_BufferStoreOp<string mnemonic, Type type> : VM_Op<mnemonic> {
  let arguments = (ins VM_AnyRef:$buffer, I64:$offset, type:$value);
  let assemblyFormat = [{
    $value `,` $buffer `[` $offset `]` attr-dict `:` type($buffer)
  }];
}
def VM_BufferAllocOp : VM_Op<"buffer.alloc"> {
  let summary = "A zero-filled, writable vm.buffer of `length` bytes";
  let arguments = (ins I64:$length);
  let results = (outs VM_AnyRef:$result);
  let assemblyFormat = "$length attr-dict `:` type($result)";
}

def VM_DivI32SOp : VM_BinaryOp<"div.i32.s", I32>;
def VM_DivI32UOp : VM_BinaryOp<"div.i32.u", I32>;
def VM_RemI32SOp : VM_BinaryOp<"rem.i32.s", I32>;
def VM_RemI32UOp : VM_BinaryOp<"rem.i32.u", I32>;
def VM_AndI32Op : VM_BinaryOp<"and.i32", I32>;
def VM_OrI32Op : VM_BinaryOp<"or.i32", I32>;
def VM_XorI32Op : VM_BinaryOp<"xor.i32", I32>;
def VM_ShlI32Op : VM_BinaryOp<"shl.i32", I32>;
def VM_ShrI32SOp : VM_BinaryOp<"shr.i32.s", I32>;
def VM_ShrI32UOp : VM_BinaryOp<"shr.i32.u", I32>;
def VM_MinI32SOp : VM_BinaryOp<"min.i32.s", I32>;
def VM_MaxI32SOp : VM_BinaryOp<"max.i32.s", I32>;
def VM_NotI32Op : VM_UnaryOp<"not.i32", I32, I32>;
def VM_CmpEqI32Op : VM_CompareOp<"cmp.eq.i32", I32>;
def VM_CmpNeI32Op : VM_CompareOp<"cmp.ne.i32", I32>;
def VM_CmpLtI32SOp : VM_CompareOp<"cmp.lt.i32.s", I32>;
def VM_CmpLtI32UOp : VM_CompareOp<"cmp.lt.i32.u", I32>;
def VM_CmpLeI32SOp : VM_CompareOp<"cmp.le.i32.s", I32>;
def VM_CmpLeI32UOp : VM_CompareOp<"cmp.le.i32.u", I32>;
def VM_DivI64SOp : VM_BinaryOp<"div.i64.s", I64>;
def VM_DivI64UOp : VM_BinaryOp<"div.i64.u", I64>;
def VM_RemI64SOp : VM_BinaryOp<"rem.i64.s", I64>;
def VM_RemI64UOp : VM_BinaryOp<"rem.i64.u", I64>;
def VM_AndI64Op : VM_BinaryOp<"and.i64", I64>;
def VM_OrI64Op : VM_BinaryOp<"or.i64", I64>;
def VM_XorI64Op : VM_BinaryOp<"xor.i64", I64>;
def VM_ShlI64Op : VM_BinaryOp<"shl.i64", I64>;
def VM_ShrI64SOp : VM_BinaryOp<"shr.i64.s", I64>;
def VM_ShrI64UOp : VM_BinaryOp<"shr.i64.u", I64>;
def VM_MinI64SOp : VM_BinaryOp<"min.i64.s", I64>;
def VM_MaxI64SOp : VM_BinaryOp<"max.i64.s", I64>;
def VM_NotI64Op : VM_UnaryOp<"not.i64", I64, I64>;
def VM_CmpEqI64Op : VM_CompareOp<"cmp.eq.i64", I64>;
def VM_CmpLtI64SOp : VM_CompareOp<"cmp.lt.i64.s", I64>;
def VM_CmpLtI64UOp : VM_CompareOp<"cmp.lt.i64.u", I64>;
def VM_CmpLeI64SOp : VM_CompareOp<"cmp.le.i64.s", I64>;
def VM_CmpLeI64UOp : VM_CompareOp<"cmp.le.i64.u", I64>;
def VM_AddF32Op : VM_BinaryOp<"add.f32", F32>;
def VM_SubF32Op : VM_BinaryOp<"sub.f32", F32>;
def VM_MulF32Op : VM_BinaryOp<"mul.f32", F32>;
def VM_DivF32Op : VM_BinaryOp<"div.f32", F32>;
def VM_MinF32Op : VM_BinaryOp<"min.f32", F32>;
def VM_MaxF32Op : VM_BinaryOp<"max.f32", F32>;
def VM_NegF32Op : VM_UnaryOp<"neg.f32", F32, F32>;
def VM_AbsF32Op : VM_UnaryOp<"abs.f32", F32, F32>;
def VM_SqrtF32Op : VM_UnaryOp<"sqrt.f32", F32, F32>;
def VM_CmpEqF32Op : VM_CompareOp<"cmp.eq.f32", F32>;
def VM_CmpLtF32Op : VM_CompareOp<"cmp.lt.f32", F32>;
def VM_CmpLeF32Op : VM_CompareOp<"cmp.le.f32", F32>;
def VM_MathF32Op : VM_MathOp<"math.f32", F32>;
def VM_Math2F32Op : VM_Math2Op<"math2.f32", F32>;
def VM_FmaF32Op : VM_FmaOp<"fma.f32", F32>;
def VM_AddF64Op : VM_BinaryOp<"add.f64", F64>;
def VM_SubF64Op : VM_BinaryOp<"sub.f64", F64>;
def VM_MulF64Op : VM_BinaryOp<"mul.f64", F64>;
def VM_DivF64Op : VM_BinaryOp<"div.f64", F64>;
def VM_MinF64Op : VM_BinaryOp<"min.f64", F64>;
def VM_MaxF64Op : VM_BinaryOp<"max.f64", F64>;
def VM_NegF64Op : VM_UnaryOp<"neg.f64", F64, F64>;
def VM_AbsF64Op : VM_UnaryOp<"abs.f64", F64, F64>;
def VM_SqrtF64Op : VM_UnaryOp<"sqrt.f64", F64, F64>;
def VM_CmpEqF64Op : VM_CompareOp<"cmp.eq.f64", F64>;
def VM_CmpLtF64Op : VM_CompareOp<"cmp.lt.f64", F64>;
def VM_CmpLeF64Op : VM_CompareOp<"cmp.le.f64", F64>;
def VM_MathF64Op : VM_MathOp<"math.f64", F64>;
def VM_Math2F64Op : VM_Math2Op<"math2.f64", F64>;
def VM_FmaF64Op : VM_FmaOp<"fma.f64", F64>;
def VM_SelectI32Op : VM_SelectOp<"select.i32", I32>;
def VM_SelectI64Op : VM_SelectOp<"select.i64", I64>;
def VM_SelectF32Op : VM_SelectOp<"select.f32", F32>;
def VM_SelectF64Op : VM_SelectOp<"select.f64", F64>;
def VM_TruncI64I32Op : VM_UnaryOp<"trunc.i64.i32", I32, I64>;
def VM_ExtI32I64SOp : VM_UnaryOp<"ext.i32.i64.s", I64, I32>;
def VM_ExtI32I64UOp : VM_UnaryOp<"ext.i32.i64.u", I64, I32>;
def VM_CastSi32F32Op : VM_UnaryOp<"cast.si32.f32", F32, I32>;
def VM_CastF32Si32Op : VM_UnaryOp<"cast.f32.si32", I32, F32>;
def VM_CastSi64F64Op : VM_UnaryOp<"cast.si64.f64", F64, I64>;
def VM_CastF64Si64Op : VM_UnaryOp<"cast.f64.si64", I64, F64>;
def VM_ExtF32F64Op : VM_UnaryOp<"ext.f32.f64", F64, F32>;
def VM_TruncF64F32Op : VM_UnaryOp<"trunc.f64.f32", F32, F64>;
def VM_CastSi64F32Op : VM_UnaryOp<"cast.si64.f32", F32, I64>;
def VM_CastUi64F32Op : VM_UnaryOp<"cast.ui64.f32", F32, I64>;
def VM_CastUi64F64Op : VM_UnaryOp<"cast.ui64.f64", F64, I64>;
def VM_CastF32Si64Op : VM_UnaryOp<"cast.f32.si64", I64, F32>;
def VM_CastF32Ui64Op : VM_UnaryOp<"cast.f32.ui64", I64, F32>;
def VM_CastF64Ui64Op : VM_UnaryOp<"cast.f64.ui64", I64, F64>;
def VM_BitcastF32I32Op : VM_UnaryOp<"bitcast.f32.i32", I32, F32>;
def VM_BitcastI32F32Op : VM_UnaryOp<"bitcast.i32.f32", F32, I32>;
def VM_BitcastF64I64Op : VM_UnaryOp<"bitcast.f64.i64", I64, F64>;
def VM_ExtF16F32Op : VM_UnaryOp<"ext.f16.f32", F32, I32>;
def VM_TruncF32F16Op : VM_UnaryOp<"trunc.f32.f16", I32, F32>;
def VM_BitcastI64F64Op : VM_UnaryOp<"bitcast.i64.f64", F64, I64>;
def VM_BufferLoadI8UOp : VM_BufferLoadOp<"buffer.load.i8.u", I32>;
def VM_BufferLoadI8SOp : VM_BufferLoadOp<"buffer.load.i8.s", I32>;
def VM_BufferLoadI16UOp : VM_BufferLoadOp<"buffer.load.i16.u", I32>;
def VM_BufferLoadI16SOp : VM_BufferLoadOp<"buffer.load.i16.s", I32>;
def VM_BufferLoadI32Op : VM_BufferLoadOp<"buffer.load.i32", I32>;
def VM_BufferLoadI64Op : VM_BufferLoadOp<"buffer.load.i64", I64>;
def VM_BufferLoadF32Op : VM_BufferLoadOp<"buffer.load.f32", F32>;
def VM_BufferLoadF64Op : VM_BufferLoadOp<"buffer.load.f64", F64>;
def VM_BufferStoreI8Op : VM_BufferStoreOp<"buffer.store.i8", I32>;
def VM_BufferStoreI16Op : VM_BufferStoreOp<"buffer.store.i16", I32>;
def VM_BufferStoreI32Op : VM_BufferStoreOp<"buffer.store.i32", I32>;
def VM_BufferStoreI64Op : VM_BufferStoreOp<"buffer.store.i64", I64>;
def VM_BufferStoreF32Op : VM_BufferStoreOp<"buffer.store.f32", F32>;
def VM_BufferStoreF64Op : VM_BufferStoreOp<"buffer.store.f64", F64>;

#endif // STRATA_VM_OPS
