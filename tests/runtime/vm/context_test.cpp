// Contexts: registration, dependencies, imports, native modules, Invoke.
#include "vm_test_util.h"

namespace strata::vm::testing {
namespace {

using ::testing::HasSubstr;

std::string MessageOf(const Status &status) {
  return std::string(status.message());
}

TEST(ContextTest, InvokesNativeFunctionsDirectly) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> native,
                              CreateTestNativeModule());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context, MakeContext({native}));
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<Value> results,
      InvokeByName(*context, "native.add", {Value::I32(2), Value::I32(40)}));
  EXPECT_EQ(results[0].i32(), 42);
  // Variadic: base, tuple count, values.
  STRATA_ASSERT_OK_AND_ASSIGN(
      results, InvokeByName(*context, "native.sum",
                            {Value::I32(100), Value::I32(3), Value::I32(1),
                             Value::I32(2), Value::I32(3)}));
  EXPECT_EQ(results[0].i32(), 106);
  // Per-context state.
  STRATA_ASSERT_OK_AND_ASSIGN(results,
                              InvokeByName(*context, "native.counter", {}));
  EXPECT_EQ(results[0].i32(), 1);
  STRATA_ASSERT_OK_AND_ASSIGN(results,
                              InvokeByName(*context, "native.counter", {}));
  EXPECT_EQ(results[0].i32(), 2);
}

TEST(ContextTest, InvokeChecksArguments) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> native,
                              CreateTestNativeModule());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context, MakeContext({native}));
  Status mismatch =
      InvokeByName(*context, "native.add", {Value::I32(1), Value::F32(2.0f)})
          .status();
  EXPECT_EQ(mismatch.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MessageOf(mismatch),
            "'native.add' argument 1 has type f32, expected i32");
  Status too_many = InvokeByName(*context, "native.add",
                                 {Value::I32(1), Value::I32(2), Value::I32(3)})
                        .status();
  EXPECT_EQ(too_many.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(MessageOf(too_many), HasSubstr("takes 2 arguments, got 3"));
  Status too_few =
      InvokeByName(*context, "native.add", {Value::I32(1)}).status();
  EXPECT_THAT(MessageOf(too_few), HasSubstr("too few arguments"));
  // Variadic counts must match the values that follow.
  Status bad_count = InvokeByName(*context, "native.sum",
                                  {Value::I32(0), Value::I32(2), Value::I32(1)})
                         .status();
  EXPECT_EQ(bad_count.code(), StatusCode::kInvalidArgument);
  Status negative =
      InvokeByName(*context, "native.sum", {Value::I32(0), Value::I32(-1)})
          .status();
  EXPECT_THAT(MessageOf(negative), HasSubstr("negative tuple count"));
}

TEST(ContextTest, LookupFunctionErrors) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> native,
                              CreateTestNativeModule());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context, MakeContext({native}));
  EXPECT_EQ(context->LookupFunction("native.nope").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(context->LookupFunction("other.add").status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(context->LookupFunction("noperiod").status().code(),
            StatusCode::kInvalidArgument);
  STRATA_ASSERT_OK_AND_ASSIGN(Function function,
                              context->LookupFunction("native.add"));
  EXPECT_EQ(function.FullName(), "native.add");
  EXPECT_EQ(function.signature().calling_convention(), "0ii_i");
}

TEST(ContextTest, FreezeAndDuplicates) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> native,
                              CreateTestNativeModule());
  RefPtr<Context> context = Context::Create(Instance::Create());
  STRATA_ASSERT_OK(context->RegisterModule(native));
  EXPECT_EQ(context->RegisterModule(native).code(), StatusCode::kAlreadyExists);
  context->Freeze();
  EXPECT_TRUE(context->is_frozen());
  ModuleBuilder builder("late");
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> late, LoadModule(builder));
  EXPECT_EQ(context->RegisterModule(late).code(),
            StatusCode::kFailedPrecondition);
}

TEST(ContextTest, FunctionsOfOtherContextsAreRejected) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> native,
                              CreateTestNativeModule());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> first, MakeContext({native}));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> second, MakeContext({native}));
  STRATA_ASSERT_OK_AND_ASSIGN(Function function,
                              first->LookupFunction("native.counter"));
  std::vector<Value> results;
  EXPECT_EQ(second->Invoke(function, {}, &results).code(),
            StatusCode::kInvalidArgument);
}

