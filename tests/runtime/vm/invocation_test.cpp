// Stepwise (Invocation) and loop-based (Loop) invocations: native functions
// that yield on a wait source, resumption across internal calls and module
// boundaries, failures, abort, and the one-invocation-per-context rule.
#include <thread>

#include "strata/vm/invocation.h"
#include "strata/vm/loop.h"
#include "vm_test_util.h"

namespace strata::vm::testing {
namespace {

using ::testing::HasSubstr;

// "inner.g"(gate, x) = x * 10 + gate.await(gate).
ModuleBuilder InnerModule() {
  ModuleBuilder builder("inner");
  uint32_t await = builder.AddImport("gate.await", "0r_i");
  FunctionBuilder &g = builder.AddFunction("g", "0ri_i", {.i32 = 4, .ref = 1});
  g.Op(Opcode::Call).Import(await).List({RegRef(0)}).List({RegI32(1)});
  g.Op(Opcode::ConstI32).Reg(2).I32(10);
  g.Op(Opcode::MulI32).Reg(3).Reg(0).Reg(2);
  g.Op(Opcode::AddI32).Reg(3).Reg(3).Reg(1);
  g.Op(Opcode::Return).List({RegI32(3)});
  builder.AddExport("g", g.ordinal());
  return builder;
}

// "outer.main"(gate_a, gate_b, x) = helper(gate_a, x) + inner.g(gate_b, 1)
// where helper(gate, x) = inner.g(gate, x) + 1000: suspensions inside a
// callee module, under an internal call, and in the entry function itself.
ModuleBuilder OuterModule() {
  ModuleBuilder builder("outer");
  uint32_t g = builder.AddImport("inner.g", "0ri_i");
  FunctionBuilder &helper =
      builder.AddFunction("helper", "0ri_i", {.i32 = 3, .ref = 1});
  helper.Op(Opcode::Call)
      .Import(g)
      .List({RegRef(0), RegI32(0)})
      .List({RegI32(1)});
  helper.Op(Opcode::ConstI32).Reg(2).I32(1000);
  helper.Op(Opcode::AddI32).Reg(1).Reg(1).Reg(2);
  helper.Op(Opcode::Return).List({RegI32(1)});
  FunctionBuilder &main =
      builder.AddFunction("main", "0rri_i", {.i32 = 4, .ref = 2});
  main.Op(Opcode::Call)
      .Function(helper.ordinal())
      .List({RegRef(0), RegI32(0)})
      .List({RegI32(1)});
  main.Op(Opcode::ConstI32).Reg(2).I32(1);
  main.Op(Opcode::Call)
      .Import(g)
      .List({RegRef(1), RegI32(2)})
      .List({RegI32(3)});
  main.Op(Opcode::AddI32).Reg(1).Reg(1).Reg(3);
  main.Op(Opcode::Return).List({RegI32(1)});
  builder.AddExport("main", main.ordinal());
  return builder;
}

struct Fixture {
  RefPtr<Context> context;
  Function main;
  Function inner_g;
};

Result<Fixture> MakeFixture(ContextOptions options = {}) {
  STRATA_ASSIGN_OR_RETURN(RefPtr<NativeModule> gate, CreateGateModule());
  STRATA_ASSIGN_OR_RETURN(RefPtr<BytecodeModule> inner,
                          LoadModule(InnerModule()));
  STRATA_ASSIGN_OR_RETURN(RefPtr<BytecodeModule> outer,
                          LoadModule(OuterModule()));
  Fixture fixture;
  STRATA_ASSIGN_OR_RETURN(fixture.context,
                          MakeContext({gate, inner, outer}, options));
  STRATA_ASSIGN_OR_RETURN(fixture.main,
                          fixture.context->LookupFunction("outer.main"));
  STRATA_ASSIGN_OR_RETURN(fixture.inner_g,
                          fixture.context->LookupFunction("inner.g"));
  return fixture;
}

using Args = std::vector<Value>;

Value GateValue(const RefPtr<Gate> &gate) {
  return Value::Ref(RefPtr<RefObject>(gate));
}

TEST(InvocationTest, OpenGatesRunToCompletionInBegin) {
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  auto a = MakeRef<Gate>(), b = MakeRef<Gate>();
  a->Open();
  b->Open();
  Invocation invocation(*fixture.context);
  STRATA_ASSERT_OK(invocation.Begin(
      fixture.main, Args{GateValue(a), GateValue(b), Value::I32(7)}));
  EXPECT_FALSE(invocation.is_deferred());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Value> results, invocation.End());
  // (7 * 10 + 0) + 1000 + (1 * 10 + 0).
  EXPECT_EQ(results[0].i32(), 1080);
}

TEST(InvocationTest, SuspendsAndResumesAcrossCallsAndModules) {
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  auto a = MakeRef<Gate>(), b = MakeRef<Gate>();
  Invocation invocation(*fixture.context);
  Status status = invocation.Begin(
      fixture.main, Args{GateValue(a), GateValue(b), Value::I32(7)});
  ASSERT_EQ(status.code(), StatusCode::kDeferred) << status.ToString();
  ASSERT_TRUE(invocation.is_deferred());
  ASSERT_NE(invocation.pending_wait(), nullptr);
  EXPECT_EQ(invocation.pending_wait()->source.get(), a.get());
  // Resuming before the wait is over is refused; a poll times out.
  EXPECT_EQ(invocation.Resume().code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(invocation.Wait(Deadline::Immediate()).code(),
            StatusCode::kDeadlineExceeded);
  EXPECT_EQ(invocation.End().status().code(), StatusCode::kFailedPrecondition);

  a->Open();
  STRATA_ASSERT_OK(invocation.Wait(Deadline::Infinite()));
  status = invocation.Resume();
  ASSERT_EQ(status.code(), StatusCode::kDeferred) << status.ToString();
  EXPECT_EQ(invocation.pending_wait()->source.get(), b.get());

  // Open from another thread while this one waits.
  std::thread opener([&] { b->Open(); });
  STRATA_ASSERT_OK(invocation.Wait(Deadline::Infinite()));
  opener.join();
  STRATA_ASSERT_OK(invocation.Resume());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Value> results, invocation.End());
  // (7 * 10 + 1) + 1000 + (1 * 10 + 1): both awaits saw a yield.
  EXPECT_EQ(results[0].i32(), 1082);
}

TEST(InvocationTest, NativeFunctionInvokedDirectlyIsRetried) {
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  STRATA_ASSERT_OK_AND_ASSIGN(Function await,
                              fixture.context->LookupFunction("gate.await"));
  auto gate = MakeRef<Gate>();
  Invocation invocation(*fixture.context);
  ASSERT_EQ(invocation.Begin(await, Args{GateValue(gate)}).code(),
            StatusCode::kDeferred);
  gate->Open();
  STRATA_ASSERT_OK(invocation.Wait(Deadline::Infinite()));
  STRATA_ASSERT_OK(invocation.Resume());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Value> results, invocation.End());
  EXPECT_EQ(results[0].i32(), 1);
}

