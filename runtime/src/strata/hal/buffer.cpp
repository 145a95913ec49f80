#include "strata/hal/buffer.h"

#include <cstring>

#include "strata/base/checked_math.h"

namespace strata::hal {
namespace {

std::string
FormatBits(uint32_t bits,
           std::initializer_list<std::pair<uint32_t, const char *>> names) {
  if (bits == 0)
    return "NONE";
  std::string text;
  for (auto [bit, name] : names) {
    if (!(bits & bit))
      continue;
    if (!text.empty())
      text += '|';
    text += name;
    bits &= ~bit;
  }
  if (bits) {
    if (!text.empty())
      text += '|';
    text += StrCat("0x", Hex{bits});
  }
  return text;
}

// A host memory range owned by whoever supplied the release callback.
class WrappedBuffer final : public Buffer {
public:
  WrappedBuffer(uint8_t *data, uint64_t byte_length,
                MemoryTypeBitfield memory_type,
                BufferUsageBitfield allowed_usage,
                std::function<void()> release)
      : Buffer(memory_type, allowed_usage, byte_length, data),
        release_(std::move(release)) {}
  ~WrappedBuffer() override {
    if (release_)
      release_();
  }
  bool wraps_external_memory() const override { return true; }

private:
  std::function<void()> release_;
};

} // namespace

// Views part of an allocation; holds a reference to it.
class SubspanBuffer final : public Buffer {
public:
  SubspanBuffer(Buffer *allocation, uint64_t offset, uint64_t length)
      : Buffer(allocation->memory_type(), allocation->allowed_usage(), length,
               allocation->host_data() ? allocation->host_data() + offset
                                       : nullptr) {
    byte_offset_ = offset;
    parent_ = RefPtr<Buffer>::Retain(allocation);
  }
};

std::string FormatMemoryType(MemoryTypeBitfield memory_type) {
  return FormatBits(memory_type,
                    {{STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, "DEVICE_LOCAL"},
                     {STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE, "HOST_VISIBLE"},
                     {STRATA_HAL_MEMORY_TYPE_HOST_COHERENT, "HOST_COHERENT"},
                     {STRATA_HAL_MEMORY_TYPE_HOST_CACHED, "HOST_CACHED"}});
}

std::string FormatBufferUsage(BufferUsageBitfield usage) {
  return FormatBits(
      usage, {{STRATA_HAL_BUFFER_USAGE_TRANSFER, "TRANSFER"},
              {STRATA_HAL_BUFFER_USAGE_DISPATCH_STORAGE, "DISPATCH_STORAGE"},
              {STRATA_HAL_BUFFER_USAGE_MAPPING, "MAPPING"},
              {STRATA_HAL_BUFFER_USAGE_CONSTANT, "CONSTANT"}});
}

Result<uint64_t> ResolveByteRange(uint64_t range_length, uint64_t offset,
                                  uint64_t length, std::string_view what) {
  if (offset > range_length)
    return OutOfRangeError(what, ": offset ", offset,
                           " is past the end of a buffer of ", range_length,
                           " bytes");
  if (length == kWholeBuffer)
    return range_length - offset;
  if (!RangeInBounds(offset, length, range_length))
    return OutOfRangeError(what, ": range [", offset, ", ", offset, " + ",
                           length, ") exceeds a buffer of ", range_length,
                           " bytes");
  return length;
}

RefPtr<Buffer> Buffer::WrapHostMemory(uint8_t *data, uint64_t byte_length,
                                      MemoryTypeBitfield memory_type,
                                      BufferUsageBitfield allowed_usage,
                                      std::function<void()> release) {
  return RefPtr<Buffer>::Adopt(new WrappedBuffer(
      data, byte_length, memory_type, allowed_usage, std::move(release)));
}

Buffer::Buffer(MemoryTypeBitfield memory_type,
               BufferUsageBitfield allowed_usage, uint64_t byte_length,
               uint8_t *host_data)
    : RefObject(&kRefType), memory_type_(memory_type),
      allowed_usage_(allowed_usage), byte_length_(byte_length),
      host_data_(host_data) {}

void Buffer::Reinitialize(MemoryTypeBitfield memory_type,
                          BufferUsageBitfield allowed_usage,
                          uint64_t byte_length, uint8_t *host_data) {
  memory_type_ = memory_type;
  allowed_usage_ = allowed_usage;
  byte_offset_ = 0;
  byte_length_ = byte_length;
  host_data_ = host_data;
  parent_.reset();
}

Result<MappedRange> Buffer::MapRange(uint64_t offset, uint64_t length) {
  STRATA_ASSIGN_OR_RETURN(
      uint64_t resolved,
      ResolveByteRange(byte_length_, offset, length, "mapping buffer"));
  if (!(memory_type_ & STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE) || !host_data_)
    return PermissionDeniedError("buffer memory (",
                                 FormatMemoryType(memory_type_),
                                 ") is not host-visible and cannot be mapped");
  MappedRange range;
  range.buffer = RefPtr<Buffer>::Retain(this);
  range.data = host_data_ + offset;
  range.length = resolved;
  return range;
}

Result<RefPtr<Buffer>> Buffer::Subspan(uint64_t offset, uint64_t length) {
  STRATA_ASSIGN_OR_RETURN(
      uint64_t resolved,
      ResolveByteRange(byte_length_, offset, length, "buffer subspan"));
  if (offset == 0 && resolved == byte_length_)
    return RefPtr<Buffer>::Retain(this);
  Buffer *allocation = allocated_buffer();
  return RefPtr<Buffer>::Adopt(
      new SubspanBuffer(allocation, byte_offset_ + offset, resolved));
}

Status Buffer::ReadData(uint64_t offset, std::span<uint8_t> target) {
  STRATA_ASSIGN_OR_RETURN(MappedRange range, MapRange(offset, target.size()));
  if (!target.empty())
    std::memcpy(target.data(), range.data, target.size());
  return OkStatus();
}

Status Buffer::WriteData(uint64_t offset, std::span<const uint8_t> source) {
  STRATA_ASSIGN_OR_RETURN(MappedRange range, MapRange(offset, source.size()));
  if (!source.empty())
    std::memcpy(range.data, source.data(), source.size());
  return OkStatus();
}

} // namespace strata::hal
