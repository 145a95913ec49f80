#include "mutation_util.h"

#include <cmath>
#include <limits>

namespace strata::fuzz {

int64_t FuzzRandom::HostileInt(int64_t current) {
  using Limits32 = std::numeric_limits<int32_t>;
  using Limits64 = std::numeric_limits<int64_t>;
  static constexpr int64_t kValues[] = {
      0,
      -1,
      1,
      2,
      3,
      -2,
      7,
      255,
      256,
      65535,
      65536,
      Limits32::max(),
      int64_t(1) << 31,
      Limits32::min(),
      int64_t(Limits32::min()) - 1,
      int64_t(1) << 32,
      int64_t(1) << 40,
      int64_t(1) << 62,
      Limits64::max(),
      Limits64::min(),
      Limits64::min() + 1,
  };
  if (OneIn(3)) {
    // Unsigned so that nudging the extremes wraps instead of overflowing.
    uint64_t delta = uint64_t(int64_t(Below(7)) - 3);
    return int64_t(uint64_t(current) + delta);
  }
  return Pick(kValues);
}

double FuzzRandom::HostileFloat(double current) {
  using Limits = std::numeric_limits<float>;
  static const double kValues[] = {
      std::numeric_limits<double>::quiet_NaN(),
      -std::numeric_limits<double>::quiet_NaN(),
      std::numeric_limits<double>::infinity(),
      -std::numeric_limits<double>::infinity(),
      -0.0,
      0.0,
      1.0,
      -1.0,
      0.5,
      Limits::max(),
      -Limits::max(),
      Limits::min(),
      Limits::denorm_min(),
      1e30,
      -1e30,
      1e-30,
      2147483648.0,
      9.3e18,
  };
  switch (Below(4)) {
  case 0:
    return current * (OneIn(2) ? -1.0 : 1e6);
  case 1:
    return std::nextafter(current, OneIn(2) ? 1e300 : -1e300);
  default:
    return Pick(kValues);
  }
}

} // namespace strata::fuzz
