#include "onnx_graph_mutator.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "mutation_util.h"
#include "onnx/onnx_pb.h"

namespace strata::fuzz {
namespace {

// The op types the importer lowers (the tables its add*Lowerings functions
// fill in compiler/src/strata/compiler/Importers/ONNX/), then a few it does
// not, so that unsupported ops are diagnosed too.
constexpr const char *kOpTypes[] = {
    "Abs", "Acos", "Acosh", "Add", "And", "ArgMax", "ArgMin", "Asin", "Asinh",
    "Atan", "Atanh", "AveragePool", "BatchNormalization", "BitShift",
    "BitwiseAnd", "BitwiseNot", "BitwiseOr", "BitwiseXor", "BlackmanWindow",
    "Cast", "CastLike", "Ceil", "Celu", "Clip", "Compress", "Concat",
    "Constant", "ConstantOfShape", "Conv", "ConvInteger", "ConvTranspose",
    "Cos", "Cosh", "CumSum", "DFT", "DepthToSpace", "DequantizeLinear", "Det",
    "Div", "Dropout", "DynamicQuantizeLinear", "Einsum", "Elu", "Equal", "Erf",
    "Exp", "Expand", "EyeLike", "Flatten", "Floor", "GRU", "Gather",
    "GatherElements", "GatherND", "Gemm", "GlobalAveragePool", "GlobalMaxPool",
    "Greater", "GreaterOrEqual", "GridSample", "HammingWindow", "HannWindow",
    "HardSigmoid", "HardSwish", "Hardmax", "Identity", "If",
    "InstanceNormalization", "IsInf", "IsNaN", "LRN", "LSTM",
    "LayerNormalization", "LeakyRelu", "Less", "LessOrEqual", "Log",
    "LogSoftmax", "Loop", "MatMul", "MatMulInteger", "Max", "MaxPool",
    "MaxUnpool", "Mean", "MeanVarianceNormalization", "MelWeightMatrix", "Min",
    "Mish", "Mod", "Mul", "Neg", "NegativeLogLikelihoodLoss",
    "NonMaxSuppression", "NonZero", "Not", "OneHot", "Or", "PRelu", "Pad",
    "Pow", "QLinearConv", "QLinearMatMul", "QuantizeLinear", "RNN", "Range",
    "Reciprocal", "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
    "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceSum",
    "ReduceSumSquare", "Relu", "Reshape", "Resize", "ReverseSequence",
    "RoiAlign", "Round", "STFT", "Scan", "Scatter", "ScatterElements",
    "ScatterND", "Selu", "Shape", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh",
    "Size", "Slice", "Softmax", "SoftmaxCrossEntropyLoss", "Softplus",
    "Softsign", "SpaceToDepth", "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tan",
    "Tanh", "TfIdfVectorizer", "ThresholdedRelu", "Tile", "TopK", "Transpose",
    "Trilu", "Unique", "Unsqueeze", "Where", "Xor",
    // Not lowered.
    "Upsample", "SequenceConstruct", "Optional", "StringNormalizer",
    "RandomNormal", "Bernoulli", "NoSuchOp", ""};

// Attribute names the lowerings read, for attributes added to any node.
constexpr const char *kAttributeNames[] = {"axis",
                                           "axes",
                                           "perm",
                                           "pads",
                                           "strides",
                                           "kernel_shape",
                                           "dilations",
                                           "group",
                                           "keepdims",
                                           "alpha",
                                           "beta",
                                           "gamma",
                                           "transA",
                                           "transB",
                                           "epsilon",
                                           "mode",
                                           "to",
                                           "direction",
                                           "noop_with_empty_axes",
                                           "select_last_index",
                                           "blocksize",
                                           "k",
                                           "largest",
                                           "sorted",
                                           "split",
                                           "num_outputs",
                                           "ceil_mode",
                                           "auto_pad",
                                           "output_padding",
                                           "output_shape",
                                           "value",
                                           "value_int",
                                           "value_ints",
                                           "value_float",
                                           "batch_dims",
                                           "exclusive",
                                           "reverse",
                                           "upper",
                                           "num_scan_inputs",
                                           "scan_input_axes",
                                           "scan_output_axes",
                                           "scan_input_directions",
                                           "hidden_size",
                                           "layout",
                                           "center_point_box",
                                           "storage_order",
                                           "count_include_pad",
                                           "p",
                                           "size",
                                           "bias",
                                           "lambd",
                                           "fmod",
                                           "reduction",
                                           "ignore_index",
                                           "output_height",
                                           "output_width",
                                           "sampling_ratio",
                                           "spatial_scale",
                                           "coordinate_transformation_mode",
                                           "cubic_coeff_a",
                                           "exclude_outside",
                                           "extrapolation_value",
                                           "nearest_mode",
                                           "allowzero",
                                           "equation",
                                           "onesided",
                                           "inverse",
                                           "periodic",
                                           "output_datatype",
                                           "time_axis",
                                           "batch_axis",
                                           "linear_before_reset",
                                           "activations",
                                           "clip",
                                           "input_forget",
                                           "align_corners",
                                           "padding_mode",
                                           "min_gram_length",
                                           "max_gram_length",
                                           "max_skip_count",
                                           "ngram_counts",
                                           "ngram_indexes",
                                           "pool_int64s"};

constexpr const char *kAttributeStrings[] = {"",
                                             "NOTSET",
                                             "SAME_UPPER",
                                             "SAME_LOWER",
                                             "VALID",
                                             "constant",
                                             "reflect",
                                             "edge",
                                             "wrap",
                                             "linear",
                                             "nearest",
                                             "cubic",
                                             "LEFT",
                                             "RIGHT",
                                             "forward",
                                             "reverse",
                                             "bidirectional",
                                             "DCR",
                                             "CRD",
                                             "ij,jk->ik",
                                             "...i,...i->...",
                                             "i,i",
                                             "->",
                                             "half_pixel",
                                             "asymmetric",
                                             "none",
                                             "mean",
                                             "sum",
                                             "TF",
                                             "IDF",
                                             "TFIDF",
                                             "Relu",
                                             "Tanh",
                                             "avg",
                                             "max"};

// TensorProto data types: the valid ones of libonnx 1.12 (1..16), then
// numbers it does not know.
constexpr int32_t kElementTypes[] = {
    1,  2,  3, 4,  5,  6,  7,  8,  9,  10, 11,  12, 13,      14,
    15, 16, 0, 17, 18, 19, 20, 21, 22, 23, 100, -1, INT_MAX, INT_MIN};

// Domain of the functions the mutator adds.
constexpr const char *kFunctionDomain = "strata.fuzz";

// Wrappers stop nesting here, well inside protobuf's parse recursion limit.
constexpr int kMaxGraphDepth = 8;

struct GraphRef {
  onnx::GraphProto *graph;
  int depth;
};

// Everything a mutation may touch, found once per mutation. The pointers go
// stale once a mutation adds to a repeated field, so one mutator makes one
// successful change.
struct ModelParts {
  std::vector<GraphRef> graphs; // The main graph first.
  std::vector<onnx::NodeProto *> nodes;
  std::vector<onnx::AttributeProto *> attributes;
  std::vector<onnx::TensorProto *> tensors;
  std::vector<onnx::ValueInfoProto *> values;
  std::vector<std::string> names;
};

void CollectGraph(onnx::GraphProto *graph, int depth, ModelParts &parts);

void CollectNode(onnx::NodeProto *node, int depth, ModelParts &parts) {
  parts.nodes.push_back(node);
  for (const std::string &output : node->output())
    parts.names.push_back(output);
  for (onnx::AttributeProto &attribute : *node->mutable_attribute()) {
    parts.attributes.push_back(&attribute);
    if (attribute.has_t())
      parts.tensors.push_back(attribute.mutable_t());
    for (onnx::TensorProto &tensor : *attribute.mutable_tensors())
      parts.tensors.push_back(&tensor);
    if (attribute.has_g())
      CollectGraph(attribute.mutable_g(), depth + 1, parts);
    for (onnx::GraphProto &graph : *attribute.mutable_graphs())
      CollectGraph(&graph, depth + 1, parts);
  }
}

// Recursion is bounded by protobuf's nesting limit on what it parses.
void CollectGraph(onnx::GraphProto *graph, int depth, ModelParts &parts) {
  parts.graphs.push_back({graph, depth});
  for (auto *values : {graph->mutable_input(), graph->mutable_output(),
                       graph->mutable_value_info()})
    for (onnx::ValueInfoProto &value : *values) {
      parts.values.push_back(&value);
      parts.names.push_back(value.name());
    }
  for (onnx::TensorProto &tensor : *graph->mutable_initializer()) {
    parts.tensors.push_back(&tensor);
    parts.names.push_back(tensor.name());
  }
  for (onnx::NodeProto &node : *graph->mutable_node())
    CollectNode(&node, depth, parts);
}

ModelParts CollectModel(onnx::ModelProto &model) {
  ModelParts parts;
  if (model.has_graph())
    CollectGraph(model.mutable_graph(), 0, parts);
  for (onnx::FunctionProto &function : *model.mutable_functions()) {
    for (const std::string &input : function.input())
      parts.names.push_back(input);
    for (onnx::NodeProto &node : *function.mutable_node())
      CollectNode(&node, 1, parts);
  }
  return parts;
}

template <typename T, typename Predicate>
std::vector<T *> Filter(const std::vector<T *> &all, Predicate predicate) {
  std::vector<T *> result;
  for (T *item : all)
    if (predicate(*item))
      result.push_back(item);
  return result;
}

// Moves the last element of `field` to `position`.
template <typename Field> void MoveLastTo(Field *field, int position) {
  for (int i = field->size() - 1; i > position; --i)
    field->SwapElements(i, i - 1);
}

void SetScalarType(onnx::ValueInfoProto *value, int32_t element_type) {
  auto *tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(element_type);
  tensor->mutable_shape(); // Present with no dims: a scalar.
}

onnx::TensorProto *AddScalarInitializer(onnx::GraphProto *graph,
                                        const std::string &name,
                                        int32_t element_type, int64_t value) {
  onnx::TensorProto *tensor = graph->add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(element_type);
  if (element_type == onnx::TensorProto::INT64)
    tensor->add_int64_data(value);
  else
    tensor->add_int32_data(int32_t(value));
  return tensor;
}

void RenameInGraph(onnx::GraphProto *graph,
                   const std::map<std::string, std::string> &renamed);

void RenameInNode(onnx::NodeProto *node,
                  const std::map<std::string, std::string> &renamed) {
  for (auto *names : {node->mutable_input(), node->mutable_output()})
    for (std::string &name : *names) {
      auto found = renamed.find(name);
      if (found != renamed.end())
        name = found->second;
    }
  // Nested subgraphs may read the renamed values from their outer scope.
  for (onnx::AttributeProto &attribute : *node->mutable_attribute()) {
    if (attribute.has_g())
      RenameInGraph(attribute.mutable_g(), renamed);
    for (onnx::GraphProto &graph : *attribute.mutable_graphs())
      RenameInGraph(&graph, renamed);
  }
}

void RenameInGraph(onnx::GraphProto *graph,
                   const std::map<std::string, std::string> &renamed) {
  for (onnx::NodeProto &node : *graph->mutable_node())
    RenameInNode(&node, renamed);
  for (auto *values : {graph->mutable_output(), graph->mutable_value_info()})
    for (onnx::ValueInfoProto &value : *values) {
      auto found = renamed.find(value.name());
      if (found != renamed.end())
        value.set_name(found->second);
    }
}

// A copy of `graph`'s nodes, outputs and value infos as a subgraph whose
// own values end in `suffix` (outer names stay: it reads the graph's inputs
// and initializers from the enclosing scope).
onnx::GraphProto CopyAsSubgraph(const onnx::GraphProto &graph,
                                const std::string &suffix) {
  std::map<std::string, std::string> renamed;
  for (const onnx::NodeProto &node : graph.node())
    for (const std::string &output : node.output())
      if (!output.empty())
        renamed[output] = output + suffix;
  onnx::GraphProto subgraph;
  subgraph.set_name("g" + suffix);
  *subgraph.mutable_node() = graph.node();
  *subgraph.mutable_output() = graph.output();
  *subgraph.mutable_value_info() = graph.value_info();
  RenameInGraph(&subgraph, renamed);
  return subgraph;
}

class GraphMutator {
public:
  GraphMutator(onnx::ModelProto &model, FuzzRandom &random)
      : model_(model), random_(random), parts_(CollectModel(model)) {}