TEST(ContextTest, BytecodeCallsNativeImportsIncludingVariadic) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> native,
                              CreateTestNativeModule());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> app,
                              LoadModule(MakeNativeCallerApp()));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context,
                              MakeContext({native, app}));
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<Value> results,
      InvokeByName(*context, "app.main",
                   {Value::I32(1), Value::I32(10), Value::I32(20)}));
  // sum = 1 + 10 + 20 + 5 = 36; add = 37; dot = 1*2 + 10*3 = 32.
  EXPECT_EQ(results[0].i32(), 37);
  EXPECT_EQ(results[1].i64(), 32);
}

TEST(ContextTest, RefArgumentsAreLentAndComeBack) {
  // The interpreter moves a ref argument out of its register for an import
  // call and back after it: a register passed twice must reach the callee
  // twice, a null one as null, and every register must hold its ref again
  // after the call.
  ModuleBuilder builder("app");
  builder.AddDependency("native", 3);
  uint32_t make = builder.AddImport("native.make_buffer", "0i_r");
  uint32_t same = builder.AddImport("native.same_refs", "0rrr_i");
  uint32_t identity = builder.AddImport("native.identity", "0r_r");
  FunctionBuilder &f =
      builder.AddFunction("main", "0v_irr", {.i32 = 2, .ref = 3});
  f.Op(Opcode::ConstI32).Reg(0).I32(8);
  f.Op(Opcode::Call).Import(make).List({RegI32(0)}).List({RegRef(0)});
  f.Op(Opcode::Call)
      .Import(same)
      .List({RegRef(0), RegRef(0), RegRef(1)})
      .List({RegI32(1)});
  f.Op(Opcode::Call).Import(identity).List({RegRef(0)}).List({RegRef(2)});
  f.Op(Opcode::Return).List({RegI32(1), RegRef(0), RegRef(2)});
  builder.AddExport("main", f.ordinal());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> native,
                              CreateTestNativeModule());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> app, LoadModule(builder));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context,
                              MakeContext({native, app}));
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Value> results,
                              InvokeByName(*context, "app.main", {}));
  EXPECT_EQ(results[0].i32(), 1);
  ASSERT_NE(results[1].ref(), nullptr);
  EXPECT_EQ(results[1].ref(), results[2].ref());
}

TEST(ContextTest, DependencyVersionIsChecked) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> native,
                              CreateTestNativeModule(/*version=*/1));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> app,
                              LoadModule(MakeNativeCallerApp(/*minimum=*/2)));
  RefPtr<Context> context = Context::Create(Instance::Create());
  STRATA_ASSERT_OK(context->RegisterModule(native));
  Status status = context->RegisterModule(app);
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(MessageOf(status),
            "module 'app' requires 'native' >= 2 but 'native' version 1 is "
            "registered (module built for native version 2, runtime "
            "supports native version 1)");
}

TEST(ContextTest, MissingDependencyAndImports) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> app,
                              LoadModule(MakeNativeCallerApp()));
  RefPtr<Context> context = Context::Create(Instance::Create());
  Status status = context->RegisterModule(app);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_THAT(MessageOf(status), HasSubstr("requires 'native' >= 3"));

  // Without the dependency declaration the import itself is missing.
  ModuleBuilder builder("app");
  uint32_t missing = builder.AddImport("native.missing", "0i_i");
  FunctionBuilder &f = builder.AddFunction("f", "0i_i", {.i32 = 1});
  f.Op(Opcode::Call).Import(missing).List({RegI32(0)}).List({RegI32(0)});
  f.Op(Opcode::Return).List({RegI32(0)});
  builder.AddExport("f", f.ordinal());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> importer,
                              LoadModule(builder));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> native,
                              CreateTestNativeModule());
  STRATA_ASSERT_OK(context->RegisterModule(native));
  status = context->RegisterModule(importer);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_EQ(MessageOf(status),
            "module 'app' imports 'native.missing' (0i_i) but 'native' does "
            "not export 'missing'");
  EXPECT_EQ(context->module_count(), 1u);
}

