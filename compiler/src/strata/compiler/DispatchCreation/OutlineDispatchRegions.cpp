//===- OutlineDispatchRegions.cpp - regions into executables --------------===//
//
// Each flow.dispatch.region becomes a flow.executable holding a module with
// one public function, and the region is replaced by a flow.dispatch of it.
// The function's arguments are the tensors the region captured (bindings
// read) and its results the tensors it returns (bindings written).
//
// Dynamic shapes: the function's index arguments follow its tensors, in
// order the dynamic dims of each tensor argument, of each result, then the
// index scalars the region captured; the flow.dispatch passes them as
// push constants. The host computes the results' dynamic dims itself
// (`result_dims`), reified from the ops that compute them and hoisted out
// of the region, so it can allocate the results before the dispatch runs.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/WorkgroupTiling.h"
#include "strata/compiler/DispatchCreation/DispatchNames.h"
#include "strata/compiler/Passes.h"
#include "strata/compiler/Utils/InPlaceUpdates.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace strata {
#define GEN_PASS_DEF_OUTLINEDISPATCHREGIONSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Computes index values of a region before it: what the region computes
// from values above it is recomputed there (`host` inserts before the
// region), and a dim of a tensor the region computes is reified from the op
// that computes it.
class DimHoister {
public:
  DimHoister(flow::DispatchRegionOp region) : region(region), host(region) {}

  FailureOr<Value> hoistDim(Value tensor, int64_t dim) {
    auto type = cast<RankedTensorType>(tensor.getType());
    if (!type.isDynamicDim(dim))
      return arith::ConstantIndexOp::create(host, region.getLoc(),
                                            type.getDimSize(dim))
          .getResult();
    if (!isInside(tensor)) {
      Value &known = hoistedDims[{tensor, dim}];
      if (!known)
        known = tensor::DimOp::create(host, region.getLoc(), tensor, dim);
      return known;
    }
    auto result = dyn_cast<OpResult>(tensor);
    auto reifiable =
        result ? dyn_cast<ReifyRankedShapedTypeOpInterface>(result.getOwner())
               : nullptr;
    if (!reifiable) {
      // A result no op reifies (a sequential region's, a loop's) has the
      // shape of the tensor it updates.
      Value updated = getUpdatedTensor(tensor);
      if (updated == tensor)
        return failure();
      return hoistDim(updated, dim);
    }
    OpBuilder inside(result.getOwner());
    ReifiedRankedShapedTypeDims shapes;
    if (failed(reifiable.reifyResultShapes(inside, shapes)))
      return failure();
    OpFoldResult size = shapes[result.getResultNumber()][dim];
    if (auto value = dyn_cast<Value>(size))
      return hoistValue(value);
    return arith::ConstantIndexOp::create(
               host, region.getLoc(),
               cast<IntegerAttr>(cast<Attribute>(size)).getInt())
        .getResult();
  }

  FailureOr<Value> hoistValue(Value value) {
    if (!isInside(value))
      return value;
    if (Value known = hoisted.lookupOrNull(value))
      return known;
    Operation *op = value.getDefiningOp();
    if (!op)
      return failure();
    if (auto dim = dyn_cast<tensor::DimOp>(op)) {
      std::optional<int64_t> index = dim.getConstantIndex();
      if (!index)
        return failure();
      FailureOr<Value> size = hoistDim(dim.getSource(), *index);
      if (succeeded(size))
        hoisted.map(value, *size);
      return size;
    }
    // Scalar arithmetic: recomputed before the region.
    if (op->getNumRegions() != 0 || !isMemoryEffectFree(op) ||
        !llvm::all_of(op->getOperandTypes(),
                      [](Type t) { return t.isIntOrIndex(); }))
      return failure();
    for (Value operand : op->getOperands()) {
      FailureOr<Value> above = hoistValue(operand);
      if (failed(above))
        return failure();
      hoisted.map(operand, *above);
    }
    Operation *clone = host.clone(*op, hoisted);
    return clone->getResult(cast<OpResult>(value).getResultNumber());
  }

private:
  bool isInside(Value value) {
    return region.getBody().isAncestor(value.getParentRegion());
  }

  flow::DispatchRegionOp region;
  OpBuilder host;
  IRMapping hoisted;
  DenseMap<std::pair<Value, int64_t>, Value> hoistedDims;
};

// In the outlined function, a dim of a tensor argument is the index
// argument that carries it.
void useDimArguments(func::FuncOp func, ArrayRef<Value> tensorArgs,
                     ArrayRef<SmallVector<Value>> dimArgs) {
  func.walk([&](tensor::DimOp dim) {
    std::optional<int64_t> index = dim.getConstantIndex();
    auto it = llvm::find(tensorArgs, dim.getSource());
    if (!index || it == tensorArgs.end())
      return;
    const SmallVector<Value> &dims = dimArgs[it - tensorArgs.begin()];
    auto type = cast<RankedTensorType>(dim.getSource().getType());
    if (*index < 0 || *index >= type.getRank() || !type.isDynamicDim(*index))
      return;
    dim.replaceAllUsesWith(dims[type.getDynamicDimIndex(*index)]);
    dim.erase();
  });
}

