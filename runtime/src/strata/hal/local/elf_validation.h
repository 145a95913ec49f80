// Structural checks of an ELF image before any loader maps it, so garbage
// or truncated bytes produce a clean error instead of a crash inside the
// dynamic linker.
#ifndef STRATA_HAL_LOCAL_ELF_VALIDATION_H_
#define STRATA_HAL_LOCAL_ELF_VALIDATION_H_

#include <cstdint>
#include <span>

#include "strata/base/status.h"

namespace strata::hal {

// Checks that `bytes` hold a little-endian ELF64 x86-64 shared object
// (ET_DYN) whose program headers, section headers and loadable segments all
// lie inside `bytes`. INVALID_ARGUMENT says what is wrong.
Status ValidateElfX86_64SharedObject(std::span<const uint8_t> bytes);

} // namespace strata::hal

#endif // STRATA_HAL_LOCAL_ELF_VALIDATION_H_
