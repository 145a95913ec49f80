// Scalar semantics of the interpreter's arithmetic and casts that C++ leaves
// undefined or implementation-defined (overflow, shifts, NaN, division by
// zero). Internal to the VM; see bytecode_interpreter.h for the rules.
#ifndef STRATA_VM_SCALAR_OPS_H_
#define STRATA_VM_SCALAR_OPS_H_

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

inline StatusCode FailCodeFromInt(int32_t code) {
  if (code <= 0 || code > static_cast<int32_t>(StatusCode::kDataLoss))
    return StatusCode::kUnknown;
  return static_cast<StatusCode>(code);
}

} // namespace strata::vm

#endif // STRATA_VM_SCALAR_OPS_H_
