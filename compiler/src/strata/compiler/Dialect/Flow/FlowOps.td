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

include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

def Flow_Dialect : Dialect {
  let name = "flow";
  let cppNamespace = "::strata::flow";
  let summary = "Dispatch regions, executables and dispatches";
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
}

class Flow_Attr<string name, string attrMnemonic>
    : AttrDef<Flow_Dialect, name> {
  let mnemonic = attrMnemonic;
}

def Flow_KernelConfigAttr : Flow_Attr<"KernelConfig", "kernel_config"> {
  let summary = "How codegen tiles and vectorizes one op of an executable";
  let description = [{
    The kernel strategy of one multiply-add op, in the order such ops appear
    in the executable once it is split over workgroups. `contraction`:
    register tiles of rows x vector lanes accumulated over the reduction
    loop; `broadcast`: one row of lanes accumulated over every reduction
    loop (depthwise and direct convolutions). Tile lists have one entry per
    loop of the op (0: not tiled at that level); `cache_order` lists the
    cache-tile loops outermost first; `roles` are the row, vector and
    reduction loops (row == vector: a single row).
  }];
  let parameters = (ins
    StringRefParameter<"contraction or broadcast">:$strategy,
    "::mlir::DenseI64ArrayAttr":$cache_tiles,
    "::mlir::DenseI64ArrayAttr":$cache_order,
    "::mlir::DenseI64ArrayAttr":$register_tiles,
    "::mlir::DenseI64ArrayAttr":$roles);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Flow_LoweringConfigAttr : Flow_Attr<"LoweringConfig", "lowering_config"> {
  let summary = "The code generation decisions for one executable";
  let description = [{
    Chosen once, when the executable is outlined, and honoured by codegen
    (which fails rather than choosing again). `vector_bits` is the vector
    register width the kernels are tiled for. `workgroup_tile` has one entry
    per loop of the dispatch's root op: the loop whose entry is non-zero is
    split into tiles of that many iterations, one per workgroup (the
    executable's `workgroup_count`); empty when one workgroup runs it all.
    `kernels` are the kernel configurations of its multiply-add ops
    (#flow.kernel_config), the rest lowering to loops.
    `workload`, for an executable over dynamic shapes split into
    workgroups, is the extent of each loop of the root op: a static size
    (>= 0) or `-1 - k` for the entry's index argument k (a push constant);
    each dispatch computes its workgroup count from it at run time, and
    each workgroup runs a contiguous range of the tiles. The count gives
    each workgroup a minimum of work: the product of the extents times
    `work_per_iteration`, the work of one root iteration (a contraction's
    reduction under its elementwise epilogue root; 1 by default).
  }];
  let parameters = (ins
    "int64_t":$vector_bits,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$workgroup_tile,
    "::mlir::ArrayAttr":$kernels,
    OptionalParameter<"::mlir::DenseI64ArrayAttr">:$workload,
    DefaultValuedParameter<"int64_t", "1">:$work_per_iteration);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    // The attribute name on an executable's entry function.
    static constexpr ::llvm::StringLiteral getAttrName() {
      return "flow.lowering_config";
    }
  }];
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

def Flow_DispatchOp : Flow_Op<"dispatch", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<ReifyRankedShapedTypeOpInterface,
                              ["reifyResultShapes"]>]> {
  let summary = "Runs an executable's export over its operands";
  let description = [{
    `arguments` are the tensors the export reads (its bindings, then one
    binding per result). `constants` are the export's index arguments, in
    order, passed as push constants: the dynamic dims of each argument, then
    of each result, then the scalars the dispatch captured.
    `result_dims` are the results' dynamic dims (in order), as the host
    computes them to allocate the results. `workgroups_x`, when present,
    is the grid's size along x computed at run time (an executable over
    dynamic shapes; `workgroup_count` then holds the other two sizes).
    A dim of a result reifies to its `result_dims` entry, so that every
    size derived from one value is that value (the host plans transients
    by it).
  }];
  let arguments = (ins SymbolRefAttr:$executable,
                       DenseI64ArrayAttr:$workgroup_count,
                       Variadic<AnyRankedTensor>:$arguments,
                       Variadic<Index>:$constants,
                       Variadic<Index>:$result_dims,
                       Optional<Index>:$workgroups_x);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $executable `[` $workgroup_count `]` `(` $arguments `)`
    (`constants` `(` $constants^ `)`)? (`dims` `(` $result_dims^ `)`)?
    (`workgroups` `(` $workgroups_x^ `)`)?
    attr-dict `:` functional-type($arguments, $results)
  }];
  let hasVerifier = 1;
}

#endif // STRATA_FLOW_OPS