  // Applies one mutation of a random kind; false when that kind found
  // nothing to change (the model is then unchanged).
  bool Mutate() {
    switch (random_.Below(17)) {
    case 0:
      return MutateIntAttribute();
    case 1:
      return MutateIntsAttribute();
    case 2:
      return MutateFloatAttribute();
    case 3:
      return AddRetypeOrDeleteAttribute();
    case 4:
    case 5:
      return MutateDims();
    case 6:
      return MutateElementType();
    case 7:
    case 8:
      return MutateTensorData();
    case 9:
      return SwapOpType();
    case 10:
      return Rewire();
    case 11:
      return CopyDeleteOrMoveNode();
    case 12:
      return MutateOpset();
    case 13:
      return WrapInIf();
    case 14:
      return WrapInLoop();
    case 15:
      return AddFunction();
    default:
      return RemoveGraphValue();
    }
  }

private:
  std::string FreshSuffix() {
    return "_f" + std::to_string(random_.Below(1000000));
  }

  bool MutateIntAttribute() {
    auto candidates = Filter(parts_.attributes, [](const auto &attribute) {
      return attribute.type() == onnx::AttributeProto::INT || attribute.has_i();
    });
    if (candidates.empty())
      return false;
    onnx::AttributeProto *attribute = random_.Pick(candidates);
    attribute->set_i(random_.HostileInt(attribute->i()));
    return true;
  }