TEST(InvocationTest, FailedWaitFailsTheInvocationWithABacktrace) {
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  auto a = MakeRef<Gate>(), b = MakeRef<Gate>();
  Invocation invocation(*fixture.context);
  ASSERT_EQ(
      invocation
          .Begin(fixture.main, Args{GateValue(a), GateValue(b), Value::I32(7)})
          .code(),
      StatusCode::kDeferred);
  a->Fail(DataLossError("device lost"));
  STRATA_ASSERT_OK(invocation.Wait(Deadline::Infinite()));
  Status status = invocation.Resume();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()), HasSubstr("device lost"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("at gate.await"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("at inner.g"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("at outer.helper"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("at outer.main"));
  EXPECT_EQ(invocation.End().status().code(), StatusCode::kFailedPrecondition);
  invocation.Abort();
  // The context is free again.
  a = MakeRef<Gate>();
  b = MakeRef<Gate>();
  a->Open();
  b->Open();
  std::vector<Value> results;
  STRATA_ASSERT_OK(fixture.context->Invoke(
      fixture.main, Args{GateValue(a), GateValue(b), Value::I32(1)}, &results));
  EXPECT_EQ(results[0].i32(), 1020);
}

TEST(InvocationTest, AbortWhileDeferredReleasesFramesAndContext) {
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  auto a = MakeRef<Gate>(), b = MakeRef<Gate>();
  {
    Invocation invocation(*fixture.context);
    ASSERT_EQ(invocation
                  .Begin(fixture.main,
                         Args{GateValue(a), GateValue(b), Value::I32(7)})
                  .code(),
              StatusCode::kDeferred);
    // The suspended frames hold the gates.
    EXPECT_GT(a->ref_count(), 1);
    invocation.Abort();
    EXPECT_EQ(a->ref_count(), 1);
    EXPECT_EQ(b->ref_count(), 1);
    EXPECT_FALSE(invocation.is_deferred());
    EXPECT_EQ(invocation.Resume().code(), StatusCode::kFailedPrecondition);
  }
  // Destroying a deferred invocation aborts it too.
  {
    Invocation invocation(*fixture.context);
    ASSERT_EQ(invocation
                  .Begin(fixture.main,
                         Args{GateValue(a), GateValue(b), Value::I32(7)})
                  .code(),
              StatusCode::kDeferred);
  }
  EXPECT_EQ(a->ref_count(), 1);
  a->Open();
  b->Open();
  Invocation again(*fixture.context);
  STRATA_EXPECT_OK(again.Begin(
      fixture.main, Args{GateValue(a), GateValue(b), Value::I32(7)}));
}

TEST(InvocationTest, OneInvocationAtATimeWithoutTheConcurrencyFlag) {
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  auto a = MakeRef<Gate>(), b = MakeRef<Gate>();
  Invocation first(*fixture.context);
  ASSERT_EQ(
      first.Begin(fixture.main, Args{GateValue(a), GateValue(b), Value::I32(7)})
          .code(),
      StatusCode::kDeferred);
  Invocation second(*fixture.context);
  Status status =
      second.Begin(fixture.inner_g, Args{GateValue(b), Value::I32(1)});
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(status.message()), HasSubstr("'inner.g'"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("'outer.main'"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("allow_concurrent_invocations"));
  std::vector<Value> results;
  EXPECT_EQ(
      fixture.context
          ->Invoke(fixture.inner_g, Args{GateValue(b), Value::I32(1)}, &results)
          .code(),
      StatusCode::kFailedPrecondition);
}

TEST(InvocationTest, ConcurrentInvocationsWithTheFlag) {
  STRATA_ASSERT_OK_AND_ASSIGN(
      Fixture fixture, MakeFixture({.allow_concurrent_invocations = true}));
  auto a = MakeRef<Gate>(), b = MakeRef<Gate>(), c = MakeRef<Gate>();
  Invocation first(*fixture.context), second(*fixture.context);
  ASSERT_EQ(
      first.Begin(fixture.main, Args{GateValue(a), GateValue(b), Value::I32(7)})
          .code(),
      StatusCode::kDeferred);
  ASSERT_EQ(
      second.Begin(fixture.inner_g, Args{GateValue(c), Value::I32(3)}).code(),
      StatusCode::kDeferred);
  // Finish the second before the first: their stacks are independent.
  c->Open();
  STRATA_ASSERT_OK(second.Wait(Deadline::Infinite()));
  STRATA_ASSERT_OK(second.Resume());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Value> results, second.End());
  EXPECT_EQ(results[0].i32(), 31);
  a->Open();
  b->Open();
  STRATA_ASSERT_OK(first.Wait(Deadline::Infinite()));
  Status status = first.Resume();
  if (status.code() == StatusCode::kDeferred) {
    STRATA_ASSERT_OK(first.Wait(Deadline::Infinite()));
    status = first.Resume();
  }
  STRATA_ASSERT_OK(status);
  STRATA_ASSERT_OK_AND_ASSIGN(results, first.End());
  EXPECT_EQ(results[0].i32(), 1081);
}

TEST(InvocationTest, ContextInvokeWaitsAndResumesInternally) {
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  auto a = MakeRef<Gate>(), b = MakeRef<Gate>();
  std::thread opener([&] {
    a->Open();
    b->Open();
  });
  std::vector<Value> results;
  STRATA_ASSERT_OK(fixture.context->Invoke(
      fixture.main, Args{GateValue(a), GateValue(b), Value::I32(2)}, &results));
  opener.join();
  // Each await either found its gate open (0) or yielded (1); never blocked.
  int32_t value = results[0].i32();
  EXPECT_TRUE(value >= 1030 && value <= 1032) << value;
}

TEST(InvocationTest, BlocksWhereItCannotYield) {
  // Without an Invocation driving the stack (a plain Function::Call), the
  // native function must block rather than yield.
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  auto gate = MakeRef<Gate>();
  std::thread opener([&] { gate->Open(); });
  Stack stack;
  std::vector<Value> results(1);
  Value arguments[] = {GateValue(gate), Value::I32(4)};
  STRATA_ASSERT_OK(fixture.inner_g.Call(stack, arguments, results));
  opener.join();
  EXPECT_TRUE(results[0].i32() == 40 || results[0].i32() == 42)
      << results[0].i32();
}

TEST(LoopTest, KeepsSeveralInvocationsInFlight) {
  STRATA_ASSERT_OK_AND_ASSIGN(
      Fixture fixture, MakeFixture({.allow_concurrent_invocations = true}));
  constexpr int kCount = 6;
  std::vector<RefPtr<Gate>> gates;
  for (int i = 0; i < 2 * kCount; ++i)
    gates.push_back(MakeRef<Gate>());
  Loop loop;
  std::vector<int> completion_order;
  std::vector<int32_t> values(kCount, -1);
  for (int i = 0; i < kCount; ++i) {
    loop.InvokeAsync(
        fixture.context, fixture.main,
        {GateValue(gates[2 * i]), GateValue(gates[2 * i + 1]), Value::I32(i)},
        [&, i](Status status, std::vector<Value> results) {
          EXPECT_TRUE(status.ok()) << status.ToString();
          completion_order.push_back(i);
          if (status.ok())
            values[i] = results[0].i32();
        });
  }
  // Returned at once: nothing ran yet.
  EXPECT_EQ(loop.pending_count(), size_t(kCount));
  EXPECT_TRUE(completion_order.empty());
  // Every invocation begins and suspends on its first gate.
  EXPECT_EQ(loop.Drain(Deadline::Immediate()).code(),
            StatusCode::kDeadlineExceeded);
  EXPECT_EQ(loop.pending_count(), size_t(kCount));
  for (int i = 0; i < kCount; ++i)
    EXPECT_EQ(gates[2 * i]->subscriber_count(), 1u);
  // Another thread opens the gates in reverse order while the loop drains.
  std::thread opener([&] {
    for (int i = 2 * kCount - 1; i >= 0; --i)
      gates[i]->Open();
  });
  STRATA_ASSERT_OK(loop.Drain());
  opener.join();
  EXPECT_EQ(loop.pending_count(), 0u);
  ASSERT_EQ(completion_order.size(), size_t(kCount));
  for (int i = 0; i < kCount; ++i) {
    EXPECT_GE(values[i], 1000 + 10 * i + 10) << i;
    EXPECT_LE(values[i], 1000 + 10 * i + 12) << i;
  }
  for (const RefPtr<Gate> &gate : gates)
    EXPECT_EQ(gate->subscriber_count(), 0u);
}

TEST(LoopTest, CallbackAlwaysRuns) {
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  auto closed = MakeRef<Gate>(), failing = MakeRef<Gate>();
  std::vector<Status> outcomes(5);
  std::vector<bool> ran(5, false);
  auto record = [&](int index) {
    return [&, index](Status status, std::vector<Value> results) {
      ran[index] = true;
      outcomes[index] = status;
      if (!status.ok())
        EXPECT_TRUE(results.empty());
    };
  };
  {
    Loop loop;
    // 0: fails at the wait; it holds the context until then.
    loop.InvokeAsync(fixture.context, fixture.inner_g,
                     {GateValue(failing), Value::I32(1)}, record(0));
    // 1: rejected: the context runs one invocation at a time.
    loop.InvokeAsync(fixture.context, fixture.inner_g,
                     {GateValue(closed), Value::I32(1)}, record(1));
    // 2: bad arguments.
    loop.InvokeAsync(fixture.context, fixture.inner_g, {Value::I32(1)},
                     record(2));
    // 3: no context.
    loop.InvokeAsync(nullptr, fixture.inner_g, {}, record(3));
    EXPECT_EQ(loop.Drain(Deadline::Immediate()).code(),
              StatusCode::kDeadlineExceeded);
    EXPECT_TRUE(ran[1] && ran[2] && ran[3]);
    EXPECT_FALSE(ran[0]);
    failing->Fail(AbortedError("work failed"));
    STRATA_ASSERT_OK(loop.Drain());
    EXPECT_TRUE(ran[0]);
    // 4: still waiting when the loop goes away.
    loop.InvokeAsync(fixture.context, fixture.inner_g,
                     {GateValue(closed), Value::I32(1)}, record(4));
    EXPECT_EQ(loop.Drain(Deadline::Immediate()).code(),
              StatusCode::kDeadlineExceeded);
    EXPECT_FALSE(ran[4]);
  }
  EXPECT_EQ(outcomes[0].code(), StatusCode::kAborted);
  EXPECT_EQ(outcomes[1].code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(outcomes[2].code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(outcomes[3].code(), StatusCode::kInvalidArgument);
  EXPECT_TRUE(ran[4]);
  EXPECT_EQ(outcomes[4].code(), StatusCode::kCancelled);
  EXPECT_EQ(closed->subscriber_count(), 0u);
  EXPECT_EQ(closed->ref_count(), 1);
}

TEST(LoopTest, CallbacksMayStartMoreInvocations) {
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  auto open = MakeRef<Gate>();
  open->Open();
  Loop loop;
  int remaining = 5;
  int completed = 0;
  std::function<void(Status, std::vector<Value>)> again =
      [&](Status status, std::vector<Value> results) {
        STRATA_EXPECT_OK(status);
        ++completed;
        // The finished invocation no longer holds the context.
        if (--remaining > 0)
          loop.InvokeAsync(fixture.context, fixture.inner_g,
                           {GateValue(open), Value::I32(remaining)}, again);
      };
  loop.InvokeAsync(fixture.context, fixture.inner_g,
                   {GateValue(open), Value::I32(9)}, again);
  STRATA_ASSERT_OK(loop.Drain());
  EXPECT_EQ(completed, 5);
}

} // namespace
} // namespace strata::vm::testing
