#include "strata/hal/loaders/system_library_loader.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

#include "strata/hal/local/elf_validation.h"

namespace strata::hal {
namespace {

std::string ErrnoText() { return std::strerror(errno); }

Status WriteAll(int fd, std::span<const uint8_t> bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t result =
        ::write(fd, bytes.data() + written, bytes.size() - written);
    if (result < 0) {
      if (errno == EINTR)
        continue;
      return UnavailableError("writing executable to a file failed: ",
                              ErrnoText());
    }
    written += size_t(result);
  }
  return OkStatus();
}

// The library file while it is loaded. A memfd is dlopen'ed as
// /proc/self/fd/N; the dynamic linker treats an already loaded name as the
// same library, so the fd stays open (reserving N) while the library is.
struct LibraryFile {
  int fd = -1;
  std::string path;
  // Named temporary files (the fallback) are unlinked after dlopen.
  bool unlink_after_open = false;
};

Result<LibraryFile> WriteLibraryFile(std::span<const uint8_t> bytes) {
  LibraryFile file;
  file.fd = ::memfd_create("strata_executable", MFD_CLOEXEC);
  if (file.fd >= 0) {
    file.path = StrCat("/proc/self/fd/", file.fd);
  } else {
    // No memfd (old kernel or seccomp): a private temporary file.
    const char *tmpdir = std::getenv("TMPDIR");
    std::string path = StrCat(tmpdir && *tmpdir ? tmpdir : "/tmp",
                              "/strata_executable_XXXXXX");
    file.fd = ::mkostemp(path.data(), O_CLOEXEC);
    if (file.fd < 0)
      return UnavailableError("cannot create a file for the executable: ",
                              "memfd_create and mkostemp(", path,
                              ") failed: ", ErrnoText());
    file.path = path;
    file.unlink_after_open = true;
  }
  Status status = WriteAll(file.fd, bytes);
  if (!status.ok()) {
    if (file.unlink_after_open)
      ::unlink(file.path.c_str());
    ::close(file.fd);
    return status;
  }
  return file;
}

class SystemLibraryExecutable final : public LibraryExecutable {
public:
  SystemLibraryExecutable(LibraryFile file, void *handle)
      : file_(std::move(file)), handle_(handle) {}

  ~SystemLibraryExecutable() override {
    ::dlclose(handle_);
    if (file_.unlink_after_open) {
      ::close(file_.fd);
      return;
    }
    // If the library stayed resident (e.g. it is marked NODELETE), a later
    // memfd reusing this fd number would resolve to it by name; keep the fd
    // open so the number is never reused.
    if (void *resident =
            ::dlopen(file_.path.c_str(), RTLD_LAZY | RTLD_NOLOAD)) {
      ::dlclose(resident);
      return;
    }
    ::close(file_.fd);
  }

  Status Initialize(const ExecutableImportResolver &resolve_import) {
    auto query = reinterpret_cast<strata_hal_executable_library_query_fn_t>(
        ::dlsym(handle_, STRATA_HAL_EXECUTABLE_LIBRARY_QUERY_SYMBOL));
    if (!query)
      return NotFoundError("executable library does not export the query "
                           "function '",
                           STRATA_HAL_EXECUTABLE_LIBRARY_QUERY_SYMBOL, "'");
    static const strata_hal_executable_environment_v0_t kQueryEnvironment =
        BaseEnvironment();
    const strata_hal_executable_library_header_t **library =
        query(STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST, &kQueryEnvironment);
    return InitializeLibrary(library, resolve_import, "executable library");
  }

private:
  LibraryFile file_;
  void *handle_;
};

} // namespace

Result<RefPtr<Executable>>
SystemLibraryLoader::Load(std::string_view format,
                          std::span<const uint8_t> bytes,
                          std::span<const uint32_t> constants) {
  if (!CanLoad(format))
    return InvalidArgumentError("system library loader cannot load format '",
                                format, "'");
  if (!constants.empty())
    return UnimplementedError("executable library ABI version ",
                              STRATA_HAL_EXECUTABLE_LIBRARY_VERSION_LATEST,
                              " has no executable constants, got ",
                              constants.size());
  STRATA_RETURN_IF_ERROR(ValidateElfX86_64SharedObject(bytes));
  STRATA_ASSIGN_OR_RETURN(LibraryFile file, WriteLibraryFile(bytes));

  void *handle = ::dlopen(file.path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (file.unlink_after_open)
    ::unlink(file.path.c_str());
  if (!handle) {
    const char *error = ::dlerror();
    ::close(file.fd);
    return InvalidArgumentError("dlopen of executable library failed: ",
                                error ? error : "unknown error");
  }
  // From here the executable owns the handle and file: failures below
  // release both through its destructor.
  auto executable = RefPtr<SystemLibraryExecutable>::Adopt(
      new SystemLibraryExecutable(std::move(file), handle));
  STRATA_RETURN_IF_ERROR(executable->Initialize(resolve_import()));
  return RefPtr<Executable>(std::move(executable));
}

} // namespace strata::hal
