// Shared helpers of the session tests: compiled test modules, tensors.
#ifndef STRATA_TESTS_RUNTIME_SESSION_SESSION_TEST_UTIL_H_
#define STRATA_TESTS_RUNTIME_SESSION_SESSION_TEST_UTIL_H_

#include <span>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/hal/api.h"
#include "strata/session/instance.h"
#include "strata/session/session.h"

#define STRATA_EXPECT_OK(expr)                                                 \
  do {                                                                         \
    ::strata::Status _status = (expr);                                         \
    EXPECT_TRUE(_status.ok()) << _status.ToString();                           \
  } while (false)
#define STRATA_ASSERT_OK(expr)                                                 \
  do {                                                                         \
    ::strata::Status _status = (expr);                                         \
    ASSERT_TRUE(_status.ok()) << _status.ToString();                           \
  } while (false)

namespace strata::session::testing {

// "<build dir>/<name>.smod": simple_mul (4xf32 * 4xf32) and
// matmul_bias_relu (relu(4x8 @ 8x16 + 16) -> 4x16).
std::string ModulePath(const char *name);

// A host-visible f32 tensor.
Result<RefPtr<hal::BufferView>> MakeF32View(hal::Allocator &allocator,
                                            std::vector<int64_t> shape,
                                            std::span<const float> values);
Result<std::vector<float>> ReadF32(const hal::BufferView &view);

// Inputs of matmul_bias_relu derived from `seed`, and the expected output.
struct MatmulCase {
  std::vector<float> x, w, b, expected;
};
MatmulCase MakeMatmulCase(int seed);

// A session over `device` with `module` appended.
Result<RefPtr<Session>> MakeSession(const RefPtr<Instance> &instance,
                                    const RefPtr<hal::Device> &device,
                                    const char *module,
                                    SessionOptions options = {});

} // namespace strata::session::testing

#endif // STRATA_TESTS_RUNTIME_SESSION_SESSION_TEST_UTIL_H_
