// A local executable implementing the CPU library ABI of
// executable_library.h. Loaders (system library, embedded ELF) subclass it to
// own the code's backing memory, then call InitializeLibrary() with what the
// library's query function returned.
#ifndef STRATA_HAL_LOCAL_LIBRARY_EXECUTABLE_H_
#define STRATA_HAL_LOCAL_LIBRARY_EXECUTABLE_H_

#include <array>
#include <functional>
#include <string_view>
#include <vector>

#include "strata/hal/local/executable_library.h"
#include "strata/hal/local/local_executable.h"

namespace strata::hal {

// Resolves a library import by name to a runtime function (microkernels);
// null when the runtime has none by that name.
using ExecutableImportResolver =
    std::function<const void *(std::string_view name)>;

// What a loader knows about the library's memory (the embedded ELF loader
// knows its segments): every pointer of the descriptor is checked against it
// before use, so a damaged library is an error rather than a crash.
struct LibraryMemoryCheck {
  // [pointer, pointer + size) is readable library memory.
  std::function<bool(const void *pointer, size_t size)> is_readable;
  // `pointer` is inside the library's code.
  std::function<bool(const void *pointer)> is_code;
  // `text` is NUL-terminated inside readable library memory.
  std::function<bool(const char *text)> is_string;
};

class LibraryExecutable : public LocalExecutable {
public:
  // The environment every query and dispatch of this runtime sees before
  // imports are resolved: no imports, no CPU feature bits (reserved).
  static strata_hal_executable_environment_v0_t BaseEnvironment();

  std::string_view name() const override;
  uint32_t export_count() const override;
  std::string_view export_name(uint32_t ordinal) const override;
  uint32_t export_binding_count(uint32_t ordinal) const override;
  // The export's workgroup size hint; {1, 1, 1} when the library gives none.
  std::array<uint32_t, 3>
  export_workgroup_size(uint32_t ordinal) const override;

  const strata_hal_executable_environment_v0_t &environment() const {
    return environment_;
  }

  // Runs one workgroup of export `ordinal`. INTERNAL naming the export and
  // workgroup when the function returns non-zero.
  Status
  IssueWorkgroup(uint32_t ordinal,
                 const strata_hal_executable_dispatch_state_v0_t &dispatch,
                 const strata_hal_executable_workgroup_state_v0_t &workgroup)
      const override;

protected:
  LibraryExecutable() = default;

  // Validates the library the query returned (non-null, known ABI version,
  // compatible sanitizer, exports well-formed) and resolves its imports.
  // `origin` names the source in messages. With `memory`, every pointer of
  // the descriptor is checked against it first.
  Status InitializeLibrary(
      const strata_hal_executable_library_header_t *const *library,
      const ExecutableImportResolver &resolve_import, std::string_view origin,
      const LibraryMemoryCheck *memory = nullptr);

private:
  const strata_hal_executable_library_v0_t *library_ = nullptr;
  std::vector<const void *> imports_;
  strata_hal_executable_environment_v0_t environment_ = BaseEnvironment();
};

// What loaders of executable libraries share: the format (ELF for the host
// CPU; none on other hosts) and the resolver of the libraries' imports.
class LibraryLoader : public ExecutableLoader {
public:
  std::vector<std::string> SupportedFormats() const override;
  bool CanLoad(std::string_view format) const override;

protected:
  // `resolve_import` supplies the functions libraries import (may be empty:
  // then a library with imports fails to load).
  explicit LibraryLoader(ExecutableImportResolver resolve_import)
      : resolve_import_(std::move(resolve_import)) {}

  const ExecutableImportResolver &resolve_import() const {
    return resolve_import_;
  }

private:
  ExecutableImportResolver resolve_import_;
};

} // namespace strata::hal

#endif // STRATA_HAL_LOCAL_LIBRARY_EXECUTABLE_H_
