//===- AdaptedOpSchemas.h - helpers of the strata.onnx schemas -*- C++ -*-===//
//
// What the schemas of ONNX's post-opset-17 forms (AdaptedOpSchemas.cpp,
// NewOpSchemas.cpp) share: schema construction and the inference helpers.
// Compiled with exceptions: inference reports errors by throwing.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_IMPORTERS_ONNX_ADAPTEDOPSCHEMAS_H_
#define STRATA_COMPILER_IMPORTERS_ONNX_ADAPTEDOPSCHEMAS_H_

#include <optional>
#include <vector>

#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"

namespace strata::onnx_importer::adapted_schemas {

// Types are not checked against constraints (inference runs with
// check_type off): every value may hold any tensor type.
inline constexpr const char *kAnyTensor = "T";

// A schema of the strata.onnx domain (version 1) named `name`.
onnx::OpSchema makeSchema(const char *name);
onnx::OpSchema &
addInput(onnx::OpSchema &schema, int index, const char *name,
         onnx::OpSchema::FormalParameterOption option = onnx::OpSchema::Single);
onnx::OpSchema &addOutput(
    onnx::OpSchema &schema, int index, const char *name,
    onnx::OpSchema::FormalParameterOption option = onnx::OpSchema::Single);

// The inference of libonnx's opset-17 schema of `op` (kept alive for the
// process).
const onnx::InferenceFunction &getOpset17Inference(const char *op);

// The values of input `index` when inference knows them (an initializer or
// a Constant).
std::optional<std::vector<int64_t>> getConstantInts(onnx::InferenceContext &ctx,
                                                    size_t index);
std::optional<std::vector<float>> getConstantFloats(onnx::InferenceContext &ctx,
                                                    size_t index);

bool hasInput(onnx::InferenceContext &ctx, size_t index);
// `axis` in [0, rank), or an inference error naming `what`.
int64_t normalizeAxis(int64_t axis, int64_t rank, const char *what);
// The dims the `axes` attribute names, normalized; all `rank` by default.
std::vector<int64_t> getAxesAttribute(onnx::InferenceContext &ctx,
                                      int64_t rank);

// Same type and shape as input 0.
void inferLikeFirstInput(onnx::InferenceContext &ctx);
// Input 0's type, the broadcast shape of inputs 0 and 1.
void inferBroadcast(onnx::InferenceContext &ctx);

// The schemas of operators new after opset 17 (NewOpSchemas.cpp).
void registerNewOpSchemas();

} // namespace strata::onnx_importer::adapted_schemas

#endif // STRATA_COMPILER_IMPORTERS_ONNX_ADAPTEDOPSCHEMAS_H_
