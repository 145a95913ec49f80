// Stepwise and loop-based invocations of compiled modules through sessions,
// on local-sync (queue work runs inline) and local-task (queue work runs on
// the device's queue thread, so the program's hal.fence.await usually finds
// its fence pending and the invocation suspends).
#include "session_test_util.h"
#include "strata/vm/invocation.h"
#include "strata/vm/loop.h"

namespace strata::session::testing {
namespace {

class SessionAsyncTest : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    Result<RefPtr<Instance>> instance = Instance::Create();
    ASSERT_TRUE(instance.ok());
    instance_ = *instance;
    Result<RefPtr<hal::Device>> device = instance_->CreateDevice(GetParam());
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = *device;
  }

  // The inputs of matmul_bias_relu for `c` on `session`'s device.
  std::vector<vm::Value> Inputs(Session &session, const MatmulCase &c) {
    RefPtr<hal::Allocator> allocator = session.device_allocator();
    auto x = MakeF32View(*allocator, {4, 8}, c.x);
    auto w = MakeF32View(*allocator, {8, 16}, c.w);
    auto b = MakeF32View(*allocator, {16}, c.b);
    EXPECT_TRUE(x.ok() && w.ok() && b.ok());
    return {vm::Value::Ref(*x), vm::Value::Ref(*w), vm::Value::Ref(*b)};
  }

  void ExpectOutput(const std::vector<vm::Value> &results,
                    const MatmulCase &c) {
    ASSERT_EQ(results.size(), 1u);
    auto *view = RefCast<hal::BufferView>(results[0].ref());
    ASSERT_NE(view, nullptr);
    Result<std::vector<float>> values = ReadF32(*view);
    ASSERT_TRUE(values.ok());
    EXPECT_EQ(*values, c.expected);
  }

  RefPtr<Instance> instance_;
  RefPtr<hal::Device> device_;
};

TEST_P(SessionAsyncTest, StepwiseInvocation) {
  Result<RefPtr<Session>> session =
      MakeSession(instance_, device_, "matmul_bias_relu");
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  Result<vm::Function> function =
      (*session)->LookupFunction("matmul_bias_relu");
  ASSERT_TRUE(function.ok());
  // How often the program suspended on its fence (on local-task the queue
  // thread usually has not finished when the program awaits); reported, not
  // asserted, since it depends on timing.
  int deferred_steps = 0;
  for (int seed = 0; seed < 20; ++seed) {
    MatmulCase c = MakeMatmulCase(seed);
    vm::Invocation invocation((*session)->context());
    Status status = invocation.Begin(*function, Inputs(**session, c));
    while (status.code() == StatusCode::kDeferred) {
      ++deferred_steps;
      ASSERT_NE(invocation.pending_wait(), nullptr);
      STRATA_ASSERT_OK(invocation.Wait(Deadline::Infinite()));
      status = invocation.Resume();
    }
    STRATA_ASSERT_OK(status);
    Result<std::vector<vm::Value>> results = invocation.End();
    ASSERT_TRUE(results.ok());
    ExpectOutput(*results, c);
  }
  RecordProperty("deferred_steps", deferred_steps);
}

TEST_P(SessionAsyncTest, LoopKeepsInvocationsOfSeveralSessionsInFlight) {
  // Two sessions (separate contexts) on one device, each allowing
  // concurrent invocations, all driven by one loop on this thread.
  SessionOptions options;
  options.context_options.allow_concurrent_invocations = true;
  std::vector<RefPtr<Session>> sessions;
  for (int i = 0; i < 2; ++i) {
    Result<RefPtr<Session>> session =
        MakeSession(instance_, device_, "matmul_bias_relu", options);
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    sessions.push_back(*session);
  }
  constexpr int kCount = 12;
  vm::Loop loop;
  std::vector<MatmulCase> cases;
  for (int i = 0; i < kCount; ++i)
    cases.push_back(MakeMatmulCase(i));
  int completed = 0;
  for (int i = 0; i < kCount; ++i) {
    Session &session = *sessions[i % 2];
    Result<vm::Function> function = session.LookupFunction("matmul_bias_relu");
    ASSERT_TRUE(function.ok());
    loop.InvokeAsync(RefPtr<vm::Context>::Retain(&session.context()), *function,
                     Inputs(session, cases[i]),
                     [&, i](Status status, std::vector<vm::Value> results) {
                       STRATA_EXPECT_OK(status);
                       if (status.ok())
                         ExpectOutput(results, cases[i]);
                       ++completed;
                     });
  }
  EXPECT_EQ(completed, 0); // InvokeAsync returned at once.
  STRATA_ASSERT_OK(loop.Drain());
  EXPECT_EQ(completed, kCount);
}

