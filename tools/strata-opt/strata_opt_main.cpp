//===- strata_opt_main.cpp - run compiler passes on MLIR text ------------===//
// mlir-opt with Strata's dialects and passes, for lit tests and debugging.
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "strata/compiler/Pipelines/Pipelines.h"
#include "llvm/Support/CommandLine.h"

int main(int argc, char **argv) {
  llvm::cl::SetVersionPrinter(strata::printCompilerVersion);
  mlir::DialectRegistry registry;
  strata::registerCompilerDialects(registry);
  strata::registerCompilerPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Strata optimizer driver\n", registry));
}
