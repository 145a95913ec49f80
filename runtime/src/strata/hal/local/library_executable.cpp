#include "strata/hal/local/library_executable.h"

#include <cstddef>

namespace strata::hal {

// The compiler emits these layouts by hand in LLVM IR; any drift here must
// fail the build, not corrupt a dispatch.
#define STRATA_CHECK_FIELD(type, field, offset)                                \
  static_assert(offsetof(type, field) == offset, #type "." #field)
STRATA_CHECK_FIELD(strata_hal_executable_library_header_t, version, 0);
STRATA_CHECK_FIELD(strata_hal_executable_library_header_t, sanitizer, 4);
STRATA_CHECK_FIELD(strata_hal_executable_library_header_t, name, 8);
static_assert(sizeof(strata_hal_executable_library_header_t) == 16);

STRATA_CHECK_FIELD(strata_hal_executable_environment_v0_t, import_funcs, 0);
STRATA_CHECK_FIELD(strata_hal_executable_environment_v0_t, import_count, 8);
STRATA_CHECK_FIELD(strata_hal_executable_environment_v0_t, cpu_data, 16);
static_assert(sizeof(strata_hal_executable_environment_v0_t) == 32);

STRATA_CHECK_FIELD(strata_hal_executable_dispatch_state_v0_t, workgroup_count_x,
                   0);
STRATA_CHECK_FIELD(strata_hal_executable_dispatch_state_v0_t, workgroup_count_y,
                   4);
STRATA_CHECK_FIELD(strata_hal_executable_dispatch_state_v0_t, workgroup_count_z,
                   8);
STRATA_CHECK_FIELD(strata_hal_executable_dispatch_state_v0_t, workgroup_size_x,
                   12);
STRATA_CHECK_FIELD(strata_hal_executable_dispatch_state_v0_t, workgroup_size_y,
                   16);
STRATA_CHECK_FIELD(strata_hal_executable_dispatch_state_v0_t, workgroup_size_z,
                   20);
STRATA_CHECK_FIELD(strata_hal_executable_dispatch_state_v0_t, constant_count,
                   24);
STRATA_CHECK_FIELD(strata_hal_executable_dispatch_state_v0_t, binding_count,
                   28);
STRATA_CHECK_FIELD(strata_hal_executable_dispatch_state_v0_t, constants, 32);
STRATA_CHECK_FIELD(strata_hal_executable_dispatch_state_v0_t, binding_ptrs, 40);
STRATA_CHECK_FIELD(strata_hal_executable_dispatch_state_v0_t, binding_lengths,
                   48);
static_assert(sizeof(strata_hal_executable_dispatch_state_v0_t) == 56);

STRATA_CHECK_FIELD(strata_hal_executable_workgroup_state_v0_t, workgroup_id_x,
                   0);
STRATA_CHECK_FIELD(strata_hal_executable_workgroup_state_v0_t, workgroup_id_y,
                   4);
STRATA_CHECK_FIELD(strata_hal_executable_workgroup_state_v0_t, workgroup_id_z,
                   8);
STRATA_CHECK_FIELD(strata_hal_executable_workgroup_state_v0_t, processor_id,
                   12);
STRATA_CHECK_FIELD(strata_hal_executable_workgroup_state_v0_t, local_memory,
                   16);
STRATA_CHECK_FIELD(strata_hal_executable_workgroup_state_v0_t,
                   local_memory_size, 24);
static_assert(sizeof(strata_hal_executable_workgroup_state_v0_t) == 32);

STRATA_CHECK_FIELD(strata_hal_executable_library_v0_t, header, 0);
STRATA_CHECK_FIELD(strata_hal_executable_library_v0_t, import_count, 8);
STRATA_CHECK_FIELD(strata_hal_executable_library_v0_t, import_names, 16);
STRATA_CHECK_FIELD(strata_hal_executable_library_v0_t, export_count, 24);
STRATA_CHECK_FIELD(strata_hal_executable_library_v0_t, export_names, 32);
STRATA_CHECK_FIELD(strata_hal_executable_library_v0_t, export_ptrs, 40);
STRATA_CHECK_FIELD(strata_hal_executable_library_v0_t, export_binding_counts,
                   48);
STRATA_CHECK_FIELD(strata_hal_executable_library_v0_t, export_workgroup_sizes,
                   56);
static_assert(sizeof(strata_hal_executable_library_v0_t) == 64);
#undef STRATA_CHECK_FIELD

namespace {

// The sanitizer this runtime was built with; a library instrumented for a
// sanitizer needs its runtime in the process.
uint32_t RuntimeSanitizer() {
#if defined(__SANITIZE_ADDRESS__)
  return STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_ADDRESS;
#elif defined(__SANITIZE_THREAD__)
  return STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_THREAD;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_ADDRESS;
#elif __has_feature(thread_sanitizer)
  return STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_THREAD;
#else
  return STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_NONE;
#endif
#else
  return STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_NONE;
#endif
}

const char *SanitizerName(uint32_t sanitizer) {
  switch (sanitizer) {
  case STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_NONE:
    return "none";
  case STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_ADDRESS:
    return "address";
  case STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_THREAD:
    return "thread";
  default:
    return "unknown";
  }
}

} // namespace

strata_hal_executable_environment_v0_t LibraryExecutable::BaseEnvironment() {
  strata_hal_executable_environment_v0_t environment = {};
  environment.import_funcs = nullptr;
  environment.import_count = 0;
  return environment;
}

namespace {

// More exports or imports than any compiler output has; bounds the table
// checks below.
constexpr uint32_t kMaxLibraryEntries = 1u << 16;

// Checks every pointer of a v0 library against `memory` before
// InitializeLibrary dereferences any of them.
Status
CheckLibraryMemory(const strata_hal_executable_library_header_t *const *library,
                   const LibraryMemoryCheck &memory, std::string_view origin) {
  auto fail = [&](const char *what) {
    return InvalidArgumentError(origin, ": library descriptor ", what,
                                " points outside the library");
  };
  // Readable and aligned for its type (a damaged pointer may be neither).
  auto valid = [&](const void *pointer, size_t size, size_t alignment) {
    return reinterpret_cast<uintptr_t>(pointer) % alignment == 0 &&
           memory.is_readable(pointer, size);
  };
  if (!valid(library, sizeof(*library), alignof(void *)))
    return fail("returned by the query");
  const strata_hal_executable_library_header_t *header = *library;
  if (!header || !valid(header, sizeof(*header),
                        alignof(strata_hal_executable_library_header_t)))
    return fail("header");
  if (header->name && !memory.is_string(header->name))
    return fail("name");
  if (header->version != STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_0)
    return OkStatus(); // InitializeLibrary rejects the version.
  auto *v0 =
      reinterpret_cast<const strata_hal_executable_library_v0_t *>(library);
  if (!valid(v0, sizeof(*v0), alignof(strata_hal_executable_library_v0_t)))
    return fail("table");
  if (v0->export_count > kMaxLibraryEntries ||
      v0->import_count > kMaxLibraryEntries)
    return InvalidArgumentError(origin, ": library claims ", v0->export_count,
                                " exports and ", v0->import_count,
                                " imports; the limit is ", kMaxLibraryEntries);
  auto table = [&](const void *pointer, size_t entry_size, size_t alignment,
                   uint32_t count) {
    return count == 0 || !pointer ||
           valid(pointer, entry_size * count, alignment);
  };
  uint32_t exports = v0->export_count, imports = v0->import_count;
  if (!table(v0->export_names, sizeof(char *), alignof(char *), exports))
    return fail("export name table");
  if (!table(v0->export_ptrs, sizeof(void *), alignof(void *), exports))
    return fail("export function table");
  if (!table(v0->export_binding_counts, sizeof(uint32_t), alignof(uint32_t),
             exports))
    return fail("export binding count table");
  if (!table(v0->export_workgroup_sizes, 3 * sizeof(uint32_t),
             alignof(uint32_t), exports))
    return fail("export workgroup size table");
  if (!table(v0->import_names, sizeof(char *), alignof(char *), imports))
    return fail("import name table");
  for (uint32_t i = 0; i < exports; ++i) {
    if (v0->export_names && v0->export_names[i] &&
        !memory.is_string(v0->export_names[i]))
      return fail(StrCat("export ", i, " name").c_str());
    if (v0->export_ptrs && v0->export_ptrs[i] &&
        !memory.is_code(reinterpret_cast<const void *>(v0->export_ptrs[i])))
      return InvalidArgumentError(origin, ": export ", i,
                                  " function points outside the library's "
                                  "code");
  }
  for (uint32_t i = 0; i < imports && v0->import_names; ++i)
    if (v0->import_names[i] && !memory.is_string(v0->import_names[i]))
      return fail(StrCat("import ", i, " name").c_str());
  return OkStatus();
}

} // namespace

Status LibraryExecutable::InitializeLibrary(
    const strata_hal_executable_library_header_t *const *library,
    const ExecutableImportResolver &resolve_import, std::string_view origin,
    const LibraryMemoryCheck *memory) {
  if (!library)
    return InvalidArgumentError(
        origin,
        ": library query returned NULL (the library does not support "
        "executable library ABI version ",
        STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, ")");
  if (memory)
    STRATA_RETURN_IF_ERROR(CheckLibraryMemory(library, *memory, origin));
  const strata_hal_executable_library_header_t *header = *library;
  if (!header)
    return InvalidArgumentError(origin, ": library has a null header");
  if (header->version > STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST)
    return FailedPreconditionError(
        origin, ": executable built for library ABI version ", header->version,
        ", runtime supports ", STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST);
  std::string_view library_name =
      header->name ? std::string_view(header->name) : origin;
  if (header->sanitizer != STRATA_HAL_EXECUTABLE_LIBRARY_SANITIZER_NONE &&
      header->sanitizer != RuntimeSanitizer())
    return FailedPreconditionError(
        "executable '", library_name, "' was built with the ",
        SanitizerName(header->sanitizer), " sanitizer (", header->sanitizer,
        ") but the runtime uses ", SanitizerName(RuntimeSanitizer()));

  // Version 0 is the only layout so far.
  auto *v0 =
      reinterpret_cast<const strata_hal_executable_library_v0_t *>(library);
  if (v0->export_count == 0)
    return InvalidArgumentError("executable '", library_name,
                                "' has no exports");
  if (!v0->export_names || !v0->export_ptrs || !v0->export_binding_counts)
    return InvalidArgumentError("executable '", library_name,
                                "' has a null export table");
  for (uint32_t i = 0; i < v0->export_count; ++i) {
    if (!v0->export_names[i] || !v0->export_ptrs[i])
      return InvalidArgumentError("executable '", library_name, "' export ", i,
                                  " has a null name or function");
  }
  if (v0->import_count && !v0->import_names)
    return InvalidArgumentError("executable '", library_name,
                                "' has a null import table");
  imports_.resize(v0->import_count);
  for (uint32_t i = 0; i < v0->import_count; ++i) {
    const char *import_name = v0->import_names[i];
    if (!import_name)
      return InvalidArgumentError("executable '", library_name, "' import ", i,
                                  " has a null name");
    imports_[i] = resolve_import ? resolve_import(import_name) : nullptr;
    if (!imports_[i])
      return NotFoundError("executable '", library_name, "' imports '",
                           import_name,
                           "', which this runtime does not provide");
  }
  environment_.import_funcs = imports_.data();
  environment_.import_count = uint32_t(imports_.size());
  library_ = v0;
  return OkStatus();
}

std::string_view LibraryExecutable::name() const {
  if (!library_ || !library_->header->name)
    return "<unnamed>";
  return library_->header->name;
}

uint32_t LibraryExecutable::export_count() const {
  return library_ ? library_->export_count : 0;
}

std::string_view LibraryExecutable::export_name(uint32_t ordinal) const {
  return library_->export_names[ordinal];
}

uint32_t LibraryExecutable::export_binding_count(uint32_t ordinal) const {
  return library_->export_binding_counts[ordinal];
}

std::array<uint32_t, 3>
LibraryExecutable::export_workgroup_size(uint32_t ordinal) const {
  if (!library_->export_workgroup_sizes)
    return {1, 1, 1};
  const uint32_t *size = library_->export_workgroup_sizes + 3 * ordinal;
  return {size[0], size[1], size[2]};
}

Status LibraryExecutable::IssueWorkgroup(
    uint32_t ordinal, const strata_hal_executable_dispatch_state_v0_t &dispatch,
    const strata_hal_executable_workgroup_state_v0_t &workgroup) const {
  if (ordinal >= export_count())
    return InvalidArgumentError("export ordinal ", ordinal,
                                " out of range; executable '", name(), "' has ",
                                export_count(), " exports");
  int result =
      library_->export_ptrs[ordinal](&environment_, &dispatch, &workgroup);
  if (result != 0)
    return InternalError("executable '", name(), "' export '",
                         export_name(ordinal), "' failed with code ", result,
                         " in workgroup (", workgroup.workgroup_id_x, ", ",
                         workgroup.workgroup_id_y, ", ",
                         workgroup.workgroup_id_z, ")");
  return OkStatus();
}

std::vector<std::string> LibraryLoader::SupportedFormats() const {
#if defined(__x86_64__)
  return {STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64};
#else
  return {};
#endif
}

bool LibraryLoader::CanLoad(std::string_view format) const {
#if defined(__x86_64__)
  return format == STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64;
#else
  return false;
#endif
}

} // namespace strata::hal
