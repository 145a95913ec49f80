// Deadlines and cancellation of invocations (base/abort_signal.h): runaway
// loops in functions and initialisers, suspended waits that never end,
// cancellation from another thread, the async loop; the context stays
// usable after each.
#include <atomic>
#include <chrono>
#include <thread>

#include "strata/base/abort_signal.h"
#include "strata/vm/invocation.h"
#include "strata/vm/loop.h"
#include "vm_test_util.h"

namespace strata::vm::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kMs = 1000000;

// "hang": spin() loops forever; add1(x) = x + 1; wait(gate) awaits a gate
// (gate.await) in a loop that never exits on its own.
ModuleBuilder HangModule() {
  ModuleBuilder builder("hang");
  uint32_t await = builder.AddImport("gate.await", "0r_i");
  FunctionBuilder &spin = builder.AddFunction("spin", "0v_v", {});
  Label loop = spin.NewLabel();
  spin.Bind(loop);
  spin.Op(Opcode::Branch).Branch(loop);
  builder.AddExport("spin", spin.ordinal());

  FunctionBuilder &add1 = builder.AddFunction("add1", "0i_i", {.i32 = 2});
  add1.Op(Opcode::ConstI32).Reg(1).I32(1);
  add1.Op(Opcode::AddI32).Reg(0).Reg(0).Reg(1);
  add1.Op(Opcode::Return).List({RegI32(0)});
  builder.AddExport("add1", add1.ordinal());

  FunctionBuilder &wait =
      builder.AddFunction("wait", "0r_i", {.i32 = 1, .ref = 1});
  wait.Op(Opcode::Call).Import(await).List({RegRef(0)}).List({RegI32(0)});
  wait.Op(Opcode::Return).List({RegI32(0)});
  builder.AddExport("wait", wait.ordinal());
  return builder;
}

// "calls.loop"(): calls native.counter forever (a loop whose time goes into
// import calls).
ModuleBuilder ImportLoopModule() {
  ModuleBuilder builder("calls");
  uint32_t counter = builder.AddImport("native.counter", "0v_i");
  FunctionBuilder &f = builder.AddFunction("loop", "0v_v", {.i32 = 1});
  Label loop = f.NewLabel();
  f.Bind(loop);
  f.Op(Opcode::Call).Import(counter).List({}).List({RegI32(0)});
  f.Op(Opcode::Branch).Branch(loop);
  builder.AddExport("loop", f.ordinal());
  return builder;
}

struct Fixture {
  RefPtr<Context> context;
  Function spin, add1, wait;
};

Result<Fixture> MakeFixture(ContextOptions options = {}) {
  STRATA_ASSIGN_OR_RETURN(RefPtr<NativeModule> gate, CreateGateModule());
  STRATA_ASSIGN_OR_RETURN(RefPtr<BytecodeModule> hang,
                          LoadModule(HangModule()));
  Fixture fixture;
  STRATA_ASSIGN_OR_RETURN(fixture.context, MakeContext({gate, hang}, options));
  STRATA_ASSIGN_OR_RETURN(fixture.spin,
                          fixture.context->LookupFunction("hang.spin"));
  STRATA_ASSIGN_OR_RETURN(fixture.add1,
                          fixture.context->LookupFunction("hang.add1"));
  STRATA_ASSIGN_OR_RETURN(fixture.wait,
                          fixture.context->LookupFunction("hang.wait"));
  return fixture;
}

RefPtr<AbortSignal> DeadlineIn(std::string subject, int64_t ns) {
  return AbortSignal::Create(std::move(subject), Deadline::AfterNs(ns));
}

// The context answers correctly after an aborted invocation.
void ExpectUsable(Fixture &fixture) {
  std::vector<Value> arguments = {Value::I32(41)}, results;
  STRATA_ASSERT_OK(fixture.context->Invoke(fixture.add1, arguments, &results));
  EXPECT_EQ(results[0].i32(), 42);
}

