//===- ModelLoader.cpp - parse, check and normalize an ONNX model ---------===//
//
// Compiled with exceptions and RTTI: libonnx reports errors by throwing.
// This file includes no MLIR header, so no exception crosses into MLIR code.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/ModelLoader.h"

#include "strata/compiler/Importers/ONNX/ExternalData.h"
#include "strata/compiler/Importers/ONNX/OpsetAdapters.h"

#include <climits>
#include <deque>
#include <exception>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <vector>

#include "google/protobuf/io/coded_stream.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"
#include "llvm/ADT/STLExtras.h"

namespace strata::onnx_importer {
namespace {

// Graph inputs and outputs must be tensors and every graph output a graph
// input, an initializer or some node's output.
bool checkGraphOutputsDefined(const onnx::GraphProto &graph,
                              std::string &error) {
  std::set<std::string> defined;
  for (const auto &input : graph.input())
    defined.insert(input.name());
  for (const auto &initializer : graph.initializer())
    defined.insert(initializer.name());
  for (const auto &node : graph.node())
    for (const auto &output : node.output())
      defined.insert(output);
  // libonnx's version converter drops the types of sequences and
  // optionals, which strict shape inference then reports as missing.
  for (const auto *values : {&graph.input(), &graph.output()})
    for (const auto &value : *values)
      if (value.type().value_case() != onnx::TypeProto::VALUE_NOT_SET &&
          !value.type().has_tensor_type()) {
        error = "graph " +
                std::string(values == &graph.input() ? "input" : "output") +
                " '" + value.name() +
                "': only tensor values are supported (not sequences, maps "
                "or optionals)";
        return false;
      }
  for (const auto &output : graph.output()) {
    if (defined.count(output.name()))
      continue;
    error = "invalid ONNX model: graph output '" + output.name() +
            "' is not produced by any node";
    return false;
  }
  return true;
}

// The ranks of the values one graph or function body reads that are known
// before inference (declared types, initializers, Constant nodes); names
// not found here are looked up in the enclosing graph's scope.
struct RankScope {
  const google::protobuf::RepeatedPtrField<onnx::NodeProto> *nodes;
  const RankScope *parent;
  // -1: defined here with an unknown rank (shadows the enclosing scope).
  std::map<std::string, int> ranks;
  std::string where; // " in subgraph 'b'", empty for the main graph

