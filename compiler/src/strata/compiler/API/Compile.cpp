//===- Compile.cpp - the compile API --------------------------------------===//
#include "strata/compiler/API/Compile.h"

#include "strata/compiler/Importers/ONNX/ONNXImporter.h"
#include "strata/compiler/Pipelines/Pipelines.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <mutex>

namespace strata::compiler {

CompileSource CompileSource::fromFile(std::string path) {
  CompileSource source;
  source.path = std::move(path);
  return source;
}

CompileSource CompileSource::fromMemory(std::string contents,
                                        std::string name) {
  CompileSource source;
  source.path = std::move(name);
  source.contents = std::move(contents);
  return source;
}

const char *Diagnostic::getSeverityName(Severity severity) {
  switch (severity) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  case Severity::Remark:
    return "remark";
  }
  return "error";
}

std::string Diagnostic::str() const {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (!file.empty()) {
    os << file;
    if (line != 0)
      os << ":" << line << ":" << column;
    os << ": ";
  }
  os << getSeverityName(severity) << ": ";
  if (!name.empty())
    os << "'" << name << "': ";
  os << message;
  return text;
}

std::string CompileResult::getErrorMessage() const {
  std::string text;
  for (const Diagnostic &diagnostic : diagnostics) {
    if (diagnostic.severity != Diagnostic::Severity::Error)
      continue;
    if (!text.empty())
      text += "\n";
    text += diagnostic.str();
  }
  return text;
}

std::vector<std::string> getPhaseNames() {
  std::vector<std::string> names;
  for (llvm::StringRef phase : ::strata::getPhaseNames())
    names.push_back(phase.str());
  return names;
}

namespace {

Diagnostic::Severity convertSeverity(mlir::DiagnosticSeverity severity) {
  switch (severity) {
  case mlir::DiagnosticSeverity::Error:
    return Diagnostic::Severity::Error;
  case mlir::DiagnosticSeverity::Warning:
    return Diagnostic::Severity::Warning;
  case mlir::DiagnosticSeverity::Note:
    return Diagnostic::Severity::Note;
  case mlir::DiagnosticSeverity::Remark:
    return Diagnostic::Severity::Remark;
  }
  return Diagnostic::Severity::Error;
}

Diagnostic convertDiagnostic(const mlir::Diagnostic &mlirDiagnostic) {
  Diagnostic diagnostic;
  diagnostic.severity = convertSeverity(mlirDiagnostic.getSeverity());
  diagnostic.message = mlirDiagnostic.str();
  // The first file position and the first name in the location (a name
  // wraps an ONNX node's file location; call sites and fused locations
  // nest several).
  mlirDiagnostic.getLocation()->walk([&](mlir::Location location) {
    if (auto fileLoc = llvm::dyn_cast<mlir::FileLineColLoc>(location)) {
      if (diagnostic.file.empty()) {
        diagnostic.file = fileLoc.getFilename().str();
        diagnostic.line = fileLoc.getLine();
        diagnostic.column = fileLoc.getColumn();
      }
    } else if (auto nameLoc = llvm::dyn_cast<mlir::NameLoc>(location)) {
      if (diagnostic.name.empty())
        diagnostic.name = nameLoc.getName().str();
    }
    return mlir::WalkResult::advance();
  });
  return diagnostic;
}

// Records every diagnostic (and its notes) into the result; passes it on to
// the printing handler registered before it, if any.
class CapturingDiagnosticHandler : public mlir::ScopedDiagnosticHandler {
public:
  CapturingDiagnosticHandler(mlir::MLIRContext *context,
                             std::vector<Diagnostic> &diagnostics, bool passOn)
      : ScopedDiagnosticHandler(context) {
    setHandler([&diagnostics, passOn](mlir::Diagnostic &diagnostic) {
      diagnostics.push_back(convertDiagnostic(diagnostic));
      for (const mlir::Diagnostic &note : diagnostic.getNotes())
        diagnostics.push_back(convertDiagnostic(note));
      // failure() hands it to the previous handler (the printer).
      return mlir::failure(passOn);
    });
  }
};

// The compile's state: its context, source and diagnostics.
class Compilation {
public:
  Compilation(const CompileSource &source, const CompileOptions &options)
      : source(source), options(options) {}

  CompileResult run();

private:
  // An error with no location (the input cannot be read, the options do
  // not fit it).
  void addError(const llvm::Twine &message) {
    Diagnostic diagnostic;
    diagnostic.message = message.str();
    if (options.diagnosticStream)
      *options.diagnosticStream << options.diagnosticPrefix << ": "
                                << diagnostic.message << "\n";
    result.diagnostics.push_back(std::move(diagnostic));
  }
  CompileResult &invalidOptions(const llvm::Twine &message) {
    addError(message);
    result.invalidOptions = true;
    return result;
  }
  mlir::OwningOpRef<mlir::ModuleOp> importONNX(mlir::MLIRContext &context,
                                               llvm::StringRef contents);

