//===- LowerExecutables.cpp - flow.executable to native code --------------===//
//
// For each flow.executable: bufferizes its module (results become output
// buffers, so every argument is a binding), lowers linalg to loops and then
// to the LLVM dialect with bare-pointer memrefs (static shapes), translates
// to LLVM IR, adds the executable library ABI and compiles it into an ELF
// shared object held by a hal.executable.binary.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/ExecutableLibraryBuilder.h"
#include "strata/compiler/Codegen/LLVMCPUTarget.h"
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

namespace strata {
#define GEN_PASS_DEF_LOWEREXECUTABLESPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Tensor code to the LLVM dialect. Kept as text so `strata-opt` users can
// reproduce any step.
constexpr const char *kPrepareBufferizationPipeline =
    // Broadcasts and other elementwise producers fold into their consumers
    // so they need no intermediate buffer.
    // (All named ops are generalized for now; per-op-class strategies will
    // keep matmuls and convolutions named.)
    "func.func(linalg-generalize-named-ops,"
    "linalg-fuse-elementwise-ops),canonicalize,"
    "eliminate-empty-tensors";

constexpr const char *kBufferizePipeline =
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "canonicalize,cse,"
    "buffer-results-to-out-params{hoist-static-allocs "
    "modify-public-functions},"
    "canonicalize,cse";

constexpr const char *kToLLVMPipeline =
    "func.func(strata-memref-copy-to-linalg,strata-vectorizable-loop-order,"
    "convert-linalg-to-loops,"
    "strata-expand-math),"
    // Integer powers become small outlined functions (no libm either).
    "convert-math-to-funcs,"
    "lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,"
    "finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,"
    "convert-cf-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
    "convert-index-to-llvm,convert-ub-to-llvm,reconcile-unrealized-casts,"
    "canonicalize";

// Every result of an executable is its own binding. When the same tensor is
// returned twice (a multi-result op whose results were merged), the second
// becomes an explicit copy so bufferization gives each result its own
// buffer (returning one buffer twice is not something the out-param
// rewrite handles).
void makeResultsDistinct(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  DenseSet<Value> seen;
  OpBuilder builder(ret);
  for (OpOperand &operand : ret->getOpOperands()) {
    Value value = operand.get();
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || seen.insert(value).second)
      continue;
    Value empty = tensor::EmptyOp::create(
        builder, ret.getLoc(), type.getShape(), type.getElementType());
    operand.set(linalg::CopyOp::create(builder, ret.getLoc(), value, empty)
                    .getResult(0));
  }
}

// Kernels run without libc, so their temporaries live on the stack. A
// temporary of a partial workgroup tile has a dynamic size; it is bounded
// by the tile, which ValueBounds proves.
constexpr int64_t kMaxStackTemporaryBytes = 256 * 1024;

LogicalResult moveTemporariesToStack(ModuleOp module) {
  SmallVector<memref::AllocOp> allocs;
  module.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
  IRRewriter rewriter(module.getContext());
  for (memref::AllocOp alloc : allocs) {
    MemRefType type = alloc.getType();
    int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
    unsigned dynamicIndex = 0;
    for (int64_t size : type.getShape()) {
      if (!ShapedType::isDynamic(size)) {
        bytes *= size;
        continue;
      }
      Value dynamicSize = alloc.getDynamicSizes()[dynamicIndex++];
      FailureOr<int64_t> bound = ValueBoundsConstraintSet::computeConstantBound(
          presburger::BoundType::UB, dynamicSize,
          /*stopCondition=*/nullptr, /*closedUB=*/true);
      if (failed(bound))
        return alloc.emitOpError("has a size with no known upper bound; "
                                 "executables cannot allocate heap memory");
      bytes *= *bound;
    }
    if (bytes > kMaxStackTemporaryBytes)
      return alloc.emitOpError("needs a ")
             << bytes << "-byte temporary inside an executable (limit "
             << kMaxStackTemporaryBytes << ")";
    rewriter.setInsertionPoint(alloc);
    rewriter.replaceOpWithNewOp<memref::AllocaOp>(
        alloc, type, alloc.getDynamicSizes(), alloc.getSymbolOperands(),
        alloc.getAlignmentAttr());
  }
  // Their deallocations (if any) go with them.
  module.walk([&](memref::DeallocOp dealloc) {
    if (dealloc.getMemref().getDefiningOp<memref::AllocaOp>())
      dealloc.erase();
  });
  return success();
}

