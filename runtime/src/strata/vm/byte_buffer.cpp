#include "strata/vm/byte_buffer.h"

#include <cstdlib>
#include <cstring>

#include "strata/base/checked_math.h"

namespace strata::vm {

const RefTypeDescriptor ByteBuffer::kRefType = {"vm.buffer"};

ByteBuffer::ByteBuffer(uint8_t *data, uint64_t length, bool owns_data,
                       bool read_only, RefPtr<RefObject> owner)
    : RefObject(&kRefType), data_(data), length_(length), owns_data_(owns_data),
      read_only_(read_only), owner_(std::move(owner)) {}

ByteBuffer::~ByteBuffer() {
  if (owns_data_)
    std::free(data_);
}

Result<RefPtr<ByteBuffer>> ByteBuffer::Allocate(uint64_t length) {
  if (length > kMaxLength)
    return ResourceExhaustedError("vm.buffer of ", length,
                                  " bytes exceeds the limit of ", kMaxLength);
  // calloc reports failure instead of throwing and gives zeroed pages cheaply.
  auto *data = static_cast<uint8_t *>(
      std::calloc(length ? static_cast<size_t>(length) : 1, 1));
  if (!data)
    return ResourceExhaustedError("cannot allocate a vm.buffer of ", length,
                                  " bytes");
  return RefPtr<ByteBuffer>::Adopt(new ByteBuffer(
      data, length, /*owns_data=*/true, /*read_only=*/false, nullptr));
}

RefPtr<ByteBuffer> ByteBuffer::CopyOf(std::span<const uint8_t> bytes,
                                      bool writable) {
  auto *data =
      static_cast<uint8_t *>(std::malloc(bytes.empty() ? 1 : bytes.size()));
  if (!data)
    std::abort(); // Same policy as operator new without exceptions.
  if (!bytes.empty())
    std::memcpy(data, bytes.data(), bytes.size());
  return RefPtr<ByteBuffer>::Adopt(new ByteBuffer(
      data, bytes.size(), /*owns_data=*/true, !writable, nullptr));
}

RefPtr<ByteBuffer> ByteBuffer::FromString(std::string_view text) {
  return CopyOf(std::span<const uint8_t>(
      reinterpret_cast<const uint8_t *>(text.data()), text.size()));
}

RefPtr<ByteBuffer> ByteBuffer::WrapReadOnly(std::span<const uint8_t> bytes,
                                            RefPtr<RefObject> owner) {
  return RefPtr<ByteBuffer>::Adopt(new ByteBuffer(
      const_cast<uint8_t *>(bytes.data()), bytes.size(),
      /*owns_data=*/false, /*read_only=*/true, std::move(owner)));
}

RefPtr<ByteBuffer> ByteBuffer::WrapWritable(std::span<uint8_t> bytes) {
  return RefPtr<ByteBuffer>::Adopt(new ByteBuffer(bytes.data(), bytes.size(),
                                                  /*owns_data=*/false,
                                                  /*read_only=*/false,
                                                  nullptr));
}

Result<std::span<uint8_t>> ByteBuffer::MutableData() {
  if (read_only_)
    return FailedPreconditionError("vm.buffer is read-only");
  return std::span<uint8_t>(data_, length_);
}

Status ByteBuffer::CheckRange(uint64_t offset, uint64_t length) const {
  if (!RangeInBounds(offset, length, length_))
    return OutOfRangeError("range [", offset, ", ", offset, " + ", length,
                           ") is outside the vm.buffer of ", length_, " bytes");
  return OkStatus();
}

Result<std::span<const uint8_t>> ByteBuffer::ReadRange(uint64_t offset,
                                                       uint64_t length) const {
  STRATA_RETURN_IF_ERROR(CheckRange(offset, length));
  return std::span<const uint8_t>(data_ + offset, length);
}

Result<std::span<uint8_t>> ByteBuffer::WriteRange(uint64_t offset,
                                                  uint64_t length) {
  if (read_only_)
    return FailedPreconditionError("cannot write to a read-only vm.buffer");
  STRATA_RETURN_IF_ERROR(CheckRange(offset, length));
  return std::span<uint8_t>(data_ + offset, length);
}

} // namespace strata::vm
