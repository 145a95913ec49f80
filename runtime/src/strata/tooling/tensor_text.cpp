#include "strata/tooling/tensor_text.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "strata/base/checked_math.h"
#include "strata/hal/abi_enums.h"
#include "strata/hal/element_type_util.h"
#include "strata/tooling/half_float.h"
#include "strata/tooling/numpy_io.h"

namespace strata::tooling {
namespace {

using hal::ElementType;

bool IsFloat(ElementType type) {
  uint32_t numerical = STRATA_HAL_ELEMENT_TYPE_NUMERICAL_TYPE(type);
  return numerical == STRATA_HAL_NUMERICAL_TYPE_FLOAT_IEEE ||
         numerical == STRATA_HAL_NUMERICAL_TYPE_FLOAT_BRAIN;
}
bool IsUnsigned(ElementType type) {
  return STRATA_HAL_ELEMENT_TYPE_NUMERICAL_TYPE(type) ==
         STRATA_HAL_NUMERICAL_TYPE_INTEGER_UNSIGNED;
}
bool IsBool(ElementType type) {
  return STRATA_HAL_ELEMENT_TYPE_NUMERICAL_TYPE(type) ==
         STRATA_HAL_NUMERICAL_TYPE_BOOLEAN;
}

// Splits on whitespace and commas; brackets are ignored so numpy-style
// "[[1, 2], [3, 4]]" also reads.
std::vector<std::string_view> SplitValues(std::string_view text) {
  std::vector<std::string_view> tokens;
  size_t i = 0;
  auto isSeparator = [](char c) {
    return c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r' ||
           c == '[' || c == ']';
  };
  while (i < text.size()) {
    while (i < text.size() && isSeparator(text[i]))
      ++i;
    size_t start = i;
    while (i < text.size() && !isSeparator(text[i]))
      ++i;
    if (i > start)
      tokens.push_back(text.substr(start, i - start));
  }
  return tokens;
}

Result<double> ParseFloatToken(std::string_view token) {
  double value = 0;
  std::string_view digits = token;
  if (!digits.empty() && digits[0] == '+')
    digits.remove_prefix(1);
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size())
    return InvalidArgumentError("'", token, "' is not a number");
  return value;
}

// Writes one element parsed from `token` at `out`.
Status StoreElement(std::string_view token, ElementType type, uint8_t *out) {
  size_t size = hal::ElementTypeByteSize(type);
  if (IsBool(type)) {
    uint8_t value;
    if (token == "1" || token == "true" || token == "True")
      value = 1;
    else if (token == "0" || token == "false" || token == "False")
      value = 0;
    else
      return InvalidArgumentError("'", token, "' is not a boolean (use 0/1)");
    *out = value;
    return OkStatus();
  }
  if (IsFloat(type)) {
    STRATA_ASSIGN_OR_RETURN(double value, ParseFloatToken(token));
    if (type == STRATA_HAL_ELEMENT_TYPE_FLOAT_64) {
      std::memcpy(out, &value, 8);
    } else if (type == STRATA_HAL_ELEMENT_TYPE_FLOAT_32) {
      float narrow = float(value);
      std::memcpy(out, &narrow, 4);
    } else {
      uint16_t bits = type == STRATA_HAL_ELEMENT_TYPE_FLOAT_16
                          ? FloatToHalf(float(value))
                          : FloatToBFloat16(float(value));
      std::memcpy(out, &bits, 2);
    }
    return OkStatus();
  }
  // Integers: range-checked for the element width.
  unsigned bits = STRATA_HAL_ELEMENT_TYPE_BIT_COUNT(type);
  std::string_view digits = token;
  if (!digits.empty() && digits[0] == '+')
    digits.remove_prefix(1);
  if (IsUnsigned(type)) {
    uint64_t value = 0;
    auto [end, ec] =
        std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || end != digits.data() + digits.size())
      return InvalidArgumentError("'", token, "' is not an unsigned integer");
    if (bits < 64 && value >> bits)
      return OutOfRangeError("'", token, "' does not fit in ",
                             hal::ElementTypeName(type));
    std::memcpy(out, &value, size);
    return OkStatus();
  }
  int64_t value = 0;
  auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (ec != std::errc() || end != digits.data() + digits.size())
    return InvalidArgumentError("'", token, "' is not an integer");
  if (bits < 64) {
    int64_t limit = int64_t(1) << (bits - 1);
    if (value < -limit || value >= limit)
      return OutOfRangeError("'", token, "' does not fit in ",
                             hal::ElementTypeName(type));
  }
  std::memcpy(out, &value, size); // little endian: low bytes first
  return OkStatus();
}

