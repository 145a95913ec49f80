#include "strata/tooling/json_text.h"

#include <cmath>

namespace strata::tooling {

std::string JsonText(const nlohmann::ordered_json &value) {
  return value.dump(/*indent=*/-1, /*indent_char=*/' ', /*ensure_ascii=*/false,
                    nlohmann::ordered_json::error_handler_t::replace);
}

double RoundTo(double value, int decimals) {
  if (!std::isfinite(value))
    return value;
  double scale = std::pow(10.0, decimals);
  double rounded = std::round(value * scale) / scale;
  // Past 2^53 / scale the product loses the digits it would keep.
  return std::isfinite(rounded) ? rounded : value;
}

} // namespace strata::tooling
