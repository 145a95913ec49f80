// Loads CPU executables (ELF shared objects implementing
// executable_library.h) with the runtime's own ELF loader
// (embedded_elf_image.h): no dlopen, no files, no libc in the executable.
// Format: STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64.
#ifndef STRATA_HAL_LOADERS_EMBEDDED_ELF_LOADER_H_
#define STRATA_HAL_LOADERS_EMBEDDED_ELF_LOADER_H_

#include "strata/hal/executable.h"
#include "strata/hal/local/library_executable.h"

namespace strata::hal {

class EmbeddedElfLoader final : public LibraryLoader {
public:
  // `resolve_import` supplies the functions libraries import (may be empty:
  // then a library with imports fails to load).
  explicit EmbeddedElfLoader(ExecutableImportResolver resolve_import = {})
      : LibraryLoader(std::move(resolve_import)) {}

  std::string_view name() const override { return "embedded-elf"; }
  // Loads and relocates the image, runs its initialisers, queries the
  // library and checks every descriptor pointer against the image. The
  // image is unmapped when the executable dies. `constants` must be empty
  // (library ABI v0 has none).
  Result<RefPtr<Executable>> Load(std::string_view format,
                                  std::span<const uint8_t> bytes,
                                  std::span<const uint32_t> constants) override;
};

} // namespace strata::hal

#endif // STRATA_HAL_LOADERS_EMBEDDED_ELF_LOADER_H_
