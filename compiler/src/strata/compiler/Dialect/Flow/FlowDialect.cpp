//===- FlowDialect.cpp ----------------------------------------------------===//
#include "strata/compiler/Dialect/Flow/FlowDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace strata::flow;

#include "strata/compiler/Dialect/Flow/FlowDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "strata/compiler/Dialect/Flow/FlowAttrs.cpp.inc"

void FlowDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "strata/compiler/Dialect/Flow/FlowAttrs.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "strata/compiler/Dialect/Flow/FlowOps.cpp.inc"
      >();
}

LogicalResult KernelConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, StringRef strategy,
    DenseI64ArrayAttr cacheTilesAttr, DenseI64ArrayAttr cacheOrderAttr,
    DenseI64ArrayAttr registerTilesAttr, DenseI64ArrayAttr rolesAttr) {
  ArrayRef<int64_t> cacheTiles = cacheTilesAttr.asArrayRef();
  ArrayRef<int64_t> cacheOrder = cacheOrderAttr.asArrayRef();
  ArrayRef<int64_t> registerTiles = registerTilesAttr.asArrayRef();
  ArrayRef<int64_t> roles = rolesAttr.asArrayRef();
  if (strategy != "contraction" && strategy != "broadcast")
    return emitError() << "unknown kernel strategy '" << strategy
                       << "' (expected contraction or broadcast)";
  int64_t loops = cacheTiles.size();
  if (static_cast<int64_t>(registerTiles.size()) != loops)
    return emitError() << "has " << loops << " cache tiles but "
                       << registerTiles.size() << " register tiles";
  if (static_cast<int64_t>(cacheOrder.size()) != loops)
    return emitError() << "cache_order must list each of the " << loops
                       << " loops once";
  llvm::SmallVector<bool> seen(loops, false);
  for (int64_t loop : cacheOrder) {
    if (loop < 0 || loop >= loops || seen[loop])
      return emitError() << "cache_order must list each of the " << loops
                         << " loops once";
    seen[loop] = true;
  }
  if (roles.size() != 3 ||
      llvm::any_of(roles, [&](int64_t r) { return r < 0 || r >= loops; }))
    return emitError() << "roles must be 3 loops (row, vector, reduction) "
                          "below "
                       << loops;
  if (llvm::any_of(cacheTiles, [](int64_t t) { return t < 0; }) ||
      llvm::any_of(registerTiles, [](int64_t t) { return t < 0; }))
    return emitError() << "tile sizes must not be negative";
  return success();
}

LogicalResult LoweringConfigAttr::verify(
    function_ref<InFlightDiagnostic()> emitError, int64_t vectorBits,
    DenseI64ArrayAttr workgroupTileAttr, ArrayAttr kernels,
    DenseI64ArrayAttr workload, int64_t workPerIteration) {
  ArrayRef<int64_t> workgroupTile;
  if (workgroupTileAttr)
    workgroupTile = workgroupTileAttr.asArrayRef();
  if (vectorBits != 128 && vectorBits != 256 && vectorBits != 512)
    return emitError() << "vector_bits must be 128, 256 or 512, not "
                       << vectorBits;
  // Empty: one workgroup; else one positive tile size, zeros elsewhere.
  if (!workgroupTile.empty() &&
      (llvm::count_if(workgroupTile, [](int64_t t) { return t != 0; }) != 1 ||
       llvm::any_of(workgroupTile, [](int64_t t) { return t < 0; })))
    return emitError() << "workgroup_tile must split exactly one loop";
  if (!llvm::all_of(kernels, llvm::IsaPred<KernelConfigAttr>))
    return emitError() << "kernels must be #flow.kernel_config attributes";
  if (workload &&
      (workgroupTile.empty() ||
       workload.size() != static_cast<int64_t>(workgroupTile.size())))
    return emitError() << "workload must give the extent of each loop of a "
                          "workgroup_tile";
  if (workPerIteration < 1)
    return emitError() << "work_per_iteration must be at least 1, not "
                       << workPerIteration;
  return success();
}

LogicalResult FlowDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attribute) {
  if (attribute.getName() != LoweringConfigAttr::getAttrName())
    return op->emitError("unknown flow attribute '")
           << attribute.getName().getValue() << "'";
  if (!isa<FunctionOpInterface>(op) ||
      !isa<LoweringConfigAttr>(attribute.getValue()))
    return op->emitError("'")
           << attribute.getName().getValue()
           << "' must be a #flow.lowering_config on a function";
  return success();
}

LogicalResult DispatchRegionOp::verify() {
  auto terminator = cast<ReturnOp>(getBody().front().getTerminator());
  if (terminator.getOperandTypes() != getResultTypes())
    return emitOpError("returns ")
           << terminator.getOperandTypes().size()
           << " values whose types differ from the region's results";
  return success();
}

LogicalResult DispatchOp::verify() {
  int64_t dynamicDims = 0;
  for (Type type : getResultTypes())
    dynamicDims += cast<RankedTensorType>(type).getNumDynamicDims();
  if (static_cast<int64_t>(getResultDims().size()) != dynamicDims)
    return emitOpError("has ") << getResultDims().size() << " result dims for "
                               << dynamicDims << " dynamic dims of its results";
  return success();
}

LogicalResult
DispatchOp::reifyResultShapes(OpBuilder &builder,
                              ReifiedRankedShapedTypeDims &reifiedShapes) {
  ValueRange dims = getResultDims();
  for (Type type : getResultTypes()) {
    SmallVector<OpFoldResult> sizes;
    for (int64_t size : cast<RankedTensorType>(type).getShape()) {
      if (!ShapedType::isDynamic(size)) {
        sizes.push_back(builder.getIndexAttr(size));
        continue;
      }
      sizes.push_back(dims.front());
      dims = dims.drop_front();
    }
    reifiedShapes.push_back(std::move(sizes));
  }
  return success();
}

ModuleOp ExecutableOp::getInnerModule() {
  for (Operation &op : getBody().front())
    if (auto module = dyn_cast<ModuleOp>(op))
      return module;
  return nullptr;
}

#define GET_OP_CLASSES
#include "strata/compiler/Dialect/Flow/FlowOps.cpp.inc"
