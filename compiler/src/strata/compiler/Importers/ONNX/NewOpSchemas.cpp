//===- NewOpSchemas.cpp - schemas of ONNX operators new after opset 17 ----===//
//
// The strata.onnx schemas (OpsetAdapters.h) of the operators opsets 18-28
// added: their inputs, attributes and type and shape inference.
//
// Compiled with exceptions: inference reports errors by throwing.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/AdaptedOpSchemas.h"

namespace strata::onnx_importer::adapted_schemas {
namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorShapeProto;

//===----------------------------------------------------------------------===//
// Operators that keep their input's shape
//===----------------------------------------------------------------------===//

struct AttrDefault {
  const char *name;
  AttributeProto::AttributeType type;
  double number = 0;          // INT and FLOAT defaults
  const char *text = nullptr; // STRING defaults
  bool required = false;
};

void registerSameShape(const char *op, std::vector<const char *> inputs,
                       std::vector<AttrDefault> attrs, size_t optionalFrom = 99,
                       onnx::InferenceFunction infer = inferLikeFirstInput) {
  OpSchema schema = makeSchema(op);
  for (size_t i = 0; i < inputs.size(); ++i)
    addInput(schema, static_cast<int>(i), inputs[i],
             i >= optionalFrom ? OpSchema::Optional : OpSchema::Single);
  addOutput(schema, 0, "Y");
  for (const AttrDefault &attr : attrs) {
    if (attr.required)
      schema.Attr(attr.name, "", attr.type, /*required=*/true);
    else if (attr.type == AttributeProto::INT)
      schema.Attr(attr.name, "", attr.type, static_cast<int64_t>(attr.number));
    else if (attr.type == AttributeProto::FLOAT)
      schema.Attr(attr.name, "", attr.type, static_cast<float>(attr.number));
    else if (attr.type == AttributeProto::STRING && attr.text)
      schema.Attr(attr.name, "", attr.type, std::string(attr.text));
    else
      schema.Attr(attr.name, "", attr.type, /*required=*/false);
  }
  schema.TypeAndShapeInferenceFunction(std::move(infer));
  onnx::RegisterSchema(std::move(schema));
}

void registerElementwise() {
  using A = AttributeProto;
  registerSameShape("Mish", {"X"}, {});
  registerSameShape("Gelu", {"X"}, {{"approximate", A::STRING, 0, "none"}});
  registerSameShape("Swish", {"X"}, {{"alpha", A::FLOAT, 1.0}});
  registerSameShape("BitwiseNot", {"X"}, {});
  for (const char *op : {"BitwiseAnd", "BitwiseOr", "BitwiseXor"})
    registerSameShape(op, {"A", "B"}, {}, 99, inferBroadcast);
  registerSameShape("SwiGLU", {"A", "B"}, {{"alpha", A::FLOAT, 1.0}}, 99,
                    inferBroadcast);
  registerSameShape("GroupNormalization", {"X", "scale", "bias"},
                    {{"epsilon", A::FLOAT, 1e-5},
                     {"num_groups", A::INT, 0, nullptr, /*required=*/true},
                     {"stash_type", A::INT, 1}});
  registerSameShape("RMSNormalization", {"X", "scale"},
                    {{"axis", A::INT, -1},
                     {"epsilon", A::FLOAT, 1e-5},
                     {"stash_type", A::INT, 1}});
  registerSameShape("RotaryEmbedding",
                    {"X", "cos_cache", "sin_cache", "position_ids"},
                    {{"interleaved", A::INT, 0},
                     {"num_heads", A::INT},
                     {"rotary_embedding_dim", A::INT, 0}},
                    /*optionalFrom=*/3);
  registerSameShape("CumProd", {"x", "axis"},
                    {{"exclusive", A::INT, 0}, {"reverse", A::INT, 0}});
  registerSameShape("TensorScatter", {"past_cache", "update", "write_indices"},
                    {{"axis", A::INT, -2}, {"mode", A::STRING, 0, "linear"}},
                    /*optionalFrom=*/2);
}

void inferBitCast(InferenceContext &ctx) {
  onnx::updateOutputElemType(
      ctx, 0, static_cast<int32_t>(onnx::getAttribute(ctx, "to", 0)));
  if (onnx::hasInputShape(ctx, 0))
    onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

// Attention-23..25: Y like Q with V's head size; the caches and the QK
// output over past + current keys.
void inferAttention(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  for (size_t i = 1; i < ctx.getNumOutputs(); ++i)
    onnx::propagateElemTypeFromInputToOutput(ctx, i == 2 ? 2 : 0, i);
  if (!onnx::hasNInputShapes(ctx, 3))
    return;
  const TensorShapeProto &q = onnx::getInputShape(ctx, 0);
  const TensorShapeProto &k = onnx::getInputShape(ctx, 1);
  const TensorShapeProto &v = onnx::getInputShape(ctx, 2);
  int rank = q.dim_size();
  if ((rank != 3 && rank != 4) || k.dim_size() != rank || v.dim_size() != rank)
    fail_shape_inference("Q, K and V must all be 3-D or all 4-D");
  auto value = [](const TensorShapeProto &shape, int d) -> int64_t {
    return shape.dim(d).has_dim_value() ? shape.dim(d).dim_value() : -1;
  };
  int64_t batch = value(q, 0), qHeads, kvHeads, qLength, kvLength, headSize,
          valueHeadSize;
  if (rank == 4) {
    qHeads = value(q, 1);
    kvHeads = value(k, 1);
    qLength = value(q, 2);
    kvLength = value(k, 2);
    headSize = value(k, 3);
    valueHeadSize = value(v, 3);
  } else {
    qHeads = onnx::getAttribute(ctx, "q_num_heads", 0);
    kvHeads = onnx::getAttribute(ctx, "kv_num_heads", 0);
    if (qHeads <= 0 || kvHeads <= 0)
      fail_shape_inference("3-D inputs need q_num_heads and kv_num_heads");
    qLength = value(q, 1);
    kvLength = value(k, 1);
    headSize = value(k, 2) < 0 ? -1 : value(k, 2) / kvHeads;
    valueHeadSize = value(v, 2) < 0 ? -1 : value(v, 2) / kvHeads;
  }
  int64_t past = 0;
  if (hasInput(ctx, 4)) {
    if (!onnx::hasInputShape(ctx, 4))
      return;
    const TensorShapeProto &pastKey = onnx::getInputShape(ctx, 4);
    past = pastKey.dim_size() == 4 ? value(pastKey, 2) : -1;
  }
  int64_t total = past < 0 || kvLength < 0 ? -1 : past + kvLength;
  auto setShape = [&](size_t output, std::initializer_list<int64_t> dims) {
    if (output >= ctx.getNumOutputs())
      return;
    TensorShapeProto *shape = onnx::getOutputShape(ctx, output);
    for (int64_t d : dims) {
      auto *dim = shape->add_dim();
      if (d >= 0)
        dim->set_dim_value(d);
    }
  };
  if (rank == 4)
    setShape(0, {batch, qHeads, qLength, valueHeadSize});
  else
    setShape(0,
             {batch, qLength, valueHeadSize < 0 ? -1 : qHeads * valueHeadSize});
  setShape(1, {batch, kvHeads, total, headSize});
  setShape(2, {batch, kvHeads, total, valueHeadSize});
  setShape(3, {batch, qHeads, qLength, total});
}

// CausalConvWithState-27: output like the input; present_state
// [B, C, k - 1] from the weight's [C, 1, k].
void inferCausalConvWithState(InferenceContext &ctx) {
  onnx::propagateShapeAndTypeFromFirstInput(ctx);
  if (ctx.getNumOutputs() < 2)
    return;
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 1);
  if (!onnx::hasNInputShapes(ctx, 2))
    return;
  const TensorShapeProto &x = onnx::getInputShape(ctx, 0);
  const TensorShapeProto &w = onnx::getInputShape(ctx, 1);
  if (x.dim_size() != 3 || w.dim_size() != 3)
    fail_shape_inference("input must be [B, C, L] and weight [C, 1, k]");
  TensorShapeProto *state = onnx::getOutputShape(ctx, 1);
  *state->add_dim() = x.dim(0);
  *state->add_dim() = x.dim(1);
  auto *length = state->add_dim();
  if (w.dim(2).has_dim_value())
    length->set_dim_value(w.dim(2).dim_value() - 1);
}

// CenterCropPad-18: the dims `axes` names take the values of `shape` (when
// known).
void inferCenterCropPad(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0))
    return;
  const TensorShapeProto &x = onnx::getInputShape(ctx, 0);
  int64_t rank = x.dim_size();
  std::vector<int64_t> axes = getAxesAttribute(ctx, rank);
  auto sizes = getConstantInts(ctx, 1);
  if (sizes && sizes->size() != axes.size())
    fail_shape_inference("shape has ", sizes->size(), " values for ",
                         axes.size(), " axes");
  TensorShapeProto *out = onnx::getOutputShape(ctx, 0);
  for (int64_t d = 0; d < rank; ++d)
    *out->add_dim() = x.dim(d);
  for (size_t k = 0; k < axes.size(); ++k) {
    out->mutable_dim(axes[k])->Clear();
    if (sizes)
      out->mutable_dim(axes[k])->set_dim_value((*sizes)[k]);
  }
}

