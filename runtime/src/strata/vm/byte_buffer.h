// vm.buffer: a byte array the VM can load from and store to. Either owns its
// storage (zero-initialised) or borrows a span inside memory kept alive by a
// retained owner (a module's rodata: the buffer retains the module).
#ifndef STRATA_VM_BYTE_BUFFER_H_
#define STRATA_VM_BYTE_BUFFER_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"

namespace strata::vm {

class ByteBuffer final : public RefObject {
public:
  static const RefTypeDescriptor kRefType; // "vm.buffer"

  // Largest buffer Allocate accepts; larger requests are
  // RESOURCE_EXHAUSTED rather than an allocation failure.
  static constexpr uint64_t kMaxLength = uint64_t(1) << 31;

  // A writable, zero-filled buffer of `length` bytes.
  static Result<RefPtr<ByteBuffer>> Allocate(uint64_t length);
  // A copy of `bytes`; read-only unless `writable`.
  static RefPtr<ByteBuffer> CopyOf(std::span<const uint8_t> bytes,
                                   bool writable = false);
  // A read-only copy of a string (how strings travel to native modules).
  static RefPtr<ByteBuffer> FromString(std::string_view text);
  // Borrows `bytes` read-only; retains `owner`, which must keep them alive.
  static RefPtr<ByteBuffer> WrapReadOnly(std::span<const uint8_t> bytes,
                                         RefPtr<RefObject> owner);
  // Borrows `bytes` writable. The caller keeps them alive for as long as
  // the buffer is referenced (VMVX bindings: for one workgroup's call).
  static RefPtr<ByteBuffer> WrapWritable(std::span<uint8_t> bytes);

  ~ByteBuffer() override;

  bool is_read_only() const { return read_only_; }
  uint64_t length() const { return length_; }
  std::span<const uint8_t> data() const { return {data_, length_}; }
  // The bytes as text (no validation of UTF-8).
  std::string_view AsStringView() const {
    return {reinterpret_cast<const char *>(data_), length_};
  }

  // Writable bytes; FAILED_PRECONDITION for read-only buffers.
  Result<std::span<uint8_t>> MutableData();

  // Bounds-checked views of [offset, offset + length); OUT_OF_RANGE when
  // the range does not fit (overflow-safe).
  Result<std::span<const uint8_t>> ReadRange(uint64_t offset,
                                             uint64_t length) const;
  Result<std::span<uint8_t>> WriteRange(uint64_t offset, uint64_t length);

private:
  ByteBuffer(uint8_t *data, uint64_t length, bool owns_data, bool read_only,
             RefPtr<RefObject> owner);

  Status CheckRange(uint64_t offset, uint64_t length) const;

  uint8_t *data_;
  uint64_t length_;
  bool owns_data_;
  bool read_only_;
  RefPtr<RefObject> owner_;
};

} // namespace strata::vm

#endif // STRATA_VM_BYTE_BUFFER_H_
