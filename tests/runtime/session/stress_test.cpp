// Several sessions on several threads calling compiled modules at once
// (run under ThreadSanitizer by scripts/run_tests.sh): sessions sharing one
// local-task device, sessions with devices of their own, and threads
// sharing one context created with allow_concurrent_invocations.
#include <thread>

#include "session_test_util.h"

namespace strata::session::testing {
namespace {

constexpr int kThreads = 4;
constexpr int kCallsPerThread = 100;

// Calls matmul_bias_relu kCallsPerThread times on `session`, checking each
// output; returns the number of wrong or failed calls.
int CallRepeatedly(Session &session, int seed) {
  Result<vm::Function> function = session.LookupFunction("matmul_bias_relu");
  if (!function.ok())
    return kCallsPerThread;
  int failures = 0;
  for (int call = 0; call < kCallsPerThread; ++call) {
    MatmulCase c = MakeMatmulCase(seed * 100 + call);
    RefPtr<hal::Allocator> allocator = session.device_allocator();
    auto x = MakeF32View(*allocator, {4, 8}, c.x);
    auto w = MakeF32View(*allocator, {8, 16}, c.w);
    auto b = MakeF32View(*allocator, {16}, c.b);
    if (!x.ok() || !w.ok() || !b.ok()) {
      ++failures;
      continue;
    }
    std::vector<vm::Value> inputs = {vm::Value::Ref(*x), vm::Value::Ref(*w),
                                     vm::Value::Ref(*b)};
    std::vector<vm::Value> outputs;
    Status status = session.Call(*function, inputs, &outputs);
    auto *view =
        outputs.empty() ? nullptr : RefCast<hal::BufferView>(outputs[0].ref());
    Result<std::vector<float>> values =
        view ? ReadF32(*view) : Result<std::vector<float>>(InternalError(""));
    if (!status.ok() || !values.ok() || *values != c.expected)
      ++failures;
  }
  return failures;
}

void RunThreads(const std::function<int(int)> &body) {
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] { failures[t] = body(t); });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST(SessionStressTest, SessionsOnThreadsShareALocalTaskDevice) {
  Result<RefPtr<Instance>> instance = Instance::Create();
  ASSERT_TRUE(instance.ok());
  Result<RefPtr<hal::Device>> device =
      (*instance)->CreateDevice("local-task?workers=3");
  ASSERT_TRUE(device.ok());
  RunThreads([&](int t) {
    Result<RefPtr<Session>> session =
        MakeSession(*instance, *device, "matmul_bias_relu");
    return session.ok() ? CallRepeatedly(**session, t) : kCallsPerThread;
  });
}

TEST(SessionStressTest, SessionsOnThreadsWithDevicesOfTheirOwn) {
  Result<RefPtr<Instance>> instance = Instance::Create();
  ASSERT_TRUE(instance.ok());
  RunThreads([&](int t) {
    Result<RefPtr<hal::Device>> device = (*instance)->CreateDevice(
        t % 2 ? "local-sync" : "local-task?workers=2");
    if (!device.ok())
      return kCallsPerThread;
    Result<RefPtr<Session>> session =
        MakeSession(*instance, *device, "matmul_bias_relu");
    return session.ok() ? CallRepeatedly(**session, t) : kCallsPerThread;
  });
}

TEST(SessionStressTest, ThreadsShareAConcurrentContext) {
  Result<RefPtr<Instance>> instance = Instance::Create();
  ASSERT_TRUE(instance.ok());
  Result<RefPtr<hal::Device>> device =
      (*instance)->CreateDevice("local-task?workers=2");
  ASSERT_TRUE(device.ok());
  SessionOptions options;
  options.context_options.allow_concurrent_invocations = true;
  Result<RefPtr<Session>> session =
      MakeSession(*instance, *device, "matmul_bias_relu", options);
  ASSERT_TRUE(session.ok());
  // Session is thread-compatible, but its context allows concurrent
  // invocations: call through the context from every thread.
  Result<vm::Function> function =
      (*session)->LookupFunction("matmul_bias_relu");
  ASSERT_TRUE(function.ok());
  RunThreads([&](int t) {
    int failures = 0;
    for (int call = 0; call < kCallsPerThread; ++call) {
      MatmulCase c = MakeMatmulCase(t * 7 + call);
      RefPtr<hal::Allocator> allocator = (*session)->device_allocator();
      auto x = MakeF32View(*allocator, {4, 8}, c.x);
      auto w = MakeF32View(*allocator, {8, 16}, c.w);
      auto b = MakeF32View(*allocator, {16}, c.b);
      std::vector<vm::Value> inputs = {vm::Value::Ref(*x), vm::Value::Ref(*w),
                                       vm::Value::Ref(*b)};
      std::vector<vm::Value> outputs;
      Status status = (*session)->context().Invoke(*function, inputs, &outputs);
      if (!status.ok()) {
        ++failures;
        continue;
      }
      auto *view = RefCast<hal::BufferView>(outputs[0].ref());
      Result<std::vector<float>> values = ReadF32(*view);
      if (!values.ok() || *values != c.expected)
        ++failures;
    }
    return failures;
  });
}

} // namespace
} // namespace strata::session::testing