// AffineGrid-20: [N, H, W, 2] or [N, D, H, W, 3] from theta and `size`.
void inferAffineGrid(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0))
    return;
  const TensorShapeProto &theta = onnx::getInputShape(ctx, 0);
  if (theta.dim_size() != 3 || !theta.dim(1).has_dim_value())
    return;
  int64_t spatial = theta.dim(1).dim_value();
  if (spatial != 2 && spatial != 3)
    fail_shape_inference("theta must be [N, 2, 3] or [N, 3, 4]");
  auto size = getConstantInts(ctx, 1);
  if (size && static_cast<int64_t>(size->size()) != spatial + 2)
    fail_shape_inference("size must have ", spatial + 2, " values");
  TensorShapeProto *out = onnx::getOutputShape(ctx, 0);
  *out->add_dim() = theta.dim(0);
  for (int64_t k = 0; k < spatial; ++k) {
    auto *dim = out->add_dim();
    if (size)
      dim->set_dim_value((*size)[2 + k]);
  }
  out->add_dim()->set_dim_value(spatial);
}

// LinearAttention-27: output [B, T, q_heads * dv]; present_state
// [B, kv_heads, dk, dv].
void inferLinearAttention(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (ctx.getNumOutputs() > 1)
    onnx::propagateElemTypeFromInputToOutput(ctx, hasInput(ctx, 3) ? 3 : 0, 1);
  if (!onnx::hasNInputShapes(ctx, 3))
    return;
  const TensorShapeProto &q = onnx::getInputShape(ctx, 0);
  const TensorShapeProto &v = onnx::getInputShape(ctx, 2);
  int64_t qHeads = onnx::getAttribute(ctx, "q_num_heads", 0);
  int64_t kvHeads = onnx::getAttribute(ctx, "kv_num_heads", 0);
  if (q.dim_size() != 3 || v.dim_size() != 3 || qHeads <= 0 || kvHeads <= 0)
    fail_shape_inference("query and value must be [B, T, H*D] with "
                         "q_num_heads and kv_num_heads positive");
  if (!q.dim(2).has_dim_value() || !v.dim(2).has_dim_value())
    return;
  int64_t dk = q.dim(2).dim_value() / qHeads;
  int64_t dv = v.dim(2).dim_value() / kvHeads;
  TensorShapeProto *out = onnx::getOutputShape(ctx, 0);
  *out->add_dim() = q.dim(0);
  *out->add_dim() = q.dim(1);
  out->add_dim()->set_dim_value(qHeads * dv);
  if (ctx.getNumOutputs() < 2)
    return;
  TensorShapeProto *state = onnx::getOutputShape(ctx, 1);
  *state->add_dim() = q.dim(0);
  for (int64_t d : {kvHeads, dk, dv})
    state->add_dim()->set_dim_value(d);
}