  bool MutateIntsAttribute() {
    auto candidates = Filter(parts_.attributes, [](const auto &attribute) {
      return attribute.type() == onnx::AttributeProto::INTS ||
             attribute.ints_size() > 0;
    });
    if (candidates.empty())
      return false;
    auto *ints = random_.Pick(candidates)->mutable_ints();
    int size = ints->size();
    switch (random_.Below(4)) {
    case 0:
      if (size == 0)
        ints->Add(random_.HostileInt(0));
      else {
        int index = int(random_.Below(size));
        ints->Set(index, random_.HostileInt(ints->Get(index)));
      }
      return true;
    case 1:
      ints->Add(
          random_.HostileInt(size ? ints->Get(int(random_.Below(size))) : 0));
      MoveLastTo(ints, int(random_.Below(size + 1)));
      return true;
    case 2:
      if (size == 0)
        return false;
      ints->erase(ints->begin() + random_.Below(size));
      return true;
    default: {
      // Long lists: perms, axes or pads for ranks far beyond any tensor.
      static constexpr int kLengths[] = {0, 1, 7, 9, 64, 300};
      int length = random_.Pick(kLengths);
      bool ascending = random_.OneIn(2);
      ints->Clear();
      for (int i = 0; i < length; ++i)
        ints->Add(ascending ? i : 1);
      return true;
    }
    }
  }

