//===- ConfigureExecutables.cpp - code generation decisions, once ---------===//
//
// Chooses each executable's workgroup grid and kernel tiles (see
// Codegen/LoweringConfig.h), records them on its entry function, and gives
// every dispatch of the executable the grid.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/LoweringConfig.h"
#include "strata/compiler/Passes.h"

namespace strata {
#define GEN_PASS_DEF_CONFIGUREEXECUTABLESPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

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
    });
  }
};

} // namespace
} // namespace strata
