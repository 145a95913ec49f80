#include "session_test_util.h"

#include <algorithm>
#include <cstring>

namespace strata::session::testing {

std::string ModulePath(const char *name) {
  return StrCat(SESSION_TEST_MODULE_DIR, "/", name, ".smod");
}

Result<RefPtr<hal::BufferView>> MakeF32View(hal::Allocator &allocator,
                                            std::vector<int64_t> shape,
                                            std::span<const float> values) {
  return hal::BufferView::Allocate(
      allocator, shape, STRATA_HAL_ELEMENT_TYPE_FLOAT_32,
      STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL | STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
      STRATA_HAL_BUFFER_USAGE_DEFAULT,
      {reinterpret_cast<const uint8_t *>(values.data()),
       values.size() * sizeof(float)});
}

Result<std::vector<float>> ReadF32(const hal::BufferView &view) {
  std::vector<float> values(view.byte_length() / sizeof(float));
  STRATA_RETURN_IF_ERROR(view.buffer()->ReadData(
      0, {reinterpret_cast<uint8_t *>(values.data()), view.byte_length()}));
  return values;
}

MatmulCase MakeMatmulCase(int seed) {
  MatmulCase c;
  c.x.resize(4 * 8);
  c.w.resize(8 * 16);
  c.b.resize(16);
  // Small integers: every sum is exact in f32.
  for (size_t i = 0; i < c.x.size(); ++i)
    c.x[i] = float(int((i * 7 + seed) % 9) - 4);
  for (size_t i = 0; i < c.w.size(); ++i)
    c.w[i] = float(int((i * 5 + 3 * seed) % 7) - 3);
  for (size_t i = 0; i < c.b.size(); ++i)
    c.b[i] = float(int((i + seed) % 5) - 2);
  c.expected.resize(4 * 16);
  for (int r = 0; r < 4; ++r)
    for (int n = 0; n < 16; ++n) {
      float sum = 0;
      for (int k = 0; k < 8; ++k)
        sum += c.x[r * 8 + k] * c.w[k * 16 + n];
      c.expected[r * 16 + n] = std::max(sum + c.b[n], 0.0f);
    }
  return c;
}

Result<RefPtr<Session>> MakeSession(const RefPtr<Instance> &instance,
                                    const RefPtr<hal::Device> &device,
                                    const char *module,
                                    SessionOptions options) {
  STRATA_ASSIGN_OR_RETURN(RefPtr<Session> session,
                          Session::Create(instance, device, options));
  STRATA_RETURN_IF_ERROR(
      session->AppendBytecodeModuleFromFile(ModulePath(module)));
  return session;
}

} // namespace strata::session::testing