TEST(ContextTest, OptionalImportsAndDependencies) {
  ModuleBuilder builder("app");
  builder.AddDependency("extras", 7, /*is_optional=*/true);
  uint32_t maybe =
      builder.AddImport("extras.maybe", "0i_i", /*is_optional=*/true);
  FunctionBuilder &f = builder.AddFunction("f", "0i_i", {.i32 = 1});
  f.Op(Opcode::Call).Import(maybe).List({RegI32(0)}).List({RegI32(0)});
  f.Op(Opcode::Return).List({RegI32(0)});
  builder.AddExport("f", f.ordinal());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> app, LoadModule(builder));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context, MakeContext({app}));
  Status status = InvokeByName(*context, "app.f", {Value::I32(1)}).status();
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_THAT(MessageOf(status),
              HasSubstr("optional import 'extras.maybe' is not available"));
}

TEST(ContextTest, ImportSignatureMustMatch) {
  ModuleBuilder builder("app");
  builder.AddImport("native.add", "0iI_i");
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> app, LoadModule(builder));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> native,
                              CreateTestNativeModule());
  Status status = MakeContext({native, app}).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(MessageOf(status), HasSubstr("0iI_i but it has 0ii_i"));
}

TEST(ContextTest, NativeFailureCarriesBacktrace) {
  ModuleBuilder builder("app");
  uint32_t fail = builder.AddImport("native.fail", "0i_v");
  FunctionBuilder &f = builder.AddFunction("main", "0i_v", {.i32 = 1});
  f.Op(Opcode::Call).Import(fail).List({RegI32(0)}).List({});
  f.Op(Opcode::Return).List({});
  builder.AddExport("main", f.ordinal());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> app, LoadModule(builder));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> native,
                              CreateTestNativeModule());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context,
                              MakeContext({native, app}));
  STRATA_EXPECT_OK(
      InvokeByName(*context, "app.main", {Value::I32(0)}).status());
  Status status = InvokeByName(*context, "app.main", {Value::I32(7)}).status();
  EXPECT_EQ(status.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(MessageOf(status), "native failure 7\n"
                               "  at native.fail (native)\n"
                               "  at app.main +0x0000");
}

TEST(ContextTest, BytecodeImportsFromBytecode) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context,
                              MakeBytecodeImportContext());
  RefPtr<ByteBuffer> buffer = ByteBuffer::FromString("x");
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<Value> results,
      InvokeByName(*context, "app.f", {Value::Ref(buffer)}));
  EXPECT_EQ(results[0].ref(), buffer.get());
  results.clear();
  EXPECT_EQ(buffer->ref_count(), 1);
}

// Invoke reuses pooled stacks and the caller's results vector across calls;
// results fed back as the next call's arguments must survive that reuse.
TEST(ContextTest, RepeatedInvokesReuseStorageSafely) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context,
                              MakeBytecodeImportContext());
  STRATA_ASSERT_OK_AND_ASSIGN(Function function,
                              context->LookupFunction("app.f"));
  RefPtr<ByteBuffer> buffer = ByteBuffer::FromString("x");
  std::vector<Value> results;
  for (int i = 0; i < 3; ++i) {
    Value argument = Value::Ref(buffer);
    STRATA_ASSERT_OK(context->Invoke(function, {&argument, 1}, &results));
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].ref(), buffer.get());
  }
  // The arguments live in the results vector itself.
  for (int i = 0; i < 3; ++i) {
    STRATA_ASSERT_OK(context->Invoke(function, results, &results));
    ASSERT_EQ(results.size(), 1u);
    EXPECT_EQ(results[0].ref(), buffer.get());
  }
  // A failed call leaves no stale results and the next call still works.
  Value wrong = Value::I32(1);
  EXPECT_FALSE(context->Invoke(function, {&wrong, 1}, &results).ok());
  Value argument = Value::Ref(buffer);
  STRATA_ASSERT_OK(context->Invoke(function, {&argument, 1}, &results));
  EXPECT_EQ(results[0].ref(), buffer.get());
  results.clear();
  argument = Value();
  // Nothing pooled holds a reference.
  EXPECT_EQ(buffer->ref_count(), 1);
}

// A native module that imports native.add and exports "add3".
struct ImporterState : NativeModuleState {
  bool initialized = false;
};

