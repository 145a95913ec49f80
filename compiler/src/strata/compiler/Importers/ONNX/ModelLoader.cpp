//===- ModelLoader.cpp - parse, check and normalize an ONNX model ---------===//
//
// Compiled with exceptions and RTTI: libonnx reports errors by throwing.
// This file includes no MLIR header, so no exception crosses into MLIR code.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/ModelLoader.h"

#include "strata/compiler/Importers/ONNX/ExternalData.h"

#include <climits>
#include <exception>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "google/protobuf/io/coded_stream.h"
#include "onnx/checker.h"
#include "onnx/shape_inference/implementation.h"
#include "onnx/version_converter/convert.h"
#include "llvm/ADT/STLExtras.h"

namespace strata::onnx_importer {
namespace {

// Graph inputs and outputs must be tensors, every graph output a graph
// input, an initializer or some node's output, Gemm operands matrices and
// window attributes positive.
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
  // libonnx's Gemm version adapters index the operands' dims unchecked.
  std::map<std::string, int> ranks;
  for (const auto &input : graph.input())
    if (input.type().has_tensor_type() &&
        input.type().tensor_type().has_shape())
      ranks[input.name()] = input.type().tensor_type().shape().dim_size();
  for (const auto &initializer : graph.initializer())
    ranks[initializer.name()] = initializer.dims_size();
  for (const auto &node : graph.node()) {
    if (node.op_type() != "Gemm")
      continue;
    for (int i = 0; i < std::min(node.input_size(), 2); ++i) {
      auto rank = ranks.find(node.input(i));
      if (rank != ranks.end() && rank->second != 2) {
        error = "node '" + node.name() + "' (Gemm): input " +
                std::to_string(i) + " must be a matrix (rank 2), not rank " +
                std::to_string(rank->second);
        return false;
      }
    }
  }
  // libonnx's shape inference divides by strides and dilations unchecked.
  for (const auto &node : graph.node())
    for (const auto &attribute : node.attribute()) {
      const std::string &name = attribute.name();
      if (name != "strides" && name != "dilations" && name != "kernel_shape")
        continue;
      for (int64_t value : attribute.ints())
        if (value < 1) {
          error = "node '" + node.name() + "' (" + node.op_type() +
                  "): " + name + " must be positive";
          return false;
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

} // namespace

LoadedModel loadModel(const std::string &modelPath, const std::string &contents,
                      int targetOpset, const std::string &externalDataRoot,
                      int64_t maxNodes, std::string &error) {
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
    ExternalDataOptions externalData;
    externalData.modelDirectory =
        std::filesystem::path(modelPath).parent_path();
    externalData.allowedRoot = externalDataRoot;
    if (!loadExternalData(*model, externalData, error))
      return result;
    if (!checkLocalFunctions(*model, maxNodes, error))
      return result;
    onnx::checker::check_model(*model);
    // libonnx's version converter and shape inference crash on some
    // malformed graphs (undefined outputs, zero strides): reject them first.
    if (!checkGraphOutputsDefined(model->graph(), error))
      return result;
    int64_t opset = getDefaultDomainOpset(*model);
    // libonnx's Scan 8 -> 9 adapter drops the batch dimension from the
    // graph's inputs instead of adding one around the Scan: such models
    // keep their opset (the Scan lowering reads the opset-8 form).
    bool hasOpset8Scan = opset != 0 && opset < 9 &&
                         llvm::any_of(
                             model->graph().node(),
                             [](const onnx::NodeProto &node) {
                               return node.op_type() == "Scan";
                             });
    if (opset != 0 && opset != targetOpset && !hasOpset8Scan) {
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
    onnx::ShapeInferenceOptions options(/*check_type_val=*/false,
                                        /*strict_mode_val=*/1,
                                        /*data_prop_val=*/true);
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
                      std::string &error) {
  onnx::ModelProto model;
  model.set_ir_version(onnx::IR_VERSION);
  auto *import = model.add_opset_import();
  import->set_domain("");
  import->set_version(opset);
  *model.mutable_graph() = std::move(graph);
  // Not strict: a node inference cannot type keeps no type (its lowering
  // then computes one or says it needs one), the others still get theirs.
  onnx::ShapeInferenceOptions options(/*check_type_val=*/false,
                                      /*strict_mode_val=*/0,
                                      /*data_prop_val=*/true);
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
