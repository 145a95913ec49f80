// Scalar semantics of the interpreter's arithmetic and casts that C++ leaves
// undefined or implementation-defined (overflow, shifts, NaN, division by
// zero). Internal to the VM; see bytecode_interpreter.h for the rules.
#ifndef STRATA_VM_SCALAR_OPS_H_
#define STRATA_VM_SCALAR_OPS_H_

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "strata/base/status.h"

namespace strata::vm {

template <typename Float> Float FloatMin(Float a, Float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<Float>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

template <typename Float> Float FloatMax(Float a, Float b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<Float>::quiet_NaN();
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

// Truncating, saturating float -> int conversion (NaN -> 0).
template <typename Int, typename Float> Int SaturatingCast(Float value) {
  if (std::isnan(value))
    return 0;
  // 2^(bits-1) is exactly representable in every float type.
  constexpr Float kLimit =
      static_cast<Float>(uint64_t(1) << (sizeof(Int) * 8 - 1));
  if (value >= kLimit)
    return std::numeric_limits<Int>::max();
  if (value < -kLimit)
    return std::numeric_limits<Int>::min();
  return static_cast<Int>(value);
}

template <typename Int> Int WrappingAdd(Int a, Int b) {
  using U = std::make_unsigned_t<Int>;
  return static_cast<Int>(static_cast<U>(a) + static_cast<U>(b));
}
template <typename Int> Int WrappingSub(Int a, Int b) {
  using U = std::make_unsigned_t<Int>;
  return static_cast<Int>(static_cast<U>(a) - static_cast<U>(b));
}
template <typename Int> Int WrappingMul(Int a, Int b) {
  using U = std::make_unsigned_t<Int>;
  return static_cast<Int>(static_cast<U>(a) * static_cast<U>(b));
}
template <typename Int> Int ShiftLeft(Int a, Int amount) {
  using U = std::make_unsigned_t<Int>;
  return static_cast<Int>(static_cast<U>(a)
                          << (amount & (sizeof(Int) * 8 - 1)));
}
template <typename Int> Int ShiftRightSigned(Int a, Int amount) {
  return a >> (amount & (sizeof(Int) * 8 - 1));
}
template <typename Int> Int ShiftRightUnsigned(Int a, Int amount) {
  using U = std::make_unsigned_t<Int>;
  return static_cast<Int>(static_cast<U>(a) >>
                          (amount & (sizeof(Int) * 8 - 1)));
}

inline Status DivisionByZero() {
  return InvalidArgumentError("division by zero");
}

template <typename Int> Status DivideSigned(Int a, Int b, Int *quotient) {
  if (b == 0)
    return DivisionByZero();
  *quotient = (a == std::numeric_limits<Int>::min() && b == -1) ? a : a / b;
  return OkStatus();
}
template <typename Int> Status RemainderSigned(Int a, Int b, Int *remainder) {
  if (b == 0)
    return DivisionByZero();
  *remainder = (b == -1) ? 0 : a % b;
  return OkStatus();
}
template <typename Int> Status DivideUnsigned(Int a, Int b, Int *quotient) {
  using U = std::make_unsigned_t<Int>;
  if (b == 0)
    return DivisionByZero();
  *quotient = static_cast<Int>(static_cast<U>(a) / static_cast<U>(b));
  return OkStatus();
}
template <typename Int> Status RemainderUnsigned(Int a, Int b, Int *remainder) {
  using U = std::make_unsigned_t<Int>;
  if (b == 0)
    return DivisionByZero();
  *remainder = static_cast<Int>(static_cast<U>(a) % static_cast<U>(b));
  return OkStatus();
}

// IEEE binary16 bits -> float (exact: every half is a float).
inline float HalfToFloat(uint16_t half) {
  uint32_t sign = uint32_t(half & 0x8000u) << 16;
  uint32_t exponent = (half >> 10) & 0x1Fu;
  uint32_t mantissa = half & 0x3FFu;
  uint32_t bits;
  if (exponent == 0x1F) { // infinity or NaN
    bits = sign | 0x7F800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else { // subnormal: normalize
    int shifts = -1;
    do {
      ++shifts;
      mantissa <<= 1;
    } while ((mantissa & 0x400u) == 0);
    bits = sign | (uint32_t(112 - shifts) << 23) | ((mantissa & 0x3FFu) << 13);
  }
  return std::bit_cast<float>(bits);
}

// float -> IEEE binary16 bits, rounding to nearest even; overflow gives
// infinity, NaNs stay (quiet) NaNs.
inline uint16_t FloatToHalf(float value) {
  uint32_t bits = std::bit_cast<uint32_t>(value);
  uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t magnitude = bits & 0x7FFFFFFFu;
  if (magnitude > 0x7F800000u) // NaN
    return uint16_t(sign | 0x7E00u | ((magnitude >> 13) & 0x3FFu));
  if (magnitude >= 0x477FF000u) // >= 65520 rounds to infinity
    return uint16_t(sign | 0x7C00u);
  if (magnitude < 0x38800000u) { // below 2^-14: subnormal or zero
    uint32_t exponent = magnitude >> 23;
    if (exponent < 102) // below 2^-25: rounds to zero
      return uint16_t(sign);
    uint32_t mantissa = (magnitude & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126 - exponent; // 14..24
    uint32_t result = mantissa >> shift;
    uint32_t rest = mantissa & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rest > halfway || (rest == halfway && (result & 1u)))
      ++result;
    return uint16_t(sign | result);
  }
  uint32_t rounded = magnitude + 0xFFFu + ((magnitude >> 13) & 1u);
  return uint16_t(sign | ((rounded - 0x38000000u) >> 13));
}

inline StatusCode FailCodeFromInt(int32_t code) {
  if (code <= 0 || code > static_cast<int32_t>(StatusCode::kDataLoss))
    return StatusCode::kUnknown;
  return static_cast<StatusCode>(code);
}

} // namespace strata::vm

#endif // STRATA_VM_SCALAR_OPS_H_
