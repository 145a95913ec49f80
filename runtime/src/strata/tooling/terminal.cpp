#include "strata/tooling/terminal.h"

#include <cstdio>

namespace strata::tooling {

std::string EscapeForTerminal(std::string_view text) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if ((c >= 0x20 && c < 0x7f) || c == '\n' || c == '\t') {
      out += char(c);
      continue;
    }
    out += "\\x";
    out += kHex[c >> 4];
    out += kHex[c & 0xf];
  }
  return out;
}

int ReportError(std::string_view tool, const Status &status) {
  std::string text = EscapeForTerminal(status.ToString());
  std::fprintf(stderr, "%.*s: %s\n", int(tool.size()), tool.data(),
               text.c_str());
  return 1;
}

} // namespace strata::tooling
