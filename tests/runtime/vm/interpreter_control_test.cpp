// Branches, loops, calls, recursion limits, failures and backtraces.
#include "vm_test_util.h"

namespace strata::vm::testing {
namespace {

using ::testing::HasSubstr;

// sum(n) = 1 + 2 + ... + n, looping with a remap list on the back edge.
void AddSumFunction(ModuleBuilder &builder) {
  FunctionBuilder &f = builder.AddFunction("sum", "0i_i", {.i32 = 7});
  Label loop = f.NewLabel(), body = f.NewLabel(), exit = f.NewLabel();
  f.Op(Opcode::ConstI32).Reg(1).I32(0); // acc
  f.Op(Opcode::ConstI32).Reg(2).I32(1); // i
  f.Op(Opcode::ConstI32).Reg(4).I32(1);
  f.Bind(loop);
  f.Op(Opcode::CmpLeI32S).Reg(3).Reg(2).Reg(0);
  f.Op(Opcode::CondBranch).Reg(3).Branch(body).Branch(exit);
  f.Bind(body);
  f.Op(Opcode::AddI32).Reg(5).Reg(1).Reg(2);
  f.Op(Opcode::AddI32).Reg(6).Reg(2).Reg(4);
  f.Op(Opcode::Branch)
      .Branch(loop, {{RegI32(5), RegI32(1)}, {RegI32(6), RegI32(2)}});
  f.Bind(exit);
  f.Op(Opcode::Return).List({RegI32(1)});
  builder.AddExport("sum", f.ordinal());
}

TEST(InterpreterControlTest, LoopWithRemaps) {
  ModuleBuilder builder("loops");
  AddSumFunction(builder);
  for (int32_t n : {0, 1, 10, 1000}) {
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Value> results,
                                RunModule(builder, "sum", {Value::I32(n)}));
    EXPECT_EQ(results[0].i32(), n * (n + 1) / 2) << n;
  }
}

TEST(InterpreterControlTest, RemapsAreParallelMoves) {
  // fib(n): (a, b) = (b, a + b) n times; the back edge swaps i1 and i2.
  ModuleBuilder builder("fib");
  FunctionBuilder &f = builder.AddFunction("fib", "0i_i", {.i32 = 6});
  Label loop = f.NewLabel(), body = f.NewLabel(), exit = f.NewLabel();
  f.Op(Opcode::ConstI32).Reg(1).I32(0);
  f.Op(Opcode::ConstI32).Reg(2).I32(1);
  f.Op(Opcode::ConstI32).Reg(3).I32(0);
  f.Op(Opcode::ConstI32).Reg(4).I32(1);
  f.Bind(loop);
  f.Op(Opcode::CmpLtI32S).Reg(5).Reg(3).Reg(0);
  f.Op(Opcode::CondBranch).Reg(5).Branch(body).Branch(exit);
  f.Bind(body);
  f.Op(Opcode::AddI32).Reg(1).Reg(1).Reg(2);
  f.Op(Opcode::AddI32).Reg(3).Reg(3).Reg(4);
  f.Op(Opcode::Branch)
      .Branch(loop, {{RegI32(2), RegI32(1)}, {RegI32(1), RegI32(2)}});
  f.Bind(exit);
  f.Op(Opcode::Return).List({RegI32(1)});
  builder.AddExport("fib", f.ordinal());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Value> results,
                              RunModule(builder, "fib", {Value::I32(10)}));
  EXPECT_EQ(results[0].i32(), 55);
}

TEST(InterpreterControlTest, CondBranchRemapsOnlyTakenEdge) {
  // Both edges go to the same block with different remaps.
  ModuleBuilder builder("edges");
  FunctionBuilder &f = builder.AddFunction("pick", "0i_i", {.i32 = 4});
  Label join = f.NewLabel();
  f.Op(Opcode::ConstI32).Reg(1).I32(100);
  f.Op(Opcode::ConstI32).Reg(2).I32(200);
  f.Op(Opcode::CondBranch)
      .Reg(0)
      .Branch(join, {{RegI32(1), RegI32(3)}})
      .Branch(join, {{RegI32(2), RegI32(3)}});
  f.Bind(join);
  f.Op(Opcode::Return).List({RegI32(3)});
  builder.AddExport("pick", f.ordinal());
  STRATA_ASSERT_OK_AND_ASSIGN(auto yes,
                              RunModule(builder, "pick", {Value::I32(1)}));
  STRATA_ASSERT_OK_AND_ASSIGN(auto no,
                              RunModule(builder, "pick", {Value::I32(0)}));
  EXPECT_EQ(yes[0].i32(), 100);
  EXPECT_EQ(no[0].i32(), 200);
}

