#include "strata/tooling/numpy_io.h"

#include <cstring>
#include <fstream>
#include <optional>

#include "strata/base/checked_math.h"
#include "strata/base/file_contents.h"
#include "strata/hal/abi_enums.h"
#include "strata/hal/element_type_util.h"

namespace strata::tooling {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicSize = 6;

// Finds `'key':` in the header dict and returns the text after it.
Result<std::string_view> FindKey(std::string_view header,
                                 std::string_view key) {
  for (char quote : {'\'', '"'}) {
    std::string needle = std::string(1, quote) + std::string(key) + quote;
    size_t at = header.find(needle);
    if (at == std::string_view::npos)
      continue;
    size_t colon = header.find(':', at + needle.size());
    if (colon == std::string_view::npos)
      break;
    std::string_view rest = header.substr(colon + 1);
    while (!rest.empty() && rest.front() == ' ')
      rest.remove_prefix(1);
    return rest;
  }
  return InvalidArgumentError("npy header has no '", key, "' entry");
}

Result<std::string> ParseDescr(std::string_view header) {
  STRATA_ASSIGN_OR_RETURN(std::string_view rest, FindKey(header, "descr"));
  if (rest.empty() || (rest[0] != '\'' && rest[0] != '"'))
    return InvalidArgumentError("npy 'descr' is not a string");
  size_t end = rest.find(rest[0], 1);
  if (end == std::string_view::npos)
    return InvalidArgumentError("npy 'descr' is not terminated");
  return std::string(rest.substr(1, end - 1));
}

Result<bool> ParseFortranOrder(std::string_view header) {
  STRATA_ASSIGN_OR_RETURN(std::string_view rest,
                          FindKey(header, "fortran_order"));
  if (rest.substr(0, 4) == "True")
    return true;
  if (rest.substr(0, 5) == "False")
    return false;
  return InvalidArgumentError("npy 'fortran_order' is not True or False");
}

Result<std::vector<int64_t>> ParseShape(std::string_view header) {
  STRATA_ASSIGN_OR_RETURN(std::string_view rest, FindKey(header, "shape"));
  if (rest.empty() || rest[0] != '(')
    return InvalidArgumentError("npy 'shape' is not a tuple");
  size_t close = rest.find(')');
  if (close == std::string_view::npos)
    return InvalidArgumentError("npy 'shape' is not terminated");
  std::vector<int64_t> shape;
  std::string_view body = rest.substr(1, close - 1);
  size_t i = 0;
  while (i < body.size()) {
    while (i < body.size() && (body[i] == ' ' || body[i] == ','))
      ++i;
    if (i == body.size())
      break;
    int64_t dim = 0;
    size_t digits = 0;
    while (i < body.size() && body[i] >= '0' && body[i] <= '9') {
      // Any int64 dimension (the tensor may be empty); larger ones
      // overflow.
      std::optional<int64_t> tens = CheckedMul<int64_t>(dim, 10);
      std::optional<int64_t> next =
          tens ? CheckedAdd<int64_t>(*tens, body[i] - '0') : std::nullopt;
      if (!next)
        return InvalidArgumentError("npy shape dimension is too large");
      dim = *next;
      ++i;
      ++digits;
    }
    if (i < body.size() && body[i] == 'L') // Python 2 longs
      ++i;
    if (!digits)
      return InvalidArgumentError("npy 'shape' has a non-integer entry");
    shape.push_back(dim);
  }
  return shape;
}

} // namespace