TEST_P(SessionAsyncTest, CallbackRunsWhenTheProgramFails) {
  Result<RefPtr<Session>> session =
      MakeSession(instance_, device_, "matmul_bias_relu");
  ASSERT_TRUE(session.ok());
  Result<vm::Function> function =
      (*session)->LookupFunction("matmul_bias_relu");
  ASSERT_TRUE(function.ok());
  MatmulCase c = MakeMatmulCase(1);
  std::vector<vm::Value> inputs = Inputs(**session, c);
  // A 2x16 bias instead of 16: the program's own input check fails.
  auto wrong = MakeF32View(*(*session)->device_allocator(), {2, 8}, c.b);
  ASSERT_TRUE(wrong.ok());
  inputs[2] = vm::Value::Ref(*wrong);
  vm::Loop loop;
  bool ran = false;
  loop.InvokeAsync(RefPtr<vm::Context>::Retain(&(*session)->context()),
                   *function, inputs,
                   [&](Status status, std::vector<vm::Value> results) {
                     ran = true;
                     EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
                     EXPECT_TRUE(results.empty());
                   });
  STRATA_ASSERT_OK(loop.Drain());
  EXPECT_TRUE(ran);
  // The session works afterwards.
  std::vector<vm::Value> outputs;
  STRATA_ASSERT_OK((*session)->Call(*function, Inputs(**session, c), &outputs));
  ExpectOutput(outputs, c);
}

TEST_P(SessionAsyncTest, AbortedInvocationLeavesTheSessionUsable) {
  Result<RefPtr<Session>> session =
      MakeSession(instance_, device_, "matmul_bias_relu");
  ASSERT_TRUE(session.ok());
  Result<vm::Function> function =
      (*session)->LookupFunction("matmul_bias_relu");
  ASSERT_TRUE(function.ok());
  MatmulCase c = MakeMatmulCase(2);
  {
    vm::Invocation invocation((*session)->context());
    Status status = invocation.Begin(*function, Inputs(**session, c));
    EXPECT_TRUE(status.ok() || status.code() == StatusCode::kDeferred);
    invocation.Abort();
  }
  std::vector<vm::Value> outputs;
  STRATA_ASSERT_OK((*session)->Call(*function, Inputs(**session, c), &outputs));
  ExpectOutput(outputs, c);
}

// Session::CallAsync: the session's checks, then the loop.
TEST_P(SessionAsyncTest, CallAsyncKeepsSeveralCallsInFlight) {
  SessionOptions options;
  options.context_options.allow_concurrent_invocations = true;
  Result<RefPtr<Session>> session =
      MakeSession(instance_, device_, "matmul_bias_relu", options);
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  Result<vm::Function> function =
      (*session)->LookupFunction("matmul_bias_relu");
  ASSERT_TRUE(function.ok());
  constexpr int kCount = 8;
  std::vector<MatmulCase> cases;
  for (int i = 0; i < kCount; ++i)
    cases.push_back(MakeMatmulCase(10 + i));
  vm::Loop loop;
  std::vector<int> completions(kCount, 0);
  for (int i = 0; i < kCount; ++i)
    (*session)->CallAsync(
        *function, Inputs(**session, cases[i]), loop,
        [&, i](Status status, std::vector<vm::Value> results) {
          STRATA_EXPECT_OK(status);
          if (status.ok())
            ExpectOutput(results, cases[i]);
          ++completions[i];
        });
  EXPECT_EQ(loop.pending_count(), size_t(kCount));
  EXPECT_EQ(completions, std::vector<int>(kCount, 0)); // Nothing ran yet.
  STRATA_ASSERT_OK(loop.Drain());
  EXPECT_EQ(completions, std::vector<int>(kCount, 1));
  EXPECT_EQ(loop.pending_count(), 0u);
}

