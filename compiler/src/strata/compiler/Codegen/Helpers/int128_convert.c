/* Conversions between f16/f32/f64 and 128-bit integers: x86 converts at
 * most 64-bit integers, so LLVM calls these for fptosi/fptoui/sitofp/uitofp
 * on i128. Float to integer truncates toward zero; NaN gives 0 and values
 * beyond the range saturate (LLVM leaves both undefined). Integer to float
 * rounds to nearest even, once. */
#include "ieee754.h"

static const u128 kU128Max = ~(u128)0;
static const i128 kI128Max = (i128)(kU128Max >> 1);
static const i128 kI128Min = -(i128)(kU128Max >> 1) - 1;

/* |x| truncated toward zero, or -1 when |x| >= 2^limit_bits. */
static inline int truncated_magnitude(decoded d, int limit_bits, u128 *out) {
  *out = 0;
  if (d.kind == kInfinite)
    return -1;
  if (d.kind != kFinite)
    return 0;
  if (d.e < 0) {
    *out = d.e <= -64 ? 0 : d.m >> -d.e;
    return 0;
  }
  int msb = 63 - __builtin_clzll(d.m);
  if (msb + d.e >= limit_bits)
    return -1;
  *out = (u128)d.m << d.e;
  return 0;
}

static inline i128 to_signed(uint64_t bits, format f) {
  decoded d = decode(bits, f);
  if (d.kind == kNaN)
    return 0;
  u128 magnitude;
  if (truncated_magnitude(d, 127, &magnitude) < 0)
    return d.sign ? kI128Min : kI128Max;
  return d.sign ? -(i128)magnitude : (i128)magnitude;
}

static inline u128 to_unsigned(uint64_t bits, format f) {
  decoded d = decode(bits, f);
  if (d.kind == kNaN || d.sign)
    return 0; /* negative values truncate to 0 or are out of range */
  u128 magnitude;
  if (truncated_magnitude(d, 128, &magnitude) < 0)
    return kU128Max;
  return magnitude;
}

static inline uint64_t from_signed(i128 x, format f) {
  return round_pack(x < 0, x < 0 ? -(u128)x : (u128)x, 0, 0, f);
}

static inline uint64_t from_unsigned(u128 x, format f) {
  return round_pack(0, x, 0, 0, f);
}

STRATA_HELPER i128 __fixhfti(_Float16 x) {
  return to_signed(half_bits(x), kHalf);
}
STRATA_HELPER i128 __fixsfti(float x) {
  return to_signed(float_bits(x), kFloat);
}
STRATA_HELPER i128 __fixdfti(double x) {
  return to_signed(double_bits(x), kDouble);
}
STRATA_HELPER u128 __fixunshfti(_Float16 x) {
  return to_unsigned(half_bits(x), kHalf);
}
STRATA_HELPER u128 __fixunssfti(float x) {
  return to_unsigned(float_bits(x), kFloat);
}
STRATA_HELPER u128 __fixunsdfti(double x) {
  return to_unsigned(double_bits(x), kDouble);
}
STRATA_HELPER _Float16 __floattihf(i128 x) {
  return bits_half(from_signed(x, kHalf));
}
STRATA_HELPER float __floattisf(i128 x) {
  return bits_float(from_signed(x, kFloat));
}
STRATA_HELPER double __floattidf(i128 x) {
  return bits_double(from_signed(x, kDouble));
}
STRATA_HELPER _Float16 __floatuntihf(u128 x) {
  return bits_half(from_unsigned(x, kHalf));
}
STRATA_HELPER float __floatuntisf(u128 x) {
  return bits_float(from_unsigned(x, kFloat));
}
STRATA_HELPER double __floatuntidf(u128 x) {
  return bits_double(from_unsigned(x, kDouble));
}
