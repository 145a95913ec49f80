// JSON that the tools print or write (strata-bench --json), built as an
// nlohmann::ordered_json (keys kept in insertion order) and rendered here,
// so it is valid whatever a string holds: quotes, backslashes and control
// characters are escaped and invalid UTF-8 (a model author's node name) is
// replaced with U+FFFD instead of failing. The runtime libraries write no
// JSON through this (the device's Chrome-trace writer has its own, in
// hal/local/local_profiler.cpp: the runtime depends on no JSON library).
#ifndef STRATA_TOOLING_JSON_TEXT_H_
#define STRATA_TOOLING_JSON_TEXT_H_

#include <string>

#include <nlohmann/json.hpp>

namespace strata::tooling {

// `value` on one line, without a trailing newline.
std::string JsonText(const nlohmann::ordered_json &value);

// `value` rounded to `decimals` places, as printf's %.Nf would show it (the
// tools' JSON numbers keep the precision they had when printed with
// printf); non-finite values stay as they are (rendered as null).
double RoundTo(double value, int decimals);

} // namespace strata::tooling

#endif // STRATA_TOOLING_JSON_TEXT_H_
