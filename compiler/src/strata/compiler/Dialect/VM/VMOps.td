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

#endif // STRATA_VM_OPS
