// A buffer view is how tensors cross the ABI: a buffer plus a dense shape,
// an element type and an encoding.
#ifndef STRATA_HAL_BUFFER_VIEW_H_
#define STRATA_HAL_BUFFER_VIEW_H_

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "strata/base/object_pool.h"
#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/hal/allocator.h"
#include "strata/hal/buffer.h"
#include "strata/hal/element_type_util.h"

namespace strata::hal {

class BufferView final : public RefObject {
public:
  static const RefTypeDescriptor kRefType;
  static constexpr size_t kMaxRank = 16;

  // Validates rank <= kMaxRank, dims >= 0, a known element type, the dense
  // row-major encoding, and that the dense byte size fits in `buffer`.
  static Result<RefPtr<BufferView>>
  Create(RefPtr<Buffer> buffer, std::span<const int64_t> shape,
         ElementType element_type,
         EncodingType encoding_type = STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR);
  // Views [offset, offset + length) of `buffer` (kWholeBuffer = to the end);
  // what `hal.buffer_view.create` does.
  static Result<RefPtr<BufferView>> Create(RefPtr<Buffer> buffer,
                                           uint64_t offset, uint64_t length,
                                           std::span<const int64_t> shape,
                                           ElementType element_type,
                                           EncodingType encoding_type);
  // Allocates a buffer of exactly the dense size and, when `initial_data` is
  // non-empty, fills it (its size must equal the dense size).
  static Result<RefPtr<BufferView>>
  Allocate(Allocator &allocator, std::span<const int64_t> shape,
           ElementType element_type, MemoryTypeBitfield memory_type,
           BufferUsageBitfield usage,
           std::span<const uint8_t> initial_data = {});

  // Dense byte size of a shape; INVALID_ARGUMENT on negative dims, unknown
  // types or overflow.
  static Result<uint64_t> ComputeByteLength(std::span<const int64_t> shape,
                                            ElementType element_type);

  const RefPtr<Buffer> &buffer() const { return buffer_; }
  std::span<const int64_t> shape() const { return {shape_.data(), rank_}; }
  size_t rank() const { return rank_; }
  int64_t dim(size_t index) const { return shape_[index]; }
  ElementType element_type() const { return element_type_; }
  EncodingType encoding_type() const { return encoding_type_; }
  uint64_t element_count() const;
  // Dense byte size (<= buffer()->byte_length()).
  uint64_t byte_length() const { return byte_length_; }

  // "2x3xf32".
  std::string FormatShape() const;

private:
  friend class ObjectPool<BufferView>;
  BufferView(RefPtr<Buffer> buffer, std::span<const int64_t> shape,
             ElementType element_type, EncodingType encoding_type,
             uint64_t byte_length);
  // Its buffer released, parked in the view pool for the next Create.
  void OnLastReference() const override;

  RefPtr<Buffer> buffer_;
  std::array<int64_t, kMaxRank> shape_{};
  size_t rank_;
  ElementType element_type_;
  EncodingType encoding_type_;
  uint64_t byte_length_;
};

// What `hal.buffer_view.assert` checks. The error names `what` (e.g.
// "input 0") and shows expected vs. actual shape and type:
//   INVALID_ARGUMENT: input 0: expected 2x3xf32, got 2x4xf32
Status CheckBufferView(const BufferView *view, std::string_view what,
                       ElementType element_type, EncodingType encoding_type,
                       std::span<const int64_t> shape);

} // namespace strata::hal

#endif // STRATA_HAL_BUFFER_VIEW_H_
