//===- strata_compile_main.cpp - compile a program into a module file ----===//
#include "mlir/Support/FileUtilities.h"
#include "strata/compiler/API/Compile.h"
#include "strata/compiler/Importers/ONNX/ONNXImporter.h"
#include "strata/compiler/Pipelines/Pipelines.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/ToolOutputFile.h"

namespace cl = llvm::cl;

static cl::OptionCategory category("strata-compile options");
static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<input .mlir or .onnx>"),
                                      cl::Required, cl::cat(category));
static cl::opt<std::string> outputFile("o",
                                       cl::desc("Output module file (.smod)"),
                                       cl::value_desc("path"),
                                       cl::cat(category));
static cl::opt<std::string>
    target("target",
           cl::desc("Executable target: cpu (native code for --cpu), vmvx "
                    "(portable VM bytecode + runtime microkernels), cuda "
                    "(PTX for NVIDIA GPUs of --cuda-arch or newer), or a "
                    "comma-separated list (cpu,cuda): every executable for "
                    "each, the device loading the first it can run"),
           cl::init("cpu"), cl::cat(category));
static cl::opt<std::string>
    cpu("cpu",
        cl::desc("CPU for the cpu target: host, x86-64, x86-64-v2, "
                 "x86-64-v3, x86-64-v4, znver4, sapphirerapids, ...; a "
                 "comma-separated list compiles a variant for each and "
                 "loads the best one the running CPU supports"),
        cl::init("host"), cl::cat(category));
static cl::opt<std::string>
    cudaArch("cuda-arch",
             cl::desc("Oldest GPU the cuda target's PTX runs on: sm_80, "
                      "sm_86, sm_90, ..."),
             cl::init("sm_80"), cl::cat(category));
static cl::opt<std::string>
    moduleName("module-name",
               cl::desc("Name of the compiled module (functions are "
                        "called as NAME.function)"),
               cl::init("module"), cl::cat(category));
static cl::opt<std::string> dumpAfter(
    "dump-after",
    cl::desc("Print the program after a phase: import (an ONNX model as "
             "imported, before legalization), input, dispatch-regions, "
             "executables, host, target, vm"),
    cl::cat(category));
static cl::opt<std::string> externalDataRoot(
    "external-data-root",
    cl::desc("Folder ONNX external data files must resolve inside (default: "
             "the model's folder; absolute locations and '..' are always "
             "refused)"),
    cl::value_desc("dir"), cl::cat(category));
static cl::opt<bool>
    timing("timing",
           cl::desc("Print the wall time of each phase and of each pass in "
                    "it to stderr when the compile ends"),
           cl::cat(category));
static cl::opt<bool> progress(
    "progress",
    cl::desc("Report each phase and the executables compiled on stderr as "
             "the compile goes (default: on when stderr is a terminal)"),
    cl::cat(category));
static cl::opt<std::string>
    functionName("function-name",
                 cl::desc("Name of the function an ONNX model becomes"),
                 cl::init("main"), cl::cat(category));

// Static sizes for an ONNX model's dynamic input dimensions
// (InputShapePins.h).
static cl::list<std::string>
    dimPins("dim",
            cl::desc("ONNX: give every input dimension named NAME this size "
                     "(repeatable): --dim=batch=1"),
            cl::value_desc("NAME=SIZE"), cl::cat(category));
static cl::list<std::string> inputShapePins(
    "input-shape",
    cl::desc("ONNX: give input NAME this static shape (repeatable): "
             "--input-shape=pixels=1x3x224x224 (? leaves a dimension "
             "dynamic: --input-shape=audio=?x512)"),
    cl::value_desc("NAME=D0xD1x..."), cl::cat(category));
static cl::list<std::string> inputValuePins(
    "input-value",
    cl::desc("ONNX: make input NAME a constant with these elements, "
             "row-major (repeatable): --input-value=sample_rate=16000"),
    cl::value_desc("NAME=V0,V1,..."), cl::cat(category));

// Import limits (ONNXImportLimits): what one model may ask for.
static const strata::ONNXImportLimits defaultLimits;
static cl::opt<uint64_t> maxTensorBytes(
    "max-tensor-bytes",
    cl::desc("ONNX: bytes one tensor of the model may hold (default 32 GiB)"),
    cl::init(defaultLimits.maxTensorBytes), cl::cat(category));
static cl::opt<uint64_t>
    maxTensorRank("max-tensor-rank",
                  cl::desc("ONNX: rank of any tensor of the model (default "
                           "64)"),
                  cl::init(defaultLimits.maxRank), cl::cat(category));
static cl::opt<uint64_t> maxONNXNodes(
    "max-onnx-nodes",
    cl::desc("ONNX: nodes the model may expand to, each unrolled loop "
             "iteration and If branch counted (default 65536)"),
    cl::init(defaultLimits.maxNodes), cl::cat(category));

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter(strata::printCompilerVersion);
  cl::ParseCommandLineOptions(argc, argv,
                              "Strata compiler: MLIR program -> module file\n");

  if (outputFile.empty() && dumpAfter.empty()) {
    llvm::errs() << "strata-compile: no output: pass -o FILE.smod or "
                    "--dump-after=PHASE\n";
    return 2;
  }

  strata::compiler::CompileOptions options;
  options.target = target;
  options.cpu = cpu;
  options.cudaArch = cudaArch;
  options.moduleName = moduleName;
  options.functionName = functionName;
  options.externalDataRoot = externalDataRoot;
  for (auto [option, limit] :
       {std::pair{&maxTensorBytes, &options.maxTensorBytes},
        {&maxTensorRank, &options.maxTensorRank},
        {&maxONNXNodes, &options.maxNodes}}) {
    if (*option < 1 || *option > uint64_t(INT64_MAX)) {
      llvm::errs() << "strata-compile: --" << option->ArgStr
                   << " must be between 1 and " << INT64_MAX << "\n";
      return 2;
    }
    *limit = static_cast<int64_t>(option->getValue());
  }
  std::string error;
  for (const std::string &pin : dimPins)
    if (!strata::parseDimPin(pin, options.pins, error)) {
      llvm::errs() << "strata-compile: " << error << "\n";
      return 2;
    }
  for (const std::string &pin : inputShapePins)
    if (!strata::parseInputShapePin(pin, options.pins, error)) {
      llvm::errs() << "strata-compile: " << error << "\n";
      return 2;
    }
  for (const std::string &pin : inputValuePins)
    if (!strata::parseInputValuePin(pin, options.pins, error)) {
      llvm::errs() << "strata-compile: " << error << "\n";
      return 2;
    }
  options.dumpAfter = dumpAfter;
  options.dumpStream = &llvm::outs();
  options.stopAfterDump = outputFile.empty();
  options.timing = timing;
  options.progress = progress || (progress.getNumOccurrences() == 0 &&
                                  llvm::sys::Process::StandardErrIsDisplayed());
  options.diagnosticStream = &llvm::errs();
  options.diagnosticPrefix = "strata-compile";

  // Opened first so that a bad output path fails before a long compile.
  std::unique_ptr<llvm::ToolOutputFile> output;
  if (!outputFile.empty()) {
    output = mlir::openOutputFile(outputFile, &error);
    if (!output) {
      llvm::errs() << "strata-compile: " << error << "\n";
      return 1;
    }
  }
  strata::compiler::CompileResult result = strata::compiler::compile(
      strata::compiler::CompileSource::fromFile(inputFile), options);
  if (!result.ok())
    return result.invalidOptions ? 2 : 1;
  if (output) {
    output->os() << result.moduleBytes;
    output->keep();
  }
  return 0;
}
