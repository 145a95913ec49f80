//===- ConfigureExecutables.cpp - code generation decisions, once ---------===//
//
// Chooses each executable's workgroup grid and kernel tiles (see
// Codegen/LoweringConfig.h), records them on its entry function, and gives
// every dispatch of the executable the grid.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/LoweringConfig.h"
#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

namespace strata {
#define GEN_PASS_DEF_CONFIGUREEXECUTABLESPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// The grid of a dispatch over dynamic shapes, from its push constants: one
// workgroup per tile of the split loop, but no more than give each
// workgroup a minimum of the root's iterations (weighed by the config's
// work per iteration), nor than the maximum; at least one.
Value computeWorkgroupCount(OpBuilder &builder, flow::DispatchOp dispatch,
                            flow::LoweringConfigAttr config) {
  Location loc = dispatch.getLoc();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, value);
  };
  auto extent = [&](int64_t workload) -> Value {
    if (workload >= 0)
      return constant(workload);
    return dispatch.getConstants()[-1 - workload];
  };
  Value one = constant(1);
  auto ceilDiv = [&](Value a, int64_t b) -> Value {
    Value biased = arith::AddIOp::create(builder, loc, a, constant(b - 1));
    return arith::DivUIOp::create(builder, loc, biased, constant(b));
  };
  ArrayRef<int64_t> tile = config.getWorkgroupTile().asArrayRef();
  ArrayRef<int64_t> workload = config.getWorkload().asArrayRef();
  Value count;
  Value iterations = one;
  for (auto [loop, size] : llvm::enumerate(workload)) {
    Value value = extent(size);
    if (tile[loop] != 0)
      count = ceilDiv(value, tile[loop]);
    iterations =
        arith::MulIOp::create(builder, loc, iterations,
                              arith::MaxUIOp::create(builder, loc, value, one));
  }
  if (config.getWorkPerIteration() > 1)
    iterations = arith::MulIOp::create(builder, loc, iterations,
                                       constant(config.getWorkPerIteration()));
  Value byWork =
      arith::DivUIOp::create(builder, loc, iterations,
                             constant(getDynamicMinIterationsPerWorkgroup()));
  count = arith::MinUIOp::create(builder, loc, count, byWork);
  count = arith::MinUIOp::create(builder, loc, count,
                                 constant(getDynamicMaxWorkgroups()));
  return arith::MaxUIOp::create(builder, loc, count, one);
}

struct ConfigureExecutablesPass
    : public impl::ConfigureExecutablesPassBase<ConfigureExecutablesPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (vectorBits != 128 && vectorBits != 256 && vectorBits != 512) {
      module.emitError("vector-bits must be 128, 256 or 512, not ")
          << vectorBits;
      return signalPassFailure();
    }
    if (workgroupGrid != "cpu" && workgroupGrid != "gpu") {
      module.emitError("workgroup-grid must be cpu or gpu, not ")
          << workgroupGrid;
      return signalPassFailure();
    }
    WorkgroupGrid grid = workgroupGrid == "gpu" ? WorkgroupGrid::gpuBlocks
                                                : WorkgroupGrid::cpuCores;
    for (auto executable : module.getOps<flow::ExecutableOp>())
      if (failed(configureExecutable(
              executable, vectorBits,
              [&](OpPassManager &pipeline, ModuleOp scratch) {
                return runPipeline(pipeline, scratch);
              },
              grid)))
        return signalPassFailure();

    module.walk([&](flow::DispatchOp dispatch) {
      auto executable =
          SymbolTable::lookupNearestSymbolFrom<flow::ExecutableOp>(
              dispatch, dispatch.getExecutable().getRootReference());
      if (executable && executable.getWorkgroupCount())
        dispatch.setWorkgroupCountAttr(executable.getWorkgroupCountAttr());
      ModuleOp inner = executable ? executable.getInnerModule() : nullptr;
      auto entry =
          inner ? inner.lookupSymbol<func::FuncOp>(executable.getEntryPoint())
                : nullptr;
      flow::LoweringConfigAttr config =
          entry ? getLoweringConfig(entry) : nullptr;
      if (!config || !config.getWorkload())
        return;
      OpBuilder builder(dispatch);
      dispatch.getWorkgroupsXMutable().assign(
          computeWorkgroupCount(builder, dispatch, config));
    });
  }
};

} // namespace
} // namespace strata
