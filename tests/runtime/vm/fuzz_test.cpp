// Robustness: garbage, truncated and bit-flipped modules must load with an
// error or load, verify and run without crashing.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>

#include "vm_test_util.h"

namespace strata::vm::testing {
namespace {

// A module exercising most features: loops with remaps, recursion,
// internal and (variadic) import calls, globals, __init, rodata, lists,
// buffers and fail.
std::vector<uint8_t> BuildRichModule() {
  ModuleBuilder builder("rich", 2);
  builder.AddDependency("native", 1);
  uint32_t add = builder.AddImport("native.add", "0ii_i");
  uint32_t sum = builder.AddImport("native.sum", "0iCiD_i");
  uint32_t make_buffer = builder.AddImport("native.make_buffer", "0i_r");
  uint32_t message = builder.AddRodata("message", "negative input");
  uint32_t data = builder.AddRodata("data", "0123456789abcdef", 16);
  builder.SetGlobalCounts({.i32 = 2, .ref = 1});

  FunctionBuilder &init =
      builder.AddFunction("__init", "0v_v", {.i32 = 1, .ref = 1});
  init.Op(Opcode::ConstI32).Reg(0).I32(7);
  init.Op(Opcode::GlobalStoreI32).Global(0).Reg(0);
  init.Op(Opcode::ConstRefRodata).Reg(0).Rodata(data);
  init.Op(Opcode::GlobalStoreRef).Global(0).Reg(0);
  init.Op(Opcode::Return).List({});

  FunctionBuilder &loop = builder.AddFunction("loop", "0i_i", {.i32 = 7});
  {
    Label head = loop.NewLabel(), body = loop.NewLabel(),
          exit = loop.NewLabel();
    loop.Op(Opcode::ConstI32).Reg(1).I32(0);
    loop.Op(Opcode::ConstI32).Reg(2).I32(1);
    loop.Op(Opcode::ConstI32).Reg(4).I32(1);
    loop.Bind(head);
    loop.Op(Opcode::CmpLeI32S).Reg(3).Reg(2).Reg(0);
    loop.Op(Opcode::CondBranch).Reg(3).Branch(body).Branch(exit);
    loop.Bind(body);
    loop.Op(Opcode::AddI32).Reg(5).Reg(1).Reg(2);
    loop.Op(Opcode::AddI32).Reg(6).Reg(2).Reg(4);
    loop.Op(Opcode::Branch)
        .Branch(head, {{RegI32(5), RegI32(1)}, {RegI32(6), RegI32(2)}});
    loop.Bind(exit);
    loop.Op(Opcode::Return).List({RegI32(1)});
  }
  builder.AddExport("loop", loop.ordinal());

  FunctionBuilder &fact = builder.AddFunction("fact", "0i_i", {.i32 = 5});
  {
    Label base = fact.NewLabel(), recurse = fact.NewLabel();
    fact.Op(Opcode::ConstI32).Reg(1).I32(1);
    fact.Op(Opcode::CmpLeI32S).Reg(2).Reg(0).Reg(1);
    fact.Op(Opcode::CondBranch).Reg(2).Branch(base).Branch(recurse);
    fact.Bind(base);
    fact.Op(Opcode::Return).List({RegI32(1)});
    fact.Bind(recurse);
    fact.Op(Opcode::SubI32).Reg(3).Reg(0).Reg(1);
    fact.Op(Opcode::Call)
        .Function(fact.ordinal())
        .List({RegI32(3)})
        .List({RegI32(4)});
    fact.Op(Opcode::MulI32).Reg(4).Reg(0).Reg(4);
    fact.Op(Opcode::Return).List({RegI32(4)});
  }
  builder.AddExport("fact", fact.ordinal());

  FunctionBuilder &calls = builder.AddFunction(
      "calls", "0iI_iI", {.i32 = 6, .i64 = 2, .f64 = 1, .ref = 2});
  {
    Label fail = calls.NewLabel(), ok = calls.NewLabel();
    calls.Op(Opcode::ConstI32).Reg(1).I32(0);
    calls.Op(Opcode::CmpLtI32S).Reg(2).Reg(0).Reg(1);
    calls.Op(Opcode::CondBranch).Reg(2).Branch(fail).Branch(ok);
    calls.Bind(fail);
    calls.Op(Opcode::ConstI32).Reg(1).I32(3);
    calls.Op(Opcode::Fail).Reg(1).Rodata(message);
    calls.Bind(ok);
    calls.Op(Opcode::GlobalLoadI32).Reg(1).Global(0);
    calls.Op(Opcode::Call)
        .Import(add)
        .List({RegI32(0), RegI32(1)})
        .List({RegI32(2)});
    calls.Op(Opcode::CallVariadic)
        .Import(sum)
        .Segments({2})
        .List({RegI32(2), RegI32(0), RegI32(1)})
        .List({RegI32(3)});
    calls.Op(Opcode::Call)
        .Function(loop.ordinal())
        .List({RegI32(3)})
        .List({RegI32(4)});
    calls.Op(Opcode::ConstI32).Reg(5).I32(32);
    calls.Op(Opcode::Call)
        .Import(make_buffer)
        .List({RegI32(5)})
        .List({RegRef(0)});
    calls.Op(Opcode::ConstI64).Reg(1).I64(8);
    calls.Op(Opcode::BufferStoreI64).Reg(0).Reg(1).Reg(0);
    calls.Op(Opcode::BufferLoadI64).Reg(1).Reg(0).Reg(1);
    calls.Op(Opcode::GlobalLoadRef).Reg(1).Global(0);
    calls.Op(Opcode::ConstI64).Reg(0).I64(4);
    calls.Op(Opcode::BufferCopy).Reg(0).Reg(0).Reg(1).Reg(0).Reg(0);
    calls.Op(Opcode::BufferLoadI8U).Reg(5).Reg(0).Reg(0);
    calls.Op(Opcode::CastSI64F64).Reg(0).Reg(1);
    calls.Op(Opcode::CastF64SI64).Reg(1).Reg(0);
    calls.Op(Opcode::Return).List({RegI32(4), RegI64(1)});
  }
  builder.AddExport("calls", calls.ordinal());

  FunctionBuilder &lists =
      builder.AddFunction("lists", "0r_ir", {.i32 = 4, .i64 = 1, .ref = 3});
  lists.Op(Opcode::ConstI32).Reg(0).I32(3);
  lists.Op(Opcode::ListAlloc).Reg(1).Reg(0);
  lists.Op(Opcode::ListResize).Reg(1).Reg(0);
  lists.Op(Opcode::ConstI32).Reg(1).I32(1);
  lists.Op(Opcode::ListSetRef).Reg(1).Reg(1).Reg(0);
  lists.Op(Opcode::ConstI64).Reg(0).I64(99);
  lists.Op(Opcode::ConstI32).Reg(3).I32(0);
  lists.Op(Opcode::ListSetI64).Reg(1).Reg(3).Reg(0);
  lists.Op(Opcode::ListGetRef).Reg(2).Reg(1).Reg(1);
  lists.Op(Opcode::ListSize).Reg(2).Reg(1);
  lists.Op(Opcode::SelectRef).Reg(2).Reg(2).Reg(2).Reg(1);
  lists.Op(Opcode::Return).List({RegI32(2), RegRef(2)});
  builder.AddExport("lists", lists.ordinal());
  return builder.Build();
}

Value DefaultArgument(ValueType type) {
  switch (type) {
  case ValueType::kI32:
    return Value::I32(5);
  case ValueType::kI64:
    return Value::I64(5);
  case ValueType::kF32:
    return Value::F32(1.5f);
  case ValueType::kF64:
    return Value::F64(2.5);
  default:
    return Value::Ref(ByteBuffer::FromString("argument"));
  }
}

// Loads `bytes`; when that works, registers and calls every export.
// Returns true if the module loaded.
bool LoadAndRun(std::span<const uint8_t> bytes) {
  Result<RefPtr<BytecodeModule>> module =
      BytecodeModule::FromMemory(OwnedBytes::CopyOf(bytes));
  if (!module.ok()) {
    EXPECT_FALSE(module.status().message().empty());
    return false;
  }
  ContextOptions options;
  options.stack_options.max_depth = 64;
  options.stack_options.step_budget = 20000;
  RefPtr<Context> context = Context::Create(Instance::Create(), options);
  Result<RefPtr<NativeModule>> native = CreateTestNativeModule(1);
  EXPECT_TRUE(native.ok());
  if (!context->RegisterModule(native.value()).ok() ||
      !context->RegisterModule(module.value()).ok())
    return true;
  const BytecodeModule &loaded = *module.value();
  for (uint32_t i = 0; i < loaded.exports().size(); ++i) {
    Function function{module.value(), context->module_state(1), i};
    std::vector<Value> arguments;
    for (ValueType type : function.signature().argument_types())
      arguments.push_back(DefaultArgument(type));
    std::vector<Value> results;
    context->Invoke(function, arguments, &results).IgnoreError();
  }
  return true;
}

TEST(FuzzTest, RichModuleRuns) {
  std::vector<uint8_t> bytes = BuildRichModule();
  STRATA_ASSERT_OK_AND_ASSIGN(
      RefPtr<BytecodeModule> module,
      BytecodeModule::FromMemory(OwnedBytes::CopyOf(bytes)));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> native,
                              CreateTestNativeModule(1));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context,
                              MakeContext({native, module}));
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<Value> results,
      InvokeByName(*context, "rich.calls", {Value::I32(2), Value::I64(3)}));
  // add(2, 7) = 9; sum(9, [2, 7]) = 18; loop(18) = 171.
  EXPECT_EQ(results[0].i32(), 171);
  EXPECT_EQ(results[1].i64(), 3);
  Status failure =
      InvokeByName(*context, "rich.calls", {Value::I32(-1), Value::I64(0)})
          .status();
  EXPECT_EQ(failure.code(), StatusCode::kInvalidArgument);
  STRATA_ASSERT_OK_AND_ASSIGN(
      results, InvokeByName(*context, "rich.lists",
                            {Value::Ref(ByteBuffer::FromString("x"))}));
  EXPECT_EQ(results[0].i32(), 3);
}