Result<RefPtr<hal::BufferView>> ParseTensorText(std::string_view text,
                                                hal::Allocator &allocator) {
  size_t equals = text.find('=');
  if (equals == std::string_view::npos)
    return InvalidArgumentError(
        "tensor '", text,
        "' has no '='; expected SHAPExTYPE=VALUES (e.g. 2x2xf32=1 2 3 4) or "
        "@file.npy");
  STRATA_ASSIGN_OR_RETURN(
      auto type, hal::ParseShapeAndElementType(text.substr(0, equals)));
  STRATA_ASSIGN_OR_RETURN(
      uint64_t byte_length,
      hal::BufferView::ComputeByteLength(type.shape, type.element_type));
  STRATA_ASSIGN_OR_RETURN(uint64_t count, CheckedElementCount(type.shape));
  std::vector<std::string_view> tokens = SplitValues(text.substr(equals + 1));
  if (tokens.size() != count && tokens.size() != 1)
    return InvalidArgumentError("tensor '", text.substr(0, equals), "' has ",
                                count, " elements but ", tokens.size(),
                                " values were given");
  size_t element_size = hal::ElementTypeByteSize(type.element_type);
  // The allocator decides whether the tensor may be this large (its limit
  // is a RESOURCE_EXHAUSTED error); only then are the elements written, in
  // place.
  STRATA_ASSIGN_OR_RETURN(
      RefPtr<hal::BufferView> view,
      hal::BufferView::Allocate(allocator, type.shape, type.element_type,
                                STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL |
                                    STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
                                STRATA_HAL_BUFFER_USAGE_DEFAULT));
  STRATA_ASSIGN_OR_RETURN(hal::MappedRange mapped,
                          view->buffer()->MapRange(0, byte_length));
  uint8_t *data = mapped.data;
  for (uint64_t i = 0; i < count; ++i) {
    // One value fills the whole tensor.
    std::string_view token = tokens.size() == 1 ? tokens[0] : tokens[i];
    Status status =
        StoreElement(token, type.element_type, data + i * element_size);
    if (!status.ok())
      return status.Annotate(
          StrCat("element ", i, " of tensor '", text.substr(0, equals), "'"));
    if (tokens.size() == 1 && count > 1) {
      for (uint64_t j = 1; j < count; ++j)
        std::memcpy(data + j * element_size, data, element_size);
      break;
    }
  }
  return view;
}

// One element as a double (floats, bools) for comparisons.
double LoadAsDouble(const uint8_t *in, ElementType type) {
  switch (type) {
  case STRATA_HAL_ELEMENT_TYPE_FLOAT_64: {
    double v;
    std::memcpy(&v, in, 8);
    return v;
  }
  case STRATA_HAL_ELEMENT_TYPE_FLOAT_32: {
    float v;
    std::memcpy(&v, in, 4);
    return v;
  }
  case STRATA_HAL_ELEMENT_TYPE_FLOAT_16: {
    uint16_t v;
    std::memcpy(&v, in, 2);
    return HalfToFloat(v);
  }
  case STRATA_HAL_ELEMENT_TYPE_BFLOAT_16: {
    uint16_t v;
    std::memcpy(&v, in, 2);
    return BFloat16ToFloat(v);
  }
  default:
    return 0;
  }
}

