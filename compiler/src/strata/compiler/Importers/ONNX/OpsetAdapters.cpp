//===- OpsetAdapters.cpp - read ONNX versions newer than libonnx's --------===//
#include "strata/compiler/Importers/ONNX/OpsetAdapters.h"

#include <algorithm>
#include <initializer_list>
#include <map>
#include <vector>

#include "google/protobuf/unknown_field_set.h"
#include "onnx/defs/schema.h"

namespace strata::onnx_importer {
namespace {

// The opsets after 17 in which an operator's form changed (inputs,
// attributes, their meaning) or it first appeared; versions that only
// widened its types are left out. From ONNX's operator changelog.
const std::map<std::string, std::vector<int>> &getFormChanges() {
  static const std::map<std::string, std::vector<int>> changes = {
      {"AffineGrid", {20}},
      {"Attention", {23, 24, 25}},
      {"AveragePool", {19}},
      {"BitCast", {26}},
      {"BitwiseAnd", {18}},
      {"BitwiseNot", {18}},
      {"BitwiseOr", {18}},
      {"BitwiseXor", {18}},
      {"Cast", {19, 24}},
      {"CastLike", {19, 24}},
      {"CausalConvWithState", {27}},
      {"CenterCropPad", {18}},
      {"Col2Im", {18}},
      {"CumProd", {26}},
      {"DFT", {20}},
      {"DeformConv", {19}},
      {"DequantizeLinear", {19, 21, 23}},
      {"Gelu", {20}},
      {"GridSample", {20}},
      {"GroupNormalization", {18, 21}},
      {"ImageDecoder", {20}},
      {"LinearAttention", {27}},
      {"LpPool", {18}},
      {"Mish", {18}},
      {"OptionalGetElement", {18}},
      {"OptionalHasElement", {18}},
      {"Pad", {18, 19}},
      {"QuantizeLinear", {19, 21, 23}},
      {"RMSNormalization", {23}},
      {"Range", {27}},
      {"ReduceL1", {18}},
      {"ReduceL2", {18}},
      {"ReduceLogSum", {18}},
      {"ReduceLogSumExp", {18}},
      {"ReduceMax", {18}},
      {"ReduceMean", {18}},
      {"ReduceMin", {18}},
      {"ReduceProd", {18}},
      {"ReduceSumSquare", {18}},
      {"RegexFullMatch", {20}},
      {"Resize", {18, 19}},
      {"RotaryEmbedding", {23}},
      {"Split", {18}},
      {"StringConcat", {20}},
      {"StringSplit", {20}},
      {"SwiGLU", {28}},
      {"Swish", {24}},
      {"TensorScatter", {24}},
  };
  return changes;
}

// The newest opset <= `opset` (and > 17) in which `op` changed form; 0 when
// its opset-17 form still holds.
int getNewestFormChange(const std::string &op, int64_t opset) {
  const auto &changes = getFormChanges();
  auto it = changes.find(op);
  if (it == changes.end())
    return 0;
  int newest = 0;
  for (int version : it->second)
    if (version <= opset)
      newest = version;
  return newest;
}

bool isNamedDataType(int32_t dataType) {
  return dataType >= onnx::TensorProto::FLOAT &&
         dataType <= onnx::TensorProto::BFLOAT16;
}

class VersionAdapter {
public:
  explicit VersionAdapter(std::string &error) : error(error) {}

  // Checks the types a value can hold.
  bool checkType(const onnx::TypeProto &type, const std::string &what) {
    switch (type.value_case()) {
    case onnx::TypeProto::kTensorType:
      return checkDataType(type.tensor_type().elem_type(), what);
    case onnx::TypeProto::kSequenceType:
      return checkType(type.sequence_type().elem_type(), what);
    case onnx::TypeProto::kOptionalType:
      return checkType(type.optional_type().elem_type(), what);
    case onnx::TypeProto::kMapType:
      return checkType(type.map_type().value_type(), what);
    case onnx::TypeProto::kSparseTensorType:
      return checkDataType(type.sparse_tensor_type().elem_type(), what);
    default:
      return true;
    }
  }