TEST_P(SessionAsyncTest, CallAsyncReportsWrongArgumentsThroughTheCallback) {
  Result<RefPtr<Session>> session =
      MakeSession(instance_, device_, "matmul_bias_relu");
  ASSERT_TRUE(session.ok());
  Result<vm::Function> function =
      (*session)->LookupFunction("matmul_bias_relu");
  ASSERT_TRUE(function.ok());
  MatmulCase c = MakeMatmulCase(3);
  std::vector<vm::Value> wrong_shape = Inputs(**session, c);
  auto bias = MakeF32View(*(*session)->device_allocator(), {2, 8}, c.b);
  ASSERT_TRUE(bias.ok());
  wrong_shape[2] = vm::Value::Ref(*bias);
  std::vector<vm::Value> too_few = Inputs(**session, c);
  too_few.pop_back();
  std::vector<vm::Value> null_tensor = Inputs(**session, c);
  null_tensor[0] = vm::Value::Ref(RefPtr<hal::BufferView>());
  struct Case {
    std::vector<vm::Value> inputs;
    const char *message;
  } cases[] = {
      {wrong_shape, "function 'module.matmul_bias_relu' argument 2: expected "
                    "16xf32, got 2x8xf32"},
      {too_few, "function 'module.matmul_bias_relu' takes 3 arguments, got 2"},
      {null_tensor, "argument 0: expected a tensor"},
  };
  vm::Loop loop;
  std::vector<Status> statuses;
  for (Case &wrong : cases)
    (*session)->CallAsync(*function, wrong.inputs, loop,
                          [&](Status status, std::vector<vm::Value> results) {
                            EXPECT_TRUE(results.empty());
                            statuses.push_back(std::move(status));
                          });
  // Reported during Drain, never inside CallAsync.
  EXPECT_TRUE(statuses.empty());
  STRATA_ASSERT_OK(loop.Drain());
  ASSERT_EQ(statuses.size(), std::size(cases));
  for (size_t i = 0; i < statuses.size(); ++i) {
    EXPECT_EQ(statuses[i].code(), StatusCode::kInvalidArgument);
    EXPECT_NE(statuses[i].message().find(cases[i].message),
              std::string_view::npos)
        << statuses[i].ToString();
  }
  // A good call on the same loop afterwards.
  bool ran = false;
  (*session)->CallAsync(*function, Inputs(**session, c), loop,
                        [&](Status status, std::vector<vm::Value> results) {
                          STRATA_EXPECT_OK(status);
                          ExpectOutput(results, c);
                          ran = true;
                        });
  STRATA_ASSERT_OK(loop.Drain());
  EXPECT_TRUE(ran);
}

TEST_P(SessionAsyncTest, CallAsyncReportsAFailingCallThroughTheCallback) {
  Result<RefPtr<Session>> session =
      MakeSession(instance_, device_, "matmul_bias_relu");
  ASSERT_TRUE(session.ok());
  Result<vm::Function> function =
      (*session)->LookupFunction("matmul_bias_relu");
  ASSERT_TRUE(function.ok());
  MatmulCase c = MakeMatmulCase(4);
  std::vector<vm::Value> inputs = Inputs(**session, c);
  // The inputs pass the checks; the program's own allocation of its 256
  // byte result then exceeds the device allocator's limit.
  RefPtr<hal::Allocator> original = device_->allocator();
  device_->SetAllocator(
      hal::HeapAllocator::Create("small", {.max_allocation_size = 64}));
  vm::Loop loop;
  Status failure;
  int calls = 0;
  (*session)->CallAsync(*function, inputs, loop,
                        [&](Status status, std::vector<vm::Value> results) {
                          ++calls;
                          failure = std::move(status);
                          EXPECT_TRUE(results.empty());
                        });
  STRATA_ASSERT_OK(loop.Drain());
  device_->SetAllocator(original);
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(failure.code(), StatusCode::kResourceExhausted)
      << failure.ToString();
}

TEST_P(SessionAsyncTest, CallAsyncKeepsTheSessionAliveUntilTheCallback) {
  vm::Loop loop;
  MatmulCase c = MakeMatmulCase(5);
  bool ran = false;
  {
    Result<RefPtr<Session>> session =
        MakeSession(instance_, device_, "matmul_bias_relu");
    ASSERT_TRUE(session.ok());
    Result<vm::Function> function =
        (*session)->LookupFunction("matmul_bias_relu");
    ASSERT_TRUE(function.ok());
    (*session)->CallAsync(*function, Inputs(**session, c), loop,
                          [&](Status status, std::vector<vm::Value> results) {
                            STRATA_EXPECT_OK(status);
                            ExpectOutput(results, c);
                            ran = true;
                          });
  } // The caller's reference to the session is gone.
  STRATA_ASSERT_OK(loop.Drain());
  EXPECT_TRUE(ran);
}

TEST_P(SessionAsyncTest, CallAsyncCancelledWhenTheLoopGoesFirst) {
  Result<RefPtr<Session>> session =
      MakeSession(instance_, device_, "matmul_bias_relu");
  ASSERT_TRUE(session.ok());
  Result<vm::Function> function =
      (*session)->LookupFunction("matmul_bias_relu");
  ASSERT_TRUE(function.ok());
  Status status;
  {
    vm::Loop loop;
    (*session)->CallAsync(
        *function, Inputs(**session, MakeMatmulCase(6)), loop,
        [&](Status s, std::vector<vm::Value>) { status = std::move(s); });
    EXPECT_TRUE(status.ok()); // Not run yet.
  }
  EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.ToString();
  // The session works afterwards.
  MatmulCase c = MakeMatmulCase(7);
  std::vector<vm::Value> outputs;
  STRATA_ASSERT_OK((*session)->Call(*function, Inputs(**session, c), &outputs));
  ExpectOutput(outputs, c);
}

INSTANTIATE_TEST_SUITE_P(Devices, SessionAsyncTest,
                         ::testing::Values("local-sync",
                                           "local-task?workers=2"),
                         [](const auto &info) {
                           return std::string(info.index == 0 ? "local_sync"
                                                              : "local_task");
                         });

} // namespace
} // namespace strata::session::testing
