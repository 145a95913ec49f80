// Reading whole files (or stdin) into OwnedBytes, either memory-mapped
// read-only (no copy; pages load on demand) or read into a heap buffer.
#ifndef STRATA_BASE_FILE_CONTENTS_H_
#define STRATA_BASE_FILE_CONTENTS_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>

#include "strata/base/owned_bytes.h"
#include "strata/base/status.h"

namespace strata {

inline constexpr size_t kNoFileSizeLimit = std::numeric_limits<size_t>::max();

// Each reader fails with RESOURCE_EXHAUSTED ("'<path>' is larger than the
// limit of N bytes") when the contents exceed `max_bytes`, before reading
// (regular files) or as soon as the stream passes it (pipes, stdin), so an
// endless stream cannot exhaust memory.

// Maps `path` read-only. The mapping is removed when the result is dropped.
// Falls back to reading when the file cannot be mapped (pipes, /proc files).
Result<OwnedBytes> MapFileContents(const std::string &path,
                                   size_t max_bytes = kNoFileSizeLimit);

// Reads all of `path` into a heap buffer aligned to 64 bytes.
Result<OwnedBytes> ReadFileContents(const std::string &path,
                                    size_t max_bytes = kNoFileSizeLimit);

// Reads `fd` (e.g. STDIN_FILENO) to its end; does not close it.
Result<OwnedBytes> ReadFdContents(int fd, const std::string &description,
                                  size_t max_bytes = kNoFileSizeLimit);

// Writes `bytes` to `path`, replacing it.
Status WriteFileContents(const std::string &path,
                         std::span<const uint8_t> bytes);

} // namespace strata

#endif // STRATA_BASE_FILE_CONTENTS_H_
