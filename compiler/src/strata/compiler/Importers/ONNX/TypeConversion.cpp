//===- TypeConversion.cpp - ONNX types and tensors to MLIR ----------------===//
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include <cstring>

#include "llvm/ADT/APFloat.h"

using namespace mlir;

namespace strata::onnx_importer {

Type convertElementType(MLIRContext *context, int32_t onnxType) {
  Builder b(context);
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
    return b.getI8Type();
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::UINT16:
    return b.getI16Type();
  case onnx::TensorProto::INT32:
  case onnx::TensorProto::UINT32:
    return b.getI32Type();
  case onnx::TensorProto::INT64:
  case onnx::TensorProto::UINT64:
    return b.getI64Type();
  default:
    return {};
  }
}

bool isStaticTensorType(const onnx::TypeProto *type) {
  return type && type->has_tensor_type() && type->tensor_type().has_shape() &&
         llvm::all_of(type->tensor_type().shape().dim(),
                      [](const auto &dim) { return dim.has_dim_value(); });
}

int32_t getONNXElementType(const onnx::TypeProto *known, Type elementType) {
  if (known && known->has_tensor_type() && known->tensor_type().elem_type())
    return known->tensor_type().elem_type();
  if (elementType.isF32())
    return onnx::TensorProto::FLOAT;
  if (elementType.isF64())
    return onnx::TensorProto::DOUBLE;
  if (elementType.isF16())
    return onnx::TensorProto::FLOAT16;
  if (elementType.isBF16())
    return onnx::TensorProto::BFLOAT16;
  switch (elementType.isInteger() ? elementType.getIntOrFloatBitWidth() : 0) {
  case 1:
    return onnx::TensorProto::BOOL;
  case 8:
    return onnx::TensorProto::INT8;
  case 16:
    return onnx::TensorProto::INT16;
  case 32:
    return onnx::TensorProto::INT32;
  case 64:
    return onnx::TensorProto::INT64;
  default:
    return onnx::TensorProto::UNDEFINED;
  }
}

bool isUnsignedElementType(int32_t onnxType) {
  return onnxType == onnx::TensorProto::UINT8 ||
         onnxType == onnx::TensorProto::UINT16 ||
         onnxType == onnx::TensorProto::UINT32 ||
         onnxType == onnx::TensorProto::UINT64;
}

static std::string getTypeName(int32_t onnxType) {
  return onnx::TensorProto::DataType_Name(
      static_cast<onnx::TensorProto::DataType>(onnxType));
}

// "[2, 3]", the middle of long shapes elided.
static std::string describeShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape.size() > 8 && i == 4) {
      text += "..., ";
      i = shape.size() - 3;
    }
    text += std::to_string(shape[i]) + (i + 1 < shape.size() ? ", " : "");
  }
  return text + "]";
}

std::string checkTensorSize(ArrayRef<int64_t> shape, Type elementType,
                            const ONNXImportLimits &limits) {
  if (static_cast<int64_t>(shape.size()) > limits.maxRank)
    return "rank " + std::to_string(shape.size()) + " is past the limit of " +
           std::to_string(limits.maxRank) + " (--max-tensor-rank)";
  for (int64_t d : shape)
    if (d < 0)
      return "shape " + describeShape(shape) + " has a negative dimension";
  int64_t elements = llvm::is_contained(shape, 0) ? 0 : 1;
  for (int64_t d : shape)
    if (elements && __builtin_mul_overflow(elements, d, &elements))
      return "the element count of shape " + describeShape(shape) +
             " overflows 64 bits";
  int64_t width =
      elementType.isIntOrFloat()
          ? std::max<int64_t>(elementType.getIntOrFloatBitWidth(), 8)
          : 64;
  int64_t bytes = 0;
  bool overflows = __builtin_mul_overflow(elements, width / 8, &bytes);
  if (!overflows && bytes <= limits.maxTensorBytes)
    return {};
  std::string typeName;
  llvm::raw_string_ostream(typeName) << elementType;
  return "a tensor of shape " + describeShape(shape) + " and " + typeName +
         " elements holds " +
         (overflows ? std::string("2^63 or more") : std::to_string(bytes)) +
         " bytes, past the limit of " + std::to_string(limits.maxTensorBytes) +
         " bytes per tensor (--max-tensor-bytes)";
}