TEST(InterpreterControlTest, InternalCallsWithMixedBanksAndResults) {
  ModuleBuilder builder("calls");
  // divmod(a: i32, b: i64) -> (i64 a*b, i32 a%b, i32 a/b)
  FunctionBuilder &divmod =
      builder.AddFunction("divmod", "0iI_Iii", {.i32 = 4, .i64 = 3});
  divmod.Op(Opcode::TruncI64I32).Reg(1).Reg(0);
  divmod.Op(Opcode::RemI32S).Reg(2).Reg(0).Reg(1);
  divmod.Op(Opcode::DivI32S).Reg(3).Reg(0).Reg(1);
  divmod.Op(Opcode::ExtI32I64S).Reg(1).Reg(0);
  divmod.Op(Opcode::MulI64).Reg(2).Reg(1).Reg(0);
  divmod.Op(Opcode::Return).List({RegI64(2), RegI32(2), RegI32(3)});

  FunctionBuilder &main =
      builder.AddFunction("main", "0ii_iiI", {.i32 = 4, .i64 = 2});
  main.Op(Opcode::ExtI32I64S).Reg(0).Reg(1);
  main.Op(Opcode::Call)
      .Function(divmod.ordinal())
      .List({RegI32(0), RegI64(0)})
      .List({RegI64(1), RegI32(2), RegI32(3)});
  main.Op(Opcode::Return).List({RegI32(3), RegI32(2), RegI64(1)});
  builder.AddExport("main", main.ordinal());

  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<Value> results,
      RunModule(builder, "main", {Value::I32(17), Value::I32(5)}));
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].i32(), 3);  // 17 / 5
  EXPECT_EQ(results[1].i32(), 2);  // 17 % 5
  EXPECT_EQ(results[2].i64(), 85); // 17 * 5
}

void AddFactorial(ModuleBuilder &builder) {
  FunctionBuilder &f = builder.AddFunction("fact", "0i_i", {.i32 = 5});
  Label base = f.NewLabel(), recurse = f.NewLabel();
  f.Op(Opcode::ConstI32).Reg(1).I32(1);
  f.Op(Opcode::CmpLeI32S).Reg(2).Reg(0).Reg(1);
  f.Op(Opcode::CondBranch).Reg(2).Branch(base).Branch(recurse);
  f.Bind(base);
  f.Op(Opcode::Return).List({RegI32(1)});
  f.Bind(recurse);
  f.Op(Opcode::SubI32).Reg(3).Reg(0).Reg(1);
  f.Op(Opcode::Call).Function(f.ordinal()).List({RegI32(3)}).List({RegI32(4)});
  f.Op(Opcode::MulI32).Reg(4).Reg(0).Reg(4);
  f.Op(Opcode::Return).List({RegI32(4)});
  builder.AddExport("fact", f.ordinal());
}

TEST(InterpreterControlTest, Recursion) {
  ModuleBuilder builder("rec");
  AddFactorial(builder);
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Value> results,
                              RunModule(builder, "fact", {Value::I32(10)}));
  EXPECT_EQ(results[0].i32(), 3628800);
  // Deep but within the default limit (and beyond the inline storage).
  STRATA_ASSERT_OK(RunModule(builder, "fact", {Value::I32(1000)}).status());
}

TEST(InterpreterControlTest, RunawayRecursionHitsDepthLimit) {
  ModuleBuilder builder("rec");
  FunctionBuilder &f = builder.AddFunction("forever", "0i_i", {.i32 = 1});
  f.Op(Opcode::Call).Function(f.ordinal()).List({RegI32(0)}).List({RegI32(0)});
  f.Op(Opcode::Return).List({RegI32(0)});
  builder.AddExport("forever", f.ordinal());

  Result<std::vector<Value>> result =
      RunModule(builder, "forever", {Value::I32(1)});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("depth limit of 1024"));
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("at rec.forever +0x0000"));
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("frames omitted"));

  ContextOptions options;
  options.stack_options.max_depth = 10;
  result = RunModule(builder, "forever", {Value::I32(1)}, options);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("depth limit of 10 "));
}

TEST(InterpreterControlTest, StepBudgetStopsInfiniteLoops) {
  ModuleBuilder builder("spin");
  FunctionBuilder &f = builder.AddFunction("spin", "0v_v", {});
  Label loop = f.NewLabel();
  f.Bind(loop);
  f.Op(Opcode::Branch).Branch(loop);
  builder.AddExport("spin", f.ordinal());
  ContextOptions options;
  options.stack_options.step_budget = 10000;
  Result<std::vector<Value>> result = RunModule(builder, "spin", {}, options);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("at spin.spin"));
}

