//===- ModelLoader.h - parse, check and normalize an ONNX model -*- C++ -*-===//
//
// The only part of the importer that calls into libonnx's C++ API, which
// reports errors with exceptions: they are caught here and returned as
// messages.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_IMPORTERS_ONNX_MODELLOADER_H_
#define STRATA_COMPILER_IMPORTERS_ONNX_MODELLOADER_H_

#include <memory>
#include <string>

#include "strata/compiler/Importers/ONNX/InputShapePins.h"

#include "onnx/onnx_pb.h"

namespace strata::onnx_importer {

struct LoadedModel {
  std::unique_ptr<onnx::ModelProto> model;
  // Opset of the default domain after conversion.
  int64_t opset = 0;
};

// Parses `contents`, inlines external data found next to `modelPath` (and
// inside `externalDataRoot` when given, else inside the model's folder), checks
// the model, converts it to `targetOpset` (keeping the original opset when
// libonnx has no adapter) and infers the type of every value. Models whose
// local functions call themselves, or expand to more than `maxNodes` nodes
// when every call is expanded, are refused before libonnx (which expands
// them recursively) sees them. On failure returns null and sets `error`.
// `pins` give dynamic input dimensions their sizes first (InputShapePins.h).
LoadedModel loadModel(const std::string &modelPath, const std::string &contents,
                      int targetOpset, const std::string &externalDataRoot,
                      int64_t maxNodes, const InputShapePins &pins,
                      std::string &error);

// The check loadModel makes of a model's local functions (above).
bool checkLocalFunctions(const onnx::ModelProto &model, int64_t maxNodes,
                         std::string &error);

// Infers the types of a standalone graph's values (a subgraph whose inputs
// carry the types of one use, with the outer-scope values it reads added as
// typed inputs or initializers) into its value_info and outputs. False with
// `error` when inference fails; the graph is kept either way.
bool inferGraphShapes(onnx::GraphProto &graph, int64_t opset,
                      std::string &error, bool strict = false);

} // namespace strata::onnx_importer

#endif // STRATA_COMPILER_IMPORTERS_ONNX_MODELLOADER_H_