  bool MutateFloatAttribute() {
    auto candidates = Filter(parts_.attributes, [](const auto &attribute) {
      return attribute.type() == onnx::AttributeProto::FLOAT ||
             attribute.type() == onnx::AttributeProto::FLOATS ||
             attribute.has_f() || attribute.floats_size() > 0;
    });
    if (candidates.empty())
      return false;
    onnx::AttributeProto *attribute = random_.Pick(candidates);
    if (attribute->floats_size() > 0 && random_.OneIn(2)) {
      int index = int(random_.Below(attribute->floats_size()));
      attribute->set_floats(
          index, float(random_.HostileFloat(attribute->floats(index))));
    } else {
      attribute->set_f(float(random_.HostileFloat(attribute->f())));
    }
    return true;
  }

  bool AddRetypeOrDeleteAttribute() {
    if (parts_.nodes.empty())
      return false;
    onnx::NodeProto *node = random_.Pick(parts_.nodes);
    int count = node->attribute_size();
    switch (random_.Below(4)) {
    case 0:
      if (count == 0)
        return false;
      node->mutable_attribute()->DeleteSubrange(int(random_.Below(count)), 1);
      return true;
    case 1: {
      // A type that contradicts the payload, or no valid type at all.
      if (count == 0)
        return false;
      // Only valid enum values: the generated setter asserts on others.
      static constexpr int kTypes[] = {0, 1, 2,  3,  4,  5,  6, 7,
                                       8, 9, 10, 11, 12, 13, 14};
      onnx::AttributeProto *attribute =
          node->mutable_attribute(int(random_.Below(count)));
      attribute->set_type(static_cast<onnx::AttributeProto::AttributeType>(
          random_.Pick(kTypes)));
      return true;
    }
    default: {
      onnx::AttributeProto *attribute = node->add_attribute();
      attribute->set_name(random_.Pick(kAttributeNames));
      switch (random_.Below(5)) {
      case 0:
        attribute->set_type(onnx::AttributeProto::INT);
        attribute->set_i(random_.HostileInt(1));
        break;
      case 1: {
        attribute->set_type(onnx::AttributeProto::INTS);
        size_t length = random_.Below(9);
        for (size_t i = 0; i < length; ++i)
          attribute->add_ints(random_.OneIn(2) ? int64_t(i)
                                               : random_.HostileInt(1));
        break;
      }
      case 2:
        attribute->set_type(onnx::AttributeProto::FLOAT);
        attribute->set_f(float(random_.HostileFloat(1.0)));
        break;
      case 3:
        attribute->set_type(onnx::AttributeProto::FLOATS);
        attribute->add_floats(float(random_.HostileFloat(1.0)));
        break;
      default:
        attribute->set_type(onnx::AttributeProto::STRING);
        attribute->set_s(random_.Pick(kAttributeStrings));
        break;
      }
      return true;
    }
    }
  }

  template <typename Dims, typename SetDim>
  void ChangeDimCount(Dims *dims, SetDim set_dim) {
    int size = dims->size();
    switch (random_.Below(3)) {
    case 0: // Add one.
      dims->Add();
      set_dim(dims->size() - 1, random_.OneIn(2) ? 1 : random_.HostileInt(1));
      MoveLastTo(dims, int(random_.Below(size + 1)));
      break;
    case 1: // Remove one.
      if (size > 0)
        dims->erase(dims->begin() + random_.Below(size));
      break;
    default: { // Ranks far beyond any tensor, mostly of size 1.
      static constexpr int kRanks[] = {0, 7, 9, 33, 65, 129, 300};
      int rank = random_.Pick(kRanks);
      dims->Clear();
      for (int i = 0; i < rank; ++i) {
        dims->Add();
        set_dim(i, random_.OneIn(16) ? random_.HostileInt(1) : 1);
      }
      break;
    }
    }
  }

  bool MutateDims() {
    if (random_.OneIn(2) && !parts_.tensors.empty()) {
      auto *dims = random_.Pick(parts_.tensors)->mutable_dims();
      if (dims->empty() || random_.OneIn(3)) {
        ChangeDimCount(dims,
                       [&](int i, int64_t value) { dims->Set(i, value); });
      } else {
        int index = int(random_.Below(dims->size()));
        dims->Set(index, random_.HostileInt(dims->Get(index)));
      }
      return true;
    }
    if (parts_.values.empty())
      return false;
    auto *shape = random_.Pick(parts_.values)
                      ->mutable_type()
                      ->mutable_tensor_type()
                      ->mutable_shape();
    auto *dims = shape->mutable_dim();
    if (dims->empty() || random_.OneIn(3)) {
      ChangeDimCount(dims, [&](int i, int64_t value) {
        dims->Mutable(i)->set_dim_value(value);
      });
      return true;
    }
    auto *dim = dims->Mutable(int(random_.Below(dims->size())));
    switch (random_.Below(4)) {
    case 0:
      dim->set_dim_param(random_.OneIn(2) ? "N" : "");
      break;
    case 1:
      dim->Clear(); // Neither a value nor a parameter.
      break;
    default:
      dim->set_dim_value(random_.HostileInt(dim->dim_value()));
      break;
    }
    if (random_.OneIn(8))
      shape->Clear(); // Present but empty: a scalar.
    return true;
  }

