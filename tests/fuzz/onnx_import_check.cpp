#include "onnx_import_check.h"

#include <cstdio>
#include <cstdlib>

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "strata/compiler/Importers/ONNX/ONNXImporter.h"

namespace strata::fuzz {

void CheckONNXImport(const uint8_t *data, size_t size) {
  static const mlir::DialectRegistry *registry = [] {
    auto *result = new mlir::DialectRegistry();
    strata::registerONNXImporterDialects(*result);
    return result;
  }();
  static const bool verbose = std::getenv("STRATA_FUZZ_VERBOSE") != nullptr;
  mlir::MLIRContext context(*registry, mlir::MLIRContext::Threading::DISABLED);
  bool diagnosed = false;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
      diagnosed = true;
    if (verbose)
      std::fprintf(stderr, "%s\n", diag.str().c_str());
    return mlir::success();
  });
  llvm::StringRef contents(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      strata::importONNXModel("fuzz.onnx", contents, &context, {});
  if (!module) {
    if (!diagnosed) {
      std::fprintf(stderr, "the importer failed without a diagnostic\n");
      std::abort();
    }
    return;
  }
  if (mlir::failed(mlir::verify(*module))) {
    std::fprintf(stderr, "the importer produced a module that does not "
                         "verify\n");
    std::abort();
  }
}

} // namespace strata::fuzz
