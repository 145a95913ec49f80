#include "strata/base/checked_math.h"

namespace strata {
namespace {

// Checks the dimensions and returns whether one of them is zero (then the
// shape is empty however large the others are).
Result<bool> CheckDims(std::span<const int64_t> dims) {
  bool empty = false;
  for (int64_t dim : dims) {
    if (dim < 0)
      return InvalidArgumentError("negative dimension ", dim, " in shape ",
                                  FormatDims(dims));
    empty |= dim == 0;
  }
  return empty;
}

} // namespace

std::string FormatDims(std::span<const int64_t> dims) {
  std::string text;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (i)
      text += 'x';
    text += std::to_string(dims[i]);
  }
  return text;
}

Result<uint64_t> CheckedElementCount(std::span<const int64_t> dims) {
  STRATA_ASSIGN_OR_RETURN(bool empty, CheckDims(dims));
  if (empty)
    return uint64_t{0};
  uint64_t count = 1;
  for (int64_t dim : dims) {
    std::optional<uint64_t> next = CheckedMul(count, uint64_t(dim));
    if (!next)
      return InvalidArgumentError(
          "shape ", FormatDims(dims),
          " has an element count that overflows 64 bits");
    count = *next;
  }
  return count;
}

Result<uint64_t> CheckedShapeByteSize(std::span<const int64_t> dims,
                                      uint64_t element_size) {
  STRATA_ASSIGN_OR_RETURN(bool empty, CheckDims(dims));
  if (empty)
    return uint64_t{0};
  uint64_t bytes = element_size;
  for (int64_t dim : dims) {
    std::optional<uint64_t> next = CheckedMul(bytes, uint64_t(dim));
    if (!next)
      return InvalidArgumentError("shape ", FormatDims(dims), " x ",
                                  element_size, " bytes overflows 64 bits");
    bytes = *next;
  }
  return bytes;
}

} // namespace strata