  bool MutateElementType() {
    int32_t type = random_.Pick(kElementTypes);
    if (random_.OneIn(2) && !parts_.tensors.empty()) {
      random_.Pick(parts_.tensors)->set_data_type(type);
      return true;
    }
    if (parts_.values.empty())
      return false;
    random_.Pick(parts_.values)
        ->mutable_type()
        ->mutable_tensor_type()
        ->set_elem_type(type);
    return true;
  }

  // Bytes per element of raw_data, 1 for types it does not know.
  static size_t ElementBytes(int32_t type) {
    switch (type) {
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::COMPLEX64:
      return 8;
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::FLOAT:
      return 4;
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      return 2;
    default:
      return 1;
    }
  }

  bool MutateTensorData() {
    if (parts_.tensors.empty())
      return false;
    onnx::TensorProto *tensor = random_.Pick(parts_.tensors);
    // Which representations hold data; an empty tensor gets int64s.
    enum Field { kInt64, kInt32, kUint64, kFloat, kDouble, kRaw };
    std::vector<Field> fields;
    if (tensor->int64_data_size())
      fields.push_back(kInt64);
    if (tensor->int32_data_size())
      fields.push_back(kInt32);
    if (tensor->uint64_data_size())
      fields.push_back(kUint64);
    if (tensor->float_data_size())
      fields.push_back(kFloat);
    if (tensor->double_data_size())
      fields.push_back(kDouble);
    if (tensor->has_raw_data())
      fields.push_back(kRaw);
    if (fields.empty()) {
      tensor->add_int64_data(random_.HostileInt(0));
      return true;
    }
    // Sometimes one element more or less than the dims say.
    bool resize = random_.OneIn(6);
    switch (random_.Pick(fields)) {
    case kInt64: {
      auto *data = tensor->mutable_int64_data();
      if (resize && random_.OneIn(2)) {
        data->RemoveLast();
      } else if (resize) {
        data->Add(0);
      } else {
        int index = int(random_.Below(data->size()));
        data->Set(index, random_.HostileInt(data->Get(index)));
      }
      return true;
    }
    case kInt32: {
      auto *data = tensor->mutable_int32_data();
      if (resize && random_.OneIn(2)) {
        data->RemoveLast();
      } else if (resize) {
        data->Add(0);
      } else {
        int index = int(random_.Below(data->size()));
        data->Set(index, int32_t(random_.HostileInt(data->Get(index))));
      }
      return true;
    }
    case kUint64: {
      auto *data = tensor->mutable_uint64_data();
      int index = int(random_.Below(data->size()));
      data->Set(index, uint64_t(random_.HostileInt(int64_t(data->Get(index)))));
      return true;
    }
    case kFloat: {
      auto *data = tensor->mutable_float_data();
      if (resize && random_.OneIn(2)) {
        data->RemoveLast();
      } else if (resize) {
        data->Add(0);
      } else {
        int index = int(random_.Below(data->size()));
        data->Set(index, float(random_.HostileFloat(data->Get(index))));
      }
      return true;
    }
    case kDouble: {
      auto *data = tensor->mutable_double_data();
      int index = int(random_.Below(data->size()));
      data->Set(index, random_.HostileFloat(data->Get(index)));
      return true;
    }
    case kRaw: {
      std::string *raw = tensor->mutable_raw_data();
      size_t width = ElementBytes(tensor->data_type());
      if (resize || raw->size() < width) {
        raw->resize(random_.OneIn(2) ? raw->size() / 2 : raw->size() + width);
        return true;
      }
      size_t offset = random_.Below(raw->size() / width) * width;
      uint8_t bytes[8];
      if (tensor->data_type() == onnx::TensorProto::FLOAT) {
        float value;
        std::memcpy(&value, raw->data() + offset, sizeof(value));
        value = float(random_.HostileFloat(value));
        std::memcpy(bytes, &value, sizeof(value));
      } else if (tensor->data_type() == onnx::TensorProto::DOUBLE) {
        double value;
        std::memcpy(&value, raw->data() + offset, sizeof(value));
        value = random_.HostileFloat(value);
        std::memcpy(bytes, &value, sizeof(value));
      } else {
        // Little-endian, as ONNX stores raw data.
        int64_t value = 0;
        std::memcpy(&value, raw->data() + offset, width);
        value = random_.HostileInt(value);
        std::memcpy(bytes, &value, sizeof(value));
      }
      std::memcpy(raw->data() + offset, bytes, width);
      return true;
    }
    }
    return false;
  }

  bool SwapOpType() {
    if (parts_.nodes.empty())
      return false;
    onnx::NodeProto *node = random_.Pick(parts_.nodes);
    node->set_op_type(random_.Pick(kOpTypes));
    if (random_.OneIn(8))
      node->clear_domain();
    return true;
  }

