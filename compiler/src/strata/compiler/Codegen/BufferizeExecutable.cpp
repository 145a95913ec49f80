//===- BufferizeExecutable.cpp --------------------------------------------===//
#include "strata/compiler/Codegen/BufferizeExecutable.h"
#include "strata/compiler/Codegen/DynamicBindings.h"

#include "strata/compiler/Codegen/LoweringConfig.h"
#include "strata/compiler/Codegen/PaddedSources.h"
#include "strata/compiler/Codegen/TileAndDistribute.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/ValueBoundsOpInterface.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <limits>

using namespace mlir;

namespace strata {
namespace {

// Tensor code to buffers. Kept as text so `strata-opt` users can reproduce
// any step.
constexpr const char *kPrepareBufferizationPipeline =
    // Broadcasts and other elementwise producers fold into their consumers
    // so they need no intermediate buffer.
    // (All named ops are generalized for now; per-op-class strategies will
    // keep matmuls and convolutions named.)
    "func.func(linalg-generalize-named-ops,"
    "strata-fuse-elementwise-ops,strata-epilogues-in-place),canonicalize,"
    "eliminate-empty-tensors";

constexpr const char *kBufferizePipeline =
    "one-shot-bufferize{bufferize-function-boundaries "
    "function-boundary-type-conversion=identity-layout-map},"
    "canonicalize,cse";

// Results the executable allocated become output bindings.
constexpr const char *kResultsToOutParamsPipeline =
    "buffer-results-to-out-params{hoist-static-allocs "
    "modify-public-functions},"
    "canonicalize,cse";

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

LogicalResult moveTemporariesToStack(ModuleOp module,
                                     bool readsPaddedSourcesInPlace) {
  SmallVector<memref::AllocOp> allocs;
  module.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
  IRRewriter rewriter(module.getContext());
  SmallVector<std::pair<memref::AllocaOp, int64_t>> oversized;
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
      // Unbounded (a dynamic batch) only as a padded input read in place,
      // never built: checked with the oversized ones below.
      if (failed(bound) && !readsPaddedSourcesInPlace)
        return alloc.emitOpError("has a size with no known upper bound; "
                                 "executables cannot allocate heap memory");
      if (failed(bound)) {
        bytes = std::numeric_limits<int64_t>::max();
        break;
      }
      bytes *= *bound;
    }
    if (bytes > kMaxStackTemporaryBytes && !readsPaddedSourcesInPlace)
      return alloc.emitOpError("needs a ")
             << bytes << "-byte temporary inside an executable (limit "
             << kMaxStackTemporaryBytes << ")";
    rewriter.setInsertionPoint(alloc);
    auto alloca = rewriter.replaceOpWithNewOp<memref::AllocaOp>(
        alloc, type, alloc.getDynamicSizes(), alloc.getSymbolOperands(),
        alloc.getAlignmentAttr());
    if (bytes > kMaxStackTemporaryBytes)
      oversized.push_back({alloca, bytes});
  }
  // Past the bound, only a padded input the target reads from its source
  // (and so never builds) may stay.
  DenseMap<Operation *, PaddedSources> paddedPerFunction;
  for (auto [alloca, bytes] : oversized) {
    auto func = alloca->getParentOfType<func::FuncOp>();
    auto it = paddedPerFunction.find(func);
    if (it == paddedPerFunction.end())
      it = paddedPerFunction.try_emplace(func, findPaddedSources(func)).first;
    if (!it->second.contains(alloca) &&
        bytes == std::numeric_limits<int64_t>::max())
      return alloca.emitOpError("has a size with no known upper bound; "
                                "executables cannot allocate heap memory");
    if (!it->second.contains(alloca))
      return alloca.emitOpError("needs a ")
             << bytes << "-byte temporary inside an executable (limit "
             << kMaxStackTemporaryBytes << ")";
    alloca->setAttr(kUnbuiltPaddedSourceAttr, rewriter.getUnitAttr());
  }
  // Their deallocations (if any) go with them.
  module.walk([&](memref::DeallocOp dealloc) {
    if (dealloc.getMemref().getDefiningOp<memref::AllocaOp>())
      dealloc.erase();
  });
  return success();
}

// A sequential region (scf.execute_region, which kept its loops one
// dispatch) has done its job once outlined: inline it, so no target sees
// the block argument its lowering would pass the result through.
void inlineExecuteRegions(func::FuncOp func) {
  SmallVector<scf::ExecuteRegionOp> regions;
  func.walk([&](scf::ExecuteRegionOp op) { regions.push_back(op); });
  IRRewriter rewriter(func.getContext());
  for (scf::ExecuteRegionOp op : regions) {
    if (!op.getRegion().hasOneBlock())
      continue;
    Block &body = op.getRegion().front();
    auto yield = cast<scf::YieldOp>(body.getTerminator());
    SmallVector<Value> results(yield.getOperands());
    rewriter.eraseOp(yield);
    rewriter.inlineBlockBefore(&body, op);
    rewriter.replaceOp(op, results);
  }
}

} // namespace

void getBufferizationDependentDialects(DialectRegistry &registry) {
  OpPassManager pipeline(ModuleOp::getOperationName());
  if (succeeded(parsePassPipeline((Twine(kPrepareBufferizationPipeline) + "," +
                                   kBufferizePipeline + "," +
                                   kResultsToOutParamsPipeline)
                                      .str(),
                                  pipeline)))
    pipeline.getDependentDialects(registry);
}