// Cancels `token` after `delay_ms` on another thread.
std::thread CancelLater(RefPtr<CancellationToken> token, int delay_ms) {
  return std::thread([token = std::move(token), delay_ms] {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    token->Cancel();
  });
}

TEST(DeadlineTest, InfiniteLoopExceedsItsDeadline) {
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  std::vector<Value> results;
  Status status =
      fixture.context->Invoke(fixture.spin, {}, &results,
                              DeadlineIn("function 'hang.spin'", 200 * kMs));
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("function 'hang.spin' exceeded its deadline (0.2 s)"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("at hang.spin +0x"));
  ExpectUsable(fixture);
}

TEST(DeadlineTest, CancelledFromAnotherThread) {
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  auto token = CancellationToken::Create();
  std::thread canceller = CancelLater(token, 20);
  std::vector<Value> results;
  Status status = fixture.context->Invoke(
      fixture.spin, {}, &results,
      AbortSignal::Create("function 'hang.spin'", Deadline::Infinite(), token));
  canceller.join();
  EXPECT_EQ(status.code(), StatusCode::kCancelled);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("function 'hang.spin' was cancelled"));
  ExpectUsable(fixture);
}

TEST(DeadlineTest, ASignalThatAlreadyFiredRunsNothing) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> native,
                              CreateTestNativeModule());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> calls,
                              LoadModule(ImportLoopModule()));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context,
                              MakeContext({native, calls}));
  auto token = CancellationToken::Create();
  token->Cancel();
  STRATA_ASSERT_OK_AND_ASSIGN(Function loop,
                              context->LookupFunction("calls.loop"));
  std::vector<Value> results;
  Status status =
      context->Invoke(loop, {}, &results,
                      AbortSignal::Create("function 'calls.loop'",
                                          Deadline::Infinite(), token));
  EXPECT_EQ(status.code(), StatusCode::kCancelled);
  STRATA_ASSERT_OK_AND_ASSIGN(Function counter,
                              context->LookupFunction("native.counter"));
  STRATA_ASSERT_OK(context->Invoke(counter, {}, &results));
  EXPECT_EQ(results[0].i32(), 1) << "the loop must not have called it";
}

// Native calls may take long, so the clock is read before each import call
// rather than every kClockPollSteps steps.
std::atomic<int> slow_calls{0};

Status SlowCounter(Stack &, ModuleState *, std::span<const Value>,
                   std::span<Value> results) {
  ++slow_calls;
  std::this_thread::sleep_for(std::chrono::milliseconds(1));
  results[0] = Value::I32(0);
  return OkStatus();
}

TEST(DeadlineTest, ClockIsReadBeforeImportCalls) {
  slow_calls = 0;
  const NativeFunctionDef functions[] = {{"counter", "0v_i", SlowCounter}};
  STRATA_ASSERT_OK_AND_ASSIGN(
      RefPtr<NativeModule> native,
      NativeModule::Create({.name = "native", .functions = functions}));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> module,
                              LoadModule(ImportLoopModule()));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context,
                              MakeContext({native, module}));
  STRATA_ASSERT_OK_AND_ASSIGN(Function loop,
                              context->LookupFunction("calls.loop"));
  std::vector<Value> results;
  Status status = context->Invoke(
      loop, {}, &results, DeadlineIn("function 'calls.loop'", 20 * kMs));
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
  // Each call sleeps at least 1 ms: at most ~20 fit in the deadline, far
  // fewer than the steps between two clock reads of a tight loop.
  EXPECT_LT(slow_calls.load(), int(Stack::kClockPollSteps));
}

ModuleBuilder SpinningInitializerModule() {
  ModuleBuilder builder("init");
  FunctionBuilder &init = builder.AddFunction("__init", "0v_v", {});
  Label loop = init.NewLabel();
  init.Bind(loop);
  init.Op(Opcode::Branch).Branch(loop);
  return builder;
}

