// Command-line flags of the tools: `--name=value`, `--name value` and
// boolean `--name`. Unknown flags, missing values and malformed numbers are
// errors that name the flag; `--help` prints every flag.
#ifndef STRATA_TOOLING_FLAGS_H_
#define STRATA_TOOLING_FLAGS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "strata/base/status.h"

namespace strata::tooling {

// A byte count with an optional binary unit: "1048576", "64K", "512M",
// "2G", "1T" (also "2GiB", "2GB"; every unit is a power of 1024).
// INVALID_ARGUMENT for anything else or counts past 2^64 - 1.
Result<uint64_t> ParseByteSize(std::string_view text);

class FlagParser {
public:
  FlagParser(std::string tool, std::string usage)
      : tool_(std::move(tool)), usage_(std::move(usage)) {}

  void AddString(std::string name, std::string *value, std::string help);
  // Repeatable: each occurrence appends.
  void AddStringList(std::string name, std::vector<std::string> *values,
                     std::string help);
  void AddInt(std::string name, int64_t *value, std::string help);
  void AddDouble(std::string name, double *value, std::string help);
  void AddBool(std::string name, bool *value, std::string help);
  // A byte count in ParseByteSize's form.
  void AddByteSize(std::string name, uint64_t *value, std::string help);

  // Parses argv[1..]; non-flag arguments go to `positional`.
  Status Parse(int argc, char **argv, std::vector<std::string> *positional);
  bool help_requested() const { return help_requested_; }
  std::string Help() const;
  // --version: the tool, Strata's version and the source's git commit.
  bool version_requested() const { return version_requested_; }
  std::string Version() const;

private:
  enum class Kind { kString, kStringList, kInt, kDouble, kBool, kByteSize };
  struct Flag {
    std::string name;
    Kind kind;
    void *target;
    std::string help;
  };
  Status Set(const Flag &flag, const std::string &value);

  std::string tool_, usage_;
  std::vector<Flag> flags_;
  bool help_requested_ = false;
  bool version_requested_ = false;
};

} // namespace strata::tooling

#endif // STRATA_TOOLING_FLAGS_H_
