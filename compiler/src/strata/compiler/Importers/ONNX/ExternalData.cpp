//===- ExternalData.cpp - load ONNX external data safely ------------------===//
#include "strata/compiler/Importers/ONNX/ExternalData.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>

namespace strata::onnx_importer {
namespace {

namespace fs = std::filesystem;

// A decimal count: digits only, no sign, no overflow.
std::optional<uint64_t> parseCount(std::string_view text) {
  if (text.empty() || text.size() > 20)
    return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return std::nullopt;
    uint64_t digit = c - '0';
    if (value > (UINT64_MAX - digit) / 10)
      return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

// Bytes per element of the ONNX types with a fixed width; nullopt for
// strings, packed 4-bit types and unknown codes (their size is checked when
// the tensor is converted).
std::optional<uint64_t> getElementByteSize(int32_t dataType) {
  switch (dataType) {
  case 2:  // UINT8
  case 3:  // INT8
  case 9:  // BOOL
  case 17: // FLOAT8E4M3FN
  case 18: // FLOAT8E4M3FNUZ
  case 19: // FLOAT8E5M2
  case 20: // FLOAT8E5M2FNUZ
  case 24: // FLOAT8E8M0
    return 1;
  case 4:  // UINT16
  case 5:  // INT16
  case 10: // FLOAT16
  case 16: // BFLOAT16
    return 2;
  case 1:  // FLOAT
  case 6:  // INT32
  case 12: // UINT32
    return 4;
  case 7:  // INT64
  case 11: // DOUBLE
  case 13: // UINT64
  case 14: // COMPLEX64
    return 8;
  case 15: // COMPLEX128
    return 16;
  default:
    return std::nullopt;
  }
}

// The bytes the tensor's dims and type call for; nullopt when unknown or
// when the product overflows (the location is refused then anyway).
std::optional<uint64_t> getExpectedByteSize(const onnx::TensorProto &tensor,
                                            bool &overflow) {
  overflow = false;
  std::optional<uint64_t> size = getElementByteSize(tensor.data_type());
  if (!size)
    return std::nullopt;
  uint64_t bytes = *size;
  for (int64_t dim : tensor.dims()) {
    if (dim < 0 || __builtin_mul_overflow(bytes, uint64_t(dim), &bytes)) {
      overflow = true;
      return std::nullopt;
    }
  }
  return bytes;
}

// Closes a file descriptor when it goes out of scope.
struct ScopedFd {
  int fd = -1;
  ~ScopedFd() {
    if (fd >= 0)
      ::close(fd);
  }
};

// True when `path` lies inside `root` (both canonical).
bool isInside(const fs::path &path, const fs::path &root) {
  auto rootIt = root.begin(), pathIt = path.begin();
  for (; rootIt != root.end(); ++rootIt, ++pathIt) {
    if (rootIt->empty()) // a trailing separator
      continue;
    if (pathIt == path.end() || *pathIt != *rootIt)
      return false;
  }
  return true;
}

class ExternalDataLoader {
public:
  ExternalDataLoader(const ExternalDataOptions &options, std::string &error)
      : options_(options), error_(error) {}

  bool loadModel(onnx::ModelProto &model) {
    if (!loadGraph(*model.mutable_graph()))
      return false;
    for (auto &function : *model.mutable_functions())
      for (auto &node : *function.mutable_node())
        if (!loadNode(node))
          return false;
    return true;
  }

private:
  bool loadGraph(onnx::GraphProto &graph) {
    for (auto &tensor : *graph.mutable_initializer())
      if (!loadTensor(tensor))
        return false;
    for (auto &sparse : *graph.mutable_sparse_initializer())
      if (!loadTensor(*sparse.mutable_values()) ||
          !loadTensor(*sparse.mutable_indices()))
        return false;
    for (auto &node : *graph.mutable_node())
      if (!loadNode(node))
        return false;
    return true;
  }

  // Subgraphs nest at most as deep as protobuf parsing allows (100).
  bool loadNode(onnx::NodeProto &node) {
    for (auto &attribute : *node.mutable_attribute()) {
      if (attribute.has_t() && !loadTensor(*attribute.mutable_t()))
        return false;
      for (auto &tensor : *attribute.mutable_tensors())
        if (!loadTensor(tensor))
          return false;
      if (attribute.has_sparse_tensor() &&
          (!loadTensor(*attribute.mutable_sparse_tensor()->mutable_values()) ||
           !loadTensor(*attribute.mutable_sparse_tensor()->mutable_indices())))
        return false;
      if (attribute.has_g() && !loadGraph(*attribute.mutable_g()))
        return false;
      for (auto &graph : *attribute.mutable_graphs())
        if (!loadGraph(graph))
          return false;
    }
    return true;
  }

  bool fail(const onnx::TensorProto &tensor, std::string_view location,
            const std::string &reason) {
    error_ = "tensor '" + tensor.name() + "': external data location '" +
             std::string(location) + "' " + reason;
    return false;
  }

  bool loadTensor(onnx::TensorProto &tensor);
  // The canonical path of `location`, checked to stay inside the root.
  std::optional<fs::path> resolve(const onnx::TensorProto &tensor,
                                  const std::string &location);

  const ExternalDataOptions &options_;
  std::string &error_;
  std::optional<fs::path> canonicalRoot_;
};

std::optional<fs::path>
ExternalDataLoader::resolve(const onnx::TensorProto &tensor,
                            const std::string &location) {
  if (location.find('\0') != std::string::npos) {
    fail(tensor, location, "contains a NUL character");
    return std::nullopt;
  }
  fs::path relative(location);
  if (relative.is_absolute()) {
    fail(tensor, location,
         "is an absolute path; it must be relative to the model's folder");
    return std::nullopt;
  }
  // Backslashes separate components in files written on Windows.
  std::string_view rest = location;
  while (!rest.empty()) {
    size_t end = rest.find_first_of("/\\");
    if (rest.substr(0, end) == "..") {
      fail(tensor, location,
           "contains '..'; it must stay inside the model's "
           "folder");
      return std::nullopt;
    }
    rest = end == std::string_view::npos ? "" : rest.substr(end + 1);
  }

  std::error_code ec;
  if (!canonicalRoot_) {
    fs::path root = options_.allowedRoot.empty() ? options_.modelDirectory
                                                 : options_.allowedRoot;
    canonicalRoot_ = fs::canonical(root.empty() ? fs::path(".") : root, ec);
    if (ec) {
      fail(tensor, location,
           "cannot be checked: the allowed folder '" + root.string() +
               "' cannot be resolved (" + ec.message() + ")");
      canonicalRoot_.reset();
      return std::nullopt;
    }
  }
  fs::path joined = options_.modelDirectory / relative;
  fs::path canonical = fs::canonical(joined, ec);
  if (ec) {
    fail(tensor, location,
         "cannot be opened: " + joined.string() + ": " + ec.message());
    return std::nullopt;
  }
  if (!isInside(canonical, *canonicalRoot_)) {
    fail(tensor, location,
         "resolves to " + canonical.string() + ", outside the allowed folder " +
             canonicalRoot_->string() + " (--external-data-root widens it)");
    return std::nullopt;
  }
  return canonical;
}

bool ExternalDataLoader::loadTensor(onnx::TensorProto &tensor) {
  if (tensor.data_location() != onnx::TensorProto_DataLocation_EXTERNAL)
    return true;
  std::string location;
  bool hasLocation = false;
  for (const auto &entry : tensor.external_data())
    if (entry.key() == "location") {
      location = entry.value();
      hasLocation = true;
    }
  if (!hasLocation || location.empty())
    return fail(tensor, location, "is missing (external data needs one)");
  std::optional<uint64_t> offset = 0, length;
  for (const auto &entry : tensor.external_data()) {
    if (entry.key() == "offset" && !(offset = parseCount(entry.value())))
      return fail(tensor, location,
                  "has an invalid offset '" + entry.value() + "'");
    if (entry.key() == "length" && !(length = parseCount(entry.value())))
      return fail(tensor, location,
                  "has an invalid length '" + entry.value() + "'");
  }
  std::optional<fs::path> path = resolve(tensor, location);
  if (!path)
    return false;

  // Non-blocking, so a FIFO cannot stall the open; fstat then refuses it.
  ScopedFd file{
      ::open(path->c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)};
  if (file.fd < 0)
    return fail(tensor, location,
                "cannot be opened: " + std::string(std::strerror(errno)));
  struct stat info;
  if (::fstat(file.fd, &info) != 0 || !S_ISREG(info.st_mode))
    return fail(tensor, location,
                "is not a regular file (" + path->string() + ")");
  uint64_t fileSize = static_cast<uint64_t>(info.st_size);
  if (*offset > fileSize)
    return fail(tensor, location,
                "offset " + std::to_string(*offset) + " is past the end of " +
                    "the file (" + std::to_string(fileSize) + " bytes)");
  if (!length)
    length = fileSize - *offset;
  else if (*length > fileSize - *offset)
    return fail(tensor, location,
                "offset " + std::to_string(*offset) + " + length " +
                    std::to_string(*length) + " runs past the end of the " +
                    "file (" + std::to_string(fileSize) + " bytes)");
  bool overflow = false;
  std::optional<uint64_t> expected = getExpectedByteSize(tensor, overflow);
  if (overflow)
    return fail(tensor, location,
                "belongs to a tensor whose dims are "
                "negative or whose size overflows");
  if (expected && *expected != *length)
    return fail(tensor, location,
                "holds " + std::to_string(*length) + " bytes, but the " +
                    "tensor's shape and type need " +
                    std::to_string(*expected));

  std::string data(*length, '\0');
  uint64_t done = 0;
  while (done < *length) {
    ssize_t got = ::pread(file.fd, data.data() + done, *length - done,
                          static_cast<off_t>(*offset + done));
    if (got < 0 && errno == EINTR)
      continue;
    if (got <= 0)
      return fail(tensor, location,
                  "could not be read: " +
                      std::string(got < 0 ? std::strerror(errno)
                                          : "the file shrank while reading"));
    done += static_cast<uint64_t>(got);
  }
  tensor.set_raw_data(std::move(data));
  tensor.clear_external_data();
  tensor.set_data_location(onnx::TensorProto_DataLocation_DEFAULT);
  return true;
}

} // namespace

bool loadExternalData(onnx::ModelProto &model,
                      const ExternalDataOptions &options, std::string &error) {
  return ExternalDataLoader(options, error).loadModel(model);
}

} // namespace strata::onnx_importer
