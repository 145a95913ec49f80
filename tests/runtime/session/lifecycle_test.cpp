// Creates and destroys instances, devices, sessions and modules thousands
// of times, calling into each; under ASan (scripts/run_tests.sh) the leak
// checker fails the test if any cycle leaks.
#include "session_test_util.h"
#include "strata/base/file_contents.h"
#include "strata/vm/bytecode_module.h"
#include "strata/vm/invocation.h"

namespace strata::session::testing {
namespace {

Status CallSimpleMul(Session &session) {
  STRATA_ASSIGN_OR_RETURN(vm::Function function,
                          session.LookupFunction("simple_mul"));
  const float a[] = {1, 2, 3, 4}, b[] = {5, 6, 7, 8};
  RefPtr<hal::Allocator> allocator = session.device_allocator();
  STRATA_ASSIGN_OR_RETURN(RefPtr<hal::BufferView> x,
                          MakeF32View(*allocator, {4}, a));
  STRATA_ASSIGN_OR_RETURN(RefPtr<hal::BufferView> y,
                          MakeF32View(*allocator, {4}, b));
  std::vector<vm::Value> outputs;
  STRATA_RETURN_IF_ERROR(session.Call(
      function, std::vector<vm::Value>{vm::Value::Ref(x), vm::Value::Ref(y)},
      &outputs));
  STRATA_ASSIGN_OR_RETURN(std::vector<float> values,
                          ReadF32(*RefCast<hal::BufferView>(outputs[0].ref())));
  if (values != std::vector<float>{5, 12, 21, 32})
    return InternalError("wrong simple_mul result");
  return OkStatus();
}

TEST(SessionLifecycleTest, InstancesDevicesSessionsAndModules) {
  for (int i = 0; i < 300; ++i) {
    Result<RefPtr<Instance>> instance = Instance::Create();
    ASSERT_TRUE(instance.ok());
    Result<RefPtr<hal::Device>> device =
        (*instance)->CreateDevice("local-sync");
    ASSERT_TRUE(device.ok());
    Result<RefPtr<Session>> session =
        MakeSession(*instance, *device, "simple_mul");
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    STRATA_ASSERT_OK(CallSimpleMul(**session));
  }
}

TEST(SessionLifecycleTest, ManySessionsOverOneModule) {
  Result<RefPtr<Instance>> instance = Instance::Create();
  ASSERT_TRUE(instance.ok());
  Result<RefPtr<hal::Device>> device = (*instance)->CreateDevice("local-sync");
  ASSERT_TRUE(device.ok());
  Result<OwnedBytes> bytes = ReadFileContents(ModulePath("simple_mul"));
  ASSERT_TRUE(bytes.ok());
  for (int i = 0; i < 1000; ++i) {
    // A module loaded from memory for every session.
    Result<RefPtr<vm::BytecodeModule>> module =
        vm::BytecodeModule::FromMemory(OwnedBytes::CopyOf(bytes->span(), 16));
    ASSERT_TRUE(module.ok());
    Result<RefPtr<Session>> session = Session::Create(*instance, *device, {});
    ASSERT_TRUE(session.ok());
    STRATA_ASSERT_OK((*session)->AppendModule(*module));
    if (i % 10 == 0)
      STRATA_ASSERT_OK(CallSimpleMul(**session));
  }
}

TEST(SessionLifecycleTest, LocalTaskDevicesAndAbortedInvocations) {
  Result<RefPtr<Instance>> instance = Instance::Create();
  ASSERT_TRUE(instance.ok());
  for (int i = 0; i < 100; ++i) {
    Result<RefPtr<hal::Device>> device =
        (*instance)->CreateDevice("local-task?workers=2");
    ASSERT_TRUE(device.ok());
    Result<RefPtr<Session>> session =
        MakeSession(*instance, *device, "simple_mul");
    ASSERT_TRUE(session.ok());
    STRATA_ASSERT_OK(CallSimpleMul(**session));
    // An invocation abandoned while (possibly) suspended on its fence,
    // then everything destroyed with the queue thread maybe still busy.
    Result<vm::Function> function = (*session)->LookupFunction("simple_mul");
    ASSERT_TRUE(function.ok());
    const float a[] = {1, 2, 3, 4};
    auto x = MakeF32View(*(*session)->device_allocator(), {4}, a);
    ASSERT_TRUE(x.ok());
    vm::Invocation invocation((*session)->context());
    Status status =
        invocation.Begin(*function, std::vector<vm::Value>{vm::Value::Ref(*x),
                                                           vm::Value::Ref(*x)});
    EXPECT_TRUE(status.ok() || status.code() == StatusCode::kDeferred);
  }
}

} // namespace
} // namespace strata::session::testing