  std::string SomeValueName() {
    switch (random_.Below(8)) {
    case 0:
      return "";
    case 1:
      return "strata_fuzz_undefined";
    default:
      return parts_.names.empty() ? std::string() : random_.Pick(parts_.names);
    }
  }

  bool Rewire() {
    if (random_.OneIn(6)) {
      // A graph output that names another value (or nothing defined).
      std::vector<onnx::ValueInfoProto *> outputs;
      for (const GraphRef &graph : parts_.graphs)
        for (onnx::ValueInfoProto &output : *graph.graph->mutable_output())
          outputs.push_back(&output);
      if (outputs.empty())
        return false;
      random_.Pick(outputs)->set_name(SomeValueName());
      return true;
    }
    if (parts_.nodes.empty())
      return false;
    onnx::NodeProto *node = random_.Pick(parts_.nodes);
    if (random_.OneIn(6) && node->output_size() > 0) {
      // An output that redefines an existing value.
      node->set_output(int(random_.Below(node->output_size())),
                       SomeValueName());
      return true;
    }
    int count = node->input_size();
    switch (random_.Below(4)) {
    case 0:
      node->add_input(SomeValueName());
      return true;
    case 1:
      if (count == 0)
        return false;
      node->mutable_input()->RemoveLast();
      return true;
    default:
      if (count == 0)
        node->add_input(SomeValueName());
      else
        node->set_input(int(random_.Below(count)), SomeValueName());
      return true;
    }
  }

  bool CopyDeleteOrMoveNode() {
    std::vector<onnx::GraphProto *> graphs;
    for (const GraphRef &graph : parts_.graphs)
      if (graph.graph->node_size() > 0)
        graphs.push_back(graph.graph);
    if (graphs.empty())
      return false;
    auto *nodes = random_.Pick(graphs)->mutable_node();
    int count = nodes->size();
    int index = int(random_.Below(count));
    switch (random_.Below(3)) {
    case 0:
      nodes->DeleteSubrange(index, 1);
      return true;
    case 1: { // Out of topological order.
      nodes->SwapElements(index, int(random_.Below(count)));
      return true;
    }
    default: {
      onnx::NodeProto copy = nodes->Get(index);
      // Half the copies define their outputs again (not SSA), half define
      // fresh ones.
      if (random_.OneIn(2)) {
        std::string suffix = FreshSuffix();
        for (std::string &output : *copy.mutable_output())
          if (!output.empty())
            output += suffix;
      }
      *nodes->Add() = std::move(copy);
      MoveLastTo(nodes, int(random_.Below(count + 1)));
      return true;
    }
    }
  }

  bool MutateOpset() {
    switch (random_.Below(4)) {
    case 0:
      model_.set_ir_version(random_.OneIn(2) ? int64_t(random_.Below(11))
                                             : random_.HostileInt(8));
      return true;
    case 1:
      if (model_.opset_import_size() == 0)
        return false;
      model_
          .mutable_opset_import(int(random_.Below(model_.opset_import_size())))
          ->set_version(random_.HostileInt(17));
      return true;
    default: {
      onnx::OperatorSetIdProto *opset = nullptr;
      for (onnx::OperatorSetIdProto &entry : *model_.mutable_opset_import())
        if (entry.domain().empty() || entry.domain() == "ai.onnx")
          opset = &entry;
      if (!opset)
        opset = model_.add_opset_import();
      opset->set_version(1 + int64_t(random_.Below(25)));
      return true;
    }
    }
  }

  // A graph to wrap: one with nodes, not nested too deeply already.
  GraphRef *PickGraphToWrap() {
    std::vector<GraphRef *> candidates;
    for (GraphRef &graph : parts_.graphs)
      if (graph.graph->node_size() > 0 && graph.depth < kMaxGraphDepth)
        candidates.push_back(&graph);
    return candidates.empty() ? nullptr : random_.Pick(candidates);
  }

  // The graph's nodes move into both branches of an If whose outputs are the
  // graph's outputs; its condition is a constant (the importer takes one
  // branch), a graph input (it imports both and selects) or a non-scalar.
  bool WrapInIf() {
    GraphRef *target = PickGraphToWrap();
    if (!target)
      return false;
    onnx::GraphProto *graph = target->graph;
    std::string suffix = FreshSuffix();
    onnx::GraphProto then_branch = CopyAsSubgraph(*graph, suffix + "t");
    onnx::GraphProto else_branch = CopyAsSubgraph(*graph, suffix + "e");
    std::string condition = "cond" + suffix;
    if (target->depth == 0 && random_.OneIn(2)) {
      onnx::ValueInfoProto *input = graph->add_input();
      input->set_name(condition);
      SetScalarType(input, onnx::TensorProto::BOOL);
    } else {
      onnx::TensorProto *tensor = AddScalarInitializer(
          graph, condition, onnx::TensorProto::BOOL, int64_t(random_.Below(2)));
      if (random_.OneIn(8)) {
        tensor->add_dims(2);
        tensor->add_int32_data(1);
      }
    }
    graph->clear_node();
    graph->clear_value_info();
    onnx::NodeProto *node = graph->add_node();
    node->set_op_type("If");
    node->set_name("if" + suffix);
    node->add_input(condition);
    for (const onnx::ValueInfoProto &output : graph->output())
      node->add_output(output.name());
    onnx::AttributeProto *then_attribute = node->add_attribute();
    then_attribute->set_name("then_branch");
    then_attribute->set_type(onnx::AttributeProto::GRAPH);
    then_attribute->mutable_g()->Swap(&then_branch);
    onnx::AttributeProto *else_attribute = node->add_attribute();
    else_attribute->set_name("else_branch");
    else_attribute->set_type(onnx::AttributeProto::GRAPH);
    else_attribute->mutable_g()->Swap(&else_branch);
    return true;
  }