// Col2Im-18: [N, C, image...], C = the input's dim 1 / prod(block_shape),
// when image_shape and block_shape are known; else N and the rank.
void inferCol2Im(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasNInputShapes(ctx, 3))
    return;
  const TensorShapeProto &x = onnx::getInputShape(ctx, 0);
  const TensorShapeProto &image = onnx::getInputShape(ctx, 1);
  if (x.dim_size() != 3 || image.dim_size() != 1 ||
      !image.dim(0).has_dim_value())
    return;
  auto imageSizes = getConstantInts(ctx, 1);
  auto blockSizes = getConstantInts(ctx, 2);
  TensorShapeProto *out = onnx::getOutputShape(ctx, 0);
  *out->add_dim() = x.dim(0);
  auto *channels = out->add_dim();
  if (blockSizes && x.dim(1).has_dim_value()) {
    int64_t kernel = 1;
    for (int64_t v : *blockSizes)
      kernel *= v;
    if (kernel > 0)
      channels->set_dim_value(x.dim(1).dim_value() / kernel);
  }
  for (int64_t d = 0; d < image.dim(0).dim_value(); ++d) {
    auto *dim = out->add_dim();
    if (imageSizes && d < static_cast<int64_t>(imageSizes->size()))
      dim->set_dim_value((*imageSizes)[d]);
  }
}

} // namespace

