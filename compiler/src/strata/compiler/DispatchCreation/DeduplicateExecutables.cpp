//===- DeduplicateExecutables.cpp - one executable per distinct kernel ----===//
//
// Outlining gives every dispatch region its own executable, but models
// repeat themselves: the same layer, the same elementwise chain, dispatched
// many times. Executables whose functions are the same but for their name,
// with the same workgroup grid, are merged into the first one and their
// dispatches pointed at it. Each distinct kernel is then compiled and stored
// once, which keeps the target phase (about 50 ms of LLVM and lld per
// executable) proportional to the model's distinct kernels rather than to
// its length.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringMap.h"

namespace strata {
#define GEN_PASS_DEF_DEDUPLICATEEXECUTABLESPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// The executable's entry function as text under a fixed name, with its
// workgroup grid: equal keys mean interchangeable executables.
std::string getExecutableKey(flow::ExecutableOp executable) {
  std::string key;
  llvm::raw_string_ostream os(key);
  if (DenseI64ArrayAttr count = executable.getWorkgroupCountAttr())
    os << count << "\n";
  auto module = dyn_cast_or_null<ModuleOp>(
      executable.getBody().empty() ? nullptr
                                   : &executable.getBody().front().front());
  if (!module)
    return {};
  for (Operation &op : module.getBody()->getOperations()) {
    auto func = dyn_cast<func::FuncOp>(op);
    if (!func)
      return {}; // only plain outlined kernels are compared
    StringAttr name = func.getSymNameAttr();
    bool isEntry = name == executable.getEntryPointAttr().getAttr();
    if (isEntry)
      func.setSymNameAttr(StringAttr::get(func.getContext(), "entry"));
    func->print(os, OpPrintingFlags().useLocalScope());
    if (isEntry)
      func.setSymNameAttr(name);
  }
  return key;
}

struct DeduplicateExecutablesPass
    : public impl::DeduplicateExecutablesPassBase<DeduplicateExecutablesPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    llvm::StringMap<flow::ExecutableOp> canonical;
    DenseMap<StringAttr, flow::ExecutableOp> replacements;
    for (auto executable :
         llvm::to_vector(module.getOps<flow::ExecutableOp>())) {
      std::string key = getExecutableKey(executable);
      if (key.empty())
        continue;
      auto [it, inserted] = canonical.try_emplace(key, executable);
      if (!inserted)
        replacements[executable.getSymNameAttr()] = it->second;
    }
    if (replacements.empty())
      return;
    module.walk([&](flow::DispatchOp dispatch) {
      auto it =
          replacements.find(dispatch.getExecutableAttr().getRootReference());
      if (it == replacements.end())
        return;
      flow::ExecutableOp target = it->second;
      dispatch.setExecutableAttr(SymbolRefAttr::get(
          target.getSymNameAttr(), {target.getEntryPointAttr()}));
    });
    for (auto &entry : replacements)
      SymbolTable::lookupSymbolIn(module, entry.first)->erase();
  }
};

} // namespace
} // namespace strata
