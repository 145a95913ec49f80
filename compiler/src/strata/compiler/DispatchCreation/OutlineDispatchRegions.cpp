//===- OutlineDispatchRegions.cpp - regions into executables --------------===//
//
// Each flow.dispatch.region becomes a flow.executable holding a module with
// one public function, and the region is replaced by a flow.dispatch of it.
// The function's arguments are the tensors the region captured (bindings
// read) and its results the tensors it returns (bindings written). Only
// tensors may cross: scalars would need push constants, not supported yet.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/DispatchCreation/DispatchNames.h"
#include "strata/compiler/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"

namespace strata {
#define GEN_PASS_DEF_OUTLINEDISPATCHREGIONSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

LogicalResult outlineRegion(flow::DispatchRegionOp region, StringRef name,
                            ModuleOp parentModule, func::FuncOp parentFunc) {
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(region.getBody(), captured);
  for (Value value : captured)
    if (!isa<RankedTensorType>(value.getType()))
      return region.emitOpError("captures a value of type ")
             << value.getType()
             << " from outside; only tensors can cross a dispatch boundary";

  Location loc = region.getLoc();
  OpBuilder moduleBuilder(parentFunc);
  auto executable =
      flow::ExecutableOp::create(moduleBuilder, loc, name, name,
                                 /*workgroup_count=*/DenseI64ArrayAttr());
  executable.getBody().push_back(new Block());
  OpBuilder builder = OpBuilder::atBlockBegin(&executable.getBody().front());
  auto innerModule = ModuleOp::create(builder, loc);

  SmallVector<Type> argTypes;
  for (Value value : captured)
    argTypes.push_back(value.getType());
  builder.setInsertionPointToStart(innerModule.getBody());
  auto funcType = builder.getFunctionType(argTypes, region.getResultTypes());
  auto func = func::FuncOp::create(builder, loc, name, funcType);
  Block *entry = func.addEntryBlock();

  IRMapping mapping;
  for (auto [value, arg] : llvm::zip(captured, entry->getArguments()))
    mapping.map(value, arg);
  builder.setInsertionPointToStart(entry);
  for (Operation &op : region.getBody().front()) {
    if (auto ret = dyn_cast<flow::ReturnOp>(op)) {
      SmallVector<Value> results;
      for (Value operand : ret.getOperands())
        results.push_back(mapping.lookupOrDefault(operand));
      func::ReturnOp::create(builder, ret.getLoc(), results);
      continue;
    }
    builder.clone(op, mapping);
  }

  // One workgroup until ConfigureExecutables chooses the grid.
  OpBuilder hostBuilder(region);
  auto workgroups = hostBuilder.getDenseI64ArrayAttr({1, 1, 1});
  executable.setWorkgroupCountAttr(workgroups);

  auto callee =
      SymbolRefAttr::get(region.getContext(), name,
                         {FlatSymbolRefAttr::get(region.getContext(), name)});
  auto dispatch =
      flow::DispatchOp::create(hostBuilder, loc, region.getResultTypes(),
                               callee, workgroups, captured.getArrayRef());
  region.replaceAllUsesWith(dispatch.getResults());
  region.erase();
  return success();
}

// Names each dispatch and its executable after the model ops it holds
// (DispatchNames.h). On every dispatch, not only the executable: merged
// executables must not merge their call sites' names.
void describeOutlinedDispatches(
    ModuleOp module, func::FuncOp func,
    const llvm::StringMap<DispatchDescription> &descriptions) {
  for (auto executable : module.getOps<flow::ExecutableOp>()) {
    auto it = descriptions.find(executable.getSymName());
    if (it != descriptions.end())
      setDispatchDescription(executable, it->second);
  }
  func.walk([&](flow::DispatchOp dispatch) {
    auto it = descriptions.find(dispatch.getExecutable().getRootReference());
    if (it != descriptions.end())
      setDispatchDescription(dispatch, it->second);
  });
}

struct OutlineDispatchRegionsPass
    : public impl::OutlineDispatchRegionsPassBase<OutlineDispatchRegionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : llvm::to_vector(module.getOps<func::FuncOp>())) {
      SmallVector<flow::DispatchRegionOp> regions;
      func.walk([&](flow::DispatchRegionOp op) { regions.push_back(op); });
      llvm::StringMap<DispatchDescription> descriptions;
      for (auto [index, region] : llvm::enumerate(regions)) {
        std::string name =
            (func.getSymName() + "_dispatch_" + Twine(index)).str();
        descriptions[name] = describeDispatch(region.getBody().front());
        if (failed(outlineRegion(region, name, module, func)))
          return signalPassFailure();
      }
      describeOutlinedDispatches(module, func, descriptions);
    }
  }
};

} // namespace
} // namespace strata