// The listed CPU features (cpu_features.def) the target machine's code may
// use; the module checks them at initialization.
SmallVector<StringRef> getRequiredCpuFeatures(llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
  SmallVector<StringRef> features;
#define STRATA_CPU_FEATURE(name, leaf, subleaf, reg, bit, needs)               \
  if (subtarget->checkFeatures("+" name))                                      \
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
    OpPassManager pipeline(ModuleOp::getOperationName());
    if (succeeded(buildPipeline(pipeline)))
      pipeline.getDependentDialects(registry);
  }

  static LogicalResult buildPipeline(OpPassManager &pipeline) {
    return parsePassPipeline((Twine(kPrepareBufferizationPipeline) + "," +
                              kBufferizePipeline + "," + kToLLVMPipeline)
                                 .str(),
                             pipeline);
  }

  LogicalResult lowerExecutable(flow::ExecutableOp executable,
                                llvm::TargetMachine &machine);

  void runOnOperation() override {
    auto machine = createCPUTargetMachine(cpu);
    if (!machine) {
      getOperation().emitError("cannot target CPU '")
          << cpu << "': " << llvm::toString(machine.takeError());
      return signalPassFailure();
    }
    for (auto executable :
         llvm::to_vector(getOperation().getOps<flow::ExecutableOp>()))
      if (failed(lowerExecutable(executable, **machine)))
        return signalPassFailure();
  }
};

LogicalResult
LowerExecutablesPass::lowerExecutable(flow::ExecutableOp executable,
                                      llvm::TargetMachine &machine) {
  ModuleOp inner = executable.getInnerModule();
  if (!inner)
    return executable.emitOpError("has no module to lower");
  StringRef entryName = executable.getEntryPoint();

  auto entry = inner.lookupSymbol<func::FuncOp>(entryName);
  if (!entry)
    return executable.emitOpError("entry point @") << entryName << " not found";

  // Split the work over the workgroup grid outlining chose.
  bool tiled = false;
  std::optional<ArrayRef<int64_t>> workgroups = executable.getWorkgroupCount();
  if (workgroups && !workgroups->empty() && (*workgroups)[0] > 1) {
    linalg::LinalgOp root =
        findDispatchRoot(entry.getBody().front().getTerminator());
    std::optional<WorkgroupTiling> tiling =
        root ? chooseWorkgroupTiling(root) : std::nullopt;
    tiled = tiling && tiling->count == (*workgroups)[0] &&
            succeeded(tileToWorkgroups(entry, *tiling));
  }

  OpPassManager prepare(ModuleOp::getOperationName());
  if (failed(parsePassPipeline(kPrepareBufferizationPipeline, prepare)) ||
      failed(runPipeline(prepare, inner)))
    return executable.emitOpError("failed to prepare bufferization");
  makeResultsDistinct(entry);

  OpPassManager bufferize(ModuleOp::getOperationName());
  if (failed(parsePassPipeline(kBufferizePipeline, bufferize)) ||
      failed(runPipeline(bufferize, inner)))
    return executable.emitOpError("failed to bufferize");

  if (failed(moveTemporariesToStack(inner)))
    return failure();

  unsigned bindingCount = entry.getNumArguments();
  if (failed(distributeToWorkgroups(entry, tiled)))
    return failure();

  OpPassManager toLLVM(ModuleOp::getOperationName());
  if (failed(parsePassPipeline(kToLLVMPipeline, toLLVM)) ||
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
      {entryName.str(), entryName.str(), bindingCount}};
  if (llvm::Error error = buildExecutableLibrary(
          *llvmModule, executable.getSymName().str(), exports))
    return executable.emitOpError("cannot build the executable library: ")
           << llvm::toString(std::move(error));
  auto library = compileToSharedObject(*llvmModule, machine);
  if (!library)
    return executable.emitOpError("native code generation failed: ")
           << llvm::toString(library.takeError());

  OpBuilder builder(executable);
  auto dataType = VectorType::get({static_cast<int64_t>(library->size())},
                                  builder.getIntegerType(8));
  auto data = DenseElementsAttr::getFromRawBuffer(
      dataType, ArrayRef<char>(reinterpret_cast<const char *>(library->data()),
                               library->size()));
  hal::ExecutableBinaryOp::create(
      builder, executable.getLoc(), executable.getSymName(),
      STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64, data,
      builder.getDenseI64ArrayAttr({static_cast<int64_t>(bindingCount)}),
      builder.getStrArrayAttr(getRequiredCpuFeatures(machine)));
  executable.erase();
  return success();
}

} // namespace
} // namespace strata