TEST(InterpreterControlTest, FailOpCarriesCodeAndMessage) {
  ModuleBuilder builder("failing");
  uint32_t message = builder.AddRodata("message", "input must be positive");
  FunctionBuilder &f = builder.AddFunction("check", "0i_i", {.i32 = 3});
  Label bad = f.NewLabel();
  Label good = f.NewLabel();
  f.Op(Opcode::ConstI32).Reg(1).I32(0);
  f.Op(Opcode::CmpLeI32S).Reg(2).Reg(0).Reg(1);
  f.Op(Opcode::CondBranch).Reg(2).Branch(bad).Branch(good);
  f.Bind(good);
  f.Op(Opcode::Return).List({RegI32(0)});
  f.Bind(bad);
  f.Op(Opcode::ConstI32)
      .Reg(1)
      .I32(static_cast<int32_t>(StatusCode::kFailedPrecondition));
  f.Op(Opcode::Fail).Reg(1).Rodata(message);
  builder.AddExport("check", f.ordinal());

  STRATA_EXPECT_OK(RunModule(builder, "check", {Value::I32(5)}).status());
  Result<std::vector<Value>> result =
      RunModule(builder, "check", {Value::I32(-5)});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::StartsWith("input must be positive"));
}

TEST(InterpreterControlTest, FailWithNonErrorCodeIsUnknown) {
  ModuleBuilder builder("failing");
  uint32_t message = builder.AddRodata("message", "oops");
  FunctionBuilder &f = builder.AddFunction("f", "0i_v", {.i32 = 1});
  f.Op(Opcode::Fail).Reg(0).Rodata(message);
  builder.AddExport("f", f.ordinal());
  for (int32_t code : {0, 16, 1000, -3}) {
    Result<std::vector<Value>> result =
        RunModule(builder, "f", {Value::I32(code)});
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), StatusCode::kUnknown) << code;
  }
}

TEST(InterpreterControlTest, BacktraceNamesFramesAndLocations) {
  ModuleBuilder builder("model");
  uint32_t file = builder.AddSourceFile("model.mlir");
  FunctionBuilder &helper = builder.AddFunction("helper", "0i_i", {.i32 = 2});
  helper.Op(Opcode::ConstI32).Reg(1).I32(0);
  helper.Locate(12, 3, file);
  helper.Op(Opcode::DivI32S).Reg(0).Reg(0).Reg(1); // at +0x0007
  helper.Op(Opcode::Return).List({RegI32(0)});
  FunctionBuilder &main = builder.AddFunction("main", "0i_i", {.i32 = 1});
  main.Locate(4, 7, file);
  main.Op(Opcode::Call)
      .Function(helper.ordinal())
      .List({RegI32(0)})
      .List({RegI32(0)});
  main.Op(Opcode::Return).List({RegI32(0)});
  builder.AddExport("main", main.ordinal());

  Result<std::vector<Value>> result =
      RunModule(builder, "main", {Value::I32(1)});
  ASSERT_FALSE(result.ok());
  std::string message(result.status().message());
  EXPECT_EQ(message, "division by zero\n"
                     "  at model.helper +0x0007 [model.mlir:12:3]\n"
                     "  at model.main +0x0000 [model.mlir:4:7]");
}

