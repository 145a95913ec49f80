// Printing errors safely: names read from a damaged file may hold any
// bytes, which must not reach a terminal raw.
#ifndef STRATA_TOOLING_TERMINAL_H_
#define STRATA_TOOLING_TERMINAL_H_

#include <string>
#include <string_view>

#include "strata/base/status.h"

namespace strata::tooling {

// Escapes control and non-ASCII bytes as \xNN (newlines and tabs stay).
std::string EscapeForTerminal(std::string_view text);

// Prints "TOOL: CODE: message" to stderr and returns the exit code 1.
int ReportError(std::string_view tool, const Status &status);

} // namespace strata::tooling

#endif // STRATA_TOOLING_TERMINAL_H_