  int lookup(const std::string &name) const {
    for (const RankScope *scope = this; scope; scope = scope->parent) {
      auto it = scope->ranks.find(name);
      if (it != scope->ranks.end())
        return it->second;
    }
    return -1;
  }
};

void addDeclaredRanks(const onnx::GraphProto &graph, RankScope &scope) {
  auto add = [&](const onnx::ValueInfoProto &info) {
    scope.ranks[info.name()] =
        info.type().has_tensor_type() && info.type().tensor_type().has_shape()
            ? info.type().tensor_type().shape().dim_size()
            : -1;
  };
  for (const auto &info : graph.input())
    add(info);
  for (const auto &info : graph.output())
    add(info);
  for (const auto &info : graph.value_info())
    add(info);
  for (const auto &initializer : graph.initializer())
    scope.ranks[initializer.name()] = initializer.dims_size();
}

std::string describeNode(const onnx::NodeProto &node, const RankScope &scope) {
  return "node '" + node.name() + "' (" + node.op_type() + ")" + scope.where;
}

// Operand ranks libonnx's shape inference indexes dims by without checking
// them: Gemm's version adapters read two dims of each operand, the conv
// inference reads the input's dims for every spatial dim of the weight,
// MaxUnpool's reads dim 1 of its indices.
bool checkNodeRanks(const onnx::NodeProto &node, const RankScope &scope,
                    std::string &error) {
  const std::string &op = node.op_type();
  auto rankOf = [&](int i) {
    return i < node.input_size() && !node.input(i).empty()
               ? scope.lookup(node.input(i))
               : -1;
  };
  if (op == "Gemm") {
    for (int i = 0; i < 2; ++i) {
      int rank = rankOf(i);
      if (rank >= 0 && rank != 2) {
        error = describeNode(node, scope) + ": input " + std::to_string(i) +
                " must be a matrix (rank 2), not rank " + std::to_string(rank);
        return false;
      }
    }
    return true;
  }
  int weight = op == "Conv" || op == "ConvTranspose" || op == "ConvInteger" ? 1
               : op == "QLinearConv"                                        ? 3
                                     : -1;
  int inputRank = rankOf(0);
  if (weight >= 0) {
    int weightRank = rankOf(weight);
    for (int rank : {inputRank, weightRank})
      if (rank >= 0 && rank < 3) {
        error = describeNode(node, scope) +
                ": the input and the weight must have rank 3 or more, not " +
                std::to_string(rank);
        return false;
      }
    if (inputRank >= 0 && weightRank >= 0 && inputRank != weightRank) {
      error = describeNode(node, scope) + ": the input has rank " +
              std::to_string(inputRank) + " but the weight rank " +
              std::to_string(weightRank);
      return false;
    }
  }
  // MaxUnpool's inference reads dim 1 of the indices unchecked: they must
  // have the input's rank.
  if (op == "MaxUnpool" && inputRank >= 0 && rankOf(1) >= 0 &&
      rankOf(1) != inputRank) {
    error = describeNode(node, scope) + ": the indices have rank " +
            std::to_string(rankOf(1)) + " but the input rank " +
            std::to_string(inputRank);
    return false;
  }
  // The control-flow inferences read their graph attributes unchecked, and
  // libonnx's checker does not look at the nodes of local functions.
  auto required = [&](std::initializer_list<const char *> names) {
    for (const char *name : names)
      if (llvm::none_of(node.attribute(), [&](const auto &attribute) {
            return attribute.name() == name;
          })) {
        error =
            describeNode(node, scope) + ": attribute '" + name + "' is missing";
        return false;
      }
    return true;
  };
  if ((op == "Scan" && !required({"body", "num_scan_inputs"})) ||
      (op == "Loop" && !required({"body"})) ||
      (op == "If" && !required({"then_branch", "else_branch"})))
    return false;
  // Scan's inference sizes its tables by num_scan_inputs (2^31 of them
  // would take 24 GB before anything checks it).
  for (const auto &attribute : node.attribute())
    if (op == "Scan" && attribute.name() == "num_scan_inputs" &&
        (attribute.i() < 1 || attribute.i() > node.input_size())) {
      error = describeNode(node, scope) + ": num_scan_inputs " +
              std::to_string(attribute.i()) + " is not in [1, " +
              std::to_string(node.input_size()) + "] (the node's inputs)";
      return false;
    }
  for (const auto &attribute : node.attribute())
    if (attribute.name() == "kernel_shape" && inputRank >= 2 &&
        attribute.ints_size() != inputRank - 2) {
      error = describeNode(node, scope) + ": kernel_shape has " +
              std::to_string(attribute.ints_size()) +
              " values for an input of rank " + std::to_string(inputRank);
      return false;
    }
  return true;
}

// Checks, before libonnx's version converter and shape inference (which
// crash on them), every node of the main graph, of each subgraph and of
// each local function body as called: operand ranks (checkNodeRanks) and
// positive window attributes (the inference divides by strides and
// dilations). Graphs are walked iteratively; the calls of local functions
// expand to at most --max-onnx-nodes nodes (checkLocalFunctions ran first).
bool checkNodesBeforeInference(const onnx::ModelProto &model,
                               std::string &error) {
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto *>
      functions;
  for (const auto &function : model.functions())
    functions[{function.domain() == "ai.onnx" ? "" : function.domain(),
               function.name()}] = &function;
  // A deque keeps each scope where it is while its children point at it.
  std::deque<RankScope> scopes;
  std::vector<RankScope *> pending;
  auto addGraph = [&](const onnx::GraphProto &graph, const RankScope *parent,
                      std::string where) {
    RankScope &scope = scopes.emplace_back();
    scope.nodes = &graph.node();
    scope.parent = parent;
    scope.where = std::move(where);
    addDeclaredRanks(graph, scope);
    pending.push_back(&scope);
  };
  addGraph(model.graph(), nullptr, "");
  // Bodies not called anywhere still get their attributes checked.
  for (const auto &function : model.functions()) {
    RankScope &scope = scopes.emplace_back();
    scope.nodes = &function.node();
    scope.parent = nullptr;
    scope.where = " in local function '" + function.name() + "'";
    pending.push_back(&scope);
  }
  while (!pending.empty()) {
    // Its subgraphs are walked after it, so they see every rank it finds.
    RankScope &scope = *pending.back();
    pending.pop_back();
    for (const auto &node : *scope.nodes) {
      if (!checkNodeRanks(node, scope, error))
        return false;
      for (const auto &attribute : node.attribute()) {
        const std::string &name = attribute.name();
        if (name == "strides" || name == "dilations" || name == "kernel_shape")
          for (int64_t value : attribute.ints())
            if (value < 1) {
              error =
                  describeNode(node, scope) + ": " + name + " must be positive";
              return false;
            }
        std::string where = " in subgraph '" + attribute.name() +
                            "' of node '" + node.name() + "' (" +
                            node.op_type() + ")" + scope.where;
        if (attribute.has_g())
          addGraph(attribute.g(), &scope, where);
        for (const auto &graph : attribute.graphs())
          addGraph(graph, &scope, where);
      }
      auto function = functions.find(
          {node.domain() == "ai.onnx" ? "" : node.domain(), node.op_type()});
      if (function != functions.end()) {
        // The body as this node calls it: its inputs have the arguments'
        // ranks, and it sees nothing of the caller's scope.
        const onnx::FunctionProto &body = *function->second;
        RankScope &call = scopes.emplace_back();
        call.nodes = &body.node();
        call.parent = nullptr;
        call.where = " in local function '" + body.name() + "' called by " +
                     describeNode(node, scope);
        for (int i = 0; i < body.input_size() && i < node.input_size(); ++i)
          if (!node.input(i).empty())
            call.ranks[body.input(i)] = scope.lookup(node.input(i));
        pending.push_back(&call);
      }
      for (const auto &output : node.output()) {
        if (output.empty())
          continue;
        const auto *value = node.op_type() == "Constant" &&
                                    node.attribute_size() == 1 &&
                                    node.attribute(0).has_t()
                                ? &node.attribute(0).t()
                                : nullptr;
        // A declared type stays; another output's rank is unknown here.
        if (value)
          scope.ranks[output] = value->dims_size();
        else
          scope.ranks.try_emplace(output, -1);
      }
    }
  }
  return true;
}

// Whether `contents` parses once protobuf allows 1000 nested messages
// instead of 100: then nesting, not damage, is why it did not.
bool parsesWithDeeperNesting(const std::string &contents) {
  if (contents.size() > static_cast<size_t>(INT_MAX))
    return false;
  google::protobuf::io::CodedInputStream stream(
      reinterpret_cast<const uint8_t *>(contents.data()),
      static_cast<int>(contents.size()));
  stream.SetRecursionLimit(1000);
  onnx::ModelProto model;
  return model.ParseFromCodedStream(&stream) && stream.ConsumedEntireMessage();
}

int64_t getDefaultDomainOpset(const onnx::ModelProto &model) {
  for (const auto &opset : model.opset_import())
    if (opset.domain().empty() || opset.domain() == "ai.onnx")
      return opset.version();
  return 0;
}

// Whether a graph, or one nested in it, has a node whose outputs libonnx's
// inference may leave without a type: an op of another domain (no schema)
// or a node with subgraphs (an If whose branches differ in rank).
bool mayLeaveValuesUntyped(const onnx::GraphProto &graph) {
  for (const auto &node : graph.node()) {
    if (!node.domain().empty() && node.domain() != "ai.onnx")
      return true;
    for (const auto &attribute : node.attribute())
      if (attribute.has_g() || attribute.graphs_size() > 0)
        return true;
  }
  return false;
}

bool hasTensorType(const onnx::ValueInfoProto &info) {
  return info.type().value_case() != onnx::TypeProto::VALUE_NOT_SET;
}

// Whether a node of `graph` (or of a graph nested in it) that libonnx
// propagates data through reads a value that has no type after inference:
// `typed` holds the typed names of the enclosing scopes.
bool propagatesFromUntypedValue(const onnx::GraphProto &graph,
                                std::set<std::string> typed,
                                const std::map<std::string, int64_t> &opsets) {
  for (const auto &input : graph.input())
    if (hasTensorType(input))
      typed.insert(input.name());
  for (const auto &initializer : graph.initializer())
    typed.insert(initializer.name());
  for (const auto *values : {&graph.value_info(), &graph.output()})
    for (const auto &value : *values)
      if (hasTensorType(value))
        typed.insert(value.name());
  for (const auto &node : graph.node()) {
    std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
    auto opset = opsets.find(domain);
    const onnx::OpSchema *schema =
        opset == opsets.end() ? nullptr
                              : onnx::OpSchemaRegistry::Schema(
                                    node.op_type(), opset->second, domain);
    if (schema && schema->has_data_propagation_function() &&
        llvm::any_of(node.input(), [&](const std::string &name) {
          return !name.empty() && !typed.count(name);
        }))
      return true;
    for (const auto &attribute : node.attribute()) {
      if (attribute.has_g() &&
          propagatesFromUntypedValue(attribute.g(), typed, opsets))
        return true;
      for (const auto &subgraph : attribute.graphs())
        if (propagatesFromUntypedValue(subgraph, typed, opsets))
          return true;
    }
  }
  return false;
}

// libonnx 1.12's data propagation (Shape, Size, Gather, Squeeze, ...)
// dereferences its input's type unchecked, and crashes on a value that
// inference left untyped (a custom op's result read by Shape, an If whose
// branches differ in rank read by Squeeze). Where the model may have such
// values, inference runs once without propagation on a copy, and
// propagation stays off if a node that propagates data reads one of them.
bool isDataPropagationSafe(const onnx::ModelProto &model) {
  if (!mayLeaveValuesUntyped(model.graph()))
    return true;
  // The copy leaves out the data of large initializers (weights, which
  // would double the memory of a large model): inference reads only small
  // ones (shapes, axes) as values.
  static constexpr size_t kMaxCopiedInitializerBytes = 64 * 1024;
  onnx::ModelProto copy;
  copy.set_ir_version(model.ir_version());
  *copy.mutable_opset_import() = model.opset_import();
  *copy.mutable_functions() = model.functions();
  const onnx::GraphProto &graph = model.graph();
  onnx::GraphProto &copied = *copy.mutable_graph();
  *copied.mutable_node() = graph.node();
  *copied.mutable_input() = graph.input();
  *copied.mutable_output() = graph.output();
  *copied.mutable_value_info() = graph.value_info();
  for (const auto &tensor : graph.initializer()) {
    if (tensor.ByteSizeLong() <= kMaxCopiedInitializerBytes) {
      *copied.add_initializer() = tensor;
      continue;
    }
    onnx::TensorProto &type = *copied.add_initializer();
    type.set_name(tensor.name());
    type.set_data_type(tensor.data_type());
    *type.mutable_dims() = tensor.dims();
  }
  try {
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false,
                                        /*strict_mode_val=*/0,
                                        /*data_prop_val=*/false);
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(),
                                       options);
  } catch (...) {
    return false;
  }
  std::map<std::string, int64_t> opsets;
  for (const auto &opset : copy.opset_import())
    opsets[opset.domain() == "ai.onnx" ? "" : opset.domain()] = opset.version();
  return !propagatesFromUntypedValue(copy.graph(), {}, opsets);
}

} // namespace