  // The graph's nodes become the body of a Loop whose scan outputs are the
  // graph's outputs: trip counts from none to huge, with or without a
  // condition (neither: a loop the importer must refuse to unroll).
  bool WrapInLoop() {
    GraphRef *target = PickGraphToWrap();
    if (!target)
      return false;
    onnx::GraphProto *graph = target->graph;
    std::string suffix = FreshSuffix();
    onnx::GraphProto body = CopyAsSubgraph(*graph, suffix + "b");
    onnx::ValueInfoProto *iteration = body.add_input();
    iteration->set_name("iter" + suffix);
    SetScalarType(iteration, onnx::TensorProto::INT64);
    onnx::ValueInfoProto *condition_in = body.add_input();
    condition_in->set_name("cin" + suffix);
    SetScalarType(condition_in, onnx::TensorProto::BOOL);
    onnx::ValueInfoProto *condition_out = body.add_output();
    condition_out->set_name("cout" + suffix);
    SetScalarType(condition_out, onnx::TensorProto::BOOL);
    MoveLastTo(body.mutable_output(), 0);
    onnx::NodeProto *identity = body.add_node();
    identity->set_op_type("Identity");
    identity->add_input(condition_in->name());
    identity->add_output(condition_out->name());

    std::string trip_count;
    int64_t trips =
        random_.OneIn(4) ? random_.HostileInt(3) : int64_t(random_.Below(4));
    if (!random_.OneIn(4)) {
      trip_count = "trip" + suffix;
      AddScalarInitializer(graph, trip_count, onnx::TensorProto::INT64, trips);
    }
    std::string condition;
    if (random_.OneIn(2)) {
      condition = "lcond" + suffix;
      AddScalarInitializer(graph, condition, onnx::TensorProto::BOOL,
                           random_.OneIn(4) ? 0 : 1);
    }
    graph->clear_node();
    graph->clear_value_info();
    onnx::NodeProto *node = graph->add_node();
    node->set_op_type("Loop");
    node->set_name("loop" + suffix);
    node->add_input(trip_count);
    node->add_input(condition);
    for (onnx::ValueInfoProto &output : *graph->mutable_output()) {
      node->add_output(output.name());
      // Scan outputs gain a leading dimension: the trip count, or one left
      // to inference (the checker wants graph outputs to keep a shape).
      auto *tensor = output.mutable_type()->mutable_tensor_type();
      if (tensor->has_shape()) {
        auto *dim = tensor->mutable_shape()->add_dim();
        if (random_.OneIn(4))
          dim->set_dim_param("trips");
        else
          dim->set_dim_value(trips);
        MoveLastTo(tensor->mutable_shape()->mutable_dim(), 0);
      }
    }
    onnx::AttributeProto *attribute = node->add_attribute();
    attribute->set_name("body");
    attribute->set_type(onnx::AttributeProto::GRAPH);
    attribute->mutable_g()->Swap(&body);
    return true;
  }

  // Turns a node into a call of a new model-local function whose body calls
  // itself, calls a second function that calls it back, or is the node's
  // original op.
  bool AddFunction() {
    if (parts_.nodes.empty())
      return false;
    onnx::NodeProto *node = random_.Pick(parts_.nodes);
    std::string suffix = FreshSuffix();
    std::string name = "F" + suffix;
    int64_t opset = 17;
    for (const onnx::OperatorSetIdProto &entry : model_.opset_import())
      if (entry.domain().empty())
        opset = entry.version();
    std::vector<std::string> inputs, outputs;
    for (int i = 0; i < node->input_size(); ++i)
      inputs.push_back("x" + std::to_string(i));
    for (int i = 0; i < std::max(1, node->output_size()); ++i)
      outputs.push_back("y" + std::to_string(i));

    auto add_function = [&](const std::string &function_name) {
      onnx::FunctionProto *function = model_.add_functions();
      function->set_name(function_name);
      function->set_domain(kFunctionDomain);
      for (const std::string &input : inputs)
        function->add_input(input);
      for (const std::string &output : outputs)
        function->add_output(output);
      onnx::OperatorSetIdProto *standard = function->add_opset_import();
      standard->set_domain("");
      standard->set_version(opset);
      onnx::OperatorSetIdProto *own = function->add_opset_import();
      own->set_domain(kFunctionDomain);
      own->set_version(1);
      onnx::NodeProto *call = function->add_node();
      for (const std::string &input : inputs)
        call->add_input(input);
      for (const std::string &output : outputs)
        call->add_output(output);
      return call;
    };
    onnx::NodeProto *body = add_function(name);
    switch (random_.Below(3)) {
    case 0: // Calls itself.
      body->set_op_type(name);
      body->set_domain(kFunctionDomain);
      break;
    case 1: { // Calls a function that calls it back.
      std::string other = "G" + suffix;
      body->set_op_type(other);
      body->set_domain(kFunctionDomain);
      onnx::NodeProto *back = add_function(other);
      back->set_op_type(name);
      back->set_domain(kFunctionDomain);
      break;
    }
    default: // The node's own op, attributes and all.
      body->set_op_type(node->op_type());
      body->set_domain(node->domain());
      *body->mutable_attribute() = node->attribute();
      break;
    }
    node->set_op_type(name);
    node->set_domain(kFunctionDomain);
    node->clear_attribute();
    bool imported = false;
    for (const onnx::OperatorSetIdProto &entry : model_.opset_import())
      imported |= entry.domain() == kFunctionDomain;
    if (!imported) {
      onnx::OperatorSetIdProto *own = model_.add_opset_import();
      own->set_domain(kFunctionDomain);
      own->set_version(1);
    }
    return true;
  }

