//===- Registration.cpp - everything the compiler can parse and run ------===//
// Kept in its own file: the "all dialects/passes" headers are heavy.
#include "strata/compiler/Passes.h"
#include "strata/compiler/Pipelines/Pipelines.h"

#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

namespace strata {

void registerCompilerDialects(mlir::DialectRegistry &registry) {
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  mlir::registerAllToLLVMIRTranslations(registry);
  registry.insert<flow::FlowDialect, hal::HALDialect, vm::VMDialect>();
}

void registerCompilerPasses() {
  mlir::registerAllPasses();
  registerStrataPasses();
}

} // namespace strata
