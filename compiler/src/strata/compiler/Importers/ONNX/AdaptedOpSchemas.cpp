//===- AdaptedOpSchemas.cpp - schemas of ONNX's post-opset-17 forms -------===//
//
// One libonnx schema per operator whose form changed after opset 17, in the
// `strata.onnx` domain (OpsetAdapters.h): the inputs and attributes of its
// newest form (the older ones after 17 are subsets with the same defaults)
// and a type and shape inference. Where an opset-17 operator already infers
// exactly these shapes (ReduceSum-13 for the other reductions with an `axes`
// input, MaxPool-12 for the pools with dilations), its inference is reused.
// Operators new after opset 17 are in NewOpSchemas.cpp.
//
// Compiled with exceptions: inference reports errors by throwing.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/AdaptedOpSchemas.h"

#include "strata/compiler/Importers/ONNX/OpsetAdapters.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>

#include "onnx/defs/tensor_proto_util.h"

namespace strata::onnx_importer {
namespace adapted_schemas {

using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorShapeProto;

OpSchema makeSchema(const char *name) {
  OpSchema schema;
  schema.SetName(name).SetDomain(kAdaptedDomain).SinceVersion(1);
  schema.TypeConstraint(kAnyTensor, OpSchema::all_tensor_types_with_bfloat(),
                        "any tensor");
  return schema;
}

OpSchema &addInput(OpSchema &schema, int index, const char *name,
                   OpSchema::FormalParameterOption option) {
  return schema.Input(index, name, "", kAnyTensor, option,
                      /*is_homogeneous=*/false);
}

OpSchema &addOutput(OpSchema &schema, int index, const char *name,
                    OpSchema::FormalParameterOption option) {
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

std::vector<int64_t> getAxesAttribute(InferenceContext &ctx, int64_t rank) {
  std::vector<int64_t> axes;
  if (!onnx::getRepeatedAttribute(ctx, "axes", axes))
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  for (int64_t &axis : axes)
    axis = normalizeAxis(axis, rank, "axis");
  return axes;
}

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

} // namespace adapted_schemas

namespace {

using namespace adapted_schemas;
using onnx::AttributeProto;
using onnx::InferenceContext;
using onnx::OpSchema;
using onnx::TensorShapeProto;

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
  std::vector<int64_t> axes = getAxesAttribute(ctx, rank);
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

void registerGridSampleAndRange() {
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
    registerGridSampleAndRange();
    adapted_schemas::registerNewOpSchemas();
  });
}

} // namespace strata::onnx_importer