TEST(FuzzTest, RandomGarbage) {
  std::mt19937 random(1234);
  for (int iteration = 0; iteration < 2000; ++iteration) {
    std::vector<uint8_t> bytes(random() % 512);
    for (uint8_t &byte : bytes)
      byte = static_cast<uint8_t>(random());
    if (bytes.size() >= 8 && iteration % 2) {
      // Give half of them the right identifier to get past the first check.
      std::memcpy(bytes.data() + 4, "SMOD", 4);
      bytes[0] = static_cast<uint8_t>(random() % bytes.size());
      bytes[1] = bytes[2] = bytes[3] = 0;
    }
    EXPECT_FALSE(LoadAndRun(bytes));
  }
}

TEST(FuzzTest, EveryTruncation) {
  std::vector<uint8_t> bytes = BuildRichModule();
  ASSERT_TRUE(LoadAndRun(bytes));
  // FlatBuffers may leave a few unreferenced padding bytes at the end;
  // cutting those is harmless. Anything shorter must fail to load.
  size_t shortest_loadable = bytes.size();
  for (size_t length = bytes.size(); length-- > 0;) {
    if (!LoadAndRun(std::span(bytes).first(length)))
      break;
    shortest_loadable = length;
  }
  EXPECT_GE(shortest_loadable + 8, bytes.size());
  for (size_t length = 0; length < shortest_loadable; ++length)
    EXPECT_FALSE(LoadAndRun(std::span(bytes).first(length))) << length;
}

