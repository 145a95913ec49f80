//===- AdaptedOpSchemas.cpp - schemas of ONNX's post-opset-17 forms -------===//
//
// One libonnx schema per operator whose form changed after opset 17, in the
// `strata.onnx` domain (OpsetAdapters.h): the inputs and attributes of its
// newest form (the older ones after 17 are subsets with the same defaults)
// and a type and shape inference. Where an opset-17 operator already infers
// exactly these shapes (ReduceSum-13 for the other reductions with an `axes`
// input, MaxPool-12 for the pools with dilations), its inference is reused.
//
// Compiled with exceptions: inference reports errors by throwing.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/OpsetAdapters.h"

#include <cmath>
#include <mutex>
#include <optional>
#include <vector>

#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/defs/tensor_proto_util.h"

namespace strata::onnx_importer {
namespace {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorShapeProto;

// Types are not checked against constraints (inference runs with
// check_type off): every value may hold any tensor type.
constexpr const char *kAnyTensor = "T";

OpSchema makeSchema(const char *name) {
  OpSchema schema;
  schema.SetName(name).SetDomain(kAdaptedDomain).SinceVersion(1);
  schema.TypeConstraint(kAnyTensor, OpSchema::all_tensor_types_with_bfloat(),
                        "any tensor");
  return schema;
}

OpSchema &addInput(OpSchema &schema, int index, const char *name,
                   OpSchema::FormalParameterOption option = OpSchema::Single) {
  return schema.Input(index, name, "", kAnyTensor, option,
                      /*is_homogeneous=*/false);
}

OpSchema &addOutput(OpSchema &schema, int index, const char *name,
                    OpSchema::FormalParameterOption option = OpSchema::Single) {
  return schema.Output(index, name, "", kAnyTensor, option,
                       /*is_homogeneous=*/false);
}

const onnx::InferenceFunction &getOpset17Inference(const char *op) {
  const OpSchema *schema =
      onnx::OpSchemaRegistry::Schema(op, kLibonnxNewestOpset, "");
  if (!schema)
    throw std::runtime_error(std::string("libonnx has no schema for ") + op);
  static std::vector<std::unique_ptr<onnx::InferenceFunction>> kept;
  kept.push_back(std::make_unique<onnx::InferenceFunction>(
      schema->GetTypeAndShapeInferenceFunction()));
  return *kept.back();
}

// The integer values of input `index` when inference knows them (an
// initializer or a Constant).
std::optional<std::vector<int64_t>> getConstantInts(InferenceContext &ctx,
                                                    size_t index) {
  if (index >= ctx.getNumInputs())
    return std::nullopt;
  const onnx::TensorProto *data = ctx.getInputData(index);
  if (!data)
    return std::nullopt;
  if (data->data_type() == onnx::TensorProto::INT64)
    return onnx::ParseData<int64_t>(data);
  if (data->data_type() == onnx::TensorProto::INT32) {
    std::vector<int32_t> narrow = onnx::ParseData<int32_t>(data);
    return std::vector<int64_t>(narrow.begin(), narrow.end());
  }
  return std::nullopt;
}

std::optional<std::vector<float>> getConstantFloats(InferenceContext &ctx,
                                                    size_t index) {
  if (index >= ctx.getNumInputs())
    return std::nullopt;
  const onnx::TensorProto *data = ctx.getInputData(index);
  if (!data || data->data_type() != onnx::TensorProto::FLOAT)
    return std::nullopt;
  return onnx::ParseData<float>(data);
}

bool hasInput(InferenceContext &ctx, size_t index) {
  return index < ctx.getNumInputs() && ctx.getInputType(index);
}

int64_t normalizeAxis(int64_t axis, int64_t rank, const char *what) {
  if (axis < -rank || axis >= rank)
    fail_shape_inference(what, " ", axis, " is out of range for rank ", rank);
  return axis < 0 ? axis + rank : axis;
}

// Same type and shape as input 0.
void inferLikeFirstInput(InferenceContext &ctx) {
  onnx::propagateShapeAndTypeFromFirstInput(ctx);
}

void inferBroadcast(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (onnx::hasNInputShapes(ctx, 2))
    onnx::bidirectionalBroadcastShapeInference(onnx::getInputShape(ctx, 0),
                                               onnx::getInputShape(ctx, 1),
                                               *onnx::getOutputShape(ctx, 0));
}

//===----------------------------------------------------------------------===//
// Reductions, Split, Pad
//===----------------------------------------------------------------------===//

void registerReductions() {
  const onnx::InferenceFunction &inferReduce = getOpset17Inference("ReduceSum");
  for (const char *op :
       {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax",
        "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSumSquare"}) {
    OpSchema schema = makeSchema(op);
    addInput(schema, 0, "data");
    addInput(schema, 1, "axes", OpSchema::Optional);
    addOutput(schema, 0, "reduced");
    schema.Attr("keepdims", "", AttributeProto::INT, int64_t(1));
    schema.Attr("noop_with_empty_axes", "", AttributeProto::INT, int64_t(0));
    schema.TypeAndShapeInferenceFunction(inferReduce);
    onnx::RegisterSchema(std::move(schema));
  }
}

// Split-18: `num_outputs` equal parts, the last smaller when the axis does
// not divide evenly; or the sizes of input `split`.
void inferSplit(InferenceContext &ctx) {
  for (size_t i = 0; i < ctx.getNumOutputs(); ++i)
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, i);
  if (!onnx::hasInputShape(ctx, 0))
    return;
  const TensorShapeProto &shape = onnx::getInputShape(ctx, 0);
  int64_t rank = shape.dim_size();
  int64_t axis =
      normalizeAxis(onnx::getAttribute(ctx, "axis", 0), rank, "axis");
  int64_t outputs = static_cast<int64_t>(ctx.getNumOutputs());
  const AttributeProto *numOutputs = ctx.getAttribute("num_outputs");
  bool hasSplit = hasInput(ctx, 1);
  if (numOutputs && hasSplit)
    fail_shape_inference("num_outputs and the split input are exclusive");
  if (numOutputs && numOutputs->i() != outputs)
    fail_shape_inference("num_outputs is ", numOutputs->i(),
                         " but the node has ", outputs, " outputs");
  if (!shape.dim(axis).has_dim_value())
    return;
  int64_t size = shape.dim(axis).dim_value();
  std::vector<int64_t> sizes;
  if (hasSplit) {
    auto split = getConstantInts(ctx, 1);
    if (!split)
      return;
    sizes = *split;
    int64_t total = 0;
    for (int64_t part : sizes) {
      if (part < 0)
        fail_shape_inference("split has a negative size");
      total += part;
    }
    if (static_cast<int64_t>(sizes.size()) != outputs || total != size)
      fail_shape_inference("split sizes do not add up to the axis (", size,
                           ") in ", outputs, " parts");
  } else {
    int64_t part = (size + outputs - 1) / outputs;
    for (int64_t i = 0; i < outputs; ++i)
      sizes.push_back(std::max<int64_t>(0, std::min(part, size - part * i)));
    if (part * (outputs - 1) >= size && size != 0)
      fail_shape_inference("the axis (", size, ") cannot be split into ",
                           outputs, " parts");
  }
  for (int64_t i = 0; i < outputs; ++i) {
    TensorShapeProto *out = onnx::getOutputShape(ctx, i);
    *out = shape;
    out->mutable_dim(axis)->clear_dim_param();
    out->mutable_dim(axis)->set_dim_value(sizes[i]);
  }
}

void registerSplit() {
  OpSchema schema = makeSchema("Split");
  addInput(schema, 0, "input");
  addInput(schema, 1, "split", OpSchema::Optional);
  addOutput(schema, 0, "outputs", OpSchema::Variadic);
  schema.Attr("axis", "", AttributeProto::INT, int64_t(0));
  schema.Attr("num_outputs", "", AttributeProto::INT, /*required=*/false);
  schema.TypeAndShapeInferenceFunction(inferSplit);
  onnx::RegisterSchema(std::move(schema));
}

// Pad-18: `pads` for the dims `axes` names (all by default).
void inferPad(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0))
    return;
  const TensorShapeProto &shape = onnx::getInputShape(ctx, 0);
  int64_t rank = shape.dim_size();
  std::vector<int64_t> axes;
  if (hasInput(ctx, 3)) {
    auto constant = getConstantInts(ctx, 3);
    if (!constant) {
      // Rank only.
      TensorShapeProto *out = onnx::getOutputShape(ctx, 0);
      for (int64_t i = 0; i < rank; ++i)
        out->add_dim();
      return;
    }
    for (int64_t axis : *constant)
      axes.push_back(normalizeAxis(axis, rank, "axis"));
  } else {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  TensorShapeProto *out = onnx::getOutputShape(ctx, 0);
  auto pads = getConstantInts(ctx, 1);
  if (!pads) {
    for (int64_t i = 0; i < rank; ++i)
      out->add_dim();
    return;
  }
  int64_t n = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(pads->size()) != 2 * n)
    fail_shape_inference("pads has ", pads->size(), " values for ", n,
                         " axes (2 per axis)");
  std::vector<int64_t> total(rank, 0);
  for (int64_t i = 0; i < n; ++i)
    total[axes[i]] += (*pads)[i] + (*pads)[i + n];
  for (int64_t d = 0; d < rank; ++d) {
    auto *dim = out->add_dim();
    if (shape.dim(d).has_dim_value()) {
      int64_t size = shape.dim(d).dim_value() + total[d];
      if (size < 0)
        fail_shape_inference("pads make dim ", d, " negative");
      dim->set_dim_value(size);
    } else if (total[d] == 0) {
      *dim = shape.dim(d);
    }
  }
}

