// Reading whole files (or stdin) into OwnedBytes, either memory-mapped
// read-only (no copy; pages load on demand) or read into a heap buffer.
#ifndef STRATA_BASE_FILE_CONTENTS_H_
#define STRATA_BASE_FILE_CONTENTS_H_

#include <cstdint>
#include <span>
#include <string>

#include "strata/base/owned_bytes.h"
#include "strata/base/status.h"

namespace strata {

// Maps `path` read-only. The mapping is removed when the result is dropped.
// Falls back to reading when the file cannot be mapped (pipes, /proc files).
Result<OwnedBytes> MapFileContents(const std::string &path);

// Reads all of `path` into a heap buffer aligned to 64 bytes.
Result<OwnedBytes> ReadFileContents(const std::string &path);

// Reads `fd` (e.g. STDIN_FILENO) to its end; does not close it.
Result<OwnedBytes> ReadFdContents(int fd, const std::string &description);

// Writes `bytes` to `path`, replacing it.
Status WriteFileContents(const std::string &path,
                         std::span<const uint8_t> bytes);

} // namespace strata

#endif // STRATA_BASE_FILE_CONTENTS_H_
