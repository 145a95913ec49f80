// hal.fence.await inside resumable invocations: a pending fence suspends
// the invocation (no thread blocks) until it is signalled, times out or
// fails; loops keep several such invocations in flight.
#include <thread>

#include "hal_test_util.h"
#include "strata/vm/invocation.h"
#include "strata/vm/loop.h"

namespace strata::modules::testing {
namespace {

using ::testing::HasSubstr;
using vm::Opcode;
using vm::testing::ModuleBuilder;
using vm::testing::RegI32;
using vm::testing::RegRef;

class HalAsyncTest : public HalModuleTest {
protected:
  void SetUp() override {
    HalModuleTest::SetUp();
    ASSERT_FALSE(HasFatalFailure());
    // prog.wait(fence, timeout_ms) = hal.fence.await(timeout_ms, fence) * 10
    //                               + hal.fence.await(timeout_ms, fence)
    // (the second await finds the fence reached and never yields).
    ModuleBuilder builder("prog");
    builder.AddDependency("hal", 1);
    uint32_t await = ImportHal(builder, "hal.fence.await");
    auto &wait = builder.AddFunction("wait", "0ri_i", {.i32 = 5, .ref = 1});
    wait.Op(Opcode::CallVariadic)
        .Import(await)
        .Segments({1})
        .List({RegI32(0), RegRef(0)})
        .List({RegI32(1)});
    wait.Op(Opcode::CallVariadic)
        .Import(await)
        .Segments({1})
        .List({RegI32(0), RegRef(0)})
        .List({RegI32(2)});
    wait.Op(Opcode::ConstI32).Reg(3).I32(10);
    wait.Op(Opcode::MulI32).Reg(1).Reg(1).Reg(3);
    wait.Op(Opcode::AddI32).Reg(1).Reg(1).Reg(2);
    wait.Op(Opcode::Return).List({RegI32(1)});
    builder.AddExport("wait", wait.ordinal());
    Result<RefPtr<vm::BytecodeModule>> program =
        vm::testing::LoadModule(builder);
    ASSERT_TRUE(program.ok()) << program.status().ToString();
    vm::ContextOptions options;
    options.allow_concurrent_invocations = true;
    Result<RefPtr<vm::Context>> context =
        vm::testing::MakeContext({module_, *program}, options);
    ASSERT_TRUE(context.ok()) << context.status().ToString();
    context_ = *context;
    Result<vm::Function> function = context_->LookupFunction("prog.wait");
    ASSERT_TRUE(function.ok());
    wait_ = *function;
  }

  RefPtr<hal::Fence> PendingFence() {
    Result<RefPtr<hal::Fence>> fence = device_->CreateFence();
    EXPECT_TRUE(fence.ok());
    return *fence;
  }

  std::vector<Value> Args(const RefPtr<hal::Fence> &fence, int32_t timeout) {
    return {RefValue(fence), Value::I32(timeout)};
  }

  vm::Function wait_;
};

TEST_F(HalAsyncTest, PendingFenceSuspendsTheInvocation) {
  RefPtr<hal::Fence> fence = PendingFence();
  vm::Invocation invocation(*context_);
  ASSERT_EQ(invocation.Begin(wait_, Args(fence, -1)).code(),
            StatusCode::kDeferred);
  const vm::WaitRequest *request = invocation.pending_wait();
  ASSERT_NE(request, nullptr);
  EXPECT_TRUE(request->deadline.is_infinite());
  EXPECT_EQ(request->source->Query().code(), StatusCode::kDeferred);
  EXPECT_EQ(invocation.Wait(Deadline::Immediate()).code(),
            StatusCode::kDeadlineExceeded);
  ASSERT_TRUE(fence->Signal().ok());
  STRATA_ASSERT_OK(invocation.Wait(Deadline::Infinite()));
  STRATA_ASSERT_OK(invocation.Resume());
  Result<std::vector<Value>> results = invocation.End();
  ASSERT_TRUE(results.ok());
  EXPECT_EQ((*results)[0].i32(), 0);
}

TEST_F(HalAsyncTest, TimeoutIsTheProgramsResult) {
  RefPtr<hal::Fence> fence = PendingFence();
  vm::Invocation invocation(*context_);
  ASSERT_EQ(invocation.Begin(wait_, Args(fence, 1)).code(),
            StatusCode::kDeferred);
  EXPECT_FALSE(invocation.pending_wait()->deadline.is_infinite());
  // Returns once the request's own 1 ms deadline passed.
  STRATA_ASSERT_OK(invocation.Wait(Deadline::Infinite()));
  // Both awaits time out: 4 * 10 + 4 (the second polls again and yields
  // again, then times out once more).
  Status status = invocation.Resume();
  while (status.code() == StatusCode::kDeferred) {
    STRATA_ASSERT_OK(invocation.Wait(Deadline::Infinite()));
    status = invocation.Resume();
  }
  STRATA_ASSERT_OK(status);
  Result<std::vector<Value>> results = invocation.End();
  ASSERT_TRUE(results.ok());
  EXPECT_EQ((*results)[0].i32(), 44);
}

TEST_F(HalAsyncTest, FailedFenceFailsTheInvocation) {
  RefPtr<hal::Fence> fence = PendingFence();
  vm::Invocation invocation(*context_);
  ASSERT_EQ(invocation.Begin(wait_, Args(fence, -1)).code(),
            StatusCode::kDeferred);
  fence->Fail(DataLossError("dispatch went wrong"));
  STRATA_ASSERT_OK(invocation.Wait(Deadline::Infinite()));
  Status status = invocation.Resume();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), HasSubstr("dispatch went wrong"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("at prog.wait"));
  invocation.Abort();
}

TEST_F(HalAsyncTest, SynchronousInvokeWaitsForTheFence) {
  RefPtr<hal::Fence> fence = PendingFence();
  std::thread signaller([&] { EXPECT_TRUE(fence->Signal().ok()); });
  std::vector<Value> results;
  STRATA_ASSERT_OK(context_->Invoke(wait_, Args(fence, -1), &results));
  signaller.join();
  EXPECT_EQ(results[0].i32(), 0);
}

TEST_F(HalAsyncTest, LoopKeepsSeveralInvocationsInFlight) {
  constexpr int kCount = 8;
  std::vector<RefPtr<hal::Fence>> fences;
  for (int i = 0; i < kCount; ++i)
    fences.push_back(PendingFence());
  vm::Loop loop;
  int completed = 0, failed = 0;
  for (int i = 0; i < kCount; ++i)
    loop.InvokeAsync(context_, wait_, Args(fences[i], -1),
                     [&, i](Status status, std::vector<Value> results) {
                       if (i == 3) {
                         EXPECT_EQ(status.code(), StatusCode::kAborted);
                         ++failed;
                         return;
                       }
                       STRATA_EXPECT_OK(status);
                       if (status.ok())
                         EXPECT_EQ(results[0].i32(), 0);
                       ++completed;
                     });
  EXPECT_EQ(loop.Drain(Deadline::Immediate()).code(),
            StatusCode::kDeadlineExceeded);
  EXPECT_EQ(loop.pending_count(), size_t(kCount));
  std::thread signaller([&] {
    for (int i = kCount - 1; i >= 0; --i) {
      if (i == 3)
        fences[i]->Fail(AbortedError("cancelled by the test"));
      else
        EXPECT_TRUE(fences[i]->Signal().ok());
    }
  });
  STRATA_ASSERT_OK(loop.Drain());
  signaller.join();
  EXPECT_EQ(completed, kCount - 1);
  EXPECT_EQ(failed, 1);
}

} // namespace
} // namespace strata::modules::testing