TEST(DeadlineTest, InfiniteInitializerFailsRegistration) {
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> init,
                              LoadModule(SpinningInitializerModule()));
  size_t modules = fixture.context->module_count();
  Status status = fixture.context->RegisterModule(
      init, DeadlineIn("function 'init.__init'", 100 * kMs));
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("initializing module 'init': function 'init.__init' "
                        "exceeded its deadline (0.1 s)"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("at init.__init"));
  EXPECT_EQ(fixture.context->module_count(), modules);

  // Cancelled from another thread, and the thread's current signal when
  // none is given.
  auto token = CancellationToken::Create();
  RefPtr<AbortSignal> signal = AbortSignal::Create("function 'init.__init'",
                                                   Deadline::Infinite(), token);
  std::thread canceller = CancelLater(token, 20);
  {
    ScopedAbortSignal current(signal.get());
    status = fixture.context->RegisterModule(init);
  }
  canceller.join();
  EXPECT_EQ(status.code(), StatusCode::kCancelled);
  EXPECT_EQ(fixture.context->module_count(), modules);
  ExpectUsable(fixture);
}

TEST(DeadlineTest, NestedInvocationsInheritTheCurrentSignal) {
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  RefPtr<AbortSignal> signal = DeadlineIn("function 'outer.call'", 50 * kMs);
  std::vector<Value> results;
  Status status;
  {
    ScopedAbortSignal current(signal.get());
    status = fixture.context->Invoke(fixture.spin, {}, &results);
  }
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("function 'outer.call' exceeded its deadline"));
  EXPECT_EQ(AbortSignal::Current(), nullptr);
  ExpectUsable(fixture);
}

TEST(DeadlineTest, SuspendedWaitEndsAtTheDeadline) {
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  auto gate = MakeRef<Gate>();
  // Context::Invoke waits for the gate; the deadline ends the wait.
  std::vector<Value> arguments = {Value::Ref(RefPtr<RefObject>(gate))};
  std::vector<Value> results;
  Status status =
      fixture.context->Invoke(fixture.wait, arguments, &results,
                              DeadlineIn("function 'hang.wait'", 50 * kMs));
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("function 'hang.wait' exceeded its deadline"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("at hang.wait"));
  EXPECT_EQ(gate->subscriber_count(), 0u);
  ExpectUsable(fixture);
}

TEST(DeadlineTest, SuspendedWaitIsCancelledFromAnotherThread) {
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture());
  auto gate = MakeRef<Gate>();
  auto token = CancellationToken::Create();
  Invocation invocation(
      *fixture.context, nullptr,
      AbortSignal::Create("function 'hang.wait'", Deadline::Infinite(), token));
  std::vector<Value> arguments = {Value::Ref(RefPtr<RefObject>(gate))};
  Status status = invocation.Begin(fixture.wait, arguments);
  ASSERT_EQ(status.code(), StatusCode::kDeferred);
  // A caller deadline before the cancellation leaves it deferred.
  EXPECT_EQ(invocation.Wait(Deadline::AfterNs(kMs)).code(),
            StatusCode::kDeadlineExceeded);
  EXPECT_TRUE(invocation.is_deferred());
  std::thread canceller = CancelLater(token, 20);
  STRATA_EXPECT_OK(invocation.Wait(Deadline::Infinite()));
  canceller.join();
  status = invocation.Resume();
  EXPECT_EQ(status.code(), StatusCode::kCancelled);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("function 'hang.wait' was cancelled"));
  invocation.Abort();
  EXPECT_EQ(gate->subscriber_count(), 0u);
  ExpectUsable(fixture);
}