  const CompileSource &source;
  const CompileOptions &options;
  CompileResult result;
};

mlir::OwningOpRef<mlir::ModuleOp>
Compilation::importONNX(mlir::MLIRContext &context, llvm::StringRef contents) {
  ONNXImportOptions importOptions;
  importOptions.functionName = options.functionName;
  importOptions.externalDataRoot = options.externalDataRoot;
  importOptions.pins = options.pins;
  if (options.maxTensorBytes)
    importOptions.limits.maxTensorBytes = *options.maxTensorBytes;
  if (options.maxTensorRank)
    importOptions.limits.maxRank = *options.maxTensorRank;
  if (options.maxNodes)
    importOptions.limits.maxNodes = *options.maxNodes;
  return importONNXModel(source.path, contents, &context, importOptions);
}

CompileResult Compilation::run() {
  // "import" shows an ONNX model as the importer emitted it.
  bool dumpImport = options.dumpAfter == "import";
  if (!options.dumpAfter.empty() && !dumpImport &&
      !llvm::is_contained(::strata::getPhaseNames(), options.dumpAfter)) {
    std::string phases;
    for (llvm::StringRef phase : ::strata::getPhaseNames())
      phases += " " + phase.str();
    return invalidOptions("unknown phase '" + options.dumpAfter +
                          "' for --dump-after (phases:" + phases +
                          ") (ONNX models also: import)");
  }
  for (std::optional<int64_t> limit :
       {options.maxTensorBytes, options.maxTensorRank, options.maxNodes})
    if (limit && *limit < 1)
      return invalidOptions("an ONNX import limit must be at least 1, not " +
                            llvm::Twine(*limit));

  mlir::DialectRegistry registry;
  registerCompilerDialects(registry);
  registerONNXImporterDialects(registry);
  static std::once_flag passesRegistered;
  std::call_once(passesRegistered, [] { registerCompilerPasses(); });
  mlir::MLIRContext context(registry);
  // Diagnostics name the op and its location; the full op dump is noise.
  context.printOpOnDiagnostic(false);
  context.loadAllAvailableDialects();

  std::unique_ptr<llvm::MemoryBuffer> input;
  if (source.contents) {
    input = llvm::MemoryBuffer::getMemBuffer(*source.contents, source.path,
                                             /*RequiresNullTerminator=*/true);
  } else {
    std::string error;
    input = mlir::openInputFile(source.path, &error);
    if (!input) {
      addError(error);
      return result;
    }
  }
  llvm::StringRef contents = input->getBuffer();
  bool isONNX = source.format == CompileSource::Format::ONNX ||
                (source.format == CompileSource::Format::Detect &&
                 isONNXModel(source.path, contents));
  if (!isONNX && !options.pins.empty())
    return invalidOptions("--dim, --input-shape and --input-value pin an "
                          "ONNX model's inputs; '" +
                          source.path + "' is an MLIR program");

  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  std::optional<mlir::SourceMgrDiagnosticHandler> printer;
  if (options.diagnosticStream)
    printer.emplace(sourceMgr, &context, *options.diagnosticStream);
  CapturingDiagnosticHandler capture(&context, result.diagnostics,
                                     /*passOn=*/printer.has_value());

  llvm::raw_ostream &dumpStream =
      options.dumpStream ? *options.dumpStream : llvm::outs();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      isONNX ? importONNX(context, contents)
             : mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    return result;
  if (dumpImport) {
    module->print(dumpStream,
                  mlir::OpPrintingFlags().elideLargeElementsAttrs(64));
    dumpStream << "\n";
    if (options.stopAfterDump) {
      result.succeeded = true;
      return result;
    }
  }

  ::strata::CompileOptions pipelineOptions;
  pipelineOptions.target = options.target;
  pipelineOptions.cpu = options.cpu;
  pipelineOptions.cudaArch = options.cudaArch;
  pipelineOptions.moduleName = options.moduleName;
  pipelineOptions.timing = options.timing;
  pipelineOptions.progress = options.progress;
  llvm::StringRef dumpAfter =
      dumpImport ? llvm::StringRef() : llvm::StringRef(options.dumpAfter);
  bool writeModule = dumpAfter.empty() || !options.stopAfterDump;
  std::string bytes;
  llvm::raw_string_ostream output(bytes);
  if (mlir::failed(compileModule(*module, pipelineOptions, dumpAfter,
                                 dumpStream, options.stopAfterDump,
                                 writeModule ? &output : nullptr)))
    return result;
  output.flush();
  result.moduleBytes = std::move(bytes);
  result.succeeded = true;
  return result;
}

} // namespace

CompileResult compile(const CompileSource &source,
                      const CompileOptions &options) {
  return Compilation(source, options).run();
}

} // namespace strata::compiler
