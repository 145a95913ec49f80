//===- LoweringConfig.cpp -------------------------------------------------===//
#include "strata/compiler/Codegen/LoweringConfig.h"

#include "strata/compiler/Codegen/TileAndDistribute.h"
#include "strata/compiler/Utils/IndexingMaps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

#include <functional>

using namespace mlir;

namespace strata {

flow::KernelConfigAttr getKernelConfigAttr(MLIRContext *context,
                                           const ContractionTiles &tiles) {
  SmallVector<int64_t> order(tiles.cacheLoopOrder.begin(),
                             tiles.cacheLoopOrder.end());
  SmallVector<int64_t> roles = {tiles.rowLoop, tiles.vectorLoop,
                                tiles.reductionLoop};
  auto array = [&](ArrayRef<int64_t> values) {
    return DenseI64ArrayAttr::get(context, values);
  };
  return flow::KernelConfigAttr::get(
      context, tiles.broadcast ? "broadcast" : "contraction",
      array(tiles.cache), array(order), array(tiles.registers), array(roles));
}

ContractionTiles getContractionTiles(flow::KernelConfigAttr config) {
  ContractionTiles tiles;
  tiles.broadcast = config.getStrategy() == "broadcast";
  tiles.cache.assign(config.getCacheTiles().asArrayRef().begin(),
                     config.getCacheTiles().asArrayRef().end());
  for (int64_t loop : config.getCacheOrder().asArrayRef())
    tiles.cacheLoopOrder.push_back(loop);
  tiles.registers.assign(config.getRegisterTiles().asArrayRef().begin(),
                         config.getRegisterTiles().asArrayRef().end());
  tiles.rowLoop = config.getRoles().asArrayRef()[0];
  tiles.vectorLoop = config.getRoles().asArrayRef()[1];
  tiles.reductionLoop = config.getRoles().asArrayRef()[2];
  return tiles;
}

bool hasDynamicShapes(func::FuncOp entry) {
  auto isDynamic = [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    return type.isIndex() || (shaped && !shaped.hasStaticShape());
  };
  return llvm::any_of(entry.getArgumentTypes(), isDynamic) ||
         llvm::any_of(entry.getResultTypes(), isDynamic);
}

flow::LoweringConfigAttr getLoweringConfig(func::FuncOp entry) {
  return entry->getAttrOfType<flow::LoweringConfigAttr>(
      flow::LoweringConfigAttr::getAttrName());
}

std::optional<WorkgroupTiling>
getWorkgroupTiling(flow::LoweringConfigAttr config, int64_t count) {
  if (!config.getWorkgroupTile())
    return std::nullopt;
  if (config.getWorkload())
    count = ShapedType::kDynamic;
  for (auto [loop, tile] :
       llvm::enumerate(config.getWorkgroupTile().asArrayRef()))
    if (tile != 0)
      return WorkgroupTiling{static_cast<unsigned>(loop), tile, count};
  return std::nullopt;
}

// The extent of each loop of `root`, as LoweringConfigAttr's `workload`
// says it: static, or the push constant (entry index argument) holding it;
// nullopt when one is computed otherwise.
static std::optional<SmallVector<int64_t>>
resolveWorkload(func::FuncOp entry, linalg::LinalgOp root) {
  Block &body = entry.getBody().front();
  unsigned firstIndexArg = 0;
  while (firstIndexArg < body.getNumArguments() &&
         isa<RankedTensorType>(body.getArgument(firstIndexArg).getType()))
    ++firstIndexArg;
  // The constant holding `value` (an index value of the entry).
  auto constantOf = [&](Value value) -> std::optional<int64_t> {
    if (std::optional<int64_t> known = getConstantIntValue(value))
      return *known;
    auto arg = dyn_cast<BlockArgument>(value);
    if (!arg || arg.getOwner() != &body || arg.getArgNumber() < firstIndexArg)
      return std::nullopt;
    return -1 - static_cast<int64_t>(arg.getArgNumber() - firstIndexArg);
  };
  // Dim `dim` of `tensor`: a tensor argument's dims are the first index
  // arguments; an empty tensor's are its sizes (through fills).
  std::function<std::optional<int64_t>(Value, int64_t)> dimOf =
      [&](Value tensor, int64_t dim) -> std::optional<int64_t> {
    auto type = cast<RankedTensorType>(tensor.getType());
    if (!type.isDynamicDim(dim))
      return type.getDimSize(dim);
    if (auto arg = dyn_cast<BlockArgument>(tensor)) {
      if (arg.getOwner() != &body)
        return std::nullopt;
      int64_t position = 0;
      for (unsigned i = 0; i < arg.getArgNumber(); ++i)
        position += cast<RankedTensorType>(body.getArgument(i).getType())
                        .getNumDynamicDims();
      return -1 - (position + type.getDynamicDimIndex(dim));
    }
    if (auto empty = tensor.getDefiningOp<tensor::EmptyOp>())
      return constantOf(empty.getDynamicSize(dim));
    if (auto fill = tensor.getDefiningOp<linalg::FillOp>())
      return dimOf(fill.getOutputs()[0], dim);
    // A dim a reshape leaves whole (a batch past a collapse of the pixels:
    // an epilogue's output flattened like its product's).
    if (auto collapse = tensor.getDefiningOp<tensor::CollapseShapeOp>()) {
      ReassociationIndices group = collapse.getReassociationIndices()[dim];
      if (group.size() == 1)
        return dimOf(collapse.getSrc(), group.front());
      return std::nullopt;
    }
    if (auto expand = tensor.getDefiningOp<tensor::ExpandShapeOp>()) {
      OpFoldResult size = expand.getMixedOutputShape()[dim];
      if (auto value = dyn_cast<Value>(size))
        return constantOf(value);
      return getConstantIntValue(size);
    }
    return std::nullopt;
  };
  SmallVector<std::optional<int64_t>> extents(root.getNumLoops());
  forEachLoopIndexedDim(root,
                        [&](OpOperand &operand, int64_t dim, unsigned loop) {
                          if (!extents[loop])
                            extents[loop] = dimOf(operand.get(), dim);
                        });
  SmallVector<int64_t> workload;
  for (std::optional<int64_t> extent : extents) {
    if (!extent)
      return std::nullopt;
    workload.push_back(*extent);
  }
  return workload;
}

LogicalResult configureExecutable(flow::ExecutableOp executable,
                                  unsigned vectorBits,
                                  PipelineRunner runPipeline,
                                  WorkgroupGrid grid) {
  ModuleOp inner = executable.getInnerModule();
  if (!inner)
    return executable.emitOpError("has no module to configure");
  auto entry = inner.lookupSymbol<func::FuncOp>(executable.getEntryPoint());
  if (!entry)
    return executable.emitOpError("entry point @")
           << executable.getEntryPoint() << " not found";
  MLIRContext *context = executable.getContext();
  Operation *terminator = entry.getBody().front().getTerminator();
  // An executable over dynamic shapes splits into a grid its dispatches
  // size at run time from their push constants (`workload`).
  bool dynamic = hasDynamicShapes(entry);
  std::optional<WorkgroupTiling> tiling;
  std::optional<SmallVector<int64_t>> workload;
  if (entry->hasAttr(kSingleWorkgroupAttr)) {
    // (Dispatch formation's decision: one workgroup.)
  } else if (!dynamic) {
    tiling = chooseDispatchWorkgroupTiling(terminator, vectorBits, grid);
  } else if (grid == WorkgroupGrid::cpuCores) {
    tiling = chooseDynamicWorkgroupTiling(terminator, vectorBits);
    if (tiling)
      workload = resolveWorkload(entry, findDispatchRoot(terminator));
    if (!workload)
      tiling.reset();
  }
  if (tiling && !dynamic && tiling->count < 2)
    tiling.reset();

  // The copy codegen will see: split over workgroups (or not, when the
  // split would leave work outside its loop), then prepared for
  // bufferization. It lives in a module of its own next to the real one.
  OpBuilder builder(executable.getContext());
  builder.setInsertionPointAfter(inner);
  auto scratch = ModuleOp::create(builder, executable.getLoc());
  builder.setInsertionPointToStart(scratch.getBody());
  auto copy = cast<func::FuncOp>(builder.clone(*entry));
  if (tiling && failed(tileToWorkgroups(copy, *tiling)))
    tiling.reset();
  LogicalResult prepared = prepareForBufferization(copy, runPipeline);
  SmallVector<Attribute> kernels;
  if (succeeded(prepared))
    copy.walk([&](linalg::LinalgOp op) {
      if (std::optional<ContractionTiles> tiles =
              chooseContractionTiles(op, vectorBits))
        kernels.push_back(getKernelConfigAttr(op.getContext(), *tiles));
    });
  scratch.erase();
  if (failed(prepared))
    return executable.emitOpError("'")
           << executable.getSymName() << "': failed to prepare bufferization";

  SmallVector<int64_t> workgroupTile;
  if (tiling) {
    TilingInterface root = findTileableDispatchRoot(terminator);
    workgroupTile.assign(root.getLoopIteratorTypes().size(), 0);
    workgroupTile[tiling->loop] = tiling->tileSize;
  }
  entry->setAttr(flow::LoweringConfigAttr::getAttrName(),
                 flow::LoweringConfigAttr::get(
                     context, vectorBits,
                     workgroupTile.empty()
                         ? DenseI64ArrayAttr()
                         : DenseI64ArrayAttr::get(context, workgroupTile),
                     ArrayAttr::get(context, kernels),
                     tiling && workload
                         ? DenseI64ArrayAttr::get(context, *workload)
                         : DenseI64ArrayAttr(),
                     tiling && workload ? tiling->workPerIteration : 1));
  executable.setWorkgroupCountAttr(builder.getDenseI64ArrayAttr(
      {tiling && !dynamic ? tiling->count : 1, 1, 1}));
  return success();
}

} // namespace strata
