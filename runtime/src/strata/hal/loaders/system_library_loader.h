// Loads CPU executables (ELF shared objects implementing
// executable_library.h) with the system dynamic linker: the bytes go to a
// memfd (or an unlinked temporary file), which is dlopen'ed through
// /proc/self/fd. Format: STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64.
#ifndef STRATA_HAL_LOADERS_SYSTEM_LIBRARY_LOADER_H_
#define STRATA_HAL_LOADERS_SYSTEM_LIBRARY_LOADER_H_

#include "strata/hal/executable.h"
#include "strata/hal/local/library_executable.h"

namespace strata::hal {

class SystemLibraryLoader final : public LibraryLoader {
public:
  // `resolve_import` supplies the functions libraries import (may be empty:
  // then a library with imports fails to load).
  explicit SystemLibraryLoader(ExecutableImportResolver resolve_import = {})
      : LibraryLoader(std::move(resolve_import)) {}

  std::string_view name() const override { return "system-library"; }
  // Validates the ELF header first, so garbage bytes never reach dlopen.
  // The library is dlclose'd when the executable dies. `constants` must be
  // empty: library ABI v0 has no specialization constants.
  Result<RefPtr<Executable>> Load(std::string_view format,
                                  std::span<const uint8_t> bytes,
                                  std::span<const uint32_t> constants) override;
};

} // namespace strata::hal

#endif // STRATA_HAL_LOADERS_SYSTEM_LIBRARY_LOADER_H_
