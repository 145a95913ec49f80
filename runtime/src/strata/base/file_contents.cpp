#include "strata/base/file_contents.h"

#include <cerrno>
#include <cstring>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace strata {
namespace {

Status ErrnoError(int error, const std::string &what, const std::string &path) {
  std::string message = StrCat(what, " '", path, "': ", std::strerror(error));
  switch (error) {
  case ENOENT:
    return NotFoundError(message);
  case EACCES:
  case EPERM:
    return PermissionDeniedError(message);
  case ENOMEM:
    return ResourceExhaustedError(message);
  default:
    return UnavailableError(message);
  }
}

// Closes the descriptor when leaving scope.
class ScopedFd {
public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0)
      ::close(fd_);
  }
  ScopedFd(const ScopedFd &) = delete;
  ScopedFd &operator=(const ScopedFd &) = delete;
  int get() const { return fd_; }

private:
  int fd_;
};

Status TooLargeError(const std::string &description, size_t max_bytes) {
  return ResourceExhaustedError(
      "'", description, "' is larger than the limit of ", max_bytes, " bytes");
}

Result<int> OpenForReading(const std::string &path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return ErrnoError(errno, "cannot open", path);
  return fd;
}

} // namespace

Result<OwnedBytes> ReadFdContents(int fd, const std::string &description,
                                  size_t max_bytes) {
  std::vector<uint8_t> bytes;
  struct stat info;
  if (::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
    if (static_cast<uint64_t>(info.st_size) > max_bytes)
      return TooLargeError(description, max_bytes);
    bytes.reserve(static_cast<size_t>(info.st_size));
  }
  uint8_t chunk[64 * 1024];
  while (true) {
    ssize_t count = ::read(fd, chunk, sizeof(chunk));
    if (count < 0) {
      if (errno == EINTR)
        continue;
      return ErrnoError(errno, "cannot read", description);
    }
    if (count == 0)
      break;
    if (static_cast<size_t>(count) > max_bytes - bytes.size())
      return TooLargeError(description, max_bytes);
    bytes.insert(bytes.end(), chunk, chunk + count);
  }
  // Copy once more into an aligned allocation: rodata inside a module is
  // aligned relative to the start of the file.
  return OwnedBytes::CopyOf(std::span<const uint8_t>(bytes));
}

Result<OwnedBytes> ReadFileContents(const std::string &path, size_t max_bytes) {
  STRATA_ASSIGN_OR_RETURN(int raw_fd, OpenForReading(path));
  ScopedFd fd(raw_fd);
  return ReadFdContents(fd.get(), path, max_bytes);
}

Result<OwnedBytes> MapFileContents(const std::string &path, size_t max_bytes) {
  STRATA_ASSIGN_OR_RETURN(int raw_fd, OpenForReading(path));
  ScopedFd fd(raw_fd);
  struct stat info;
  if (::fstat(fd.get(), &info) != 0)
    return ErrnoError(errno, "cannot stat", path);
  if (S_ISDIR(info.st_mode))
    return InvalidArgumentError("'", path, "' is a directory");
  if (!S_ISREG(info.st_mode) || info.st_size == 0)
    return ReadFdContents(fd.get(), path, max_bytes);
  if (static_cast<uint64_t>(info.st_size) > max_bytes)
    return TooLargeError(path, max_bytes);
  size_t length = static_cast<size_t>(info.st_size);
  void *mapping =
      ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE, fd.get(), /*offset=*/0);
  if (mapping == MAP_FAILED)
    return ReadFdContents(fd.get(), path, max_bytes);
  return OwnedBytes::Wrap(
      std::span<const uint8_t>(static_cast<const uint8_t *>(mapping), length),
      [mapping, length] { ::munmap(mapping, length); });
}

Status WriteFileContents(const std::string &path,
                         std::span<const uint8_t> bytes) {
  int raw_fd =
      ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (raw_fd < 0)
    return ErrnoError(errno, "cannot create", path);
  ScopedFd fd(raw_fd);
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t count =
        ::write(fd.get(), bytes.data() + written, bytes.size() - written);
    if (count < 0) {
      if (errno == EINTR)
        continue;
      return ErrnoError(errno, "cannot write", path);
    }
    written += static_cast<size_t>(count);
  }
  return OkStatus();
}

} // namespace strata
