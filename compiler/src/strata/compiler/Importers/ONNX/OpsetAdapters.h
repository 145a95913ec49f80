//===- OpsetAdapters.h - read ONNX versions newer than libonnx's -*- C++
//-*-===//
//
// libonnx 1.12 checks and infers models up to IR version 8 and opset 17.
// Newer models are read by adapting them first: the IR version is lowered
// once no value uses a type IR 8 lacks, the default-domain opset import
// becomes 17, and every node whose operator changed form after opset 17
// (an input, an attribute, a new operator) moves into the `strata.onnx`
// domain, where schemas of our own (AdaptedOpSchemas.cpp) check it and
// infer its outputs. Operators that only widened their types keep the
// opset-17 schema. The importer lowers each node by its op type at the
// model's real opset, which LoadedModel keeps.
//
// Compiled with exceptions: libonnx's schema registry throws.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_IMPORTERS_ONNX_OPSETADAPTERS_H_
#define STRATA_COMPILER_IMPORTERS_ONNX_OPSETADAPTERS_H_

#include <cstdint>
#include <string>

#include "onnx/onnx_pb.h"

namespace strata::onnx_importer {

// The newest versions libonnx checks and infers.
inline constexpr int64_t kLibonnxNewestOpset = 17;
inline constexpr int64_t kLibonnxNewestIRVersion = 8;
// The newest versions Strata reads (ONNX 1.23 writes IR 13, opset 28).
inline constexpr int64_t kNewestKnownOpset = 28;
inline constexpr int64_t kNewestKnownIRVersion = 13;
// The domain of nodes whose operator changed after opset 17.
inline constexpr const char *kAdaptedDomain = "strata.onnx";

// Whether `domain` names ONNX's default operator set (as the importer
// treats it: the adapted domain is the default one at a newer opset).
bool isDefaultDomain(const std::string &domain);

// The name of an ONNX TensorProto data type (FLOAT8E4M3FN for 17), or its
// number for types this build does not name.
std::string getDataTypeName(int32_t dataType);

// Registers the `strata.onnx` schemas with libonnx (once per process).
void registerAdaptedOpSchemas();

// Adapts `model` in place for libonnx (above). `opset` is set to the
// model's default-domain opset as written (0 when it imports none). False
// with `error` for versions newer than Strata reads, types IR 8 lacks,
// function overloads, and operators whose newer form Strata does not read.
bool adaptNewerVersions(onnx::ModelProto &model, int64_t &opset,
                        std::string &error);

// Adds the opset imports a graph adapted at `opset` needs to a model built
// around it for libonnx (the default domain at min(opset, 17), and the
// adapted domain).
void addLibonnxOpsetImports(onnx::ModelProto &model, int64_t opset);

} // namespace strata::onnx_importer

#endif // STRATA_COMPILER_IMPORTERS_ONNX_OPSETADAPTERS_H_
