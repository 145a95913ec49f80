// SessionOptions::device_memory_limit: the device allocator's limit bounds
// the inputs a caller allocates and the buffers the program allocates; a
// call past it fails with RESOURCE_EXHAUSTED naming the bytes and the
// limit, and the session stays usable.
#include "session_test_util.h"

namespace strata::session::testing {
namespace {

using ::testing::HasSubstr;

TEST(SessionMemoryLimitTest, ProgramAllocationsPastTheLimitFail) {
  Result<RefPtr<Instance>> instance = Instance::Create();
  ASSERT_TRUE(instance.ok());
  Result<RefPtr<hal::Device>> device = (*instance)->CreateDevice("local-sync");
  ASSERT_TRUE(device.ok());
  // The inputs of matmul_bias_relu take 4x8 + 8x16 + 16 floats = 704 bytes;
  // its 4x16 result needs 256 more.
  constexpr uint64_t kLimit = 704 + 100;
  Result<RefPtr<Session>> session = MakeSession(
      *instance, *device, "matmul_bias_relu", {.device_memory_limit = kLimit});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  hal::Allocator &allocator = *(*session)->device_allocator();
  EXPECT_EQ(allocator.memory_limit(), kLimit);

  MatmulCase c = MakeMatmulCase(3);
  auto x = MakeF32View(allocator, {4, 8}, c.x);
  auto w = MakeF32View(allocator, {8, 16}, c.w);
  auto b = MakeF32View(allocator, {16}, c.b);
  ASSERT_TRUE(x.ok() && w.ok() && b.ok());
  std::vector<vm::Value> inputs = {vm::Value::Ref(*x), vm::Value::Ref(*w),
                                   vm::Value::Ref(*b)};
  std::vector<vm::Value> results;
  Status status = (*session)->CallByName("matmul_bias_relu", inputs, &results);
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(status.message(),
              HasSubstr("hal.allocator.allocate: allocation of 256 bytes "
                        "would bring allocator 'local-sync' to 960 live "
                        "bytes, over its memory limit of 804 bytes (704 "
                        "bytes already live)"));
  EXPECT_TRUE(results.empty());

  // Raised (through a new session on the same device), the same call works.
  Result<RefPtr<Session>> roomier =
      MakeSession(*instance, *device, "matmul_bias_relu",
                  {.device_memory_limit = 704 + 256});
  ASSERT_TRUE(roomier.ok());
  STRATA_ASSERT_OK(
      (*roomier)->CallByName("matmul_bias_relu", inputs, &results));
  ASSERT_EQ(results.size(), 1u);
  auto *view = RefCast<hal::BufferView>(results[0].ref());
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(*ReadF32(*view), c.expected);
  EXPECT_LE(allocator.statistics().bytes_peak, 704u + 256u);
}

} // namespace
} // namespace strata::session::testing
