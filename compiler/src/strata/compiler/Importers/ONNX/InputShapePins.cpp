//===- InputShapePins.cpp - static sizes for a model's dynamic inputs -----===//

#include "strata/compiler/Importers/ONNX/InputShapePins.h"

#include "onnx/onnx_pb.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

namespace strata {
namespace {

// A positive size, as one dimension of a pin.
bool parseSize(llvm::StringRef text, int64_t &size) {
  return !text.getAsInteger(10, size) && size > 0;
}

std::string describeShape(llvm::ArrayRef<int64_t> shape) {
  return llvm::join(
      llvm::map_range(shape, [](int64_t size) { return std::to_string(size); }),
      "x");
}

} // namespace

bool parseDimPin(llvm::StringRef text, InputShapePins &pins,
                 std::string &error) {
  auto [name, sizeText] = text.split('=');
  int64_t size = 0;
  if (name.empty() || sizeText.empty() || sizeText.contains('=') ||
      !parseSize(sizeText, size)) {
    error = "--dim='" + text.str() +
            "': expected NAME=SIZE, a dimension name and a positive size "
            "(--dim=batch=1)";
    return false;
  }
  pins.dims.emplace_back(name.str(), size);
  return true;
}

bool parseInputShapePin(llvm::StringRef text, InputShapePins &pins,
                        std::string &error) {
  // Input names may hold '=' in principle; sizes never do.
  auto [name, shapeText] = text.rsplit('=');
  std::vector<int64_t> shape;
  bool valid = !name.empty() && text.contains('=');
  if (valid && !shapeText.empty()) {
    llvm::SmallVector<llvm::StringRef> sizes;
    shapeText.split(sizes, 'x');
    for (llvm::StringRef sizeText : sizes) {
      int64_t size = 0;
      if (!parseSize(sizeText, size)) {
        valid = false;
        break;
      }
      shape.push_back(size);
    }
  }
  if (!valid) {
    error = "--input-shape='" + text.str() +
            "': expected NAME=D0xD1x..., an input name and its positive "
            "sizes (--input-shape=pixels=1x3x224x224)";
    return false;
  }
  pins.inputs.emplace_back(name.str(), std::move(shape));
  return true;
}

namespace onnx_importer {

bool applyInputShapePins(onnx::ModelProto &model, const InputShapePins &pins,
                         std::string &error) {
  if (pins.empty())
    return true;
  onnx::GraphProto &graph = *model.mutable_graph();
  llvm::StringSet<> initializers;
  for (const auto &tensor : graph.initializer())
    initializers.insert(tensor.name());
  llvm::SmallVector<onnx::ValueInfoProto *> inputs;
  llvm::SetVector<llvm::StringRef> inputDimNames;
  for (auto &input : *graph.mutable_input()) {
    if (initializers.contains(input.name()))
      continue;
    inputs.push_back(&input);
    if (input.type().has_tensor_type() &&
        input.type().tensor_type().has_shape())
      for (const auto &dim : input.type().tensor_type().shape().dim())
        if (dim.has_dim_param())
          inputDimNames.insert(dim.dim_param());
  }
  // Copied: pinning a dimension below drops the string its name is in.
  std::vector<std::string> dimNames(inputDimNames.begin(), inputDimNames.end());

  // The size of each pinned name, and the pin that gave it.
  llvm::StringMap<std::pair<int64_t, std::string>> sizes;
  auto bind = [&](llvm::StringRef name, int64_t size,
                  const std::string &source) {
    auto [it, inserted] = sizes.try_emplace(name, size, source);
    if (inserted || it->second.first == size)
      return true;
    error = "dimension '" + name.str() + "' is pinned to " +
            std::to_string(it->second.first) + " by " + it->second.second +
            " and to " + std::to_string(size) + " by " + source;
    return false;
  };
  for (const auto &[name, size] : pins.dims) {
    if (!llvm::is_contained(dimNames, name)) {
      error = "--dim=" + name + "=" + std::to_string(size) +
              ": no input of the model has a dimension named '" + name + "' (" +
              (dimNames.empty()
                   ? std::string("its inputs have no named dimensions")
                   : "their named dimensions: " + llvm::join(dimNames, ", ")) +
              ")";
      return false;
    }
    if (!bind(name, size, "--dim=" + name + "=" + std::to_string(size)))
      return false;
  }

  for (const auto &[name, shape] : pins.inputs) {
    auto input = llvm::find_if(inputs, [&](onnx::ValueInfoProto *info) {
      return info->name() == name;
    });
    if (input == inputs.end()) {
      error = "--input-shape names '" + name +
              "', which is not an input of the model (its inputs: " +
              llvm::join(llvm::map_range(inputs,
                                         [](onnx::ValueInfoProto *info) {
                                           return "'" + info->name() + "'";
                                         }),
                         ", ") +
              ")";
      return false;
    }
    std::string source = "--input-shape=" + name + "=" + describeShape(shape);
    if (!(*input)->type().has_tensor_type()) {
      error = "input '" + name + "' is not a tensor; " + source +
              " gives it a shape";
      return false;
    }
    onnx::TypeProto_Tensor *tensorType =
        (*input)->mutable_type()->mutable_tensor_type();
    // A model may leave an input's rank open: the pin gives it.
    bool rankOpen = !tensorType->has_shape();
    onnx::TensorShapeProto *declared = tensorType->mutable_shape();
    if (rankOpen)
      for (size_t i = 0; i < shape.size(); ++i)
        declared->add_dim();
    if (declared->dim_size() != static_cast<int>(shape.size())) {
      error = "input '" + name + "' has " +
              std::to_string(declared->dim_size()) + " dimensions; " + source +
              " gives " + std::to_string(shape.size());
      return false;
    }
    for (auto [index, size] : llvm::enumerate(shape)) {
      onnx::TensorShapeProto::Dimension *dim = declared->mutable_dim(index);
      if (dim->has_dim_value()) {
        if (dim->dim_value() == size)
          continue;
        error = "input '" + name + "' dimension " + std::to_string(index) +
                " is " + std::to_string(dim->dim_value()) + " in the model; " +
                source + " gives " + std::to_string(size);
        return false;
      }
      if (dim->has_dim_param() && !bind(dim->dim_param(), size, source))
        return false;
      dim->set_dim_value(size);
    }
  }

  // Every dimension of a pinned name takes its size, wherever the graph
  // declares it (inputs, outputs, the types of intermediate values).
  auto pinNamedDims = [&](onnx::ValueInfoProto &info) {
    if (!info.type().has_tensor_type() ||
        !info.type().tensor_type().has_shape())
      return;
    for (auto &dim : *info.mutable_type()
                          ->mutable_tensor_type()
                          ->mutable_shape()
                          ->mutable_dim())
      if (dim.has_dim_param())
        if (auto it = sizes.find(dim.dim_param()); it != sizes.end())
          dim.set_dim_value(it->second.first);
  };
  for (onnx::ValueInfoProto *input : inputs)
    pinNamedDims(*input);
  for (auto &output : *graph.mutable_output())
    pinNamedDims(output);
  for (auto &info : *graph.mutable_value_info())
    pinNamedDims(info);
  return true;
}

} // namespace onnx_importer
} // namespace strata