RankedTensorType convertTensorType(MLIRContext *context,
                                   const onnx::TypeProto &type,
                                   const ONNXImportLimits &limits,
                                   std::string &error, bool allowDynamic) {
  if (!type.has_tensor_type()) {
    error = "only tensor values are supported (not sequences, maps or "
            "optionals)";
    return {};
  }
  const auto &tensorType = type.tensor_type();
  Type elementType = convertElementType(context, tensorType.elem_type());
  if (!elementType) {
    error = "element type " + getTypeName(tensorType.elem_type()) +
            " is not supported";
    return {};
  }
  if (!tensorType.has_shape()) {
    error = "the rank is unknown";
    return {};
  }
  SmallVector<int64_t> shape, staticShape;
  for (const auto &dim : tensorType.shape().dim()) {
    if (!dim.has_dim_value() && allowDynamic) {
      shape.push_back(ShapedType::kDynamic);
      continue;
    }
    if (!dim.has_dim_value()) {
      error = "dimension " + std::to_string(shape.size()) + " is dynamic" +
              (dim.has_dim_param() ? " ('" + dim.dim_param() + "')"
                                   : std::string()) +
              "; only static shapes are supported";
      return {};
    }
    shape.push_back(dim.dim_value());
    staticShape.push_back(dim.dim_value());
  }
  // Dynamic dims are sized at run time; the rank and the static ones must
  // fit.
  if (static_cast<int64_t>(shape.size()) > limits.maxRank)
    error = checkTensorSize(shape, elementType, limits);
  else
    error = checkTensorSize(staticShape, elementType, limits);
  if (!error.empty())
    return {};
  return RankedTensorType::get(shape, elementType);
}

// Typed data fields of a TensorProto, widened to 64 bits.
template <typename T, typename Field>
static void appendField(SmallVectorImpl<T> &out, const Field &field) {
  for (auto v : field)
    out.push_back(static_cast<T>(v));
}

DenseElementsAttr convertTensorProto(MLIRContext *context,
                                     const onnx::TensorProto &tensor,
                                     const ONNXImportLimits &limits,
                                     std::string &error) {
  Type elementType = convertElementType(context, tensor.data_type());
  if (!elementType) {
    error = "tensor '" + tensor.name() + "' has unsupported element type " +
            getTypeName(tensor.data_type());
    return {};
  }
  if (tensor.data_location() == onnx::TensorProto_DataLocation_EXTERNAL) {
    error = "tensor '" + tensor.name() + "' has external data not loaded";
    return {};
  }
  SmallVector<int64_t> shape(tensor.dims().begin(), tensor.dims().end());
  error = checkTensorSize(shape, elementType, limits);
  if (!error.empty())
    return {};
  auto type = RankedTensorType::get(shape, elementType);
  int64_t count = type.getNumElements();
  unsigned width = elementType.getIntOrFloatBitWidth();
  unsigned bytes = width == 1 ? 1 : width / 8;

  // Collect the elements as little-endian bytes of their storage width.
  std::string raw;
  if (tensor.has_raw_data()) {
    raw = tensor.raw_data();
  } else {
    auto pushBits = [&](uint64_t bits) {
      raw.append(reinterpret_cast<const char *>(&bits), bytes);
    };
    switch (tensor.data_type()) {
    case onnx::TensorProto::FLOAT:
      for (float v : tensor.float_data())
        raw.append(reinterpret_cast<const char *>(&v), 4);
      break;
    case onnx::TensorProto::DOUBLE:
      for (double v : tensor.double_data())
        raw.append(reinterpret_cast<const char *>(&v), 8);
      break;
    case onnx::TensorProto::INT64:
      for (int64_t v : tensor.int64_data())
        pushBits(static_cast<uint64_t>(v));
      break;
    case onnx::TensorProto::UINT32:
    case onnx::TensorProto::UINT64:
      for (uint64_t v : tensor.uint64_data())
        pushBits(v);
      break;
    default: // int8/16/32, uint8/16, bool, float16, bfloat16
      for (int32_t v : tensor.int32_data())
        pushBits(static_cast<uint64_t>(static_cast<int64_t>(v)));
      break;
    }
  }
  if (static_cast<int64_t>(raw.size()) != count * bytes) {
    error = "tensor '" + tensor.name() + "' holds " +
            std::to_string(raw.size()) + " bytes, expected " +
            std::to_string(count * bytes);
    return {};
  }
  if (width == 1) {
    SmallVector<bool> values;
    for (char c : raw)
      values.push_back(c != 0);
    return DenseElementsAttr::get(type, values);
  }
  return DenseElementsAttr::getFromRawBuffer(
      type, ArrayRef<char>(raw.data(), raw.size()));
}

} // namespace strata::onnx_importer
