// Conversions between f32 and the 16-bit float formats (IEEE half, bf16),
// for printing and parsing tensors in the tools.
#ifndef STRATA_TOOLING_HALF_FLOAT_H_
#define STRATA_TOOLING_HALF_FLOAT_H_

#include <cstdint>

namespace strata::tooling {

float HalfToFloat(uint16_t bits);
// Rounds to nearest even; overflow gives infinity.
uint16_t FloatToHalf(float value);
float BFloat16ToFloat(uint16_t bits);
uint16_t FloatToBFloat16(float value);

} // namespace strata::tooling

#endif // STRATA_TOOLING_HALF_FLOAT_H_
