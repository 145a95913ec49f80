//===- LoweringConfig.cpp -------------------------------------------------===//
#include "strata/compiler/Codegen/LoweringConfig.h"

#include "strata/compiler/Codegen/TileAndDistribute.h"

#include "mlir/IR/Builders.h"

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
  for (auto [loop, tile] :
       llvm::enumerate(config.getWorkgroupTile().asArrayRef()))
    if (tile != 0)
      return WorkgroupTiling{static_cast<unsigned>(loop), tile, count};
  return std::nullopt;
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
  // The workgroup grid is chosen for static shapes; an executable over
  // dynamic ones runs in one workgroup for now.
  std::optional<WorkgroupTiling> tiling;
  if (!hasDynamicShapes(entry))
    tiling = chooseDispatchWorkgroupTiling(terminator, vectorBits, grid);
  if (tiling && tiling->count < 2)
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
    return executable.emitOpError("failed to prepare bufferization");

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
                     ArrayAttr::get(context, kernels)));
  executable.setWorkgroupCountAttr(
      builder.getDenseI64ArrayAttr({tiling ? tiling->count : 1, 1, 1}));
  return success();
}

} // namespace strata