LogicalResult prepareForBufferization(func::FuncOp entry,
                                      PipelineRunner runPipeline) {
  inlineExecuteRegions(entry);
  // A pad (a pad root's tile, a pad fused into its consumer's tile, or a
  // dispatch returning its root padded in one workgroup) as fills of its
  // padding and a copy into the interior: bufferized in place, the op
  // producing the copied tensor writing the interior, instead of through a
  // whole temporary copied out afterwards.
  {
    RewritePatternSet patterns(entry.getContext());
    populateDecomposeStaticPadPatterns(patterns);
    linalg::populateDecomposePadPatterns(patterns);
    (void)applyPatternsGreedily(entry, std::move(patterns));
  }
  OpPassManager prepare(ModuleOp::getOperationName());
  if (failed(parsePassPipeline(kPrepareBufferizationPipeline, prepare)))
    return failure();
  return runPipeline(prepare, entry->getParentOfType<ModuleOp>());
}

FailureOr<BufferizedExecutable>
bufferizeExecutable(flow::ExecutableOp executable, unsigned vectorBits,
                    PipelineRunner runPipeline,
                    bool readsPaddedSourcesInPlace) {
  ModuleOp inner = executable.getInnerModule();
  if (!inner)
    return executable.emitOpError("has no module to lower");
  StringRef entryName = executable.getEntryPoint();
  auto entry = inner.lookupSymbol<func::FuncOp>(entryName);
  if (!entry)
    return executable.emitOpError("entry point @") << entryName << " not found";

  flow::LoweringConfigAttr config = getLoweringConfig(entry);
  if (!config) {
    std::optional<SmallVector<int64_t>> stated;
    if (std::optional<ArrayRef<int64_t>> count = executable.getWorkgroupCount())
      stated = llvm::to_vector(*count);
    if (failed(configureExecutable(executable, vectorBits, runPipeline)))
      return failure();
    if (stated && ArrayRef<int64_t>(*stated) != *executable.getWorkgroupCount())
      return executable.emitOpError("states a workgroup count of ")
             << (*stated)[0] << " but its configuration splits it into "
             << (*executable.getWorkgroupCount())[0];
    config = getLoweringConfig(entry);
  }

  // Split the work over the workgroup grid the configuration chose.
  int64_t workgroupCount = 1;
  if (std::optional<ArrayRef<int64_t>> count = executable.getWorkgroupCount())
    workgroupCount = count->empty() ? 1 : (*count)[0];
  std::optional<WorkgroupTiling> tiling =
      getWorkgroupTiling(config, workgroupCount);
  if (workgroupCount > 1 && !tiling)
    return executable.emitOpError("has ")
           << workgroupCount
           << " workgroups but its lowering config splits no loop";
  if (tiling && failed(tileToWorkgroups(entry, *tiling)))
    return executable.emitOpError("cannot be split into ")
           << workgroupCount << " workgroups along loop " << tiling->loop
           << " as its lowering config says";
  bool tiled = tiling.has_value();

  // Dynamically shaped results are the caller's buffers, written in place.
  bool dynamic = hasDynamicShapes(entry);
  if (dynamic)
    passResultsAsDestinations(entry);
  if (failed(prepareForBufferization(entry, runPipeline)))
    return executable.emitOpError("'")
           << executable.getSymName() << "': failed to prepare bufferization";
  if (!dynamic)
    makeResultsDistinct(entry);
  // Arguments are input bindings: the caller's tensors, constants, or
  // intermediates other dispatches read later. Never write them in place; an
  // op accumulating into an argument (outs = argument) gets a copy.
  for (unsigned i = 0; i < entry.getNumArguments(); ++i)
    if (isa<TensorType>(entry.getArgument(i).getType()) &&
        !entry.getArgAttr(
            i, bufferization::BufferizationDialect::kWritableAttrName))
      entry.setArgAttr(i,
                       bufferization::BufferizationDialect::kWritableAttrName,
                       BoolAttr::get(entry.getContext(), false));

  OpPassManager bufferize(ModuleOp::getOperationName());
  if (failed(parsePassPipeline(kBufferizePipeline, bufferize)) ||
      failed(runPipeline(bufferize, inner)))
    return executable.emitOpError("failed to bufferize");
  if (dynamic && failed(dropResultsWrittenInPlace(entry)))
    return failure();
  OpPassManager outParams(ModuleOp::getOperationName());
  if (failed(parsePassPipeline(kResultsToOutParamsPipeline, outParams)) ||
      failed(runPipeline(outParams, inner)))
    return executable.emitOpError("failed to bufferize");

  if (failed(moveTemporariesToStack(inner, readsPaddedSourcesInPlace))) {
    // Which dispatch of the model it is (the temporary's location is the
    // model's).
    InFlightDiagnostic note = executable.emitOpError("cannot be compiled");
    if (auto name =
            executable->getAttrOfType<StringAttr>("strata.dispatch_name"))
      note << ": dispatch '" << name.getValue() << "'";
    return note;
  }

  BufferizedExecutable result;
  result.entry = entry;
  result.bindingCount = llvm::count_if(entry.getArgumentTypes(), [](Type type) {
    return isa<MemRefType>(type);
  });
  result.constantCount = entry.getNumArguments() - result.bindingCount;
  if (dynamic) {
    FailureOr<std::vector<BindingExtent>> extents =
        bindDynamicBuffers(entry, result.bindingCount);
    if (failed(extents))
      return failure();
    result.bindingExtents = std::move(*extents);
  }
  if (failed(
          distributeToWorkgroups(entry, tiled,
                                 /*chunked=*/config.getWorkload() != nullptr)))
    return failure();
  return result;
}

} // namespace strata
