#include "strata/hal/buffer_view.h"

#include <algorithm>

#include "strata/base/checked_math.h"

namespace strata::hal {
namespace {
// Every call creates a view per tensor argument it passes on and result.
ObjectPool<BufferView> &ViewPool() {
  static auto *pool = new ObjectPool<BufferView>(64);
  return *pool;
}
} // namespace

Result<uint64_t> BufferView::ComputeByteLength(std::span<const int64_t> shape,
                                               ElementType element_type) {
  if (!IsKnownElementType(element_type))
    return InvalidArgumentError("unsupported element type ",
                                ElementTypeName(element_type));
  return CheckedShapeByteSize(shape, ElementTypeByteSize(element_type));
}

Result<RefPtr<BufferView>> BufferView::Create(RefPtr<Buffer> buffer,
                                              std::span<const int64_t> shape,
                                              ElementType element_type,
                                              EncodingType encoding_type) {
  if (!buffer)
    return InvalidArgumentError("buffer view needs a buffer");
  if (shape.size() > kMaxRank)
    return InvalidArgumentError("rank ", shape.size(),
                                " exceeds the maximum of ", kMaxRank);
  if (encoding_type != STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR)
    return InvalidArgumentError(
        "unsupported encoding type ", encoding_type, " (only dense row-major, ",
        STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR, ", is supported)");
  STRATA_ASSIGN_OR_RETURN(uint64_t byte_length,
                          ComputeByteLength(shape, element_type));
  if (byte_length > buffer->byte_length())
    return InvalidArgumentError(
        "buffer view ", FormatShapeAndElementType(shape, element_type),
        " needs ", byte_length, " bytes but the buffer has ",
        buffer->byte_length());
  if (BufferView *view = ViewPool().Take()) {
    view->ReviveFromPool();
    view->buffer_ = std::move(buffer);
    view->rank_ = shape.size();
    std::copy(shape.begin(), shape.end(), view->shape_.begin());
    view->element_type_ = element_type;
    view->encoding_type_ = encoding_type;
    view->byte_length_ = byte_length;
    return RefPtr<BufferView>::Adopt(view);
  }
  return RefPtr<BufferView>::Adopt(new BufferView(
      std::move(buffer), shape, element_type, encoding_type, byte_length));
}

void BufferView::OnLastReference() const {
  auto *self = const_cast<BufferView *>(this);
  self->buffer_.reset();
  ViewPool().Park(self);
}

Result<RefPtr<BufferView>> BufferView::Create(RefPtr<Buffer> buffer,
                                              uint64_t offset, uint64_t length,
                                              std::span<const int64_t> shape,
                                              ElementType element_type,
                                              EncodingType encoding_type) {
  if (!buffer)
    return InvalidArgumentError("buffer view needs a buffer");
  STRATA_ASSIGN_OR_RETURN(RefPtr<Buffer> subspan,
                          buffer->Subspan(offset, length));
  return Create(std::move(subspan), shape, element_type, encoding_type);
}

Result<RefPtr<BufferView>>
BufferView::Allocate(Allocator &allocator, std::span<const int64_t> shape,
                     ElementType element_type, MemoryTypeBitfield memory_type,
                     BufferUsageBitfield usage,
                     std::span<const uint8_t> initial_data) {
  if (shape.size() > kMaxRank)
    return InvalidArgumentError("rank ", shape.size(),
                                " exceeds the maximum of ", kMaxRank);
  STRATA_ASSIGN_OR_RETURN(uint64_t byte_length,
                          ComputeByteLength(shape, element_type));
  if (!initial_data.empty() && initial_data.size() != byte_length)
    return InvalidArgumentError(
        "initial data for ", FormatShapeAndElementType(shape, element_type),
        " has ", initial_data.size(), " bytes, expected ", byte_length);
  STRATA_ASSIGN_OR_RETURN(
      RefPtr<Buffer> buffer,
      allocator.AllocateBuffer(memory_type, usage, byte_length));
  if (!initial_data.empty())
    STRATA_RETURN_IF_ERROR(buffer->WriteData(0, initial_data));
  return Create(std::move(buffer), shape, element_type);
}

BufferView::BufferView(RefPtr<Buffer> buffer, std::span<const int64_t> shape,
                       ElementType element_type, EncodingType encoding_type,
                       uint64_t byte_length)
    : RefObject(&kRefType), buffer_(std::move(buffer)), rank_(shape.size()),
      element_type_(element_type), encoding_type_(encoding_type),
      byte_length_(byte_length) {
  std::copy(shape.begin(), shape.end(), shape_.begin());
}

uint64_t BufferView::element_count() const {
  // Fits 64 bits: Create checked the byte size (a zero dimension makes the
  // product 0 even if the others wrapped).
  uint64_t count = 1;
  for (size_t i = 0; i < rank_; ++i)
    count *= uint64_t(shape_[i]);
  return count;
}

std::string BufferView::FormatShape() const {
  return FormatShapeAndElementType(shape(), element_type_);
}

Status CheckBufferView(const BufferView *view, std::string_view what,
                       ElementType element_type, EncodingType encoding_type,
                       std::span<const int64_t> shape) {
  // Formatted only for an error: this check runs on every tensor argument.
  auto expected = [&] {
    return FormatShapeAndElementType(shape, element_type);
  };
  if (!view)
    return InvalidArgumentError(what, ": expected a buffer view ", expected(),
                                ", got null");
  bool shape_matches = std::equal(shape.begin(), shape.end(),
                                  view->shape().begin(), view->shape().end());
  if (!shape_matches || view->element_type() != element_type)
    return InvalidArgumentError(what, ": expected ", expected(), ", got ",
                                view->FormatShape());
  if (view->encoding_type() != encoding_type)
    return InvalidArgumentError(what, ": expected encoding ", encoding_type,
                                ", got ", view->encoding_type());
  return OkStatus();
}

} // namespace strata::hal
