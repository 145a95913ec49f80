//===- CloneExecutablesPerTarget.cpp - one executable per target ----------===//
//
// For --target=cpu,cuda: every flow.executable is marked for the first
// target and cloned, as `name__target`, for each other one
// (ExecutableTargets.h). The host program keeps dispatching the original;
// the clones become variants of its binary.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/ExecutableTargets.h"
#include "strata/compiler/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace strata {
#define GEN_PASS_DEF_CLONEEXECUTABLESPERTARGETPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

struct CloneExecutablesPerTargetPass
    : public impl::CloneExecutablesPerTargetPassBase<
          CloneExecutablesPerTargetPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<StringRef> names;
    StringRef(targets).split(names, ',');
    for (StringRef &name : names)
      name = name.trim();
    if (names.empty() || llvm::is_contained(names, "")) {
      module.emitError("targets must name one or more targets, got '")
          << targets << "'";
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    MLIRContext *context = module.getContext();
    for (auto executable :
         llvm::to_vector(module.getOps<flow::ExecutableOp>())) {
      if (executable->hasAttr(kExecutableTargetAttrName))
        continue;
      executable->setAttr(kExecutableTargetAttrName,
                          StringAttr::get(context, names.front()));
      Operation *last = executable;
      for (StringRef target : ArrayRef(names).drop_front()) {
        auto clone = cast<flow::ExecutableOp>(executable->clone());
        clone.setSymName((executable.getSymName() + "__" + target).str());
        clone->setAttr(kExecutableTargetAttrName,
                       StringAttr::get(context, target));
        clone->setAttr(kExecutableVariantOfAttrName,
                       FlatSymbolRefAttr::get(executable.getSymNameAttr()));
        // Inserted after the original and its earlier clones (renamed if
        // the name is taken).
        symbols.insert(clone, std::next(last->getIterator()));
        last = clone;
      }
    }
  }
};

} // namespace
} // namespace strata
