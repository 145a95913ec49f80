/* IEEE minNum/maxNum on f32: LLVM calls fminf/fmaxf for
 * llvm.minnum/maxnum on f16 when the CPU lacks AVX512-FP16 (the halves are
 * widened to f32 first). A NaN operand yields the other operand; -0 is
 * below +0. */
#include "ieee754.h"

static inline int is_nan_bits(uint64_t bits, format f) {
  return decode(bits, f).kind == kNaN;
}

STRATA_HELPER float fminf(float x, float y) {
  if (is_nan_bits(float_bits(x), kFloat))
    return y;
  if (is_nan_bits(float_bits(y), kFloat))
    return x;
  if (x == y) /* equal, or zeros of either sign: prefer the negative */
    return float_bits(x) >> 31 ? x : y;
  return x < y ? x : y;
}

STRATA_HELPER float fmaxf(float x, float y) {
  if (is_nan_bits(float_bits(x), kFloat))
    return y;
  if (is_nan_bits(float_bits(y), kFloat))
    return x;
  if (x == y)
    return float_bits(x) >> 31 ? y : x;
  return x > y ? x : y;
}
