#include "strata/hal/element_type_util.h"

#include <charconv>
#include <cstdio>

namespace strata::hal {
namespace {

struct ElementTypeInfo {
  ElementType type;
  const char *name;
  // numpy "kind + size" without byte order, or null when numpy has none.
  const char *numpy_kind_size;
};

constexpr ElementTypeInfo kElementTypes[] = {
    {STRATA_HAL_ELEMENT_TYPE_FLOAT_16, "f16", "f2"},
    {STRATA_HAL_ELEMENT_TYPE_FLOAT_32, "f32", "f4"},
    {STRATA_HAL_ELEMENT_TYPE_FLOAT_64, "f64", "f8"},
    {STRATA_HAL_ELEMENT_TYPE_BFLOAT_16, "bf16", nullptr},
    {STRATA_HAL_ELEMENT_TYPE_BOOL_8, "i1", "b1"},
    {STRATA_HAL_ELEMENT_TYPE_SINT_8, "i8", "i1"},
    {STRATA_HAL_ELEMENT_TYPE_SINT_16, "i16", "i2"},
    {STRATA_HAL_ELEMENT_TYPE_SINT_32, "i32", "i4"},
    {STRATA_HAL_ELEMENT_TYPE_SINT_64, "i64", "i8"},
    {STRATA_HAL_ELEMENT_TYPE_UINT_8, "u8", "u1"},
    {STRATA_HAL_ELEMENT_TYPE_UINT_16, "u16", "u2"},
    {STRATA_HAL_ELEMENT_TYPE_UINT_32, "u32", "u4"},
    {STRATA_HAL_ELEMENT_TYPE_UINT_64, "u64", "u8"},
};

const ElementTypeInfo *FindInfo(ElementType type) {
  for (const auto &info : kElementTypes)
    if (info.type == type)
      return &info;
  return nullptr;
}

std::string KnownNames() {
  std::string names;
  for (const auto &info : kElementTypes) {
    if (!names.empty())
      names += ", ";
    names += info.name;
  }
  return names;
}

} // namespace

bool IsKnownElementType(ElementType type) { return FindInfo(type) != nullptr; }

std::string ElementTypeName(ElementType type) {
  if (const ElementTypeInfo *info = FindInfo(type))
    return info->name;
  char text[32];
  std::snprintf(text, sizeof(text), "type(0x%08X)", type);
  return text;
}

Result<ElementType> ParseElementType(std::string_view name) {
  for (const auto &info : kElementTypes)
    if (name == info.name)
      return info.type;
  return InvalidArgumentError("unknown element type '", name,
                              "'; expected one of: ", KnownNames());
}

Result<std::string> ElementTypeToNumpyDtype(ElementType type) {
  const ElementTypeInfo *info = FindInfo(type);
  if (!info)
    return InvalidArgumentError("element type ", ElementTypeName(type),
                                " has no numpy dtype");
  if (!info->numpy_kind_size)
    return InvalidArgumentError("element type ", info->name,
                                " has no numpy dtype");
  // numpy writes '|' for types whose byte order does not matter.
  char order = ElementTypeByteSize(type) == 1 ? '|' : '<';
  return std::string(1, order) + info->numpy_kind_size;
}

Result<ElementType> ElementTypeFromNumpyDtype(std::string_view dtype) {
  if (dtype == "?")
    return ElementType(STRATA_HAL_ELEMENT_TYPE_BOOL_8);
  std::string_view kind_size = dtype;
  if (!dtype.empty() && (dtype[0] == '<' || dtype[0] == '>' ||
                         dtype[0] == '=' || dtype[0] == '|')) {
    kind_size = dtype.substr(1);
  }
  const ElementTypeInfo *match = nullptr;
  for (const auto &info : kElementTypes) {
    if (info.numpy_kind_size && kind_size == info.numpy_kind_size) {
      match = &info;
      break;
    }
  }
  if (!match)
    return InvalidArgumentError("unsupported numpy dtype '", dtype, "'");
  if (dtype[0] == '>' && ElementTypeByteSize(match->type) > 1)
    return UnimplementedError("big-endian numpy dtype '", dtype,
                              "' is not supported");
  return match->type;
}

Result<ShapeAndElementType> ParseShapeAndElementType(std::string_view text) {
  ShapeAndElementType result;
  std::string_view rest = text;
  while (true) {
    size_t x = rest.find('x');
    // The element type is the last component; dims are all digits.
    if (x == std::string_view::npos)
      break;
    std::string_view dim_text = rest.substr(0, x);
    if (dim_text.empty() ||
        dim_text.find_first_not_of("0123456789") != std::string_view::npos) {
      break;
    }
    int64_t dim = 0;
    auto [end, error] = std::from_chars(dim_text.data(),
                                        dim_text.data() + dim_text.size(), dim);
    if (error == std::errc::result_out_of_range)
      return InvalidArgumentError("dimension ", dim_text, " in '", text,
                                  "' does not fit 64 bits");
    if (error != std::errc() || end != dim_text.data() + dim_text.size())
      return InvalidArgumentError("invalid dimension '", dim_text, "' in '",
                                  text, "'");
    result.shape.push_back(dim);
    rest = rest.substr(x + 1);
  }
  auto element_type = ParseElementType(rest);
  if (!element_type.ok())
    return element_type.status().Annotate(
        StrCat("parsing shape and element type '", text, "'"));
  result.element_type = *element_type;
  return result;
}

std::string FormatShapeAndElementType(std::span<const int64_t> shape,
                                      ElementType element_type) {
  std::string text;
  for (int64_t dim : shape) {
    text += std::to_string(dim);
    text += 'x';
  }
  text += ElementTypeName(element_type);
  return text;
}

} // namespace strata::hal
