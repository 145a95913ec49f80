// Buffers: byte ranges of device memory. A buffer is either an allocation
// (owning its memory) or a subspan of an allocation (retaining it). Local
// drivers keep all memory in host RAM, so every local buffer has a host
// pointer; drivers with device-only memory return null from host_data().
#ifndef STRATA_HAL_BUFFER_H_
#define STRATA_HAL_BUFFER_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/hal/abi_enums.h"

namespace strata::hal {

// STRATA_HAL_MEMORY_TYPE_* bits.
using MemoryTypeBitfield = uint32_t;
// STRATA_HAL_BUFFER_USAGE_* bits.
using BufferUsageBitfield = uint32_t;

// A length meaning "from the offset to the end of the buffer". Equal to the
// i64 -1 the `hal` module receives, reinterpreted as unsigned.
inline constexpr uint64_t kWholeBuffer = ~uint64_t{0};

// "HOST_VISIBLE|HOST_COHERENT" etc., for messages and device dumps.
std::string FormatMemoryType(MemoryTypeBitfield memory_type);
std::string FormatBufferUsage(BufferUsageBitfield usage);

// Checks that [offset, offset + length) lies in a range of `range_length`
// bytes (kWholeBuffer = to the end) and returns the resolved length.
// OUT_OF_RANGE names `what` ("fill target", ...) on failure.
Result<uint64_t> ResolveByteRange(uint64_t range_length, uint64_t offset,
                                  uint64_t length, std::string_view what);

// Host-visible view of part of a buffer. The view retains the buffer, so it
// stays valid while held. Local memory is host-coherent: no unmap or flush
// is needed, and dropping the range is enough.
struct MappedRange {
  RefPtr<class Buffer> buffer;
  uint8_t *data = nullptr;
  uint64_t length = 0;

  std::span<uint8_t> bytes() const { return {data, size_t(length)}; }
  template <typename T> std::span<T> As() const {
    return {reinterpret_cast<T *>(data), size_t(length / sizeof(T))};
  }
};

class Buffer : public RefObject {
public:
  static const RefTypeDescriptor kRefType;

  // Wraps host memory the caller owns. `release` (may be empty) runs when the
  // buffer dies, e.g. to free the memory.
  static RefPtr<Buffer> WrapHostMemory(uint8_t *data, uint64_t byte_length,
                                       MemoryTypeBitfield memory_type,
                                       BufferUsageBitfield allowed_usage,
                                       std::function<void()> release);

  MemoryTypeBitfield memory_type() const { return memory_type_; }
  BufferUsageBitfield allowed_usage() const { return allowed_usage_; }
  uint64_t byte_length() const { return byte_length_; }
  // Offset of this buffer inside its allocated buffer (0 for allocations).
  uint64_t byte_offset() const { return byte_offset_; }
  // The allocation this buffer views: itself unless it is a subspan.
  Buffer *allocated_buffer() { return parent_ ? parent_.get() : this; }
  // Identifies the subclass of an allocation (the address of a tag object
  // the subclass owns; null for host memory): how a driver recognises its
  // own buffers without RTTI.
  virtual const void *implementation_tag() const { return nullptr; }
  // Whether the bytes belong to someone else (WrapHostMemory: a module's
  // constants, a caller's imported array) rather than to an allocator.
  virtual bool wraps_external_memory() const { return false; }

  // First byte of this buffer in host memory, or null when the memory is
  // not host-accessible.
  uint8_t *host_data() const { return host_data_; }

  // Maps [offset, offset + length) for host access (kWholeBuffer = to the
  // end). Fails when out of range or the memory is not HOST_VISIBLE.
  Result<MappedRange> MapRange(uint64_t offset = 0,
                               uint64_t length = kWholeBuffer);

  // A buffer viewing [offset, offset + length) of this one. Retains the
  // underlying allocation (subspans of subspans do not chain).
  Result<RefPtr<Buffer>> Subspan(uint64_t offset, uint64_t length);

  // Host copies, bounds-checked.
  Status ReadData(uint64_t offset, std::span<uint8_t> target);
  Status WriteData(uint64_t offset, std::span<const uint8_t> source);

protected:
  // `host_data` may be null for memory the host cannot access.
  Buffer(MemoryTypeBitfield memory_type, BufferUsageBitfield allowed_usage,
         uint64_t byte_length, uint8_t *host_data);
  // A recycled buffer object starts over as if just created.
  void Reinitialize(MemoryTypeBitfield memory_type,
                    BufferUsageBitfield allowed_usage, uint64_t byte_length,
                    uint8_t *host_data);

private:
  friend class SubspanBuffer;

  MemoryTypeBitfield memory_type_;
  BufferUsageBitfield allowed_usage_;
  uint64_t byte_offset_ = 0;
  uint64_t byte_length_;
  uint8_t *host_data_;
  // Set for subspans: the allocation they view.
  RefPtr<Buffer> parent_;
};

} // namespace strata::hal

#endif // STRATA_HAL_BUFFER_H_
