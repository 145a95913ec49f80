#include "strata/base/owned_bytes.h"

#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace strata {

OwnedBytes::OwnedBytes(OwnedBytes &&other) noexcept
    : bytes_(std::exchange(other.bytes_, {})),
      release_(std::exchange(other.release_, nullptr)) {}

OwnedBytes &OwnedBytes::operator=(OwnedBytes &&other) noexcept {
  if (this != &other) {
    reset();
    bytes_ = std::exchange(other.bytes_, {});
    release_ = std::exchange(other.release_, nullptr);
  }
  return *this;
}

OwnedBytes::~OwnedBytes() { reset(); }

void OwnedBytes::reset() {
  bytes_ = {};
  if (ReleaseFn release = std::exchange(release_, nullptr))
    release();
}

OwnedBytes OwnedBytes::FromVector(std::vector<uint8_t> bytes) {
  auto *storage = new std::vector<uint8_t>(std::move(bytes));
  return Wrap(std::span<const uint8_t>(*storage),
              [storage] { delete storage; });
}

OwnedBytes OwnedBytes::CopyOf(std::span<const uint8_t> bytes,
                              size_t alignment) {
  if (alignment < alignof(std::max_align_t))
    alignment = alignof(std::max_align_t);
  // Never allocate zero bytes so the data pointer is always valid.
  size_t allocation_size = bytes.empty() ? 1 : bytes.size();
  auto *storage = static_cast<uint8_t *>(
      ::operator new(allocation_size, std::align_val_t(alignment)));
  if (!bytes.empty())
    std::memcpy(storage, bytes.data(), bytes.size());
  return Wrap(std::span<const uint8_t>(storage, bytes.size()),
              [storage, alignment] {
                ::operator delete(storage, std::align_val_t(alignment));
              });
}

OwnedBytes OwnedBytes::CopyOf(std::string_view bytes, size_t alignment) {
  return CopyOf(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t *>(bytes.data()),
                               bytes.size()),
      alignment);
}

OwnedBytes OwnedBytes::Wrap(std::span<const uint8_t> bytes, ReleaseFn release) {
  OwnedBytes result;
  result.bytes_ = bytes;
  result.release_ = std::move(release);
  return result;
}

} // namespace strata
