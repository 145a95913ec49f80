// Reading and writing numpy .npy files (format versions 1.0-3.0, little
// endian, C order), the exchange format of strata-run's --input=@file.npy
// and --output=@file.npy.
#ifndef STRATA_TOOLING_NUMPY_IO_H_
#define STRATA_TOOLING_NUMPY_IO_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/hal/allocator.h"
#include "strata/hal/buffer_view.h"

namespace strata::tooling {

// Parses .npy bytes into a new buffer view. Malformed headers, unsupported
// dtypes, Fortran order and size mismatches are INVALID_ARGUMENT or
// UNIMPLEMENTED errors that say what is wrong.
Result<RefPtr<hal::BufferView>> ParseNumpy(std::span<const uint8_t> bytes,
                                           hal::Allocator &allocator);
Result<RefPtr<hal::BufferView>> LoadNumpyFile(const std::string &path,
                                              hal::Allocator &allocator);

Result<std::vector<uint8_t>> SerializeNumpy(const hal::BufferView &view);
Status SaveNumpyFile(const std::string &path, const hal::BufferView &view);

} // namespace strata::tooling

#endif // STRATA_TOOLING_NUMPY_IO_H_
