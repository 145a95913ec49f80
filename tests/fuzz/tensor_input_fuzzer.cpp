// Fuzz target: strata-run's input parser. Bytes that start with the .npy
// magic go to ParseNumpy, anything else to ParseTensorArgument as tensor
// text ("2x2xf32=1 2 3 4"; "@file" forms are skipped: they name files).
// A parsed tensor is printed back (FormatBufferView) and must survive a
// .npy round trip unchanged: same shape, element type and bytes (bf16, which
// numpy lacks, comes back as its exact float32 values).
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

#include "fuzz_util.h"
#include "strata/hal/buffer_view.h"
#include "strata/tooling/numpy_io.h"
#include "strata/tooling/tensor_text.h"

namespace strata::fuzz {
namespace {

std::span<const uint8_t> Contents(const hal::BufferView &view) {
  const uint8_t *data = view.buffer()->host_data();
  if (!data)
    Fail("a parsed tensor is not in host memory");
  return {data, size_t(view.byte_length())};
}

void CheckRoundTrip(const hal::BufferView &view) {
  auto formatted = tooling::FormatBufferView(view, 64);
  CheckError(formatted.status());
  auto serialized = tooling::SerializeNumpy(view);
  if (!serialized.ok()) {
    // Some element types (i4) have no numpy dtype.
    CheckError(serialized.status());
    return;
  }
  auto reparsed = tooling::ParseNumpy(*serialized, FuzzAllocator());
  // bf16 widens to float32: twice the bytes may pass the allocator's limit.
  if (!reparsed.ok() &&
      view.element_type() == STRATA_HAL_ELEMENT_TYPE_BFLOAT_16 &&
      reparsed.status().code() == StatusCode::kResourceExhausted)
    return;
  if (!reparsed.ok())
    Fail("a serialized tensor does not parse: " + reparsed.status().ToString());
  const hal::BufferView &again = **reparsed;
  // bf16 is written as its float32 values (numpy has none): each element's
  // 16 bits become the high half of a float32.
  if (view.element_type() == STRATA_HAL_ELEMENT_TYPE_BFLOAT_16) {
    if (again.element_type() != STRATA_HAL_ELEMENT_TYPE_FLOAT_32 ||
        again.rank() != view.rank() ||
        !std::equal(view.shape().begin(), view.shape().end(),
                    again.shape().begin()))
      Fail("the .npy of a bf16 tensor is not its float32 values: " +
           view.FormatShape() + " became " + again.FormatShape());
    std::span<const uint8_t> narrow = Contents(view), wide = Contents(again);
    if (wide.size() != 2 * narrow.size())
      Fail("the .npy of a bf16 tensor has the wrong size");
    for (size_t i = 0; i + 1 < narrow.size(); i += 2)
      if (wide[2 * i] != 0 || wide[2 * i + 1] != 0 ||
          wide[2 * i + 2] != narrow[i] || wide[2 * i + 3] != narrow[i + 1])
        Fail("the .npy of a bf16 tensor changed a value");
    return;
  }
  if (again.element_type() != view.element_type() ||
      again.rank() != view.rank() ||
      !std::equal(view.shape().begin(), view.shape().end(),
                  again.shape().begin()))
    Fail("the .npy round trip changed the shape or type: " +
         view.FormatShape() + " became " + again.FormatShape());
  std::span<const uint8_t> before = Contents(view), after = Contents(again);
  if (before.size() != after.size() ||
      (before.size() &&
       std::memcmp(before.data(), after.data(), before.size()) != 0))
    Fail("the .npy round trip changed the contents of " + view.FormatShape());
}

void RunOne(const uint8_t *data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  static constexpr uint8_t kNumpyMagic[] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
  bool is_numpy = size >= sizeof(kNumpyMagic) &&
                  std::memcmp(data, kNumpyMagic, sizeof(kNumpyMagic)) == 0;
  std::string_view text(reinterpret_cast<const char *>(data), size);
  if (!is_numpy && text.starts_with('@'))
    return;
  Result<RefPtr<hal::BufferView>> view =
      is_numpy ? tooling::ParseNumpy(bytes, FuzzAllocator())
               : tooling::ParseTensorArgument(text, FuzzAllocator());
  if (!view.ok()) {
    CheckError(view.status());
    return;
  }
  CheckRoundTrip(**view);
}

} // namespace
} // namespace strata::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata::fuzz::RunOne(data, size);
  return 0;
}
