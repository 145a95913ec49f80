// Tensors as text, the way the tools take and print them:
//   "2x2xf32=1 2 3 4"   shape, element type, values (spaces or commas)
//   "4xf32=0"           one value fills the whole tensor
//   "f32=3.5"           a rank-0 tensor
//   "@path.npy"         a numpy file (see numpy_io.h)
#ifndef STRATA_TOOLING_TENSOR_TEXT_H_
#define STRATA_TOOLING_TENSOR_TEXT_H_

#include <string>
#include <string_view>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/hal/allocator.h"
#include "strata/hal/buffer_view.h"

namespace strata::tooling {

// Parses one tensor argument (text form or @file.npy) into a new buffer view
// allocated from `allocator`.
Result<RefPtr<hal::BufferView>> ParseTensorArgument(std::string_view text,
                                                    hal::Allocator &allocator);

// "4xf32=5 12 21 32". At most `max_elements` values are printed, then "...".
Result<std::string> FormatBufferView(const hal::BufferView &view,
                                     size_t max_elements = 1024);

// Compares two views of the same shape and type: floats within
// |a - b| <= atol + rtol * |b|, everything else exactly. The error names the
// first mismatching element.
Status CompareBufferViews(const hal::BufferView &actual,
                          const hal::BufferView &expected, double rtol,
                          double atol);

} // namespace strata::tooling

#endif // STRATA_TOOLING_TENSOR_TEXT_H_
