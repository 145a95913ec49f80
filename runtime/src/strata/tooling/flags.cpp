#include "strata/tooling/flags.h"

#include "strata_version.h"

#include <charconv>
#include <optional>

#include "strata/base/checked_math.h"

namespace strata::tooling {

void FlagParser::AddString(std::string name, std::string *value,
                           std::string help) {
  flags_.push_back({std::move(name), Kind::kString, value, std::move(help)});
}
void FlagParser::AddStringList(std::string name,
                               std::vector<std::string> *values,
                               std::string help) {
  flags_.push_back(
      {std::move(name), Kind::kStringList, values, std::move(help)});
}
void FlagParser::AddInt(std::string name, int64_t *value, std::string help) {
  flags_.push_back({std::move(name), Kind::kInt, value, std::move(help)});
}
void FlagParser::AddDouble(std::string name, double *value, std::string help) {
  flags_.push_back({std::move(name), Kind::kDouble, value, std::move(help)});
}
void FlagParser::AddBool(std::string name, bool *value, std::string help) {
  flags_.push_back({std::move(name), Kind::kBool, value, std::move(help)});
}

void FlagParser::AddByteSize(std::string name, uint64_t *value,
                             std::string help) {
  flags_.push_back({std::move(name), Kind::kByteSize, value, std::move(help)});
}

Result<uint64_t> ParseByteSize(std::string_view text) {
  uint64_t count = 0;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), count);
  std::string_view unit(end, text.data() + text.size() - end);
  auto invalid = [&]() {
    return InvalidArgumentError("'", text,
                                "' is not a byte count (a number with an "
                                "optional unit K, M, G or T, e.g. 512M)");
  };
  if (end == text.data())
    return invalid();
  if (ec == std::errc::result_out_of_range)
    return InvalidArgumentError("byte count '", text, "' does not fit 64 bits");
  int shift = 0;
  if (!unit.empty()) {
    switch (unit[0]) {
    case 'K':
    case 'k':
      shift = 10;
      break;
    case 'M':
    case 'm':
      shift = 20;
      break;
    case 'G':
    case 'g':
      shift = 30;
      break;
    case 'T':
    case 't':
      shift = 40;
      break;
    default:
      break;
    }
    if (shift)
      unit.remove_prefix(1);
    if (unit == "iB" || unit == "B")
      unit = {};
    if (!unit.empty())
      return invalid();
  }
  std::optional<uint64_t> bytes = CheckedMul(count, uint64_t(1) << shift);
  if (!bytes)
    return InvalidArgumentError("byte count '", text, "' does not fit 64 bits");
  return *bytes;
}

Status FlagParser::Set(const Flag &flag, const std::string &value) {
  switch (flag.kind) {
  case Kind::kString:
    *static_cast<std::string *>(flag.target) = value;
    return OkStatus();
  case Kind::kStringList:
    static_cast<std::vector<std::string> *>(flag.target)->push_back(value);
    return OkStatus();
  case Kind::kInt: {
    int64_t parsed = 0;
    auto [end, ec] =
        std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (ec != std::errc() || end != value.data() + value.size())
      return InvalidArgumentError("--", flag.name, " expects an integer, got '",
                                  value, "'");
    *static_cast<int64_t *>(flag.target) = parsed;
    return OkStatus();
  }
  case Kind::kDouble: {
    double parsed = 0;
    auto [end, ec] =
        std::from_chars(value.data(), value.data() + value.size(), parsed);
    if (ec != std::errc() || end != value.data() + value.size())
      return InvalidArgumentError("--", flag.name, " expects a number, got '",
                                  value, "'");
    *static_cast<double *>(flag.target) = parsed;
    return OkStatus();
  }
  case Kind::kByteSize: {
    Result<uint64_t> bytes = ParseByteSize(value);
    if (!bytes.ok())
      return bytes.status().Annotate("--", flag.name);
    *static_cast<uint64_t *>(flag.target) = *bytes;
    return OkStatus();
  }
  case Kind::kBool:
    if (value == "true" || value == "1" || value.empty()) {
      *static_cast<bool *>(flag.target) = true;
      return OkStatus();
    }
    if (value == "false" || value == "0") {
      *static_cast<bool *>(flag.target) = false;
      return OkStatus();
    }
    return InvalidArgumentError("--", flag.name,
                                " expects true or false, got '", value, "'");
  }
  return InternalError("unknown flag kind");
}

Status FlagParser::Parse(int argc, char **argv,
                         std::vector<std::string> *positional) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      help_requested_ = true;
      continue;
    }
    if (arg == "--version") {
      version_requested_ = true;
      continue;
    }
    if (arg.size() < 2 || arg[0] != '-' || arg == "-") {
      positional->push_back(arg);
      continue;
    }
    std::string body = arg.substr(arg[1] == '-' ? 2 : 1);
    size_t equals = body.find('=');
    std::string name = body.substr(0, equals);
    const Flag *flag = nullptr;
    for (const Flag &candidate : flags_)
      if (candidate.name == name)
        flag = &candidate;
    if (!flag)
      return InvalidArgumentError("unknown flag '", arg, "' (see --help)");
    if (equals != std::string::npos) {
      STRATA_RETURN_IF_ERROR(Set(*flag, body.substr(equals + 1)));
    } else if (flag->kind == Kind::kBool) {
      STRATA_RETURN_IF_ERROR(Set(*flag, ""));
    } else if (i + 1 < argc) {
      STRATA_RETURN_IF_ERROR(Set(*flag, argv[++i]));
    } else {
      return InvalidArgumentError("flag --", name, " needs a value");
    }
  }
  return OkStatus();
}

std::string FlagParser::Help() const {
  std::string out = StrCat("usage: ", tool_, " ", usage_, "\n\nflags:\n");
  for (const Flag &flag : flags_) {
    std::string head = "  --" + flag.name;
    if (flag.kind != Kind::kBool)
      head += "=...";
    if (head.size() < 26)
      head.resize(26, ' ');
    else
      head += "\n" + std::string(26, ' ');
    out += head + flag.help + "\n";
  }
  out += StrCat("  --help", std::string(20, ' '), "print this help\n");
  out += StrCat("  --version", std::string(17, ' '),
                "print the version and exit\n");
  return out;
}

std::string FlagParser::Version() const {
  return StrCat(tool_, " (Strata ", STRATA_VERSION_STRING, ", git ",
                STRATA_GIT_COMMIT, ")\n");
}

} // namespace strata::tooling
