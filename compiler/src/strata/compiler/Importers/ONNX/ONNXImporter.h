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

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

namespace strata {

struct ONNXImportOptions {
  // Name of the emitted function.
  std::string functionName = "main";
  // Opset every node is converted to before lowering.
  int targetOpset = 17;
  // External data files must resolve inside this folder; empty = the
  // model's own folder (ExternalData.h).
  std::string externalDataRoot;
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
