/* Conversions between f64/f32 and f16/bf16 that x86 lacks an instruction
 * for at the executable's CPU level (executable_symbols.def says when). */
#include "ieee754.h"

STRATA_HELPER float __extendhfsf2(_Float16 x) {
  return bits_float(convert_format(half_bits(x), kHalf, kFloat));
}

STRATA_HELPER _Float16 __truncsfhf2(float x) {
  return bits_half(convert_format(float_bits(x), kFloat, kHalf));
}

/* Rounds once, from the double itself: going through f32 would round
 * twice. */
STRATA_HELPER _Float16 __truncdfhf2(double x) {
  return bits_half(convert_format(double_bits(x), kDouble, kHalf));
}

STRATA_HELPER __bf16 __truncsfbf2(float x) {
  return bits_bfloat(convert_format(float_bits(x), kFloat, kBFloat));
}

STRATA_HELPER __bf16 __truncdfbf2(double x) {
  return bits_bfloat(convert_format(double_bits(x), kDouble, kBFloat));
}