void registerPad() {
  OpSchema schema = makeSchema("Pad");
  addInput(schema, 0, "data");
  addInput(schema, 1, "pads");
  addInput(schema, 2, "constant_value", OpSchema::Optional);
  addInput(schema, 3, "axes", OpSchema::Optional);
  addOutput(schema, 0, "output");
  schema.Attr("mode", "", AttributeProto::STRING, std::string("constant"));
  schema.TypeAndShapeInferenceFunction(inferPad);
  onnx::RegisterSchema(std::move(schema));
}

//===----------------------------------------------------------------------===//
// Resize
//===----------------------------------------------------------------------===//

// Resize-18/19: `scales` or `sizes` for the dims `axes` names;
// keep_aspect_ratio_policy scales `sizes` by one factor.
void inferResize(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasInputShape(ctx, 0))
    return;
  const TensorShapeProto &shape = onnx::getInputShape(ctx, 0);
  int64_t rank = shape.dim_size();
  std::vector<int64_t> axes;
  if (!onnx::getRepeatedAttribute(ctx, "axes", axes))
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  for (int64_t &axis : axes)
    axis = normalizeAxis(axis, rank, "axis");
  std::string policy =
      onnx::getAttribute(ctx, "keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    fail_shape_inference("unknown keep_aspect_ratio_policy '", policy, "'");
  // Resized dims stay unknown unless constant scales or sizes give them.
  TensorShapeProto *out = onnx::getOutputShape(ctx, 0);
  out->clear_dim();
  for (int64_t d = 0; d < rank; ++d) {
    auto *dim = out->add_dim();
    if (std::find(axes.begin(), axes.end(), d) == axes.end())
      *dim = shape.dim(d);
  }
  auto known = [&](int64_t axis) { return shape.dim(axis).has_dim_value(); };
  bool hasScales = hasInput(ctx, 2) && ctx.getInputData(2) &&
                   ctx.getInputData(2)->dims_size() == 1 &&
                   ctx.getInputData(2)->dims(0) > 0;
  if (auto sizes = getConstantInts(ctx, 3); sizes && !hasScales) {
    if (sizes->size() != axes.size())
      fail_shape_inference("sizes has ", sizes->size(), " values for ",
                           axes.size(), " axes");
    if (policy == "stretch") {
      for (size_t i = 0; i < axes.size(); ++i)
        out->mutable_dim(axes[i])->set_dim_value((*sizes)[i]);
      return;
    }
    double scale = policy == "not_larger" ? INFINITY : 0.0;
    for (size_t i = 0; i < axes.size(); ++i) {
      if (!known(axes[i]))
        return;
      double ratio = static_cast<double>((*sizes)[i]) /
                     static_cast<double>(shape.dim(axes[i]).dim_value());
      scale = policy == "not_larger" ? std::min(scale, ratio)
                                     : std::max(scale, ratio);
    }
    for (int64_t axis : axes)
      out->mutable_dim(axis)->set_dim_value(static_cast<int64_t>(std::floor(
          scale * static_cast<double>(shape.dim(axis).dim_value()) + 0.5)));
    return;
  }
  // With tf_crop_and_resize the roi scales the output too: left unknown.
  auto scales = getConstantFloats(ctx, 2);
  if (!scales || onnx::getAttribute(ctx, "coordinate_transformation_mode",
                                    "half_pixel") == "tf_crop_and_resize")
    return;
  if (scales->size() != axes.size())
    fail_shape_inference("scales has ", scales->size(), " values for ",
                         axes.size(), " axes");
  for (size_t i = 0; i < axes.size(); ++i) {
    if ((*scales)[i] <= 0)
      fail_shape_inference("scales must be positive");
    if (known(axes[i]))
      out->mutable_dim(axes[i])->set_dim_value(static_cast<int64_t>(
          std::floor(static_cast<double>(shape.dim(axes[i]).dim_value()) *
                     static_cast<double>((*scales)[i]))));
  }
}

