/* Rounding to an integral value (floor, ceil, trunc, round, rint,
 * nearbyint, roundeven) for f32 and f64: x86 has an instruction for them
 * from SSE4.1 on (roundss/roundsd); below it LLVM calls these. rint and
 * nearbyint round to nearest even: executables never change the rounding
 * mode, and no one reads the inexact flag. */
#include "ieee754.h"

enum rounding { kFloor, kCeil, kTrunc, kHalfAway, kHalfEven };

static inline uint64_t round_integral(uint64_t bits, format f,
                                      enum rounding mode) {
  decoded d = decode(bits, f);
  if (d.kind == kNaN)
    return bits | ((uint64_t)1 << (f.mant_bits - 1)); /* quiet it */
  if (d.kind != kFinite || d.e >= 0)
    return bits;    /* zero, infinity or already integral */
  int shift = -d.e; /* fraction bits of m */
  uint64_t whole = 0, fraction, half;
  int above_half, exactly_half;
  if (shift > 64) {
    /* m < 2^53 <= 2^(shift - 1): 0 < |x| < 1/2 */
    fraction = d.m;
    above_half = 0;
    exactly_half = 0;
  } else {
    whole = shift == 64 ? 0 : d.m >> shift;
    fraction = shift == 64 ? d.m : d.m & ((((uint64_t)1) << shift) - 1);
    half = (uint64_t)1 << (shift - 1);
    above_half = fraction > half;
    exactly_half = fraction == half;
  }
  int inexact = fraction != 0;
  switch (mode) {
  case kFloor:
    whole += d.sign && inexact;
    break;
  case kCeil:
    whole += !d.sign && inexact;
    break;
  case kTrunc:
    break;
  case kHalfAway:
    whole += above_half || exactly_half;
    break;
  case kHalfEven:
    whole += above_half || (exactly_half && (whole & 1));
    break;
  }
  /* Exact: whole <= 2^mant_bits. Zero keeps the sign (floor(-0.5) = -1,
   * ceil(-0.5) = -0). */
  return round_pack(d.sign, whole, 0, 0, f);
}

#define STRATA_ROUNDING_PAIR(name, mode)                                       \
  STRATA_HELPER float name##f(float x) {                                       \
    return bits_float(round_integral(float_bits(x), kFloat, mode));            \
  }                                                                            \
  STRATA_HELPER double name(double x) {                                        \
    return bits_double(round_integral(double_bits(x), kDouble, mode));         \
  }

STRATA_ROUNDING_PAIR(floor, kFloor)
STRATA_ROUNDING_PAIR(ceil, kCeil)
STRATA_ROUNDING_PAIR(trunc, kTrunc)
STRATA_ROUNDING_PAIR(round, kHalfAway)
STRATA_ROUNDING_PAIR(roundeven, kHalfEven)
STRATA_ROUNDING_PAIR(rint, kHalfEven)
STRATA_ROUNDING_PAIR(nearbyint, kHalfEven)
