// Helpers over the element type encoding of element_type.h: sizes, the short
// names tools print and parse ("f32", "i1", ...) and numpy dtype strings
// ("<f4", "|b1", ...) for .npy files.
#ifndef STRATA_HAL_ELEMENT_TYPE_UTIL_H_
#define STRATA_HAL_ELEMENT_TYPE_UTIL_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/base/status.h"
#include "strata/hal/element_type.h"

namespace strata::hal {

using ElementType = strata_hal_element_type_t;
using EncodingType = uint32_t;

// True for the element types listed in element_type.h.
bool IsKnownElementType(ElementType type);

// Bytes one element occupies in a buffer (booleans take a byte); 0 for NONE.
inline uint64_t ElementTypeByteSize(ElementType type) {
  return STRATA_HAL_ELEMENT_TYPE_BYTE_COUNT(type);
}

// Short name: "f32", "f64", "f16", "bf16", "i1" (bool), "i8".."i64",
// "u8".."u64". Unknown types print as "type(0x...)" so messages stay useful.
std::string ElementTypeName(ElementType type);

// Inverse of ElementTypeName for known types. INVALID_ARGUMENT otherwise.
Result<ElementType> ParseElementType(std::string_view name);

// numpy dtype descriptor with byte order: "<f4", "|b1", "|i1", "<i8", ...
// bf16 has no numpy dtype: INVALID_ARGUMENT.
Result<std::string> ElementTypeToNumpyDtype(ElementType type);

// Accepts '<', '=' and '|' byte orders ('|' and '<' both for 1-byte types);
// big-endian ('>') is UNIMPLEMENTED. Also accepts the numpy single-char
// aliases "?" (bool).
Result<ElementType> ElementTypeFromNumpyDtype(std::string_view dtype);

// "2x2xf32" -> shape {2, 2}, f32; "f32" -> rank 0. Dimensions must be
// non-negative decimal integers.
struct ShapeAndElementType {
  std::vector<int64_t> shape;
  ElementType element_type = STRATA_HAL_ELEMENT_TYPE_NONE;
};
Result<ShapeAndElementType> ParseShapeAndElementType(std::string_view text);

// {2, 2}, f32 -> "2x2xf32"; rank 0 -> "f32".
std::string FormatShapeAndElementType(std::span<const int64_t> shape,
                                      ElementType element_type);

} // namespace strata::hal

#endif // STRATA_HAL_ELEMENT_TYPE_UTIL_H_