void registerResize() {
  OpSchema schema = makeSchema("Resize");
  addInput(schema, 0, "X");
  addInput(schema, 1, "roi", OpSchema::Optional);
  addInput(schema, 2, "scales", OpSchema::Optional);
  addInput(schema, 3, "sizes", OpSchema::Optional);
  addOutput(schema, 0, "Y");
  schema.Attr("antialias", "", AttributeProto::INT, int64_t(0));
  schema.Attr("axes", "", AttributeProto::INTS, /*required=*/false);
  schema.Attr("coordinate_transformation_mode", "", AttributeProto::STRING,
              std::string("half_pixel"));
  schema.Attr("cubic_coeff_a", "", AttributeProto::FLOAT, -0.75f);
  schema.Attr("exclude_outside", "", AttributeProto::INT, int64_t(0));
  schema.Attr("extrapolation_value", "", AttributeProto::FLOAT, 0.0f);
  schema.Attr("keep_aspect_ratio_policy", "", AttributeProto::STRING,
              std::string("stretch"));
  schema.Attr("mode", "", AttributeProto::STRING, std::string("nearest"));
  schema.Attr("nearest_mode", "", AttributeProto::STRING,
              std::string("round_prefer_floor"));
  schema.TypeAndShapeInferenceFunction(inferResize);
  onnx::RegisterSchema(std::move(schema));
}