  bool checkDataType(int32_t dataType, const std::string &what) {
    // 0 (UNDEFINED) is the checker's to report.
    if (dataType == 0 || isNamedDataType(dataType))
      return true;
    error = what + " has element type " + getDataTypeName(dataType) +
            ", which Strata does not support";
    return false;
  }

  bool checkValueInfos(const onnx::GraphProto &graph,
                       const std::string &where) {
    auto check = [&](const auto &values, const char *kind) {
      for (const auto &value : values)
        if (!checkType(value.type(),
                       std::string(kind) + " '" + value.name() + "'" + where))
          return false;
      return true;
    };
    if (!check(graph.input(), "graph input") ||
        !check(graph.output(), "graph output") ||
        !check(graph.value_info(), "value"))
      return false;
    for (const auto &initializer : graph.initializer())
      if (!checkDataType(initializer.data_type(),
                         "initializer '" + initializer.name() + "'" + where))
        return false;
    for (const auto &sparse : graph.sparse_initializer())
      if (!checkDataType(sparse.values().data_type(),
                         "sparse initializer '" + sparse.values().name() + "'" +
                             where))
        return false;
    return true;
  }

  bool adaptGraph(onnx::GraphProto &graph, int64_t opset,
                  const std::string &where) {
    if (!checkValueInfos(graph, where))
      return false;
    for (auto &node : *graph.mutable_node())
      if (!adaptNode(node, opset, where))
        return false;
    return true;
  }

  bool adaptNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                  int64_t opset, const std::string &where) {
    for (auto &node : nodes)
      if (!adaptNode(node, opset, where))
        return false;
    return true;
  }

private:
  static std::string describe(const onnx::NodeProto &node,
                              const std::string &where) {
    return "node '" + node.name() + "' (" + node.op_type() + ")" + where;
  }

  // IR 10 calls an overloaded local function by (domain, name, overload);
  // the overload is NodeProto field 8, which libonnx 1.12 does not know.
  static bool callsOverload(const onnx::NodeProto &node) {
    const auto &unknown = node.GetReflection()->GetUnknownFields(node);
    for (int i = 0; i < unknown.field_count(); ++i) {
      const auto &field = unknown.field(i);
      if (field.number() == 8 &&
          field.type() ==
              google::protobuf::UnknownField::TYPE_LENGTH_DELIMITED &&
          !field.length_delimited().empty())
        return true;
    }
    return false;
  }

  bool adaptNode(onnx::NodeProto &node, int64_t opset,
                 const std::string &where) {
    if (callsOverload(node)) {
      error = describe(node, where) +
              ": calls an overload of a local function (IR 10), which "
              "Strata does not support";
      return false;
    }
    for (auto &attribute : *node.mutable_attribute()) {
      std::string what =
          "attribute '" + attribute.name() + "' of " + describe(node, where);
      if (attribute.has_t() && !checkDataType(attribute.t().data_type(), what))
        return false;
      for (const auto &tensor : attribute.tensors())
        if (!checkDataType(tensor.data_type(), what))
          return false;
      // The element type an op produces (Cast's `to`, EyeLike's `dtype`).
      if (attribute.type() == onnx::AttributeProto::INT &&
          isDefaultDomain(node.domain()) &&
          (attribute.name() == "to" || attribute.name() == "dtype" ||
           attribute.name() == "output_dtype") &&
          !checkDataType(static_cast<int32_t>(attribute.i()), what))
        return false;
      std::string inner =
          " in subgraph '" + attribute.name() + "' of " + describe(node, where);
      if (attribute.has_g() &&
          !adaptGraph(*attribute.mutable_g(), opset, inner))
        return false;
      for (auto &graph : *attribute.mutable_graphs())
        if (!adaptGraph(graph, opset, inner))
          return false;
    }
    if (!isDefaultDomain(node.domain()) || opset <= kLibonnxNewestOpset)
      return true;
    int changed = getNewestFormChange(node.op_type(), opset);
    if (changed == 0)
      return true;
    if (!onnx::OpSchemaRegistry::Schema(node.op_type(), 1, kAdaptedDomain)) {
      error = describe(node, where) + ": unsupported op " + node.op_type() +
              " as of opset " + std::to_string(changed) + " (the model's is " +
              std::to_string(opset) + ")";
      return false;
    }
    node.set_domain(kAdaptedDomain);
    return true;
  }

