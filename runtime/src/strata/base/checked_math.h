// Checked arithmetic for sizes and offsets computed from numbers the runtime
// does not control (shapes, byte lengths, counts, offsets from a module or a
// user). Nothing here wraps: every helper reports overflow, and callers turn
// that into an error naming their operation. Use these instead of ad-hoc
// "a > max / b" checks.
//
//   std::optional<uint64_t> end = CheckedAdd(offset, length);
//   if (!end || *end > size) return OutOfRangeError(...);
//
//   STRATA_ASSIGN_OR_RETURN(uint64_t bytes, CheckedShapeByteSize(dims, 4));
//   // "shape 4294967296x4294967296 x 4 bytes overflows 64 bits"
#ifndef STRATA_BASE_CHECKED_MATH_H_
#define STRATA_BASE_CHECKED_MATH_H_

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>

#include "strata/base/status.h"

namespace strata {

// a + b, a - b, a * b in T, or nullopt when the exact result does not fit T.
template <typename T> constexpr std::optional<T> CheckedAdd(T a, T b) {
  static_assert(std::is_integral_v<T>);
  T result;
  if (__builtin_add_overflow(a, b, &result))
    return std::nullopt;
  return result;
}
template <typename T> constexpr std::optional<T> CheckedSub(T a, T b) {
  static_assert(std::is_integral_v<T>);
  T result;
  if (__builtin_sub_overflow(a, b, &result))
    return std::nullopt;
  return result;
}
template <typename T> constexpr std::optional<T> CheckedMul(T a, T b) {
  static_assert(std::is_integral_v<T>);
  T result;
  if (__builtin_mul_overflow(a, b, &result))
    return std::nullopt;
  return result;
}

// `value` converted to To, or nullopt when it is not representable (negative
// into unsigned, too large for the width).
template <typename To, typename From>
constexpr std::optional<To> CheckedCast(From value) {
  static_assert(std::is_integral_v<To> && std::is_integral_v<From>);
  To result;
  if (__builtin_add_overflow(value, From{0}, &result))
    return std::nullopt;
  return result;
}

// True when [offset, offset + length) lies inside [0, size); overflow-safe
// for any inputs.
constexpr bool RangeInBounds(uint64_t offset, uint64_t length, uint64_t size) {
  return offset <= size && length <= size - offset;
}

// The product of `values` (1 for none), or nullopt on overflow.
constexpr std::optional<uint64_t>
CheckedProduct(std::span<const uint64_t> values) {
  uint64_t product = 1;
  for (uint64_t value : values) {
    std::optional<uint64_t> next = CheckedMul(product, value);
    if (!next)
      return std::nullopt;
    product = *next;
  }
  return product;
}

// "4294967296x4294967296" ("" for rank 0): how size errors show a shape.
std::string FormatDims(std::span<const int64_t> dims);

// Number of elements of a dense shape. INVALID_ARGUMENT when a dimension is
// negative ("negative dimension -1 in shape 2x-1") or the product overflows
// 64 bits ("shape 4294967296x4294967296x4294967296 has an element count
// that overflows 64 bits").
Result<uint64_t> CheckedElementCount(std::span<const int64_t> dims);

// Bytes of a dense shape with `element_size`-byte elements. INVALID_ARGUMENT
// on a negative dimension or when the size overflows 64 bits:
// "shape 4294967296x4294967296 x 4 bytes overflows 64 bits". A shape with a
// zero dimension has 0 bytes whatever its other dimensions.
Result<uint64_t> CheckedShapeByteSize(std::span<const int64_t> dims,
                                      uint64_t element_size);

} // namespace strata

#endif // STRATA_BASE_CHECKED_MATH_H_
