//===- LowerExecutablesToVMVX.cpp - flow.executable to VM bytecode --------===//
//
// The vmvx target: for each flow.executable, bufferizes it like every
// target (BufferizeExecutable.h), turns f32 contractions into microkernel
// calls, lowers the rest to loops and unstructured control flow, converts
// the kernel to a vm.module and serializes it as a module file: the
// executable binary of format STRATA_HAL_EXECUTABLE_FORMAT_VMVX that the
// runtime's VMVX loader runs on any host.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/BufferizeExecutable.h"
#include "strata/compiler/Codegen/ExecutableTargets.h"
#include "strata/compiler/Passes.h"
#include "strata/compiler/Serialization/ModuleWriter.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "strata/hal/local/vmvx_abi.h"

namespace strata {
#define GEN_PASS_DEF_LOWEREXECUTABLESTOVMVXPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Buffer code to a vm.module. Kept as text so `strata-opt` users can
// reproduce any step.
constexpr const char *kToVMPipeline =
    "strata-vmvx-lower-contractions,"
    "func.func(strata-memref-copy-to-linalg,convert-linalg-to-loops),"
    // Integer powers and bit counts become small functions of loops.
    "convert-math-to-funcs,"
    // Loads and stores address the root buffers directly.
    "fold-memref-alias-ops,expand-strided-metadata,lower-affine,"
    "convert-scf-to-cf,arith-expand,canonicalize,cse,"
    "strata-vmvx-convert-kernel-to-vm,cse";

struct LowerExecutablesToVMVXPass
    : public impl::LowerExecutablesToVMVXPassBase<LowerExecutablesToVMVXPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    getBufferizationDependentDialects(registry);
    OpPassManager pipeline(ModuleOp::getOperationName());
    if (succeeded(parsePassPipeline(kToVMPipeline, pipeline)))
      pipeline.getDependentDialects(registry);
  }

  LogicalResult lowerExecutable(flow::ExecutableOp executable);

  void runOnOperation() override {
    for (auto executable :
         llvm::to_vector(getOperation().getOps<flow::ExecutableOp>()))
      if (!isForAnotherTarget(executable, "vmvx") &&
          failed(lowerExecutable(executable)))
        return signalPassFailure();
  }
};

LogicalResult
LowerExecutablesToVMVXPass::lowerExecutable(flow::ExecutableOp executable) {
  // VMVX runs no vector kernels: the vector width only shapes tiles it
  // does not use.
  FailureOr<BufferizedExecutable> bufferized =
      bufferizeExecutable(executable, /*vectorBits=*/128,
                          [&](OpPassManager &pipeline, ModuleOp module) {
                            return runPipeline(pipeline, module);
                          });
  if (failed(bufferized))
    return failure();
  if (bufferized->constantCount != 0)
    return executable.emitOpError(
        "has dynamic shapes; the vmvx target compiles static shapes only so "
        "far (--target=cpu runs them, or pin the shapes: --input-shape / "
        "--dim)");
  ModuleOp inner = executable.getInnerModule();
  // Names the VM module, and so the executable in runtime messages.
  inner->setAttr("strata.executable_name", executable.getSymNameAttr());
  bufferized->entry->removeAttr(flow::LoweringConfigAttr::getAttrName());

  OpPassManager toVM(ModuleOp::getOperationName());
  if (failed(parsePassPipeline(kToVMPipeline, toVM)) ||
      failed(runPipeline(toVM, inner)))
    return executable.emitOpError("failed to lower to VM bytecode for the "
                                  "vmvx target");
  auto vmModules = llvm::to_vector(inner.getOps<vm::ModuleOp>());
  if (vmModules.size() != 1)
    return executable.emitOpError("lowered to ")
           << vmModules.size() << " VM modules instead of one";
  if (printLoweredIR) {
    llvm::outs() << "// -----// executable @" << executable.getSymName()
                 << " for vmvx //----- //\n";
    vmModules.front().print(llvm::outs());
    llvm::outs() << "\n";
  }

  std::string bytes;
  llvm::raw_string_ostream stream(bytes);
  if (failed(writeModuleFile(vmModules.front(), stream)))
    return executable.emitOpError("cannot serialize its VM module");

  OpBuilder builder(executable);
  hal::ExecutableBinaryOp::create(
      builder, executable.getLoc(), executable.getSymName(),
      STRATA_HAL_EXECUTABLE_FORMAT_VMVX,
      ArrayRef<char>(bytes.data(), bytes.size()), bufferized->bindingCount,
      /*requiredCpuFeatures=*/{}, getVariantOf(executable));
  executable.erase();
  return success();
}

} // namespace
} // namespace strata
