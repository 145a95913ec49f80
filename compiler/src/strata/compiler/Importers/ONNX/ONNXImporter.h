//===- ONNXImporter.h - ONNX models into the compiler's input dialects ----===//
//
// Reads an ONNX ModelProto (protobuf, with external data files), validates
// it with libonnx (checker, version conversion to one opset, shape
// inference) and emits one `func.func` whose arguments and results follow
// the graph's inputs and outputs. Initializers become `arith.constant`
// tensors; nodes become tosa/linalg/tensor/arith/math ops that the input
// phase legalizes. Every failure is one diagnostic naming the node.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_IMPORTERS_ONNX_ONNXIMPORTER_H_
#define STRATA_COMPILER_IMPORTERS_ONNX_ONNXIMPORTER_H_

#include <string>

#include "strata/compiler/Importers/ONNX/InputShapePins.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace strata {

// What one model may ask of the importer. A model file of a few bytes can
// describe tensors of any size and graphs that multiply when loops are
// unrolled: past these limits the import stops with a diagnostic that names
// the node, its op and the limit, instead of exhausting memory or time.
struct ONNXImportLimits {
  // Bytes of any one tensor of the graph (a static shape times its element
  // size): a value, an initializer, a graph input or output. 32 GiB is past
  // the largest single tensor of today's exported models (an LLM's embedding
  // table in f32 is 2-8 GiB) and still refuses a 10^12-element constant.
  int64_t maxTensorBytes = int64_t(1) << 35;
  // Rank of any tensor: numpy's own limit.
  int64_t maxRank = 64;
  // Nodes imported in all, counting each unrolled iteration of a Loop or
  // Scan body, each branch of an If and each node of an expanded local
  // function. Past the largest exported models we know of (a few 10^4
  // nodes); a chain of 65000 elementwise nodes compiles in about 25 s on
  // one core of the CI machine.
  int64_t maxNodes = int64_t(1) << 16;
};

struct ONNXImportOptions {
  // Name of the emitted function.
  std::string functionName = "main";
  // Opset every node is converted to before lowering.
  int targetOpset = 17;
  // External data files must resolve inside this folder; empty = the
  // model's own folder (ExternalData.h).
  std::string externalDataRoot;
  ONNXImportLimits limits;
  // Static sizes for dynamic input dimensions (InputShapePins.h).
  InputShapePins pins;
};

// True when `path` names an ONNX model (`.onnx`) or `contents` starts like
// the protobuf of a ModelProto (field 1, ir_version, as a varint).
bool isONNXModel(llvm::StringRef path, llvm::StringRef contents);

// Imports the ONNX model held in `contents`; external data files are looked
// up relative to the directory of `path`. Returns null after emitting a
// diagnostic on failure.
mlir::OwningOpRef<mlir::ModuleOp>
importONNXModel(llvm::StringRef path, llvm::StringRef contents,
                mlir::MLIRContext *context, const ONNXImportOptions &options);

// Dialects the importer emits; register them before importing.
void registerONNXImporterDialects(mlir::DialectRegistry &registry);

} // namespace strata

#endif // STRATA_COMPILER_IMPORTERS_ONNX_ONNXIMPORTER_H_