  std::string &error;
};

int64_t getImportedOpset(
    const google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto> &imports,
    int64_t fallback) {
  for (const auto &import : imports)
    if (isDefaultDomain(import.domain()))
      return import.version();
  return fallback;
}

// Rewrites `imports` for libonnx: the default domain at most 17, and the
// adapted domain once.
void setLibonnxOpsetImports(
    google::protobuf::RepeatedPtrField<onnx::OperatorSetIdProto> &imports,
    int64_t opset) {
  bool hasAdapted = false;
  for (auto &import : imports) {
    if (isDefaultDomain(import.domain()))
      import.set_version(std::min(import.version(), kLibonnxNewestOpset));
    hasAdapted |= import.domain() == kAdaptedDomain;
  }
  if (opset > kLibonnxNewestOpset && !hasAdapted) {
    auto *adapted = imports.Add();
    adapted->set_domain(kAdaptedDomain);
    adapted->set_version(1);
  }
}

} // namespace

bool isDefaultDomain(const std::string &domain) {
  return domain.empty() || domain == "ai.onnx" || domain == kAdaptedDomain;
}

std::string getDataTypeName(int32_t dataType) {
  static const char *const names[] = {
      "UNDEFINED",      "FLOAT",      "UINT8",
      "INT8",           "UINT16",     "INT16",
      "INT32",          "INT64",      "STRING",
      "BOOL",           "FLOAT16",    "DOUBLE",
      "UINT32",         "UINT64",     "COMPLEX64",
      "COMPLEX128",     "BFLOAT16",   "FLOAT8E4M3FN",
      "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
      "UINT4",          "INT4",       "FLOAT4E2M1",
      "FLOAT8E8M0",     "UINT2",      "INT2"};
  if (dataType >= 0 && dataType < static_cast<int32_t>(std::size(names)))
    return names[dataType];
  return "data type " + std::to_string(dataType);
}

bool adaptNewerVersions(onnx::ModelProto &model, int64_t &opset,
                        std::string &error) {
  opset = getImportedOpset(model.opset_import(), 0);
  if (model.ir_version() > kNewestKnownIRVersion) {
    error = "IR version " + std::to_string(model.ir_version()) +
            " is newer than the newest Strata reads (" +
            std::to_string(kNewestKnownIRVersion) + ")";
    return false;
  }
  auto checkOpset = [&](int64_t version, const std::string &where) {
    if (version <= kNewestKnownOpset)
      return true;
    error = "opset " + std::to_string(version) + where +
            " is newer than the newest Strata reads (" +
            std::to_string(kNewestKnownOpset) + ")";
    return false;
  };
  if (!checkOpset(opset, ""))
    return false;
  registerAdaptedOpSchemas();
  VersionAdapter adapter(error);
  if (!adapter.adaptGraph(*model.mutable_graph(), opset, ""))
    return false;
  for (auto &function : *model.mutable_functions()) {
    std::string where = " in local function '" + function.name() + "'";
    int64_t functionOpset = getImportedOpset(function.opset_import(), opset);
    if (!checkOpset(functionOpset, where) ||
        !adapter.adaptNodes(*function.mutable_node(), functionOpset, where))
      return false;
    setLibonnxOpsetImports(*function.mutable_opset_import(), functionOpset);
  }
  setLibonnxOpsetImports(*model.mutable_opset_import(), opset);
  // What IR 9-13 added is refused above (new element types, overloads) or
  // is metadata libonnx keeps as unknown fields.
  if (model.ir_version() > kLibonnxNewestIRVersion)
    model.set_ir_version(kLibonnxNewestIRVersion);
  return true;
}

void addLibonnxOpsetImports(onnx::ModelProto &model, int64_t opset) {
  auto *import = model.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  setLibonnxOpsetImports(*model.mutable_opset_import(), opset);
}

} // namespace strata::onnx_importer
