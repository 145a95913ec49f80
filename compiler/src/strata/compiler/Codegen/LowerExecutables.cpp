//===- LowerExecutables.cpp - flow.executable to native code --------------===//
//
// For each flow.executable: bufferizes its module (BufferizeExecutable.h:
// results become output buffers, so every argument is a binding), lowers
// linalg to loops and then
// to the LLVM dialect with bare-pointer memrefs (static shapes), translates
// to LLVM IR, adds the executable library ABI and compiles it into an ELF
// shared object held by a hal.executable.binary.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/BufferizeExecutable.h"
#include "strata/compiler/Codegen/ExecutableLibraryBuilder.h"
#include "strata/compiler/Codegen/ExecutableTargets.h"
#include "strata/compiler/Codegen/LLVMCPUTarget.h"
#include "strata/compiler/Codegen/LoweringConfig.h"
#include "strata/compiler/Codegen/TileAndDistribute.h"
#include "strata/compiler/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "strata/hal/local/executable_library.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/Transforms/Utils/Cloning.h"

namespace strata {
#define GEN_PASS_DEF_LOWEREXECUTABLESPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Buffer code to the LLVM dialect. Kept as text so `strata-opt` users can
// reproduce any step.
std::string getToLLVMPipeline(unsigned vectorBits) {
  return (llvm::Twine("func.func(strata-memref-copy-to-linalg,"
                      "strata-tile-and-vectorize-contractions{vector-bits=") +
          llvm::Twine(vectorBits) +
          "},"
          "strata-vectorize-short-rows,strata-vectorizable-loop-order,"
          "convert-linalg-to-loops,"
          "strata-expand-math,strata-keep-register-tile-loops),"
          // Integer powers become small outlined functions (no libm either).
          "convert-math-to-funcs,"
          "convert-vector-to-scf{full-unroll=true},"
          "lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,"
          "convert-vector-to-llvm,"
          "finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,"
          "convert-cf-to-llvm,"
          "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
          "convert-index-to-llvm,convert-ub-to-llvm,reconcile-unrealized-casts,"
          "canonicalize")
      .str();
}

enum class CpuFeatureUse { codegen, intrinsic };

// The listed CPU features (cpu_features.def) the target machine's code may
// use; the module checks them at initialization. Features LLVM reaches only
// through their own intrinsics are never in generated code.
SmallVector<StringRef> getRequiredCpuFeatures(llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
  SmallVector<StringRef> features;
#define STRATA_CPU_FEATURE(name, leaf, subleaf, reg, bit, needs, use)          \
  if (CpuFeatureUse::use == CpuFeatureUse::codegen &&                          \
      subtarget->checkFeatures("+" name))                                      \
    features.push_back(name);
#include "strata/hal/local/cpu_features.def"
#undef STRATA_CPU_FEATURE
  return features;
}

struct LowerExecutablesPass
    : public impl::LowerExecutablesPassBase<LowerExecutablesPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    getBufferizationDependentDialects(registry);
    OpPassManager pipeline(ModuleOp::getOperationName());
    if (succeeded(buildPipeline(pipeline)))
      pipeline.getDependentDialects(registry);
  }

  static LogicalResult buildPipeline(OpPassManager &pipeline) {
    return parsePassPipeline(getToLLVMPipeline(512), pipeline);
  }

  // One target machine per CPU of the comma-separated `cpu` option.
  struct Target {
    std::string cpu;
    std::unique_ptr<llvm::TargetMachine> machine;
  };

  LogicalResult lowerExecutable(flow::ExecutableOp executable,
                                ArrayRef<Target> targets);

  void runOnOperation() override {
    SmallVector<Target> targets;
    SmallVector<StringRef> names;
    StringRef(cpu).split(names, ',');
    for (StringRef name : names) {
      name = name.trim();
      if (llvm::any_of(targets,
                       [&](const Target &t) { return t.cpu == name; })) {
        getOperation().emitError("--cpu names '") << name << "' twice";
        return signalPassFailure();
      }
      auto machine = createCPUTargetMachine(name.str());
      if (!machine) {
        getOperation().emitError("cannot target CPU '")
            << name << "': " << llvm::toString(machine.takeError());
        return signalPassFailure();
      }
      targets.push_back({name.str(), std::move(*machine)});
    }
    SmallVector<flow::ExecutableOp> executables;
    for (auto executable : getOperation().getOps<flow::ExecutableOp>())
      if (!isForAnotherTarget(executable, "cpu"))
        executables.push_back(executable);
    size_t reported = 0;
    for (auto [index, executable] : llvm::enumerate(executables)) {
      if (failed(lowerExecutable(executable, targets)))
        return signalPassFailure();
      // Each tenth done (the bulk of a large model's compile).
      size_t tenths = (index + 1) * 10 / executables.size();
      if (progress && tenths > reported) {
        reported = tenths;
        llvm::errs() << "strata-compile:   " << index + 1 << " of "
                     << executables.size() << " executables compiled\n";
      }
    }
  }
};

