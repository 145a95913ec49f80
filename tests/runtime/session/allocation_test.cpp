// A steady call allocates nothing on the heap, on either local device: the
// VM reuses its stacks and buffers, and the HAL objects a call creates
// (command buffer, fence, semaphore, result buffer and view) come back from
// their pools (base/object_pool.h). Counted by strata_heap_counter's
// operator new. AddressSanitizer builds keep no pooled objects (so a use
// after release is caught), and skip this test.
#include "session_test_util.h"
#include "strata/base/object_pool.h"
#include "strata/tooling/heap_counter.h"

namespace strata::session::testing {
namespace {

class SessionAllocationTest : public ::testing::TestWithParam<const char *> {};

TEST_P(SessionAllocationTest, SteadyCallsAllocateNothing) {
#if defined(STRATA_OBJECT_POOL_DISABLED)
  GTEST_SKIP() << "object pools are off under AddressSanitizer";
#endif
  Result<RefPtr<Instance>> instance = Instance::Create();
  ASSERT_TRUE(instance.ok());
  Result<RefPtr<hal::Device>> device = (*instance)->CreateDevice(GetParam());
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  Result<RefPtr<Session>> session =
      MakeSession(*instance, *device, "simple_mul");
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  Result<vm::Function> function = (*session)->LookupFunction("simple_mul");
  ASSERT_TRUE(function.ok());
  const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
  RefPtr<hal::Allocator> allocator = (*session)->device_allocator();
  Result<RefPtr<hal::BufferView>> x = MakeF32View(*allocator, {4}, a);
  Result<RefPtr<hal::BufferView>> y = MakeF32View(*allocator, {4}, b);
  ASSERT_TRUE(x.ok() && y.ok());
  std::vector<vm::Value> inputs = {vm::Value::Ref(*x), vm::Value::Ref(*y)};
  std::vector<vm::Value> outputs;
  for (int i = 0; i < 10; ++i)
    STRATA_ASSERT_OK((*session)->Call(*function, inputs, &outputs));

  constexpr int kCalls = 200;
  uint64_t before = tooling::HeapAllocationCount();
  for (int i = 0; i < kCalls; ++i)
    STRATA_ASSERT_OK((*session)->Call(*function, inputs, &outputs));
  uint64_t allocations = tooling::HeapAllocationCount() - before;
  EXPECT_EQ(allocations, 0u) << "over " << kCalls << " calls";

  // Recycled objects still give the right answer.
  Result<std::vector<float>> values =
      ReadF32(*RefCast<hal::BufferView>(outputs[0].ref()));
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(*values, (std::vector<float>{5, 12, 21, 32}));
}

INSTANTIATE_TEST_SUITE_P(Devices, SessionAllocationTest,
                         ::testing::Values("local-sync",
                                           "local-task?workers=2"));

} // namespace
} // namespace strata::session::testing