Result<RefPtr<hal::BufferView>> ParseNumpy(std::span<const uint8_t> bytes,
                                           hal::Allocator &allocator) {
  if (bytes.size() < kMagicSize + 4 ||
      std::memcmp(bytes.data(), kMagic, kMagicSize) != 0)
    return InvalidArgumentError("not a .npy file (bad magic)");
  uint8_t major = bytes[6];
  size_t header_length, header_start;
  if (major == 1) {
    header_length = bytes[8] | (size_t(bytes[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return InvalidArgumentError(".npy file is truncated");
    header_length = bytes[8] | (size_t(bytes[9]) << 8) |
                    (size_t(bytes[10]) << 16) | (size_t(bytes[11]) << 24);
    header_start = 12;
  } else {
    return UnimplementedError(".npy format version ", int(major),
                              " is not supported");
  }
  if (header_length > bytes.size() - header_start)
    return InvalidArgumentError(".npy header is truncated");
  std::string_view header(reinterpret_cast<const char *>(bytes.data()) +
                              header_start,
                          header_length);
  STRATA_ASSIGN_OR_RETURN(std::string descr, ParseDescr(header));
  STRATA_ASSIGN_OR_RETURN(bool fortran_order, ParseFortranOrder(header));
  STRATA_ASSIGN_OR_RETURN(std::vector<int64_t> shape, ParseShape(header));
  if (fortran_order)
    return UnimplementedError(".npy arrays in Fortran order are not "
                              "supported; save with np.ascontiguousarray");
  STRATA_ASSIGN_OR_RETURN(hal::ElementType element_type,
                          hal::ElementTypeFromNumpyDtype(descr));
  STRATA_ASSIGN_OR_RETURN(
      uint64_t byte_length,
      hal::BufferView::ComputeByteLength(shape, element_type));
  size_t data_start = header_start + header_length;
  if (bytes.size() - data_start != byte_length)
    return InvalidArgumentError(".npy data is ", bytes.size() - data_start,
                                " bytes but shape and dtype need ",
                                byte_length);
  return hal::BufferView::Allocate(
      allocator, shape, element_type,
      STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL | STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
      STRATA_HAL_BUFFER_USAGE_DEFAULT, bytes.subspan(data_start));
}

Result<RefPtr<hal::BufferView>> LoadNumpyFile(const std::string &path,
                                              hal::Allocator &allocator) {
  // Mapped, not read: the allocator's limit applies before the data is
  // touched, so a huge file is RESOURCE_EXHAUSTED rather than a host copy.
  STRATA_ASSIGN_OR_RETURN(OwnedBytes bytes, MapFileContents(path));
  auto view = ParseNumpy(bytes.span(), allocator);
  if (!view.ok())
    return view.status().Annotate(path);
  return view;
}

Result<std::vector<uint8_t>> SerializeNumpy(const hal::BufferView &view) {
  // numpy has no bfloat16: its values are written as float32, each widened
  // exactly (the 16 bits become the high half).
  bool widenBF16 = view.element_type() == STRATA_HAL_ELEMENT_TYPE_BFLOAT_16;
  std::string descr = "<f4";
  if (!widenBF16) {
    STRATA_ASSIGN_OR_RETURN(descr,
                            hal::ElementTypeToNumpyDtype(view.element_type()));
  }
  std::string header =
      "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (";
  for (int64_t dim : view.shape())
    header += std::to_string(dim) + ", ";
  // "(2, 3)", but "(4,)" for rank 1 as Python writes a 1-tuple.
  if (view.rank() > 1)
    header.resize(header.size() - 2);
  else if (view.rank() == 1)
    header.resize(header.size() - 1);
  header += "), }";
  // Pad so the data starts 64-byte aligned; the header ends in '\n'.
  size_t total = kMagicSize + 4 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::vector<uint8_t> out(kMagic, kMagic + kMagicSize);
  out.push_back(1);
  out.push_back(0);
  out.push_back(uint8_t(header.size() & 0xFF));
  out.push_back(uint8_t(header.size() >> 8));
  out.insert(out.end(), header.begin(), header.end());
  STRATA_ASSIGN_OR_RETURN(auto mapping,
                          view.buffer()->MapRange(0, view.byte_length()));
  if (!widenBF16) {
    out.insert(out.end(), mapping.data, mapping.data + mapping.length);
    return out;
  }
  for (size_t i = 0; i + 1 < mapping.length; i += 2) {
    uint8_t widened[4] = {0, 0, mapping.data[i], mapping.data[i + 1]};
    out.insert(out.end(), widened, widened + 4);
  }
  return out;
}

Status SaveNumpyFile(const std::string &path, const hal::BufferView &view) {
  STRATA_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, SerializeNumpy(view));
  std::ofstream file(path, std::ios::binary);
  if (!file)
    return PermissionDeniedError("cannot write '", path, "'");
  file.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
  if (!file)
    return DataLossError("writing '", path, "' failed");
  return OkStatus();
}

} // namespace strata::tooling
