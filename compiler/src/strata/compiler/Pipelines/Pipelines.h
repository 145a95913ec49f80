//===- Pipelines.h - the compiler's phases ---------------------*- C++ -*-===//
//
// The phases of SPEC §1, each an MLIR pass pipeline whose output can be
// printed (`--dump-after=PHASE`):
//   input            legalized to linalg on tensors
//   dispatch-regions math grouped into flow.dispatch.region ops
//   executables      regions outlined into flow.executable + flow.dispatch
//   host             host program on hal buffers, buffer views, commands
//   target           executables compiled to native code per target
//   vm               the vm.module that is serialized into the module file
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_PIPELINES_PIPELINES_H_
#define STRATA_COMPILER_PIPELINES_PIPELINES_H_

#include <string>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

namespace strata {

struct CompileOptions {
  // Executable target: "cpu" (native code via LLVM), "vmvx" (portable VM
  // bytecode calling runtime microkernels) or "cuda" (PTX for NVIDIA GPUs).
  std::string target = "cpu";
  // CPU for the cpu target: "host" or an LLVM CPU name.
  std::string cpu = "host";
  // GPU for the cuda target: the oldest compute capability, as sm_XY.
  std::string cudaArch = "sm_80";
  // Name of the VM module; functions are called as `<name>.<function>`.
  std::string moduleName = "module";
  // Print the wall time of each phase, and of each pass in it, to stderr
  // when the compile ends (--timing).
  bool timing = false;
  // Report each phase, and the executables compiled, on stderr as the
  // compile goes (--progress; strata-compile turns it on by itself when
  // stderr is a terminal).
  bool progress = false;
};

// Phase names in order, as accepted by --dump-after.
llvm::ArrayRef<llvm::StringRef> getPhaseNames();

// Appends the passes of `phase` to `pm`. Returns failure for an unknown
// phase name.
mlir::LogicalResult buildPhasePipeline(mlir::OpPassManager &pm,
                                       llvm::StringRef phase,
                                       const CompileOptions &options,
                                       bool printTargetIR);

// Every dialect, extension, translation and pass the compiler can meet.
void registerCompilerDialects(mlir::DialectRegistry &registry);
void registerCompilerPasses();

// --version of the compiler tools (a cl::SetVersionPrinter callback):
// Strata's version, the source's git commit and the LLVM it is built on.
void printCompilerVersion(llvm::raw_ostream &os);

// Runs every phase on `module`. When `dumpAfter` names a phase, the module
// is printed to `dumpStream` after it; compilation stops there when
// `stopAfterDump` is set. Otherwise the module file is written to `output`.
mlir::LogicalResult
compileModule(mlir::ModuleOp module, const CompileOptions &options,
              llvm::StringRef dumpAfter, llvm::raw_ostream &dumpStream,
              bool stopAfterDump, llvm::raw_ostream *output);

} // namespace strata

#endif // STRATA_COMPILER_PIPELINES_PIPELINES_H_