// STRATA_FUZZ_ITERATIONS / STRATA_FUZZ_SEED lengthen or vary a run locally.
int EnvironmentInt(const char *name, int default_value) {
  const char *text = std::getenv(name);
  return text ? std::atoi(text) : default_value;
}

TEST(FuzzTest, SingleByteFlips) {
  const std::vector<uint8_t> original = BuildRichModule();
  std::mt19937 random(EnvironmentInt("STRATA_FUZZ_SEED", 42));
  int loaded = 0;
  int iterations = 0;
  auto flip_and_run = [&](size_t position, uint8_t mask) {
    std::vector<uint8_t> bytes = original;
    bytes[position] ^= mask;
    loaded += LoadAndRun(bytes);
    ++iterations;
  };
  // Every position once with a random mask, then random positions.
  for (size_t position = 0; position < original.size(); ++position)
    flip_and_run(position, static_cast<uint8_t>(1 + random() % 255));
  int random_flips = EnvironmentInt("STRATA_FUZZ_ITERATIONS", 3000);
  for (int i = 0; i < random_flips; ++i)
    flip_and_run(random() % original.size(),
                 static_cast<uint8_t>(1 + random() % 255));
  std::printf("%d of %d flipped modules loaded\n", loaded, iterations);
  // Some flips land in padding, names or immediates and still load.
  EXPECT_GT(loaded, 0);
  EXPECT_LT(loaded, iterations);
}

} // namespace
} // namespace strata::vm::testing
