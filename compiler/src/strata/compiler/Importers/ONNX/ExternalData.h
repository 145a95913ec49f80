//===- ExternalData.h - load ONNX external data safely ----------*- C++ -*-===//
//
// ONNX tensors may keep their bytes in files beside the model
// (`external_data`: location, offset, length). A model is untrusted input, so
// a location is resolved the way ONNX Runtime does and refused unless it
// stays inside the allowed folder: it must be relative, contain no `..`,
// resolve (through symlinks) inside the folder, name a regular file, and
// offset and length must lie within that file and match the tensor's size.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_IMPORTERS_ONNX_EXTERNALDATA_H_
#define STRATA_COMPILER_IMPORTERS_ONNX_EXTERNALDATA_H_

#include <filesystem>
#include <string>

#include "onnx/onnx_pb.h"

namespace strata::onnx_importer {

struct ExternalDataOptions {
  // Folder locations are relative to: the model's own.
  std::filesystem::path modelDirectory;
  // Folder every file must resolve inside; empty = `modelDirectory`. Users
  // with data beside, not below, the model widen it (a parent folder).
  std::filesystem::path allowedRoot;
};

// Reads the external data of every tensor of `model` (graph initializers,
// sparse initializers, tensor attributes, subgraphs, local functions) into
// its raw_data. False with `error` naming the tensor and location when a
// location is refused or unreadable.
bool loadExternalData(onnx::ModelProto &model,
                      const ExternalDataOptions &options, std::string &error);

} // namespace strata::onnx_importer

#endif // STRATA_COMPILER_IMPORTERS_ONNX_EXTERNALDATA_H_