TEST(InterpreterControlTest, GlobalsAndInitializer) {
  ModuleBuilder builder("globals");
  builder.SetGlobalCounts({.i32 = 2, .i64 = 1, .f32 = 1, .f64 = 1, .ref = 1});
  uint32_t text = builder.AddRodata("text", "hello");
  // __init is not exported; it still runs at registration.
  FunctionBuilder &init = builder.AddFunction(
      "__init", "0v_v", {.i32 = 1, .i64 = 1, .f32 = 1, .f64 = 1, .ref = 1});
  init.Op(Opcode::ConstI32).Reg(0).I32(42);
  init.Op(Opcode::GlobalStoreI32).Global(1).Reg(0);
  init.Op(Opcode::ConstI64).Reg(0).I64(-9);
  init.Op(Opcode::GlobalStoreI64).Global(0).Reg(0);
  init.Op(Opcode::ConstF32).Reg(0).F32(0.5f);
  init.Op(Opcode::GlobalStoreF32).Global(0).Reg(0);
  init.Op(Opcode::ConstF64).Reg(0).F64(0.25);
  init.Op(Opcode::GlobalStoreF64).Global(0).Reg(0);
  init.Op(Opcode::ConstRefRodata).Reg(0).Rodata(text);
  init.Op(Opcode::GlobalStoreRef).Global(0).Reg(0);
  init.Op(Opcode::Return).List({});

  FunctionBuilder &get = builder.AddFunction(
      "get", "0v_iIfFr", {.i32 = 1, .i64 = 1, .f32 = 1, .f64 = 1, .ref = 1});
  get.Op(Opcode::GlobalLoadI32).Reg(0).Global(1);
  get.Op(Opcode::GlobalLoadI64).Reg(0).Global(0);
  get.Op(Opcode::GlobalLoadF32).Reg(0).Global(0);
  get.Op(Opcode::GlobalLoadF64).Reg(0).Global(0);
  get.Op(Opcode::GlobalLoadRef).Reg(0).Global(0);
  get.Op(Opcode::Return)
      .List({RegI32(0), RegI64(0), RegF32(0), RegF64(0), RegRef(0)});
  builder.AddExport("get", get.ordinal());

  // increment() -> global i32[1] += 1, returns it: state persists per context.
  FunctionBuilder &increment =
      builder.AddFunction("increment", "0v_i", {.i32 = 2});
  increment.Op(Opcode::GlobalLoadI32).Reg(0).Global(1);
  increment.Op(Opcode::ConstI32).Reg(1).I32(1);
  increment.Op(Opcode::AddI32).Reg(0).Reg(0).Reg(1);
  increment.Op(Opcode::GlobalStoreI32).Global(1).Reg(0);
  increment.Op(Opcode::Return).List({RegI32(0)});
  builder.AddExport("increment", increment.ordinal());

  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> module,
                              LoadModule(builder));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context, MakeContext({module}));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Value> results,
                              InvokeByName(*context, "globals.get", {}));
  EXPECT_EQ(results[0].i32(), 42);
  EXPECT_EQ(results[1].i64(), -9);
  EXPECT_FLOAT_EQ(results[2].f32(), 0.5f);
  EXPECT_DOUBLE_EQ(results[3].f64(), 0.25);
  ByteBuffer *buffer = RefCast<ByteBuffer>(results[4].ref());
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(buffer->AsStringView(), "hello");
  EXPECT_TRUE(buffer->is_read_only());

  STRATA_ASSERT_OK_AND_ASSIGN(results,
                              InvokeByName(*context, "globals.increment", {}));
  EXPECT_EQ(results[0].i32(), 43);
  STRATA_ASSERT_OK_AND_ASSIGN(results,
                              InvokeByName(*context, "globals.increment", {}));
  EXPECT_EQ(results[0].i32(), 44);

  // A second context has its own state.
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> other, MakeContext({module}));
  STRATA_ASSERT_OK_AND_ASSIGN(results,
                              InvokeByName(*other, "globals.increment", {}));
  EXPECT_EQ(results[0].i32(), 43);
}

TEST(InterpreterControlTest, RodataBufferKeepsModuleAlive) {
  ModuleBuilder builder("keep");
  uint32_t text = builder.AddRodata("text", "still here");
  FunctionBuilder &f = builder.AddFunction("text", "0v_r", {.ref = 1});
  f.Op(Opcode::ConstRefRodata).Reg(0).Rodata(text);
  f.Op(Opcode::Return).List({RegRef(0)});
  builder.AddExport("text", f.ordinal());
  Value result;
  {
    STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Value> results,
                                RunModule(builder, "text", {}));
    result = results[0];
  }
  // Context and module handles are gone; the buffer still reads its bytes.
  ByteBuffer *buffer = RefCast<ByteBuffer>(result.ref());
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(buffer->AsStringView(), "still here");
}

TEST(InterpreterControlTest, FailingInitializerFailsRegistration) {
  ModuleBuilder builder("badinit");
  uint32_t message = builder.AddRodata("m", "init failed");
  FunctionBuilder &init = builder.AddFunction("__init", "0v_v", {.i32 = 1});
  init.Op(Opcode::ConstI32).Reg(0).I32(13);
  init.Op(Opcode::Fail).Reg(0).Rodata(message);
  builder.AddExport("__init", init.ordinal());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> module,
                              LoadModule(builder));
  RefPtr<Context> context = Context::Create(Instance::Create());
  Status status = context->RegisterModule(module);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("initializing module 'badinit': init failed"));
  EXPECT_EQ(context->module_count(), 0u);
}

} // namespace
} // namespace strata::vm::testing
