//===- Pipelines.cpp ------------------------------------------------------===//
#include "strata/compiler/Pipelines/Pipelines.h"

#include "strata/compiler/Codegen/LLVMCPUTarget.h"
#include "strata/compiler/Passes.h"
#include "strata/compiler/Serialization/ModuleWriter.h"
#include "strata_version.h"

#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/Support/FormatVariadic.h"

#include <chrono>

using namespace mlir;

namespace strata {

static constexpr llvm::StringRef kPhaseNames[] = {
    "input", "dispatch-regions", "executables", "host", "target", "vm"};

llvm::ArrayRef<llvm::StringRef> getPhaseNames() { return kPhaseNames; }

// Input legalization: TOSA and elementwise tensor arith into linalg.
static constexpr const char *kInputPipeline =
    // Calls are inlined; then each branch of a run-time conditional
    // becomes a function of its own (the only calls in a host program).
    "inline,symbol-dce,strata-outline-conditionals,"
    "func.func(tosa-to-linalg-named,tosa-to-linalg,"
    "tosa-to-arith{include-apply-rescale=true},"
    "tosa-to-tensor),"
    "func.func(convert-elementwise-to-linalg,strata-decompose-aggregate-ops),"
    "func.func(strata-fuse-elementwise-ops),canonicalize,cse,"
    "func.func(strata-tie-argument-dims)";

// The targets of a comma-separated --target, in the order given.
static SmallVector<StringRef> getTargets(const CompileOptions &options) {
  SmallVector<StringRef> targets;
  StringRef(options.target).split(targets, ',');
  for (StringRef &target : targets)
    target = target.trim();
  return targets;
}

static bool hasTarget(const CompileOptions &options, StringRef target) {
  return llvm::is_contained(getTargets(options), target);
}

// The CPU-only graph rewrites (blocked layouts, packed weights, pads and
// small dispatches merged for CPU workers) are for modules that run on
// the CPU alone.
static bool isCpuOnly(const CompileOptions &options) {
  return getTargets(options) == SmallVector<StringRef>{"cpu"};
}

// The vector width of the cpu target's CPUs, or 0 (no cpu target, or an
// unknown CPU, which the target phase reports with its reason).
static unsigned getCpuVectorBits(const CompileOptions &options) {
  if (!hasTarget(options, "cpu"))
    return 0;
  llvm::Expected<unsigned> vectorBits = getVectorBitsForCPUs(options.cpu);
  if (vectorBits)
    return *vectorBits;
  llvm::consumeError(vectorBits.takeError());
  return 0;
}

// The CPU's vector width for the CPU-only rewrites, or 0.
static unsigned getTargetVectorBits(const CompileOptions &options) {
  if (!isCpuOnly(options))
    return 0;
  return getCpuVectorBits(options);
}

// Adds the target phase's passes of one target.
static void addTargetPasses(OpPassManager &pm, StringRef target,
                            const CompileOptions &options, bool printTargetIR) {
  if (target == "vmvx") {
    LowerExecutablesToVMVXPassOptions vmvxOptions;
    vmvxOptions.printLoweredIR = printTargetIR;
    pm.addPass(createLowerExecutablesToVMVXPass(vmvxOptions));
  } else if (target == "cuda") {
    LowerExecutablesToCUDAPassOptions cudaOptions;
    cudaOptions.cudaArch = options.cudaArch;
    cudaOptions.printLoweredIR = printTargetIR;
    pm.addPass(createLowerExecutablesToCUDAPass(cudaOptions));
  } else {
    LowerExecutablesPassOptions lowerOptions;
    lowerOptions.cpu = options.cpu;
    lowerOptions.printLoweredIR = printTargetIR;
    lowerOptions.progress = options.progress;
    pm.addPass(createLowerExecutablesPass(lowerOptions));
  }
}

LogicalResult buildPhasePipeline(OpPassManager &pm, StringRef phase,
                                 const CompileOptions &options,
                                 bool printTargetIR) {
  if (phase == "input")
    return parsePassPipeline(kInputPipeline, pm);
  if (phase == "dispatch-regions") {
    // Every dynamic size read off the value it comes from (a batch off the
    // input), so that ops that differ only in which equal size they name
    // are one: two reshapes of a value to one shape would keep a layout
    // change in front of both (one use each is what moves it).
    pm.addNestedPass<func::FuncOp>(
        memref::createResolveRankedShapeTypeResultDimsPass());
    pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
    pm.addNestedPass<func::FuncOp>(createCSEPass());
    if (isCpuOnly(options)) {
      // Blocks of one vector register's f32 lanes.
      BlockChannelsPassOptions blockOptions;
      blockOptions.block = getTargetVectorBits(options) / 32;
      pm.addNestedPass<func::FuncOp>(createBlockChannelsPass(blockOptions));
      PackMatmulWeightsPassOptions packOptions;
      packOptions.vectorBits = getTargetVectorBits(options);
      pm.addNestedPass<func::FuncOp>(createPackMatmulWeightsPass(packOptions));
    }
    pm.addNestedPass<func::FuncOp>(createConvertConvToIm2ColPass());
    pm.addNestedPass<func::FuncOp>(createSplitAccumulatorInitsPass());
    // Dynamic sizes read off an op's operands rather than its result, so
    // that no size keeps a value used (a pad read only by a convolution
    // stays fusable into it).
    pm.addNestedPass<func::FuncOp>(
        memref::createResolveRankedShapeTypeResultDimsPass());
    // Layout changes of unit dims only (a pooled value moved out of a
    // blocked layout) are views, not dispatches.
    pm.addNestedPass<func::FuncOp>(createTransposesAsReshapesPass());
    pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
    pm.addNestedPass<func::FuncOp>(createFormDispatchRegionsPass());
    if (unsigned vectorBits = getTargetVectorBits(options)) {
      FusePadsIntoConsumersPassOptions padOptions;
      padOptions.vectorBits = vectorBits;
      pm.addNestedPass<func::FuncOp>(
          createFusePadsIntoConsumersPass(padOptions));
      MergeSmallDispatchRegionsPassOptions mergeOptions;
      mergeOptions.vectorBits = vectorBits;
      pm.addNestedPass<func::FuncOp>(
          createMergeSmallDispatchRegionsPass(mergeOptions));
    }
    return success();
  }
  if (phase == "executables") {
    pm.addPass(createOutlineDispatchRegionsPass());
    pm.addPass(createDeduplicateExecutablesPass());
    ConfigureExecutablesPassOptions configureOptions;
    if (unsigned vectorBits = getCpuVectorBits(options))
      configureOptions.vectorBits = vectorBits;
    // The grid suits the first target (the one the module is mainly for).
    if (getTargets(options).front() == "cuda")
      configureOptions.workgroupGrid = "gpu";
    pm.addPass(createConfigureExecutablesPass(configureOptions));
    return success();
  }
  if (phase == "host") {
    // A dim of a dispatch's result is the dim the dispatch was given, and
    // equal dims are one value (transients of the same size scale are
    // planned together); shape arithmetic in plain integer ops.
    if (failed(parsePassPipeline(
            "func.func(resolve-ranked-shaped-type-result-dims,cse,"
            "lower-affine,arith-expand)",
            pm)))
      return failure();
    pm.addPass(createConvertToHostProgramPass());
    // Run-time conditionals as branches between blocks, which the VM has.
    pm.addNestedPass<func::FuncOp>(createSCFToControlFlowPass());
    pm.addNestedPass<func::FuncOp>(createCanonicalizerPass());
    pm.addNestedPass<func::FuncOp>(createCSEPass());
    return success();
  }
  if (phase == "target") {
    SmallVector<StringRef> targets = getTargets(options);
    if (targets.size() > 1) {
      CloneExecutablesPerTargetPassOptions cloneOptions;
      cloneOptions.targets = options.target;
      pm.addPass(createCloneExecutablesPerTargetPass(cloneOptions));
    }
    for (StringRef target : targets)
      addTargetPasses(pm, target, options, printTargetIR);
    return success();
  }
  if (phase == "vm") {
    ConvertHostToVMPassOptions vmOptions;
    vmOptions.moduleName = options.moduleName;
    pm.addPass(createConvertHostToVMPass(vmOptions));
    pm.addPass(createHoistDeviceQueriesPass());
    return success();
  }
  return failure();
}

LogicalResult compileModule(ModuleOp module, const CompileOptions &options,
                            StringRef dumpAfter, llvm::raw_ostream &dumpStream,
                            bool stopAfterDump, llvm::raw_ostream *output) {
  SmallVector<StringRef> targets = getTargets(options);
  for (auto [index, target] : llvm::enumerate(targets)) {
    if (target != "cpu" && target != "vmvx" && target != "cuda")
      return module.emitError("unknown target '")
             << target << "' (supported: cpu, vmvx, cuda, or a "
             << "comma-separated list of them such as cpu,cuda)";
    if (llvm::is_contained(ArrayRef(targets).take_front(index), target))
      return module.emitError("--target names '") << target << "' twice";
  }
  // A program that is already a vm.module (hand-written VM code, e.g. the
  // runtime's hostile-module tests) is serialized as it is: the phases
  // lower tensor programs and would replace it.
  if (llvm::hasSingleElement(module.getBody()->getOperations()) &&
      isa<vm::ModuleOp>(module.getBody()->front())) {
    if (!dumpAfter.empty()) {
      module->print(dumpStream, OpPrintingFlags().elideLargeElementsAttrs(64));
      dumpStream << "\n";
    }
    if (!output || (!dumpAfter.empty() && stopAfterDump))
      return success();
    return writeModuleFile(cast<vm::ModuleOp>(module.getBody()->front()),
                           *output);
  }
  // One timing tree for the compile: a scope per phase, the phase's passes
  // nested in it; printed to stderr when `timing` goes out of scope.
  DefaultTimingManager timing;
  timing.setEnabled(options.timing);
  TimingScope compileScope = timing.getRootScope();
  auto started = std::chrono::steady_clock::now();
  for (StringRef phase : kPhaseNames) {
    if (options.progress)
      llvm::errs() << llvm::formatv(
          "strata-compile: {0} ({1:f1} s)\n", phase,
          std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                        started)
              .count());
    PassManager pm(module.getContext(), ModuleOp::getOperationName());
    if (failed(buildPhasePipeline(pm, phase, options,
                                  /*printTargetIR=*/phase == dumpAfter)))
      return module.emitError("cannot build the pipeline of phase ") << phase;
    TimingScope phaseScope =
        compileScope.nest(TimingIdentifier::get(phase, timing));
    if (options.timing)
      pm.enableTiming(phaseScope);
    if (failed(pm.run(module)))
      return failure();
    phaseScope.stop();
    if (phase == dumpAfter) {
      // Executable binaries and constants are elided to keep dumps readable.
      module->print(dumpStream, OpPrintingFlags().elideLargeElementsAttrs(64));
      dumpStream << "\n";
      if (stopAfterDump)
        return success();
    }
  }
  if (!output)
    return success();
  auto vmModules = llvm::to_vector(module.getOps<vm::ModuleOp>());
  if (vmModules.size() != 1)
    return module.emitError("expected exactly one vm.module after lowering");
  TimingScope writeScope =
      compileScope.nest(TimingIdentifier::get("write the module", timing));
  return writeModuleFile(vmModules.front(), *output);
}

void printCompilerVersion(llvm::raw_ostream &os) {
  os << "Strata compiler " << STRATA_VERSION_STRING << " (git "
     << STRATA_GIT_COMMIT << ")\nLLVM " << LLVM_VERSION_STRING << "\n";
}

} // namespace strata