  // Drops a graph input, output or initializer.
  bool RemoveGraphValue() {
    if (parts_.graphs.empty())
      return false;
    onnx::GraphProto *graph = random_.Pick(parts_.graphs).graph;
    switch (random_.Below(3)) {
    case 0:
      if (graph->input_size() == 0)
        return false;
      graph->mutable_input()->DeleteSubrange(
          int(random_.Below(graph->input_size())), 1);
      return true;
    case 1:
      if (graph->output_size() == 0)
        return false;
      graph->mutable_output()->DeleteSubrange(
          int(random_.Below(graph->output_size())), 1);
      return true;
    default:
      if (graph->initializer_size() == 0)
        return false;
      graph->mutable_initializer()->DeleteSubrange(
          int(random_.Below(graph->initializer_size())), 1);
      return true;
    }
  }

  onnx::ModelProto &model_;
  FuzzRandom &random_;
  ModelParts parts_;
};

bool Parse(const uint8_t *data, size_t size, onnx::ModelProto &model) {
  return size <= size_t(INT_MAX) && model.ParseFromArray(data, int(size));
}

// Serializes `model` into `out` if it fits both limits; returns its size or
// 0.
size_t Serialize(const onnx::ModelProto &model, uint8_t *out, size_t max_size) {
  std::string bytes;
  if (!model.SerializeToString(&bytes) || bytes.empty() ||
      bytes.size() > std::min(max_size, kMaxMutatedModelBytes))
    return 0;
  std::memcpy(out, bytes.data(), bytes.size());
  return bytes.size();
}

} // namespace

size_t MutateONNXGraph(uint8_t *data, size_t size, size_t max_size,
                       unsigned seed) {
  FuzzRandom random(seed);
  onnx::ModelProto model;
  // An occasional byte-level step also reaches what no structured mutation
  // changes (names, strings, unknown fields).
  if (random.OneIn(16) || !Parse(data, size, model))
    return LLVMFuzzerMutate(data, size, max_size);
  bool mutated = false;
  for (int attempt = 0; attempt < 8 && !mutated; ++attempt)
    mutated = GraphMutator(model, random).Mutate();
  size_t new_size = mutated ? Serialize(model, data, max_size) : 0;
  return new_size ? new_size : LLVMFuzzerMutate(data, size, max_size);
}

size_t CrossOverONNXGraphs(const uint8_t *data1, size_t size1,
                           const uint8_t *data2, size_t size2, uint8_t *out,
                           size_t max_out_size, unsigned seed) {
  FuzzRandom random(seed);
  onnx::ModelProto model, other;
  if (!Parse(data1, size1, model) || !Parse(data2, size2, other))
    return 0;
  ModelParts parts = CollectModel(model);
  ModelParts other_parts = CollectModel(other);
  switch (random.Below(4)) {
  case 0: { // A node of the other model, anywhere.
    if (parts.graphs.empty() || other_parts.nodes.empty())
      return 0;
    auto *nodes = random.Pick(parts.graphs).graph->mutable_node();
    int count = nodes->size();
    *nodes->Add() = *random.Pick(other_parts.nodes);
    MoveLastTo(nodes, int(random.Below(count + 1)));
    break;
  }
  case 1: // An initializer or constant of the other model.
    if (parts.graphs.empty() || other_parts.tensors.empty())
      return 0;
    *random.Pick(parts.graphs).graph->add_initializer() =
        *random.Pick(other_parts.tensors);
    break;
  case 2: // The other model's attributes on one node.
    if (parts.nodes.empty() || other_parts.nodes.empty())
      return 0;
    *random.Pick(parts.nodes)->mutable_attribute() =
        random.Pick(other_parts.nodes)->attribute();
    break;
  default: // A type of the other model.
    if (parts.values.empty() || other_parts.values.empty())
      return 0;
    *random.Pick(parts.values)->mutable_type() =
        random.Pick(other_parts.values)->type();
    break;
  }
  return Serialize(model, out, max_out_size);
}

} // namespace strata::fuzz