Status Add3(Stack &stack, ModuleState *state, std::span<const Value> arguments,
            std::span<Value> results) {
  const Function &add = static_cast<ImporterState *>(state)->imports()[0];
  Value partial[1];
  Value first[] = {arguments[0], arguments[1]};
  STRATA_RETURN_IF_ERROR(add.Call(stack, first, partial));
  Value second[] = {partial[0], arguments[2]};
  return add.Call(stack, second, results);
}

Status WrongResultType(Stack &, ModuleState *, std::span<const Value>,
                       std::span<Value> results) {
  results[0] = Value::F32(1.0f);
  return OkStatus();
}

Status NativeInit(Stack &, ModuleState *state, std::span<const Value>,
                  std::span<Value>) {
  static_cast<ImporterState *>(state)->initialized = true;
  return OkStatus();
}

Status IsInitialized(Stack &, ModuleState *state, std::span<const Value>,
                     std::span<Value> results) {
  results[0] = Value::I32(static_cast<ImporterState *>(state)->initialized);
  return OkStatus();
}

TEST(ContextTest, NativeModulesCanImport) {
  static const NativeFunctionDef kFunctions[] = {
      {"add3", "0iii_i", Add3},
      {"wrong", "0v_i", WrongResultType},
      {"__init", "0v_v", NativeInit},
      {"initialized", "0v_i", IsInitialized},
  };
  static const NativeImportDef kImports[] = {{"native.add", "0ii_i"}};
  static const NativeDependencyDef kDependencies[] = {{"native", 3}};
  NativeModuleDescriptor descriptor = {.name = "importer",
                                       .version = 1,
                                       .functions = kFunctions,
                                       .imports = kImports,
                                       .dependencies = kDependencies};
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> importer,
                              NativeModule::Create(descriptor, [] {
                                return Result<std::unique_ptr<ModuleState>>(
                                    std::make_unique<ImporterState>());
                              }));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<NativeModule> native,
                              CreateTestNativeModule());
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context,
                              MakeContext({native, importer}));
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<Value> results,
      InvokeByName(*context, "importer.add3",
                   {Value::I32(1), Value::I32(2), Value::I32(3)}));
  EXPECT_EQ(results[0].i32(), 6);
  STRATA_ASSERT_OK_AND_ASSIGN(
      results, InvokeByName(*context, "importer.initialized", {}));
  EXPECT_EQ(results[0].i32(), 1);
  Status wrong = InvokeByName(*context, "importer.wrong", {}).status();
  EXPECT_EQ(wrong.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(MessageOf(wrong), HasSubstr("result 0 has type f32"));
}

TEST(ContextTest, NativeDescriptorIsValidated) {
  static const NativeFunctionDef kBadSignature[] = {
      {"f", "0ii", WrongResultType}};
  EXPECT_EQ(NativeModule::Create({.name = "bad", .functions = kBadSignature})
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  static const NativeFunctionDef kDuplicate[] = {
      {"f", "0v_i", WrongResultType}, {"dup.f", "0v_i", WrongResultType}};
  EXPECT_EQ(NativeModule::Create({.name = "dup", .functions = kDuplicate})
                .status()
                .code(),
            StatusCode::kAlreadyExists);
  EXPECT_FALSE(NativeModule::Create({.name = "", .functions = {}}).ok());
}

TEST(ContextTest, InstanceRegistersRefTypes) {
  RefPtr<Instance> instance = Instance::Create();
  EXPECT_EQ(instance->LookupType("vm.buffer"), &ByteBuffer::kRefType);
  EXPECT_EQ(instance->LookupType("vm.list"), &List::kRefType);
  EXPECT_EQ(instance->LookupType("hal.buffer"), nullptr);
  static const RefTypeDescriptor kHalBuffer = {"hal.buffer"};
  static const RefTypeDescriptor kImpostor = {"hal.buffer"};
  STRATA_ASSERT_OK(instance->RegisterType(kHalBuffer));
  STRATA_ASSERT_OK(instance->RegisterType(kHalBuffer));
  EXPECT_EQ(instance->RegisterType(kImpostor).code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(instance->LookupType("hal.buffer"), &kHalBuffer);
}

} // namespace
} // namespace strata::vm::testing
