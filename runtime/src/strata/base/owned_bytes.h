// OwnedBytes: a read-only byte range together with whatever keeps it alive
// (a heap vector, an mmap'd file, memory owned by an embedder). APIs that
// "take ownership of the bytes" accept one of these by value, so ownership
// passes even when the call fails.
#ifndef STRATA_BASE_OWNED_BYTES_H_
#define STRATA_BASE_OWNED_BYTES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace strata {

class OwnedBytes {
public:
  // Runs once when the bytes are dropped.
  using ReleaseFn = std::function<void()>;

  OwnedBytes() = default;
  OwnedBytes(const OwnedBytes &) = delete;
  OwnedBytes &operator=(const OwnedBytes &) = delete;
  OwnedBytes(OwnedBytes &&other) noexcept;
  OwnedBytes &operator=(OwnedBytes &&other) noexcept;
  ~OwnedBytes();

  // Takes ownership of `bytes` (no copy).
  static OwnedBytes FromVector(std::vector<uint8_t> bytes);
  // Copies `bytes` into a fresh allocation aligned to `alignment` (a power
  // of two), so data inside can be used in place at that alignment.
  static OwnedBytes CopyOf(std::span<const uint8_t> bytes,
                           size_t alignment = 64);
  static OwnedBytes CopyOf(std::string_view bytes, size_t alignment = 64);
  // Wraps memory owned elsewhere; `release` (may be empty) runs when the
  // result is destroyed. With an empty `release` the caller must keep the
  // memory alive for as long as the OwnedBytes and anything built on it.
  static OwnedBytes Wrap(std::span<const uint8_t> bytes, ReleaseFn release);

  std::span<const uint8_t> span() const { return bytes_; }
  const uint8_t *data() const { return bytes_.data(); }
  size_t size() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }

  // Releases the bytes now; the object becomes empty.
  void reset();

private:
  std::span<const uint8_t> bytes_;
  ReleaseFn release_;
};

} // namespace strata

#endif // STRATA_BASE_OWNED_BYTES_H_
