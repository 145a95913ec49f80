/* Floating-point remainder x - y * trunc(x / y), exact, for f32 and f64:
 * x86 has no instruction for it (LLVM calls these for frem). */
#include "ieee754.h"

static inline uint64_t remainder_toward_zero(uint64_t x_bits, uint64_t y_bits,
                                             format f, int *special) {
  decoded x = decode(x_bits, f), y = decode(y_bits, f);
  *special = 0;
  if (x.kind == kNaN || y.kind == kNaN || x.kind == kInfinite ||
      y.kind == kZero) {
    *special = 1; /* NaN: the caller computes it with plain operations */
    return 0;
  }
  if (x.kind == kZero || y.kind == kInfinite)
    return x_bits;
  /* |x| = mx * 2^ex, |y| = my * 2^ey; both significands < 2^53. */
  uint64_t mx = x.m, my = y.m, r;
  int e;
  if (x.e < y.e) {
    /* Scale y down to x's exponent; it fits when |y| <= |x|. */
    int up = y.e - x.e;
    if (up >= 64 || (my << up) >> up != my || (my << up) > mx)
      return x_bits; /* |x| < |y| */
    r = mx % (my << up);
    e = x.e;
  } else {
    /* (mx * 2^(ex - ey)) mod my, a few exponent bits at a time: r < my
     * leaves 64 - (mant_bits + 1) bits of room for each shift. */
    int room = 63 - f.mant_bits;
    int remaining = x.e - y.e;
    r = mx % my;
    while (remaining > 0 && r != 0) {
      int step = remaining < room ? remaining : room;
      r = (r << step) % my;
      remaining -= step;
    }
    e = y.e;
  }
  /* The result is exact and keeps x's sign, zero included. */
  return round_pack(x.sign, r, e, 0, f);
}

STRATA_HELPER float fmodf(float x, float y) {
  int special;
  uint64_t bits =
      remainder_toward_zero(float_bits(x), float_bits(y), kFloat, &special);
  return special ? (x * y) / (x * y) : bits_float(bits);
}

STRATA_HELPER double fmod(double x, double y) {
  int special;
  uint64_t bits =
      remainder_toward_zero(double_bits(x), double_bits(y), kDouble, &special);
  return special ? (x * y) / (x * y) : bits_double(bits);
}
