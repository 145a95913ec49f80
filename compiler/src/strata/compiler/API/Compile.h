//===- Compile.h - the compile API the tools and bindings call --*- C++ -*-===//
//
// One call from a program (MLIR text or an ONNX model, in a file or in
// memory) to module file bytes, or to the diagnostics that explain why not:
//
//   strata::compiler::CompileOptions options;
//   options.target = "cpu";
//   options.pins.dims.push_back({"batch", 1});   // ONNX only
//   CompileResult result = compile(CompileSource::fromFile(path), options);
//   if (!result.ok())
//     for (const Diagnostic &d : result.diagnostics)
//       std::cerr << d.str() << "\n";
//
// strata-compile, the Python package (python/) and tests all compile
// through it. The header needs only the C++ standard library (and the pin
// struct of the ONNX importer), so bindings built with RTTI and exceptions
// include it without MLIR's headers.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_API_COMPILE_H_
#define STRATA_COMPILER_API_COMPILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "strata/compiler/Importers/ONNX/InputShapePins.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace strata::compiler {

// The program to compile: a file, or bytes held in memory.
struct CompileSource {
  enum class Format {
    // ONNX when the name ends in `.onnx` or the bytes start like a
    // ModelProto, MLIR text otherwise.
    Detect,
    MLIR,
    ONNX,
  };

  // Reads the program from `path`.
  static CompileSource fromFile(std::string path);
  // The program is `contents`; `name` stands for it in diagnostics, and an
  // ONNX model's external data files are looked up in the folder of `name`.
  static CompileSource fromMemory(std::string contents,
                                  std::string name = "<memory>");

  std::string path;
  // Set for an in-memory program.
  std::optional<std::string> contents;
  Format format = Format::Detect;
};

struct CompileOptions {
  // Executable target: "cpu", "vmvx", "cuda" or a comma-separated list.
  std::string target = "cpu";
  // CPU (or comma-separated CPUs) of the cpu target: "host" or an LLVM CPU.
  std::string cpu = "host";
  // Oldest GPU of the cuda target, as sm_XY.
  std::string cudaArch = "sm_80";
  // Name of the compiled module: functions are called as NAME.function.
  std::string moduleName = "module";

  // ONNX models only (pins for an MLIR program are an error; the rest is
  // ignored for it).
  // Name of the function the model becomes.
  std::string functionName = "main";
  // Folder external data files must resolve inside; empty: the model's.
  std::string externalDataRoot;
  // Import limits (ONNXImportLimits); unset keeps the importer's default.
  std::optional<int64_t> maxTensorBytes;
  std::optional<int64_t> maxTensorRank;
  std::optional<int64_t> maxNodes;
  // Static sizes or values for the model's inputs (InputShapePins.h).
  InputShapePins pins;

  // Prints the program after a phase (getPhaseNames(), or "import" for an
  // ONNX model as imported) to `dumpStream` (stdout when null); with
  // `stopAfterDump` the compile ends there and produces no module bytes.
  std::string dumpAfter;
  llvm::raw_ostream *dumpStream = nullptr;
  bool stopAfterDump = false;

  // Wall time per phase and pass printed to stderr at the end.
  bool timing = false;
  // Each phase and the executables compiled reported on stderr.
  bool progress = false;

  // When set, every diagnostic is also printed here as it is reported, the
  // way MLIR tools print them (location, severity, message, the source line
  // of MLIR text); errors without a location as "PREFIX: message".
  llvm::raw_ostream *diagnosticStream = nullptr;
  std::string diagnosticPrefix = "strata";
};

struct Diagnostic {
  enum class Severity { Error, Warning, Note, Remark };

  Severity severity = Severity::Error;
  // Where it points; empty file and 0 line/column when it has no location.
  // An ONNX node's location is the model file with line and column 0.
  std::string file;
  unsigned line = 0;
  unsigned column = 0;
  // The named location it points at (an ONNX node's name), or empty.
  std::string name;
  std::string message;

  // "error", "warning", "note" or "remark".
  static const char *getSeverityName(Severity severity);
  // "file:line:col: error: message" (the parts it has).
  std::string str() const;
};

struct CompileResult {
  // Success: the module file (empty when the compile stopped after a dump).
  std::string moduleBytes;
  // Everything reported, in order; notes follow the diagnostic they belong
  // to. Success may carry warnings and remarks.
  std::vector<Diagnostic> diagnostics;
  bool succeeded = false;
  // Failed because the options do not fit the program (pins for an MLIR
  // program, an unknown phase, a limit below 1), not because the program
  // did not compile.
  bool invalidOptions = false;

  bool ok() const { return succeeded; }
  // Every error's str(), one a line.
  std::string getErrorMessage() const;
};

// Phase names for CompileOptions::dumpAfter, in order (without "import").
std::vector<std::string> getPhaseNames();

// Compiles `source`. Thread-safe: each call has its own MLIR context.
CompileResult compile(const CompileSource &source,
                      const CompileOptions &options);

} // namespace strata::compiler

#endif // STRATA_COMPILER_API_COMPILE_H_
