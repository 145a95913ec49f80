//===- BufferizeExecutable.h - target-independent executable prep -*- C++
//-*-===//
//
// What every executable target does first: split the work over the
// workgroup grid outlining chose, bufferize (results become output
// bindings) and add the workgroup id/count arguments. Targets then lower the
// buffer form their own way (LLVM for cpu, VM bytecode for vmvx).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_BUFFERIZEEXECUTABLE_H_
#define STRATA_COMPILER_CODEGEN_BUFFERIZEEXECUTABLE_H_

#include "strata/compiler/Codegen/ExecutableLibraryBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "strata/compiler/Dialect/Flow/FlowDialect.h"

namespace strata {

// Runs a textual pass pipeline on a module (a pass's runPipeline, so nested
// pipelines stay under the pass manager's instrumentation).
using PipelineRunner = llvm::function_ref<mlir::LogicalResult(
    mlir::OpPassManager &, mlir::ModuleOp)>;

struct BufferizedExecutable {
  // The entry point on buffers: bindings, then push constants (index
  // values, DynamicBindings.h), then workgroup id and count (index).
  mlir::func::FuncOp entry;
  unsigned bindingCount = 0;
  unsigned constantCount = 0;
  // What the dynamically shaped bindings must span (DynamicBindings.h).
  std::vector<BindingExtent> bindingExtents;
};

// Splits `executable` over workgroups and bufferizes it as the
// #flow.lowering_config of its entry function says. An executable without
// one (written by hand) is configured first for `vectorBits`-wide vectors,
// and must then agree with the workgroup count it states.
//
// Temporaries live on the workgroup's stack, within a bound. With
// `readsPaddedSourcesInPlace` (a target whose register tiles read padded
// inputs from their sources, PaddedSources.h), a padded input past the
// bound is marked `kUnbuiltPaddedSourceAttr` instead of refused: the
// target must then never build it.
mlir::FailureOr<BufferizedExecutable>
bufferizeExecutable(flow::ExecutableOp executable, unsigned vectorBits,
                    PipelineRunner runPipeline,
                    bool readsPaddedSourcesInPlace = false);

// The tensor-level preparation of a (split) entry function before
// bufferization: sequential regions inlined, named ops generalized,
// elementwise producers fused. Runs on the module holding `entry`.
mlir::LogicalResult prepareForBufferization(mlir::func::FuncOp entry,
                                            PipelineRunner runPipeline);

// Adds the dialects the bufferization pipelines load.
void getBufferizationDependentDialects(mlir::DialectRegistry &registry);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_BUFFERIZEEXECUTABLE_H_