//===----------------------------------------------------------------------===//
// Pools, casts, quantization
//===----------------------------------------------------------------------===//

void registerPools() {
  // MaxPool-12 infers from the same window attributes (kernel_shape,
  // strides, pads, auto_pad, dilations, ceil_mode).
  const onnx::InferenceFunction &inferPool = getOpset17Inference("MaxPool");
  for (const char *op : {"AveragePool", "LpPool"}) {
    OpSchema schema = makeSchema(op);
    addInput(schema, 0, "X");
    addOutput(schema, 0, "Y");
    schema.Attr("auto_pad", "", AttributeProto::STRING, std::string("NOTSET"));
    schema.Attr("ceil_mode", "", AttributeProto::INT, int64_t(0));
    schema.Attr("dilations", "", AttributeProto::INTS, /*required=*/false);
    schema.Attr("kernel_shape", "", AttributeProto::INTS, /*required=*/true);
    schema.Attr("pads", "", AttributeProto::INTS, /*required=*/false);
    schema.Attr("strides", "", AttributeProto::INTS, /*required=*/false);
    if (std::string(op) == "AveragePool")
      schema.Attr("count_include_pad", "", AttributeProto::INT, int64_t(0));
    else
      schema.Attr("p", "", AttributeProto::INT, int64_t(2));
    schema.TypeAndShapeInferenceFunction(inferPool);
    onnx::RegisterSchema(std::move(schema));
  }
}

void registerCasts() {
  for (const char *op : {"Cast", "CastLike"}) {
    OpSchema schema = makeSchema(op);
    addInput(schema, 0, "input");
    bool isCast = std::string(op) == "Cast";
    if (isCast)
      schema.Attr("to", "", AttributeProto::INT, /*required=*/true);
    else
      addInput(schema, 1, "target_type");
    addOutput(schema, 0, "output");
    schema.Attr("saturate", "", AttributeProto::INT, int64_t(1));
    schema.Attr("round_mode", "", AttributeProto::STRING, std::string("up"));
    schema.TypeAndShapeInferenceFunction(
        getOpset17Inference(isCast ? "Cast" : "CastLike"));
    onnx::RegisterSchema(std::move(schema));
  }
}

// QuantizeLinear-23: the zero point's type, else output_dtype, else uint8.
void inferQuantize(InferenceContext &ctx) {
  if (hasInput(ctx, 2)) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 2, 0);
  } else {
    int64_t dtype = onnx::getAttribute(ctx, "output_dtype", 0);
    onnx::updateOutputElemType(
        ctx, 0, dtype ? static_cast<int32_t>(dtype) : onnx::TensorProto::UINT8);
  }
  if (onnx::hasInputShape(ctx, 0))
    onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

// DequantizeLinear-23: output_dtype, else the scale's type.
void inferDequantize(InferenceContext &ctx) {
  int64_t dtype = onnx::getAttribute(ctx, "output_dtype", 0);
  if (dtype)
    onnx::updateOutputElemType(ctx, 0, static_cast<int32_t>(dtype));
  else
    onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
  if (onnx::hasInputShape(ctx, 0))
    onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
}

