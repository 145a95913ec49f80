/* Fused multiply-add, a * b + c rounded once, for f32 and f64: x86 has it
 * from FMA3 on (x86-64-v3); below it LLVM calls these for llvm.fma. The
 * product and sum are formed exactly in 128-bit integers. */
#include "ieee754.h"

/* Significand normalized so that its leading bit is bit 125: two such
 * values add without overflow, and the 20+ zero bits below a product's
 * 106 significant ones keep alignment shifts of 0 or 1 exact. */
static inline u128 normalize(u128 m, int *e) {
  int up = 125 - (127 - clz128(m));
  *e -= up;
  return m << up;
}

/* m >> n, with every shifted-out one bit folded into the last bit (a
 * sticky bit far below the rounding position). */
static inline u128 shift_right_jamming(u128 m, int n) {
  if (n == 0)
    return m;
  if (n >= 128)
    return m != 0;
  return (m >> n) | ((m & (((u128)1 << n) - 1)) != 0);
}

static inline uint64_t fused_multiply_add(uint64_t a_bits, uint64_t b_bits,
                                          uint64_t c_bits, format f) {
  decoded a = decode(a_bits, f), b = decode(b_bits, f), c = decode(c_bits, f);
  /* The product is exact, so c alone decides once it is zero. */
  int product_sign = a.sign ^ b.sign;
  int pe = a.e + b.e;
  u128 p = (u128)a.m * b.m;
  if (c.kind == kZero)
    return round_pack(product_sign, p, pe, 0, f);
  int ce = c.e;
  u128 cm = c.m;
  p = normalize(p, &pe);
  cm = normalize(cm, &ce);
  int sign = product_sign;
  u128 big = p, small = cm;
  int e = pe, small_sign = c.sign;
  if (ce > pe || (ce == pe && cm > p)) {
    big = cm;
    small = p;
    e = ce;
    sign = c.sign;
    small_sign = product_sign;
    small = shift_right_jamming(small, ce - pe);
  } else {
    small = shift_right_jamming(small, pe - ce);
  }
  u128 sum = sign == small_sign ? big + small : big - small;
  if (sum == 0)
    return 0; /* exact cancellation is +0 when rounding to nearest */
  return round_pack(sign, sum, e, 0, f);
}

/* The integer path takes finite non-zero factors and a finite c. The other
 * results are exact or NaN, so the plain operations give them, except a
 * finite product plus an infinite c, which is c (the product computed
 * alone could overflow to an infinity of the other sign). */
static inline int takes_integer_path(decoded a, decoded b, decoded c) {
  return a.kind == kFinite && b.kind == kFinite &&
         (c.kind == kFinite || c.kind == kZero);
}
static inline int finite_product_plus_infinity(decoded a, decoded b,
                                               decoded c) {
  int a_finite = a.kind == kFinite || a.kind == kZero;
  int b_finite = b.kind == kFinite || b.kind == kZero;
  return c.kind == kInfinite && a_finite && b_finite;
}

STRATA_HELPER float fmaf(float a, float b, float c) {
  uint64_t ab = float_bits(a), bb = float_bits(b), cb = float_bits(c);
  decoded da = decode(ab, kFloat), db = decode(bb, kFloat),
          dc = decode(cb, kFloat);
  if (takes_integer_path(da, db, dc))
    return bits_float(fused_multiply_add(ab, bb, cb, kFloat));
  if (finite_product_plus_infinity(da, db, dc))
    return c;
  return a * b + c;
}

STRATA_HELPER double fma(double a, double b, double c) {
  uint64_t ab = double_bits(a), bb = double_bits(b), cb = double_bits(c);
  decoded da = decode(ab, kDouble), db = decode(bb, kDouble),
          dc = decode(cb, kDouble);
  if (takes_integer_path(da, db, dc))
    return bits_double(fused_multiply_add(ab, bb, cb, kDouble));
  if (finite_product_plus_infinity(da, db, dc))
    return c;
  return a * b + c;
}