void registerNewOpSchemas() {
  registerElementwise();

  OpSchema attention = makeSchema("Attention");
  addInput(attention, 0, "Q");
  addInput(attention, 1, "K");
  addInput(attention, 2, "V");
  addInput(attention, 3, "attn_mask", OpSchema::Optional);
  addInput(attention, 4, "past_key", OpSchema::Optional);
  addInput(attention, 5, "past_value", OpSchema::Optional);
  addInput(attention, 6, "nonpad_kv_seqlen", OpSchema::Optional);
  addOutput(attention, 0, "Y");
  addOutput(attention, 1, "present_key", OpSchema::Optional);
  addOutput(attention, 2, "present_value", OpSchema::Optional);
  addOutput(attention, 3, "qk_matmul_output", OpSchema::Optional);
  attention.Attr("is_causal", "", AttributeProto::INT, int64_t(0));
  attention.Attr("kv_num_heads", "", AttributeProto::INT, /*required=*/false);
  attention.Attr("q_num_heads", "", AttributeProto::INT, /*required=*/false);
  attention.Attr("qk_matmul_output_mode", "", AttributeProto::INT, int64_t(0));
  attention.Attr("scale", "", AttributeProto::FLOAT, /*required=*/false);
  attention.Attr("softcap", "", AttributeProto::FLOAT, 0.0f);
  attention.Attr("softmax_precision", "", AttributeProto::INT,
                 /*required=*/false);
  attention.Attr("left_window_size", "", AttributeProto::INT, int64_t(-1));
  attention.Attr("right_window_size", "", AttributeProto::INT, int64_t(-1));
  attention.TypeAndShapeInferenceFunction(inferAttention);
  onnx::RegisterSchema(std::move(attention));

  OpSchema causalConv = makeSchema("CausalConvWithState");
  addInput(causalConv, 0, "input");
  addInput(causalConv, 1, "weight");
  addInput(causalConv, 2, "bias", OpSchema::Optional);
  addInput(causalConv, 3, "past_state", OpSchema::Optional);
  addOutput(causalConv, 0, "output");
  addOutput(causalConv, 1, "present_state", OpSchema::Optional);
  causalConv.Attr("activation", "", AttributeProto::STRING,
                  std::string("none"));
  causalConv.TypeAndShapeInferenceFunction(inferCausalConvWithState);
  onnx::RegisterSchema(std::move(causalConv));

  OpSchema centerCropPad = makeSchema("CenterCropPad");
  addInput(centerCropPad, 0, "input_data");
  addInput(centerCropPad, 1, "shape");
  addOutput(centerCropPad, 0, "output_data");
  centerCropPad.Attr("axes", "", AttributeProto::INTS, /*required=*/false);
  centerCropPad.TypeAndShapeInferenceFunction(inferCenterCropPad);
  onnx::RegisterSchema(std::move(centerCropPad));

  OpSchema affineGrid = makeSchema("AffineGrid");
  addInput(affineGrid, 0, "theta");
  addInput(affineGrid, 1, "size");
  addOutput(affineGrid, 0, "grid");
  affineGrid.Attr("align_corners", "", AttributeProto::INT, int64_t(0));
  affineGrid.TypeAndShapeInferenceFunction(inferAffineGrid);
  onnx::RegisterSchema(std::move(affineGrid));

  OpSchema linearAttention = makeSchema("LinearAttention");
  addInput(linearAttention, 0, "query");
  addInput(linearAttention, 1, "key");
  addInput(linearAttention, 2, "value");
  addInput(linearAttention, 3, "past_state", OpSchema::Optional);
  addInput(linearAttention, 4, "decay", OpSchema::Optional);
  addInput(linearAttention, 5, "beta", OpSchema::Optional);
  addOutput(linearAttention, 0, "output");
  addOutput(linearAttention, 1, "present_state", OpSchema::Optional);
  linearAttention.Attr("chunk_size", "", AttributeProto::INT, int64_t(64));
  linearAttention.Attr("kv_num_heads", "", AttributeProto::INT,
                       /*required=*/true);
  linearAttention.Attr("q_num_heads", "", AttributeProto::INT,
                       /*required=*/true);
  linearAttention.Attr("scale", "", AttributeProto::FLOAT, 0.0f);
  linearAttention.Attr("update_rule", "", AttributeProto::STRING,
                       std::string("gated_delta"));
  linearAttention.TypeAndShapeInferenceFunction(inferLinearAttention);
  onnx::RegisterSchema(std::move(linearAttention));

  OpSchema col2Im = makeSchema("Col2Im");
  addInput(col2Im, 0, "input");
  addInput(col2Im, 1, "image_shape");
  addInput(col2Im, 2, "block_shape");
  addOutput(col2Im, 0, "output");
  col2Im.Attr("dilations", "", AttributeProto::INTS, /*required=*/false);
  col2Im.Attr("pads", "", AttributeProto::INTS, /*required=*/false);
  col2Im.Attr("strides", "", AttributeProto::INTS, /*required=*/false);
  col2Im.TypeAndShapeInferenceFunction(inferCol2Im);
  onnx::RegisterSchema(std::move(col2Im));

  OpSchema bitCast = makeSchema("BitCast");
  addInput(bitCast, 0, "input");
  addOutput(bitCast, 0, "output");
  bitCast.Attr("to", "", AttributeProto::INT, /*required=*/true);
  bitCast.TypeAndShapeInferenceFunction(inferBitCast);
  onnx::RegisterSchema(std::move(bitCast));
}

} // namespace strata::onnx_importer::adapted_schemas