void registerQuantization() {
  OpSchema quantize = makeSchema("QuantizeLinear");
  addInput(quantize, 0, "x");
  addInput(quantize, 1, "y_scale");
  addInput(quantize, 2, "y_zero_point", OpSchema::Optional);
  addOutput(quantize, 0, "y");
  quantize.Attr("axis", "", AttributeProto::INT, int64_t(1));
  quantize.Attr("block_size", "", AttributeProto::INT, int64_t(0));
  quantize.Attr("output_dtype", "", AttributeProto::INT, int64_t(0));
  quantize.Attr("precision", "", AttributeProto::INT, int64_t(0));
  quantize.Attr("saturate", "", AttributeProto::INT, int64_t(1));
  quantize.TypeAndShapeInferenceFunction(inferQuantize);
  onnx::RegisterSchema(std::move(quantize));

  OpSchema dequantize = makeSchema("DequantizeLinear");
  addInput(dequantize, 0, "x");
  addInput(dequantize, 1, "x_scale");
  addInput(dequantize, 2, "x_zero_point", OpSchema::Optional);
  addOutput(dequantize, 0, "y");
  dequantize.Attr("axis", "", AttributeProto::INT, int64_t(1));
  dequantize.Attr("block_size", "", AttributeProto::INT, int64_t(0));
  dequantize.Attr("output_dtype", "", AttributeProto::INT, int64_t(0));
  dequantize.TypeAndShapeInferenceFunction(inferDequantize);
  onnx::RegisterSchema(std::move(dequantize));
}

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

// GridSample-20: X [N, C, D1..Dr], grid [N, O1..Or, r] -> [N, C, O1..Or].
void inferGridSample(InferenceContext &ctx) {
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
  if (!onnx::hasNInputShapes(ctx, 2))
    return;
  const TensorShapeProto &x = onnx::getInputShape(ctx, 0);
  const TensorShapeProto &grid = onnx::getInputShape(ctx, 1);
  if (x.dim_size() < 3 || grid.dim_size() != x.dim_size())
    fail_shape_inference("X must be [N, C, D1, ...] and grid [N, O1, ..., r] "
                         "of the same rank");
  TensorShapeProto *out = onnx::getOutputShape(ctx, 0);
  *out->add_dim() = x.dim(0);
  *out->add_dim() = x.dim(1);
  for (int i = 1; i + 1 < grid.dim_size(); ++i)
    *out->add_dim() = grid.dim(i);
}

// BitCast-26: the same shape, element type `to`.
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
  std::vector<int64_t> axes;
  if (!onnx::getRepeatedAttribute(ctx, "axes", axes))
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  for (int64_t &axis : axes)
    axis = normalizeAxis(axis, rank, "axis");
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

void registerOthers() {
  OpSchema gridSample = makeSchema("GridSample");
  addInput(gridSample, 0, "X");
  addInput(gridSample, 1, "grid");
  addOutput(gridSample, 0, "Y");
  gridSample.Attr("align_corners", "", AttributeProto::INT, int64_t(0));
  gridSample.Attr("mode", "", AttributeProto::STRING, std::string("linear"));
  gridSample.Attr("padding_mode", "", AttributeProto::STRING,
                  std::string("zeros"));
  gridSample.TypeAndShapeInferenceFunction(inferGridSample);
  onnx::RegisterSchema(std::move(gridSample));

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

  OpSchema bitCast = makeSchema("BitCast");
  addInput(bitCast, 0, "input");
  addOutput(bitCast, 0, "output");
  bitCast.Attr("to", "", AttributeProto::INT, /*required=*/true);
  bitCast.TypeAndShapeInferenceFunction(inferBitCast);
  onnx::RegisterSchema(std::move(bitCast));

  // Range-27 adds stash_type (the precision of the running value).
  OpSchema range = makeSchema("Range");
  addInput(range, 0, "start");
  addInput(range, 1, "limit");
  addInput(range, 2, "delta");
  addOutput(range, 0, "output");
  range.Attr("stash_type", "", AttributeProto::INT, int64_t(1));
  range.TypeAndShapeInferenceFunction(getOpset17Inference("Range"));
  onnx::RegisterSchema(std::move(range));
}

std::once_flag registered;

} // namespace

void registerAdaptedOpSchemas() {
  std::call_once(registered, [] {
    onnx::OpSchemaRegistry::DomainToVersionRange::Instance().AddDomainToVersion(
        kAdaptedDomain, 1, 1);
    registerReductions();
    registerSplit();
    registerPad();
    registerResize();
    registerPools();
    registerCasts();
    registerQuantization();
    registerElementwise();
    registerOthers();
  });
}

} // namespace strata::onnx_importer
