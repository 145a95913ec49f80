// A steady-state call allocates nothing on the heap in the VM: stacks,
// interpreter buffers and the results vector are reused from call to call.
// Counted by the global operator new of strata_heap_counter.
#include "strata/tooling/heap_counter.h"
#include "vm_test_util.h"

namespace strata::vm::testing {
namespace {

// Heap allocations of `calls` calls of `function`, after warm-up calls.
uint64_t AllocationsPerCalls(Context &context, const Function &function,
                             std::span<const Value> arguments, int calls) {
  std::vector<Value> results;
  for (int i = 0; i < 3; ++i)
    EXPECT_TRUE(context.Invoke(function, arguments, &results).ok());
  uint64_t before = tooling::HeapAllocationCount();
  for (int i = 0; i < calls; ++i)
    EXPECT_TRUE(context.Invoke(function, arguments, &results).ok());
  return tooling::HeapAllocationCount() - before;
}

TEST(AllocationTest, CountingWorks) {
  uint64_t before = tooling::HeapAllocationCount();
  auto *vector = new std::vector<int>(100);
  uint64_t after = tooling::HeapAllocationCount();
  delete vector;
  EXPECT_EQ(after - before, 2u);
}

TEST(AllocationTest, BytecodeCallingNativeImportsAllocatesNothing) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> native,
                              CreateTestNativeModule());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> app,
                              LoadModule(MakeNativeCallerApp()));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context,
                              MakeContext({native, app}));
  STRATA_ASSERT_OK_AND_ASSIGN(Function function,
                              context->LookupFunction("app.main"));
  Value arguments[] = {Value::I32(1), Value::I32(10), Value::I32(20)};
  EXPECT_EQ(AllocationsPerCalls(*context, function, arguments, 100), 0u);
}

TEST(AllocationTest, BytecodeCallingBytecodeAllocatesNothing) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context,
                              MakeBytecodeImportContext());
  STRATA_ASSERT_OK_AND_ASSIGN(Function function,
                              context->LookupFunction("app.f"));
  RefPtr<ByteBuffer> buffer = ByteBuffer::FromString("x");
  Value arguments[] = {Value::Ref(buffer)};
  EXPECT_EQ(AllocationsPerCalls(*context, function, arguments, 100), 0u);
}

} // namespace
} // namespace strata::vm::testing
