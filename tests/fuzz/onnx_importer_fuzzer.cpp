// Fuzz target: the ONNX importer on arbitrary bytes (a ModelProto as
// strata-compile reads it from a .onnx file). Every input must end in a
// module that verifies or in a diagnostic: never a crash, an assertion or
// a sanitizer report. Only built with the compiler (STRATA_BUILD_COMPILER).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "onnx/onnx_pb.h"
#include "strata/compiler/Importers/ONNX/ONNXImporter.h"

namespace {

// Known crash, skipped so the fuzzer can look further (remove with the
// importer's fix; reproducer: known_crashes/onnx_importer_fuzzer/): a graph
// output that no node, initializer or graph input defines passes
// onnx::checker, then libonnx's version converter dereferences null.
bool HasUndefinedGraphOutput(const uint8_t *data, size_t size) {
  onnx::ModelProto model;
  if (size > size_t(1) << 30 || !model.ParseFromArray(data, int(size)) ||
      !model.has_graph())
    return false;
  const onnx::GraphProto &graph = model.graph();
  std::set<std::string> defined;
  for (const auto &input : graph.input())
    defined.insert(input.name());
  for (const auto &initializer : graph.initializer())
    defined.insert(initializer.name());
  for (const auto &node : graph.node())
    for (const auto &output : node.output())
      defined.insert(output);
  for (const auto &output : graph.output())
    if (!defined.count(output.name()))
      return true;
  return false;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const mlir::DialectRegistry *registry = [] {
    auto *result = new mlir::DialectRegistry();
    strata::registerONNXImporterDialects(*result);
    return result;
  }();
  static const bool verbose = std::getenv("STRATA_FUZZ_VERBOSE") != nullptr;
  static const bool skip_known =
      std::getenv("STRATA_FUZZ_INCLUDE_KNOWN_CRASHES") == nullptr;
  if (skip_known && HasUndefinedGraphOutput(data, size))
    return 0;
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
    return 0;
  }
  if (mlir::failed(mlir::verify(*module))) {
    std::fprintf(stderr, "the importer produced a module that does not "
                         "verify\n");
    std::abort();
  }
  return 0;
}