LogicalResult outlineRegion(flow::DispatchRegionOp region, StringRef name,
                            ModuleOp parentModule, func::FuncOp parentFunc) {
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(region.getBody(), captured);
  SmallVector<Value> tensors, scalars;
  for (Value value : captured) {
    if (isa<RankedTensorType>(value.getType())) {
      tensors.push_back(value);
      continue;
    }
    if (value.getType().isIndex()) {
      scalars.push_back(value);
      continue;
    }
    return region.emitOpError("captures a value of type ")
           << value.getType()
           << " from outside; only tensors and index values can cross a "
              "dispatch boundary";
  }

  // The push constants: dynamic dims of the tensors read, of the results,
  // then the captured scalars.
  DimHoister hoister(region);
  SmallVector<Value> constants, resultDims;
  for (Value tensor : tensors) {
    auto type = cast<RankedTensorType>(tensor.getType());
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      if (type.isDynamicDim(dim))
        constants.push_back(*hoister.hoistDim(tensor, dim));
  }
  auto terminator = cast<flow::ReturnOp>(region.getBody().front().back());
  for (auto [index, result] : llvm::enumerate(terminator.getOperands())) {
    auto type = cast<RankedTensorType>(result.getType());
    for (int64_t dim = 0; dim < type.getRank(); ++dim) {
      if (!type.isDynamicDim(dim))
        continue;
      FailureOr<Value> size = hoister.hoistDim(result, dim);
      if (failed(size))
        return region.emitOpError("cannot compute dim ")
               << dim << " of result " << index << " (" << type
               << ") before the dispatch runs";
      resultDims.push_back(*size);
    }
  }
  llvm::append_range(constants, resultDims);
  llvm::append_range(constants, scalars);

  Location loc = region.getLoc();
  OpBuilder moduleBuilder(parentFunc);
  auto executable =
      flow::ExecutableOp::create(moduleBuilder, loc, name, name,
                                 /*workgroup_count=*/DenseI64ArrayAttr());
  executable.getBody().push_back(new Block());
  OpBuilder builder = OpBuilder::atBlockBegin(&executable.getBody().front());
  auto innerModule = ModuleOp::create(builder, loc);

  SmallVector<Type> argTypes;
  for (Value value : tensors)
    argTypes.push_back(value.getType());
  argTypes.append(constants.size(), builder.getIndexType());
  builder.setInsertionPointToStart(innerModule.getBody());
  auto funcType = builder.getFunctionType(argTypes, region.getResultTypes());
  auto func = func::FuncOp::create(builder, loc, name, funcType);
  Block *entry = func.addEntryBlock();

  IRMapping mapping;
  SmallVector<Value> tensorArgs;
  SmallVector<SmallVector<Value>> dimArgs;
  unsigned nextIndexArg = tensors.size();
  for (auto [value, arg] : llvm::zip(tensors, entry->getArguments())) {
    mapping.map(value, arg);
    tensorArgs.push_back(arg);
    int64_t dynamicDims =
        cast<RankedTensorType>(value.getType()).getNumDynamicDims();
    dimArgs.emplace_back(
        entry->getArguments().slice(nextIndexArg, dynamicDims));
    nextIndexArg += dynamicDims;
  }
  nextIndexArg += resultDims.size();
  for (Value scalar : scalars)
    mapping.map(scalar, entry->getArgument(nextIndexArg++));
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
  if (region->hasAttr(kSingleWorkgroupAttr))
    func->setAttr(kSingleWorkgroupAttr, builder.getUnitAttr());
  useDimArguments(func, tensorArgs, dimArgs);
  // (What reifying the results' dims left unused.)
  for (Operation &op :
       llvm::make_early_inc_range(llvm::reverse(entry->getOperations())))
    if (isOpTriviallyDead(&op))
      op.erase();

  // One workgroup until ConfigureExecutables chooses the grid.
  OpBuilder hostBuilder(region);
  auto workgroups = hostBuilder.getDenseI64ArrayAttr({1, 1, 1});
  executable.setWorkgroupCountAttr(workgroups);

  auto callee =
      SymbolRefAttr::get(region.getContext(), name,
                         {FlatSymbolRefAttr::get(region.getContext(), name)});
  auto dispatch = flow::DispatchOp::create(
      hostBuilder, loc, region.getResultTypes(), callee, workgroups, tensors,
      constants, resultDims, /*workgroups_x=*/Value());
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
      // Dims of empty tensors the host never allocates are their sizes.
      func.walk([](tensor::DimOp dim) {
        auto empty = dim.getSource().getDefiningOp<tensor::EmptyOp>();
        std::optional<int64_t> index = dim.getConstantIndex();
        if (!empty || !index || !empty.getType().isDynamicDim(*index))
          return;
        dim.replaceAllUsesWith(empty.getDynamicSize(*index));
        dim.erase();
        if (empty->use_empty())
          empty.erase();
      });
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