TEST(DeadlineTest, LoopEndsWaitingInvocationsWhoseSignalFired) {
  ContextOptions options;
  options.allow_concurrent_invocations = true;
  STRATA_ASSERT_OK_AND_ASSIGN(Fixture fixture, MakeFixture(options));
  auto gate = MakeRef<Gate>();
  auto token = CancellationToken::Create();
  Loop loop;
  std::vector<Status> outcomes(3);
  auto record = [&](int index) {
    return [&outcomes, index](Status status, std::vector<Value>) {
      outcomes[index] = std::move(status);
    };
  };
  std::vector<Value> arguments = {Value::Ref(RefPtr<RefObject>(gate))};
  loop.InvokeAsync(fixture.context, fixture.wait, arguments, record(0),
                   DeadlineIn("function 'hang.wait'", 30 * kMs));
  loop.InvokeAsync(
      fixture.context, fixture.wait, arguments, record(1),
      AbortSignal::Create("function 'hang.wait'", Deadline::Infinite(), token));
  loop.InvokeAsync(fixture.context, fixture.spin, {}, record(2),
                   DeadlineIn("function 'hang.spin'", 30 * kMs));
  std::thread canceller = CancelLater(token, 60);
  STRATA_EXPECT_OK(loop.Drain());
  canceller.join();
  EXPECT_EQ(outcomes[0].code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(outcomes[1].code(), StatusCode::kCancelled);
  EXPECT_EQ(outcomes[2].code(), StatusCode::kDeadlineExceeded);
  EXPECT_EQ(loop.pending_count(), 0u);
  EXPECT_EQ(gate->subscriber_count(), 0u);
  ExpectUsable(fixture);
}

TEST(DeadlineTest, StackStepsWithSignalAndBudget) {
  auto token = CancellationToken::Create();
  RefPtr<AbortSignal> signal =
      AbortSignal::Create("work", Deadline::Infinite(), token);
  Stack stack(StackOptions{.step_budget = 3});
  stack.set_abort_signal(signal.get());
  EXPECT_TRUE(stack.ConsumeStep());
  EXPECT_TRUE(stack.ConsumeStepAndPollClock());
  EXPECT_TRUE(stack.ConsumeStep());
  EXPECT_FALSE(stack.ConsumeStep());
  EXPECT_FALSE(stack.ConsumeStep());
  EXPECT_THAT(std::string(stack.StopError().message()),
              HasSubstr("step budget of 3"));
  token->Cancel();
  EXPECT_EQ(stack.StopError().code(), StatusCode::kCancelled);

  Stack unlimited;
  auto other = CancellationToken::Create();
  RefPtr<AbortSignal> cancellable =
      AbortSignal::Create("work", Deadline::Infinite(), other);
  unlimited.set_abort_signal(cancellable.get());
  for (int i = 0; i < 5000; ++i)
    ASSERT_TRUE(unlimited.ConsumeStep());
  other->Cancel();
  EXPECT_FALSE(unlimited.ConsumeStep());
  EXPECT_THAT(std::string(unlimited.StopError().message()),
              HasSubstr("work was cancelled"));
  unlimited.set_abort_signal(nullptr);
  EXPECT_TRUE(unlimited.ConsumeStep());

  RefPtr<AbortSignal> expired =
      AbortSignal::Create("late", Deadline::Immediate());
  unlimited.set_abort_signal(expired.get());
  bool stopped = false;
  for (uint64_t i = 0; i <= Stack::kClockPollSteps && !stopped; ++i)
    stopped = !unlimited.ConsumeStep();
  EXPECT_TRUE(stopped);
  EXPECT_EQ(unlimited.StopError().code(), StatusCode::kDeadlineExceeded);
}

TEST(DeadlineTest, AbortSignalMessages) {
  EXPECT_EQ(AbortSignal::Create("function 'm.f'", Deadline::AfterNs(2000 * kMs))
                ->DeadlineExceededError()
                .message(),
            "function 'm.f' exceeded its deadline (2.0 s)");
  EXPECT_EQ(AbortSignal::Create("x", Deadline::AfterNs(25 * kMs))
                ->DeadlineExceededError()
                .message(),
            "x exceeded its deadline (25 ms)");
  STRATA_EXPECT_OK(AbortSignal::Create("x", Deadline::Infinite())->Check());
  EXPECT_EQ(AbortSignal::Create("x", Deadline::Immediate())->Check().code(),
            StatusCode::kDeadlineExceeded);
}

} // namespace
} // namespace strata::vm::testing
