//===- InputShapePins.cpp - static sizes for a model's dynamic inputs -----===//

#include "strata/compiler/Importers/ONNX/InputShapePins.h"

#include "onnx/onnx_pb.h"
#include "llvm/ADT/APInt.h"
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
  return llvm::join(llvm::map_range(shape,
                                    [](int64_t size) {
                                      return size == kDynamicPin
                                                 ? std::string("?")
                                                 : std::to_string(size);
                                    }),
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
      int64_t size = kDynamicPin;
      if (sizeText != "?" && !parseSize(sizeText, size)) {
        valid = false;
        break;
      }
      shape.push_back(size);
    }
  }
  if (!valid) {
    error = "--input-shape='" + text.str() +
            "': expected NAME=D0xD1x..., an input name and its positive "
            "sizes or ? for one left dynamic "
            "(--input-shape=pixels=1x3x224x224)";
    return false;
  }
  pins.inputs.emplace_back(name.str(), std::move(shape));
  return true;
}

bool parseInputValuePin(llvm::StringRef text, InputShapePins &pins,
                        std::string &error) {
  auto [name, valuesText] = text.rsplit('=');
  std::vector<std::string> values;
  for (llvm::StringRef value : llvm::split(valuesText, ','))
    values.push_back(value.trim().str());
  if (name.empty() || !text.contains('=') ||
      llvm::any_of(values, [](const std::string &v) { return v.empty(); })) {
    error = "--input-value='" + text.str() +
            "': expected NAME=V0,V1,..., an input name and its elements "
            "(--input-value=sample_rate=16000)";
    return false;
  }
  pins.values.emplace_back(name.str(), std::move(values));
  return true;
}

namespace onnx_importer {
namespace {

// `text` as an element of `tensor` (its data_type set), appended in the
// field ONNX stores that type in; false if it is not one.
bool appendElement(onnx::TensorProto &tensor, llvm::StringRef text) {
  using T = onnx::TensorProto;
  int type = tensor.data_type();
  if (type == T::FLOAT || type == T::DOUBLE) {
    double value;
    if (text.getAsDouble(value))
      return false;
    if (type == T::FLOAT)
      tensor.add_float_data(static_cast<float>(value));
    else
      tensor.add_double_data(value);
    return true;
  }
  if (type == T::BOOL) {
    if (text != "0" && text != "1" && text != "true" && text != "false")
      return false;
    tensor.add_int32_data(text == "1" || text == "true");
    return true;
  }
  bool isUnsigned = type == T::UINT8 || type == T::UINT16 ||
                    type == T::UINT32 || type == T::UINT64;
  unsigned bits = type == T::INT8 || type == T::UINT8     ? 8
                  : type == T::INT16 || type == T::UINT16 ? 16
                  : type == T::INT32 || type == T::UINT32 ? 32
                  : type == T::INT64 || type == T::UINT64 ? 64
                                                          : 0;
  if (bits == 0)
    return false;
  llvm::APInt value;
  if (text.getAsInteger(10, value))
    return false;
  if (isUnsigned ? value.isNegative() || value.getActiveBits() > bits
                 : value.getSignificantBits() > bits)
    return false;
  if (type == T::INT64)
    tensor.add_int64_data(value.getSExtValue());
  else if (type == T::UINT32 || type == T::UINT64)
    tensor.add_uint64_data(value.getZExtValue());
  else
    tensor.add_int32_data(static_cast<int32_t>(value.getSExtValue()));
  return true;
}

// Makes input `name` of `graph` the initializer `values` give it (its
// declared type; its shape, static once shapes are pinned).
bool pinInputValue(onnx::ModelProto &model, const std::string &name,
                   const std::vector<std::string> &values, std::string &error) {
  onnx::GraphProto &graph = *model.mutable_graph();
  auto &inputs = *graph.mutable_input();
  auto input = llvm::find_if(inputs, [&](const onnx::ValueInfoProto &info) {
    return info.name() == name;
  });
  std::string source = "--input-value=" + name + "=" + llvm::join(values, ",");
  if (input == inputs.end() ||
      llvm::any_of(graph.initializer(), [&](const onnx::TensorProto &t) {
        return t.name() == name;
      })) {
    error = source + ": the model has no input '" + name + "'";
    return false;
  }
  if (!input->type().has_tensor_type()) {
    error = source + ": input '" + name + "' is not a tensor";
    return false;
  }
  const auto &type = input->type().tensor_type();
  onnx::TensorProto tensor;
  tensor.set_name(name);
  tensor.set_data_type(type.elem_type());
  int64_t count = 1;
  bool isStatic = type.has_shape();
  for (const auto &dim : type.shape().dim()) {
    isStatic &= dim.has_dim_value();
    tensor.add_dims(dim.dim_value());
    count *= dim.dim_value();
  }
  if (!isStatic) {
    error = source + ": input '" + name +
            "' has dynamic dimensions; pin them first (--input-shape)";
    return false;
  }
  if (count != static_cast<int64_t>(values.size())) {
    error = source + ": input '" + name + "' holds " + std::to_string(count) +
            " elements, the pin gives " + std::to_string(values.size());
    return false;
  }
  for (const std::string &value : values)
    if (!appendElement(tensor, value)) {
      error = source + ": '" + value + "' is not a value of input '" + name +
              "' (element type " +
              onnx::TensorProto::DataType_Name(
                  static_cast<onnx::TensorProto::DataType>(type.elem_type())) +
              ")";
      return false;
    }
  *graph.add_initializer() = std::move(tensor);
  // From IR 4 an initializer needs no input entry; before, it keeps one.
  if (model.ir_version() >= 4)
    inputs.erase(input);
  return true;
}

} // namespace

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
      if (size == kDynamicPin)
        continue;
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
  for (const auto &[name, values] : pins.values)
    if (!pinInputValue(model, name, values, error))
      return false;
  return true;
}

} // namespace onnx_importer
} // namespace strata
