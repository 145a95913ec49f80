//===- FlowOps.td - dispatch regions and executables -------*- tablegen -*-===//
//
// The flow dialect carries a program between input (linalg on tensors) and
// the host program: dispatch regions group the math that will run as one
// device dispatch, then executables hold the outlined code and the host
// calls them with flow.dispatch.
//
//===----------------------------------------------------------------------===//

#ifndef STRATA_FLOW_OPS
#define STRATA_FLOW_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"

def Flow_Dialect : Dialect {
  let name = "flow";
  let cppNamespace = "::strata::flow";
  let summary = "Dispatch regions, executables and dispatches";
}

class Flow_Op<string mnemonic, list<Trait> traits = []>
    : Op<Flow_Dialect, mnemonic, traits>;

def Flow_DispatchRegionOp : Flow_Op<"dispatch.region", [
    SingleBlockImplicitTerminator<"ReturnOp">,
    RecursiveMemoryEffects]> {
  let summary = "Ops that will run as one dispatch";
  let description = [{
    Groups ops whose workload is compatible so that they become one
    executable export. Values defined above may be captured; the region's
    results are what the terminator returns.
  }];
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "(`->` `(` type($results)^ `)`)? $body attr-dict";
  let hasVerifier = 1;
}

def Flow_ReturnOp : Flow_Op<"return", [
    Pure, Terminator, HasParent<"DispatchRegionOp">, ReturnLike]> {
  let summary = "Returns the values a dispatch region produces";
  let arguments = (ins Variadic<AnyType>:$operands);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, {}); }]>];
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
}

def Flow_ExecutableOp : Flow_Op<"executable", [
    Symbol, IsolatedFromAbove, SingleBlock, NoTerminator]> {
  let summary = "Outlined device code: a module with one export";
  let description = [{
    Holds a builtin.module whose public function `entry_point` is the
    export. Its arguments are the bindings read, its results the bindings
    written; they turn into buffer pointers when the executable is lowered.
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, FlatSymbolRefAttr:$entry_point,
                       OptionalAttr<DenseI64ArrayAttr>:$workgroup_count);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `entry` $entry_point attr-dict-with-keyword $body";
  let extraClassDeclaration = [{
    ::mlir::ModuleOp getInnerModule();
  }];
}

def Flow_DispatchOp : Flow_Op<"dispatch", []> {
  let summary = "Runs an executable's export over its operands";
  let arguments = (ins SymbolRefAttr:$executable,
                       DenseI64ArrayAttr:$workgroup_count,
                       Variadic<AnyRankedTensor>:$arguments);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $executable `[` $workgroup_count `]` `(` $arguments `)` attr-dict `:`
    functional-type($arguments, $results)
  }];
}

#endif // STRATA_FLOW_OPS
