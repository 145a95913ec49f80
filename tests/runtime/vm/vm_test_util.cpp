#include "vm_test_util.h"

#include <memory>

#include "strata/vm/byte_buffer.h"

namespace strata::vm::testing {

Result<RefPtr<BytecodeModule>> LoadModule(const ModuleBuilder &builder) {
  return BytecodeModule::FromMemory(builder.BuildOwned());
}

Result<RefPtr<Context>> MakeContext(std::vector<RefPtr<Module>> modules,
                                    ContextOptions options) {
  RefPtr<Context> context = Context::Create(Instance::Create(), options);
  for (RefPtr<Module> &module : modules)
    STRATA_RETURN_IF_ERROR(context->RegisterModule(std::move(module)));
  return context;
}

Result<std::vector<Value>> InvokeByName(Context &context,
                                        std::string_view full_name,
                                        std::vector<Value> arguments) {
  STRATA_ASSIGN_OR_RETURN(Function function, context.LookupFunction(full_name));
  std::vector<Value> results;
  STRATA_RETURN_IF_ERROR(context.Invoke(function, arguments, &results));
  return results;
}

Result<std::vector<Value>> RunModule(const ModuleBuilder &builder,
                                     std::string_view function,
                                     std::vector<Value> arguments,
                                     ContextOptions options) {
  STRATA_ASSIGN_OR_RETURN(RefPtr<BytecodeModule> module, LoadModule(builder));
  std::string name = StrCat(module->name(), ".", function);
  STRATA_ASSIGN_OR_RETURN(RefPtr<Context> context,
                          MakeContext({module}, options));
  return InvokeByName(*context, name, std::move(arguments));
}

Result<Value> RunSingleOp(Opcode opcode, std::vector<Value> arguments,
                          std::optional<uint32_t> math_function) {
  const char *format = kOpcodeInfos[static_cast<int>(opcode)].format;
  std::string_view kinds(format);
  // A trailing math function id is an immediate, not a source.
  if (math_function) {
    if (kinds.empty() || (kinds.back() != 'm' && kinds.back() != 'n'))
      return InvalidArgumentError("op takes no math function id");
    kinds.remove_suffix(1);
  }
  if (kinds.size() != arguments.size() + 1)
    return InvalidArgumentError("op takes ", kinds.size() - 1, " sources");
  auto bank_index = [](char kind) {
    return std::string_view("iIfFr").find(kind);
  };
  uint16_t next[kRegisterBankCount] = {};
  std::vector<uint16_t> sources;
  std::string calling_convention = "0";
  for (size_t i = 1; i < kinds.size(); ++i) {
    calling_convention += kinds[i];
    sources.push_back(next[bank_index(kinds[i])]++);
  }
  uint16_t destination = next[bank_index(kinds[0])]++;
  calling_convention += StrCat("_", kinds[0]);
  RegisterCounts counts = {next[0], next[1], next[2], next[3], next[4]};

  ModuleBuilder builder("single");
  FunctionBuilder &function =
      builder.AddFunction("op", calling_convention, counts);
  function.Op(opcode).Reg(destination);
  for (uint16_t source : sources)
    function.Reg(source);
  if (math_function)
    function.MathFunction(*math_function);
  uint16_t bank = static_cast<uint16_t>(bank_index(kinds[0]));
  function.Op(Opcode::Return)
      .List({MakeTypedRegister(static_cast<RegisterBank>(bank), destination)});
  builder.AddExport("op", function.ordinal());
  STRATA_ASSIGN_OR_RETURN(std::vector<Value> results,
                          RunModule(builder, "op", std::move(arguments)));
  return results.at(0);
}

namespace {

struct CounterState : ModuleState {
  int32_t calls = 0;
};

Status NativeAdd(Stack &, ModuleState *, std::span<const Value> arguments,
                 std::span<Value> results) {
  // Wrapping, like the VM's own arithmetic (fuzzed modules overflow).
  results[0] = Value::I32(
      static_cast<int32_t>(static_cast<uint32_t>(arguments[0].i32()) +
                           static_cast<uint32_t>(arguments[1].i32())));
  return OkStatus();
}

Status NativeSum(Stack &, ModuleState *, std::span<const Value> arguments,
                 std::span<Value> results) {
  uint32_t sum = static_cast<uint32_t>(arguments[0].i32());
  int32_t count = arguments[1].i32();
  for (int32_t i = 0; i < count; ++i)
    sum += static_cast<uint32_t>(arguments[2 + i].i32());
  results[0] = Value::I32(static_cast<int32_t>(sum));
  return OkStatus();
}

Status NativeDot(Stack &, ModuleState *, std::span<const Value> arguments,
                 std::span<Value> results) {
  int32_t count = arguments[0].i32();
  uint64_t sum = 0;
  for (int32_t i = 0; i < count; ++i)
    sum += static_cast<uint64_t>(arguments[1 + 2 * i].i32()) *
           static_cast<uint64_t>(arguments[2 + 2 * i].i64());
  results[0] = Value::I64(static_cast<int64_t>(sum));
  return OkStatus();
}

Status NativeFail(Stack &, ModuleState *, std::span<const Value> arguments,
                  std::span<Value>) {
  if (arguments[0].i32() != 0)
    return FailedPreconditionError("native failure ", arguments[0].i32());
  return OkStatus();
}

Status NativeMakeBuffer(Stack &, ModuleState *,
                        std::span<const Value> arguments,
                        std::span<Value> results) {
  STRATA_ASSIGN_OR_RETURN(RefPtr<ByteBuffer> buffer,
                          ByteBuffer::Allocate(arguments[0].i32()));
  results[0] = Value::Ref(std::move(buffer));
  return OkStatus();
}

Status NativeCounter(Stack &, ModuleState *state, std::span<const Value>,
                     std::span<Value> results) {
  auto *counter = static_cast<CounterState *>(state);
  results[0] = Value::I32(++counter->calls);
  return OkStatus();
}

Status NativeIdentity(Stack &, ModuleState *, std::span<const Value> arguments,
                      std::span<Value> results) {
  results[0] = arguments[0];
  return OkStatus();
}

// 1 when its first two arguments are the same live object and the third is
// null: how the interpreter lends a register passed twice.
Status NativeSameRefs(Stack &, ModuleState *, std::span<const Value> arguments,
                      std::span<Value> results) {
  bool same = arguments[0].ref() && arguments[0].ref() == arguments[1].ref() &&
              arguments[0].ref()->ref_count() >= 2 && !arguments[2].ref();
  results[0] = Value::I32(same ? 1 : 0);
  return OkStatus();
}

const NativeFunctionDef kNativeFunctions[] = {
    {"add", "0ii_i", NativeAdd},
    {"native.sum", "0iCiD_i", NativeSum},
    {"dot", "0CiID_I", NativeDot},
    {"fail", "0i_v", NativeFail},
    {"make_buffer", "0i_r", NativeMakeBuffer},
    {"counter", "0v_i", NativeCounter},
    {"identity", "0r_r", NativeIdentity},
    {"same_refs", "0rrr_i", NativeSameRefs},
};

} // namespace

Result<RefPtr<NativeModule>> CreateTestNativeModule(uint32_t version) {
  NativeModuleDescriptor descriptor = {
      .name = "native", .version = version, .functions = kNativeFunctions};
  return NativeModule::Create(descriptor, [] {
    return Result<std::unique_ptr<ModuleState>>(
        std::make_unique<CounterState>());
  });
}

namespace {

Status GateAwait(Stack &stack, ModuleState *, std::span<const Value> arguments,
                 std::span<Value> results) {
  STRATA_ASSIGN_OR_RETURN(WaitSource * gate,
                          CastRef<WaitSource>(arguments[0], "gate"));
  if (std::optional<Status> waited = stack.TakeWaitResult()) {
    STRATA_RETURN_IF_ERROR(*waited);
    results[0] = Value::I32(1);
    return OkStatus();
  }
  Status now = gate->Query();
  if (now.ok()) {
    results[0] = Value::I32(0);
    return OkStatus();
  }
  if (now.code() != StatusCode::kDeferred)
    return now;
  if (stack.CanYield())
    return stack.Yield(RefPtr<WaitSource>::Retain(gate));
  STRATA_RETURN_IF_ERROR(gate->Wait(Deadline::Infinite()));
  results[0] = Value::I32(2);
  return OkStatus();
}

const NativeFunctionDef kGateFunctions[] = {{"await", "0r_i", GateAwait}};

} // namespace

Result<RefPtr<NativeModule>> CreateGateModule() {
  return NativeModule::Create({.name = "gate", .functions = kGateFunctions});
}

ModuleBuilder MakeNativeCallerApp(uint32_t minimum_native_version) {
  ModuleBuilder builder("app");
  builder.AddDependency("native", minimum_native_version);
  uint32_t add = builder.AddImport("native.add", "0ii_i");
  uint32_t sum = builder.AddImport("native.sum", "0iCiD_i");
  uint32_t dot = builder.AddImport("native.dot", "0CiID_I");
  FunctionBuilder &f =
      builder.AddFunction("main", "0iii_iI", {.i32 = 6, .i64 = 3});
  f.Op(Opcode::ConstI32).Reg(3).I32(5);
  f.Op(Opcode::CallVariadic)
      .Import(sum)
      .Segments({3})
      .List({RegI32(0), RegI32(1), RegI32(2), RegI32(3)})
      .List({RegI32(4)});
  f.Op(Opcode::Call).Import(add).List({RegI32(0), RegI32(4)}).List({RegI32(5)});
  f.Op(Opcode::ConstI64).Reg(0).I64(2);
  f.Op(Opcode::ConstI64).Reg(1).I64(3);
  f.Op(Opcode::CallVariadic)
      .Import(dot)
      .Segments({2})
      .List({RegI32(0), RegI64(0), RegI32(1), RegI64(1)})
      .List({RegI64(2)});
  f.Op(Opcode::Return).List({RegI32(5), RegI64(2)});
  builder.AddExport("main", f.ordinal());
  return builder;
}

Result<RefPtr<Context>> MakeBytecodeImportContext() {
  ModuleBuilder lib("lib");
  FunctionBuilder &twice = lib.AddFunction("twice", "0r_rr", {.ref = 1});
  twice.Op(Opcode::Return).List({RegRef(0), RegRef(0)});
  lib.AddExport("twice", twice.ordinal());
  ModuleBuilder app("app");
  uint32_t import = app.AddImport("lib.twice", "0r_rr");
  FunctionBuilder &f = app.AddFunction("f", "0r_r", {.ref = 3});
  f.Op(Opcode::Call)
      .Import(import)
      .List({RegRef(0)})
      .List({RegRef(1), RegRef(2)});
  f.Op(Opcode::Return).List({RegRef(2)});
  app.AddExport("f", f.ordinal());
  STRATA_ASSIGN_OR_RETURN(RefPtr<BytecodeModule> lib_module, LoadModule(lib));
  STRATA_ASSIGN_OR_RETURN(RefPtr<BytecodeModule> app_module, LoadModule(app));
  return MakeContext({lib_module, app_module});
}
} // namespace strata::vm::testing
