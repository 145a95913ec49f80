/* IEEE-754 binary formats as integers, for the executable helpers.
 *
 * Every helper works on the bits of its operands: decode a value into
 * sign, integer significand and exponent (value = (-1)^sign * m * 2^e),
 * compute exactly in integers, and round once with round_pack. Nothing here
 * uses floating-point arithmetic, so the helpers need no helper themselves
 * and give the same bits on every CPU.
 *
 * Functions are static inline: each helper file is one archive member and
 * must not depend on another. */
#ifndef STRATA_EXECUTABLE_HELPERS_IEEE754_H_
#define STRATA_EXECUTABLE_HELPERS_IEEE754_H_

#include <stdint.h>

typedef unsigned __int128 u128;
typedef __int128 i128;

/* A binary interchange format: stored significand bits and exponent bits. */
typedef struct format {
  int mant_bits;
  int exp_bits;
} format;

static const format kHalf = {10, 5};
static const format kBFloat = {7, 8};
static const format kFloat = {23, 8};
static const format kDouble = {52, 11};

static inline int format_bias(format f) { return (1 << (f.exp_bits - 1)) - 1; }
static inline uint64_t format_sign_bit(format f) {
  return (uint64_t)1 << (f.mant_bits + f.exp_bits);
}
static inline uint64_t format_exp_mask(format f) {
  return (((uint64_t)1 << f.exp_bits) - 1) << f.mant_bits;
}
static inline uint64_t format_mant_mask(format f) {
  return ((uint64_t)1 << f.mant_bits) - 1;
}
static inline uint64_t format_inf(format f) { return format_exp_mask(f); }
/* The canonical quiet NaN (what x86 produces: sign set, quiet bit set). */
static inline uint64_t format_default_nan(format f) {
  return format_sign_bit(f) | format_exp_mask(f) |
         ((uint64_t)1 << (f.mant_bits - 1));
}

enum value_class { kZero, kFinite, kInfinite, kNaN };

/* A decoded value: (-1)^sign * m * 2^e for finite ones; m < 2^(mant_bits+1).
 */
typedef struct decoded {
  enum value_class kind;
  int sign;
  uint64_t m;
  int e;
} decoded;

static inline decoded decode(uint64_t bits, format f) {
  decoded d;
  d.sign = (bits & format_sign_bit(f)) != 0;
  uint64_t exp_field = (bits & format_exp_mask(f)) >> f.mant_bits;
  uint64_t mant = bits & format_mant_mask(f);
  int all_ones = (1 << f.exp_bits) - 1;
  d.m = 0;
  d.e = 0;
  if (exp_field == (uint64_t)all_ones) {
    d.kind = mant ? kNaN : kInfinite;
    d.m = mant;
    return d;
  }
  if (exp_field == 0) {
    d.kind = mant ? kFinite : kZero;
    d.m = mant;
    d.e = 1 - format_bias(f) - f.mant_bits;
    return d;
  }
  d.kind = kFinite;
  d.m = mant | ((uint64_t)1 << f.mant_bits);
  d.e = (int)exp_field - format_bias(f) - f.mant_bits;
  return d;
}

static inline int clz128(u128 x) {
  uint64_t high = (uint64_t)(x >> 64);
  if (high)
    return __builtin_clzll(high);
  uint64_t low = (uint64_t)x;
  return low ? 64 + __builtin_clzll(low) : 128;
}

/* Rounds (-1)^sign * (m + r) * 2^e to `f`, to nearest with ties to even,
 * where 0 <= r < 1 is only known to be non-zero when `sticky` is set.
 * Handles subnormal results and overflow (to infinity). Returns the bits. */
static inline uint64_t round_pack(int sign, u128 m, int e, int sticky,
                                  format f) {
  uint64_t sign_bits = sign ? format_sign_bit(f) : 0;
  if (m == 0)
    return sign_bits; /* callers never pass 0 with a non-zero remainder */
  int bias = format_bias(f), emin = 1 - bias;
  int msb = 127 - clz128(m);
  /* Unbiased exponent of the leading bit; the result's last kept bit. */
  int lead = msb + e;
  if (lead > bias)
    return sign_bits | format_inf(f);
  int lsb = (lead < emin ? emin : lead) - f.mant_bits;
  int shift = lsb - e; /* bits of m below the result's last place */
  u128 q;
  int round_up = 0;
  if (shift <= 0) {
    q = m << -shift; /* exact; a sticky remainder is < half an ulp */
  } else if (shift > 128) {
    q = 0; /* m * 2^e < a quarter of the smallest subnormal */
  } else {
    q = shift == 128 ? 0 : m >> shift;
    u128 half = (u128)1 << (shift - 1);
    u128 rest = m & (half - 1);
    int above_half = (m & half) != 0;
    round_up = above_half && (rest != 0 || sticky || (q & 1));
  }
  q += round_up;
  /* A normal result's q carries its implicit bit, which adds one to the
   * exponent field; a subnormal's (exponent field 0) does not. A carry out
   * of the significand moves to the next binade or to infinity by itself. */
  uint64_t bits = (uint64_t)q;
  if (lead >= emin)
    bits += (uint64_t)(lead + bias - 1) << f.mant_bits;
  return sign_bits | bits;
}

/* Converts between formats: exact when widening, rounded to nearest even
 * when narrowing. NaNs stay NaNs with their sign and leading payload bits,
 * made quiet, as x86 conversions do. */
static inline uint64_t convert_format(uint64_t bits, format from, format to) {
  decoded d = decode(bits, from);
  uint64_t sign_bits = d.sign ? format_sign_bit(to) : 0;
  switch (d.kind) {
  case kZero:
    return sign_bits;
  case kInfinite:
    return sign_bits | format_inf(to);
  case kNaN: {
    uint64_t payload = to.mant_bits >= from.mant_bits
                           ? d.m << (to.mant_bits - from.mant_bits)
                           : d.m >> (from.mant_bits - to.mant_bits);
    return sign_bits | format_inf(to) | payload |
           ((uint64_t)1 << (to.mant_bits - 1));
  }
  case kFinite:
    break;
  }
  return round_pack(d.sign, d.m, d.e, 0, to);
}

/* Bit casts (no conversion; nothing here may call a helper). */
static inline uint32_t float_bits(float x) {
  union {
    float f;
    uint32_t u;
  } v = {x};
  return v.u;
}
static inline float bits_float(uint64_t bits) {
  union {
    uint32_t u;
    float f;
  } v = {(uint32_t)bits};
  return v.f;
}
static inline uint64_t double_bits(double x) {
  union {
    double f;
    uint64_t u;
  } v = {x};
  return v.u;
}
static inline double bits_double(uint64_t bits) {
  union {
    uint64_t u;
    double f;
  } v = {bits};
  return v.f;
}
static inline uint16_t half_bits(_Float16 x) {
  union {
    _Float16 f;
    uint16_t u;
  } v = {x};
  return v.u;
}
static inline _Float16 bits_half(uint64_t bits) {
  union {
    uint16_t u;
    _Float16 f;
  } v = {(uint16_t)bits};
  return v.f;
}
static inline __bf16 bits_bfloat(uint64_t bits) {
  union {
    uint16_t u;
    __bf16 f;
  } v = {(uint16_t)bits};
  return v.f;
}

/* Helpers are called by name from compiled code: keep each one out of the
 * executable's exported symbols (hidden) and do not let the C compiler
 * inline one into another's member. */
#define STRATA_HELPER __attribute__((visibility("hidden"), used))

#endif /* STRATA_EXECUTABLE_HELPERS_IEEE754_H_ */