// `name__cpu` for the binaries of the second and later CPUs.
std::string getVariantName(StringRef executable, StringRef cpu) {
  std::string name = (executable + "__").str();
  for (char c : cpu)
    name += llvm::isAlnum(c) ? c : '_';
  return name;
}

LogicalResult
LowerExecutablesPass::lowerExecutable(flow::ExecutableOp executable,
                                      ArrayRef<Target> targets) {
  FailureOr<BufferizedExecutable> bufferized = bufferizeExecutable(
      executable, getVectorBits(*targets.front().machine),
      [&](OpPassManager &pipeline, ModuleOp module) {
        return runPipeline(pipeline, module);
      },
      /*readsPaddedSourcesInPlace=*/true);
  if (failed(bufferized))
    return failure();
  ModuleOp inner = executable.getInnerModule();
  StringRef entryName = bufferized->entry.getSymName();
  unsigned bindingCount = bufferized->bindingCount;
  // Bindings of one dispatch never overlap where one of them is written:
  // every result has its own buffer, and the transient planner never lets
  // a result share memory with a live input. Saying so lets LLVM vectorize
  // without run-time alias checks and keep accumulators in registers.
  for (unsigned i = 0; i < bindingCount; ++i)
    bufferized->entry.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                                 UnitAttr::get(executable.getContext()));

  // The kernels honour the configuration's vector width (later CPU
  // variants run the same tiles, split into their own registers by LLVM).
  flow::LoweringConfigAttr config = getLoweringConfig(bufferized->entry);
  OpPassManager toLLVM(ModuleOp::getOperationName());
  if (failed(parsePassPipeline(getToLLVMPipeline(config.getVectorBits()),
                               toLLVM)) ||
      failed(runPipeline(toLLVM, inner)))
    return executable.emitOpError("failed to lower to the LLVM dialect");
  if (printLoweredIR) {
    llvm::outs() << "// -----// executable @" << executable.getSymName()
                 << " for " << cpu << " //----- //\n";
    inner.print(llvm::outs());
    llvm::outs() << "\n";
  }

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(inner, llvmContext, executable.getSymName());
  if (!llvmModule)
    return executable.emitOpError("failed to translate to LLVM IR");

  std::vector<ExecutableExport> exports = {
      {entryName.str(), entryName.str(), bindingCount,
       bufferized->constantCount, bufferized->bindingExtents}};
  if (llvm::Error error = buildExecutableLibrary(
          *llvmModule, executable.getSymName().str(), exports))
    return executable.emitOpError("cannot build the executable library: ")
           << llvm::toString(std::move(error));
  if (printLibraryIR) {
    llvm::outs() << "; executable @" << executable.getSymName() << "\n";
    llvmModule->print(llvm::outs(), nullptr);
  }

  // The LLVM IR is the same for every CPU: each variant optimizes its own
  // copy for its target machine.
  OpBuilder builder(executable);
  // A clone for the cpu target of a multi-target module: all its CPU
  // variants are variants of the original.
  FlatSymbolRefAttr variantOf = getVariantOf(executable);
  for (auto [index, target] : llvm::enumerate(targets)) {
    std::unique_ptr<llvm::Module> copy = index + 1 < targets.size()
                                             ? llvm::CloneModule(*llvmModule)
                                             : std::move(llvmModule);
    auto library = compileToSharedObject(*copy, *target.machine);
    if (!library)
      return executable.emitOpError("native code generation for ")
             << target.cpu
             << " failed: " << llvm::toString(library.takeError());
    StringRef name = executable.getSymName();
    std::string variantName = getVariantName(name, target.cpu);
    hal::ExecutableBinaryOp::create(
        builder, executable.getLoc(), index == 0 ? name.str() : variantName,
        STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64,
        ArrayRef<char>(reinterpret_cast<const char *>(library->data()),
                       library->size()),
        bindingCount, getRequiredCpuFeatures(*target.machine),
        variantOf    ? variantOf
        : index == 0 ? FlatSymbolRefAttr()
                     : FlatSymbolRefAttr::get(builder.getContext(), name));
  }
  executable.erase();
  return success();
}

} // namespace
} // namespace strata
