#include "strata/tooling/half_float.h"

#include <cmath>
#include <cstring>

namespace strata::tooling {

float HalfToFloat(uint16_t bits) {
  uint32_t sign = uint32_t(bits & 0x8000) << 16;
  uint32_t exponent = (bits >> 10) & 0x1F;
  uint32_t mantissa = bits & 0x3FF;
  float magnitude;
  if (exponent == 0)
    magnitude = std::ldexp(float(mantissa), -24);
  else if (exponent == 31)
    magnitude = mantissa ? NAN : INFINITY;
  else
    magnitude = std::ldexp(float(mantissa | 0x400), int(exponent) - 25);
  uint32_t result;
  std::memcpy(&result, &magnitude, sizeof(result));
  result |= sign;
  float out;
  std::memcpy(&out, &result, sizeof(out));
  return out;
}

uint16_t FloatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  uint16_t sign = (bits >> 16) & 0x8000;
  float magnitude = std::fabs(value);
  if (std::isnan(value))
    return sign | 0x7E00;
  if (magnitude >= 65520.0f)
    return sign | 0x7C00;
  if (magnitude < std::ldexp(1.0f, -14)) {
    // Subnormal: multiples of 2^-24, rounded to nearest even.
    float scaled = magnitude * std::ldexp(1.0f, 24);
    return sign | uint16_t(std::nearbyint(scaled));
  }
  int exponent;
  float fraction = std::frexp(magnitude, &exponent); // [0.5, 1)
  float mantissa = std::nearbyint((fraction * 2.0f - 1.0f) * 1024.0f);
  if (mantissa >= 1024.0f) {
    mantissa = 0;
    ++exponent;
  }
  return sign | uint16_t((exponent + 14) << 10) | uint16_t(mantissa);
}

float BFloat16ToFloat(uint16_t bits) {
  uint32_t wide = uint32_t(bits) << 16;
  float out;
  std::memcpy(&out, &wide, sizeof(out));
  return out;
}

uint16_t FloatToBFloat16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if (std::isnan(value))
    return uint16_t((bits >> 16) | 0x40);
  uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return uint16_t((bits + rounding) >> 16);
}

} // namespace strata::tooling