LoadedModel loadModel(const std::string &modelPath, const std::string &contents,
                      int targetOpset, const std::string &externalDataRoot,
                      int64_t maxNodes, const InputShapePins &pins,
                      std::string &error) {
  LoadedModel result;
  auto model = std::make_unique<onnx::ModelProto>();
  try {
    if (!model->ParseFromString(contents)) {
      error = "not a valid ONNX model: the protobuf cannot be parsed";
      if (parsesWithDeeperNesting(contents))
        error += " (its subgraphs nest deeper than protobuf's limit of 100 "
                 "messages, about 33 levels of If, Loop or Scan)";
      return result;
    }
    if (!model->has_graph()) {
      error = "not a valid ONNX model: it has no graph";
      return result;
    }
    // Newer IR versions and opsets are adapted to what libonnx checks; the
    // lowerings read each node at the opset the model was written for.
    int64_t writtenOpset = 0;
    if (!adaptNewerVersions(*model, writtenOpset, error))
      return result;
    ExternalDataOptions externalData;
    externalData.modelDirectory =
        std::filesystem::path(modelPath).parent_path();
    externalData.allowedRoot = externalDataRoot;
    if (!loadExternalData(*model, externalData, error))
      return result;
    if (!checkLocalFunctions(*model, maxNodes, error))
      return result;
    onnx::checker::check_model(*model);
    if (!applyInputShapePins(*model, pins, error))
      return result;
    // libonnx's version converter and shape inference crash on some
    // malformed graphs (undefined outputs, zero strides): reject them first.
    if (!checkGraphOutputsDefined(model->graph(), error) ||
        !checkNodesBeforeInference(*model, error))
      return result;
    int64_t opset = getDefaultDomainOpset(*model);
    // libonnx's Scan 8 -> 9 adapter drops the batch dimension from the
    // graph's inputs instead of adding one around the Scan: such models
    // keep their opset (the Scan lowering reads the opset-8 form).
    bool hasOpset8Scan =
        opset != 0 && opset < 9 &&
        llvm::any_of(model->graph().node(), [](const onnx::NodeProto &node) {
          return node.op_type() == "Scan";
        });
    if (writtenOpset > kLibonnxNewestOpset) {
      opset = writtenOpset;
    } else if (opset != 0 && opset != targetOpset && !hasOpset8Scan) {
      // Without an adapter for some node the model keeps its own opset;
      // lowerings accept the older forms of the attributes they read.
      try {
        onnx::ModelProto converted =
            onnx::version_conversion::ConvertVersion(*model, targetOpset);
        *model = std::move(converted);
        opset = targetOpset;
      } catch (const std::exception &) {
      }
    }
    // Strict: a node whose inference fails (an attribute out of range for
    // its input, a declared output type that contradicts the inferred one)
    // makes the model invalid. Otherwise libonnx keeps the declared type and
    // the lowerings, which trust the types of their results, would build
    // IR from types that contradict their operands.
    onnx::ShapeInferenceOptions options(
        /*check_type_val=*/false, /*strict_mode_val=*/1,
        /*data_prop_val=*/isDataPropagationSafe(*model));
    onnx::shape_inference::InferShapes(
        *model, onnx::OpSchemaRegistry::Instance(), options);
    result.opset = opset;
  } catch (const std::exception &e) {
    error = std::string("invalid ONNX model: ") + e.what();
    // Shape inference ends its messages with a newline.
    while (!error.empty() && (error.back() == '\n' || error.back() == ' '))
      error.pop_back();
    return result;
  } catch (...) {
    error = "invalid ONNX model: libonnx failed with an unknown error";
    return result;
  }
  result.model = std::move(model);
  return result;
}

bool inferGraphShapes(onnx::GraphProto &graph, int64_t opset,
                      std::string &error, bool strict) {
  onnx::ModelProto model;
  model.set_ir_version(onnx::IR_VERSION);
  addLibonnxOpsetImports(model, opset);
  *model.mutable_graph() = std::move(graph);
  // Strict: an inference error (an axis or rank out of range) throws.
  // Either way a node inference cannot type keeps no type (its lowering then
  // computes one or says it needs one).
  onnx::ShapeInferenceOptions options(
      /*check_type_val=*/false, /*strict_mode_val=*/strict ? 1 : 0,
      /*data_prop_val=*/isDataPropagationSafe(model));
  bool inferred = true;
  try {
    onnx::shape_inference::InferShapes(
        model, onnx::OpSchemaRegistry::Instance(), options);
  } catch (const std::exception &e) {
    error = e.what();
    inferred = false;
  } catch (...) {
    error = "libonnx failed with an unknown error";
    inferred = false;
  }
  graph = std::move(*model.mutable_graph());
  return inferred;
}

} // namespace strata::onnx_importer