// Integers and booleans as (sign-extended) 64-bit patterns.
uint64_t LoadAsBits(const uint8_t *in, ElementType type) {
  size_t size = hal::ElementTypeByteSize(type);
  uint64_t value = 0;
  std::memcpy(&value, in, size);
  bool is_signed = STRATA_HAL_ELEMENT_TYPE_NUMERICAL_TYPE(type) ==
                   STRATA_HAL_NUMERICAL_TYPE_INTEGER_SIGNED;
  if (is_signed && size < 8 && (value >> (size * 8 - 1)) & 1)
    value |= ~uint64_t(0) << (size * 8);
  return value;
}

void AppendElement(std::string &out, const uint8_t *in, ElementType type) {
  char buffer[64];
  std::to_chars_result result;
  if (IsFloat(type)) {
    if (type == STRATA_HAL_ELEMENT_TYPE_FLOAT_64)
      result = std::to_chars(buffer, buffer + sizeof(buffer),
                             LoadAsDouble(in, type));
    else
      result = std::to_chars(buffer, buffer + sizeof(buffer),
                             float(LoadAsDouble(in, type)));
  } else if (IsBool(type)) {
    result = std::to_chars(buffer, buffer + sizeof(buffer), int(*in != 0));
  } else if (IsUnsigned(type)) {
    result =
        std::to_chars(buffer, buffer + sizeof(buffer), LoadAsBits(in, type));
  } else {
    result = std::to_chars(buffer, buffer + sizeof(buffer),
                           int64_t(LoadAsBits(in, type)));
  }
  out.append(buffer, result.ptr);
}

} // namespace

Result<RefPtr<hal::BufferView>> ParseTensorArgument(std::string_view text,
                                                    hal::Allocator &allocator) {
  if (!text.empty() && text[0] == '@')
    return LoadNumpyFile(std::string(text.substr(1)), allocator);
  return ParseTensorText(text, allocator);
}

Result<std::string> FormatBufferView(const hal::BufferView &view,
                                     size_t max_elements) {
  STRATA_ASSIGN_OR_RETURN(auto mapping,
                          view.buffer()->MapRange(0, view.byte_length()));
  std::string out = view.FormatShape() + "=";
  size_t element_size = hal::ElementTypeByteSize(view.element_type());
  uint64_t count = view.element_count();
  for (uint64_t i = 0; i < count; ++i) {
    if (i == max_elements) {
      out += " ...";
      break;
    }
    if (i)
      out += ' ';
    AppendElement(out, mapping.data + i * element_size, view.element_type());
  }
  return out;
}

Status CompareBufferViews(const hal::BufferView &actual,
                          const hal::BufferView &expected, double rtol,
                          double atol) {
  if (actual.element_type() != expected.element_type() ||
      !std::equal(actual.shape().begin(), actual.shape().end(),
                  expected.shape().begin(), expected.shape().end()))
    return InvalidArgumentError("expected ", expected.FormatShape(), ", got ",
                                actual.FormatShape());
  STRATA_ASSIGN_OR_RETURN(auto got,
                          actual.buffer()->MapRange(0, actual.byte_length()));
  STRATA_ASSIGN_OR_RETURN(
      auto want, expected.buffer()->MapRange(0, expected.byte_length()));
  ElementType type = actual.element_type();
  size_t element_size = hal::ElementTypeByteSize(type);
  for (uint64_t i = 0; i < actual.element_count(); ++i) {
    const uint8_t *a = got.data + i * element_size;
    const uint8_t *b = want.data + i * element_size;
    if (IsFloat(type)) {
      double x = LoadAsDouble(a, type), y = LoadAsDouble(b, type);
      if (std::isnan(x) && std::isnan(y))
        continue;
      if (!(std::fabs(x - y) <= atol + rtol * std::fabs(y)))
        return FailedPreconditionError("element ", i, " is ", x, ", expected ",
                                       y, " (rtol ", rtol, ", atol ", atol,
                                       ")");
    } else if (LoadAsBits(a, type) != LoadAsBits(b, type)) {
      std::string x, y;
      AppendElement(x, a, type);
      AppendElement(y, b, type);
      return FailedPreconditionError("element ", i, " is ", x, ", expected ",
                                     y);
    }
  }
  return OkStatus();
}

} // namespace strata::tooling
