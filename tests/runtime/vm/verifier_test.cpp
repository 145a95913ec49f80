// Malformed modules are rejected at load with clear errors.
#include <cstring>

#include "vm_test_util.h"

namespace strata::vm::testing {
namespace {

using ::testing::HasSubstr;

// Loads `builder`'s module and returns the failure message ("" if it
// loaded).
std::string LoadError(const ModuleBuilder &builder) {
  Result<RefPtr<BytecodeModule>> module = LoadModule(builder);
  if (module.ok())
    return "";
  EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
  return std::string(module.status().message());
}

std::string LoadBytesError(std::vector<uint8_t> bytes) {
  Result<RefPtr<BytecodeModule>> module =
      BytecodeModule::FromMemory(OwnedBytes::FromVector(std::move(bytes)));
  if (module.ok())
    return "";
  return std::string(module.status().message());
}

// A module with one function "f" ("0ii_i", 3 i32 registers) whose body the
// test writes.
struct OneFunction {
  ModuleBuilder builder{"bad"};
  FunctionBuilder &f = builder.AddFunction("f", "0ii_i", {.i32 = 3});
  OneFunction() { builder.AddExport("f", f.ordinal()); }
};

TEST(VerifierTest, ValidModuleLoads) {
  OneFunction m;
  m.f.Op(Opcode::AddI32).Reg(2).Reg(0).Reg(1);
  m.f.Op(Opcode::Return).List({RegI32(2)});
  EXPECT_EQ(LoadError(m.builder), "");
}

TEST(VerifierTest, NotAModuleFile) {
  EXPECT_THAT(LoadBytesError({}), HasSubstr("too small"));
  EXPECT_THAT(LoadBytesError({1, 2, 3}), HasSubstr("too small"));
  std::vector<uint8_t> garbage(256, 0xAB);
  EXPECT_THAT(LoadBytesError(garbage), HasSubstr("file identifier"));
  // Right identifier, wrong size prefix: a truncated or extended file.
  garbage[8] = 'S', garbage[9] = 'M', garbage[10] = 'O', garbage[11] = 'D';
  EXPECT_THAT(LoadBytesError(garbage), HasSubstr("truncated or damaged"));
  // Right identifier and size, garbage elsewhere.
  uint32_t size = garbage.size() - 4;
  std::memcpy(garbage.data(), &size, sizeof(size));
  EXPECT_THAT(LoadBytesError(garbage), HasSubstr("corrupt"));
}

TEST(VerifierTest, VersionsAreChecked) {
  OneFunction m;
  m.f.Op(Opcode::Return).List({RegI32(0)});
  m.builder.schema_version = 2;
  EXPECT_EQ(LoadError(m.builder),
            "module built for schema version 2, runtime supports 1");
  m.builder.schema_version = kSchemaVersion;
  m.builder.bytecode_version = 7;
  EXPECT_EQ(LoadError(m.builder),
            "module built for bytecode version 7, runtime supports versions 1 "
            "to 2");
}

TEST(VerifierTest, RegisterOutOfRange) {
  OneFunction m;
  m.f.Op(Opcode::AddI32).Reg(2).Reg(0).Reg(5);
  m.f.Op(Opcode::Return).List({RegI32(2)});
  EXPECT_EQ(LoadError(m.builder),
            "loading module 'bad': invalid bytecode in function 'f' at "
            "+0x0000: register i5 out of range (the function has 3)");
}

TEST(VerifierTest, RegisterOfEmptyBank) {
  OneFunction m;
  m.f.Op(Opcode::ConstI64).Reg(0).I64(1);
  m.f.Op(Opcode::Return).List({RegI32(0)});
  EXPECT_THAT(LoadError(m.builder), HasSubstr("register I0 out of range"));
}

TEST(VerifierTest, TypedRegisterWithInvalidBank) {
  OneFunction m;
  m.f.Op(Opcode::Return).List({static_cast<uint16_t>(0xE000)});
  EXPECT_THAT(LoadError(m.builder), HasSubstr("invalid bank 7"));
}

TEST(VerifierTest, BranchIntoTheMiddleOfAnInstruction) {
  OneFunction m;
  m.f.Op(Opcode::ConstI32).Reg(0).I32(1); // 7 bytes
  m.f.Op(Opcode::Branch).BranchTo(3);
  EXPECT_THAT(LoadError(m.builder),
              HasSubstr("branch target 3 is not the start of an instruction"));
}

TEST(VerifierTest, BranchPastTheEnd) {
  OneFunction m;
  m.f.Op(Opcode::CondBranch).Reg(0).BranchTo(0).BranchTo(1000);
  EXPECT_THAT(LoadError(m.builder),
              HasSubstr("branch target 1000 is past the end"));
}

TEST(VerifierTest, BranchRemapBetweenBanks) {
  ModuleBuilder builder("bad");
  FunctionBuilder &f = builder.AddFunction("f", "0v_v", {.i32 = 1, .f32 = 1});
  f.Op(Opcode::Branch).BranchTo(0, {{RegI32(0), RegF32(0)}});
  EXPECT_THAT(LoadError(builder), HasSubstr("different banks"));
}

TEST(VerifierTest, TruncatedInstructionAtFunctionEnd) {
  OneFunction m;
  m.f.Op(Opcode::Return).List({RegI32(0)});
  m.f.Op(Opcode::AddI32).Reg(2).Reg(0).Reg(1);
  m.f.Truncate(1);
  EXPECT_THAT(LoadError(m.builder),
              HasSubstr("truncated 'add.i32' instruction at offset 5"));
  // Truncated inside a register list.
  OneFunction list;
  list.f.Op(Opcode::Return).List({RegI32(0), RegI32(1)});
  list.f.Truncate(1);
  EXPECT_THAT(LoadError(list.builder), HasSubstr("truncated 'ret'"));
}

TEST(VerifierTest, FunctionMustEndWithTerminator) {
  OneFunction m;
  m.f.Op(Opcode::AddI32).Reg(2).Reg(0).Reg(1);
  EXPECT_THAT(LoadError(m.builder),
              HasSubstr("does not end with a terminator"));
  OneFunction empty;
  EXPECT_THAT(LoadError(empty.builder), HasSubstr("has no instructions"));
}

TEST(VerifierTest, UnknownOpcode) {
  OneFunction m;
  m.f.Raw({0xFF});
  EXPECT_THAT(LoadError(m.builder), HasSubstr("unknown opcode 255"));
  OneFunction just_past;
  just_past.f.Raw({static_cast<uint8_t>(kOpcodeCount)});
  EXPECT_THAT(LoadError(just_past.builder), HasSubstr("unknown opcode"));
}

TEST(VerifierTest, CalleeOrdinalsInRange) {
  OneFunction m;
  m.f.Op(Opcode::Call).Function(9).List({}).List({});
  m.f.Op(Opcode::Return).List({RegI32(0)});
  EXPECT_THAT(LoadError(m.builder),
              HasSubstr("function ordinal 9 out of range (1 functions)"));
  OneFunction import;
  import.f.Op(Opcode::Call).Import(0).List({}).List({});
  import.f.Op(Opcode::Return).List({RegI32(0)});
  EXPECT_THAT(LoadError(import.builder),
              HasSubstr("import ordinal 0 out of range (0 imports)"));
}

TEST(VerifierTest, CallArgumentsMustMatchCalleeSignature) {
  ModuleBuilder builder("bad");
  FunctionBuilder &callee =
      builder.AddFunction("callee", "0if_r", {.i32 = 1, .f32 = 1, .ref = 1});
  callee.Op(Opcode::Return).List({RegRef(0)});
  FunctionBuilder &caller =
      builder.AddFunction("caller", "0v_v", {.i32 = 2, .f32 = 1, .ref = 1});
  // Second argument is an i32 register where the callee takes an f32.
  caller.Op(Opcode::Call)
      .Function(callee.ordinal())
      .List({RegI32(0), RegI32(1)})
      .List({RegRef(0)});
  caller.Op(Opcode::Return).List({});
  EXPECT_THAT(LoadError(builder),
              HasSubstr("call to 'callee': argument 1 is register i1 but "
                        "must be f32"));
}

TEST(VerifierTest, CallCountsMustMatch) {
  ModuleBuilder builder("bad");
  FunctionBuilder &callee = builder.AddFunction("callee", "0i_i", {.i32 = 1});
  callee.Op(Opcode::Return).List({RegI32(0)});
  FunctionBuilder &caller = builder.AddFunction("caller", "0v_v", {.i32 = 2});
  caller.Op(Opcode::Call)
      .Function(callee.ordinal())
      .List({RegI32(0)})
      .List({RegI32(0), RegI32(1)});
  caller.Op(Opcode::Return).List({});
  EXPECT_THAT(LoadError(builder),
              HasSubstr("result list has 2 registers, expected 1"));
}

TEST(VerifierTest, ReturnMustMatchOwnSignature) {
  OneFunction m;
  m.f.Op(Opcode::Return).List({RegI32(0), RegI32(1)});
  EXPECT_THAT(LoadError(m.builder),
              HasSubstr("return value list has 2 registers, expected 1"));
}

TEST(VerifierTest, VariadicCallsAreChecked) {
  auto build = [](bool variadic_op, std::initializer_list<uint16_t> segments,
                  std::initializer_list<uint16_t> arguments) {
    ModuleBuilder builder("bad");
    uint32_t sum = builder.AddImport("native.sum", "0iCiD_i");
    FunctionBuilder &f = builder.AddFunction("f", "0v_v", {.i32 = 4});
    if (variadic_op)
      f.Op(Opcode::CallVariadic).Import(sum).Segments(segments);
    else
      f.Op(Opcode::Call).Import(sum);
    f.List(arguments).List({RegI32(0)});
    f.Op(Opcode::Return).List({});
    return LoadError(builder);
  };
  EXPECT_EQ(build(true, {2}, {RegI32(0), RegI32(1), RegI32(2)}), "");
  EXPECT_THAT(build(false, {}, {RegI32(0)}), HasSubstr("use call.variadic"));
  EXPECT_THAT(build(true, {2, 1}, {RegI32(0), RegI32(1), RegI32(2)}),
              HasSubstr("gives 2 variadic segment sizes"));
  EXPECT_THAT(build(true, {3}, {RegI32(0), RegI32(1), RegI32(2)}),
              HasSubstr("segment sizes require 4"));
  EXPECT_THAT(build(true, {1}, {RegI32(0), RegRef(0)}),
              HasSubstr("register r0 out of range"));
}

TEST(VerifierTest, GlobalAndRodataOrdinalsInRange) {
  OneFunction global;
  global.builder.SetGlobalCounts({.i32 = 1});
  global.f.Op(Opcode::GlobalLoadI32).Reg(0).Global(1);
  global.f.Op(Opcode::Return).List({RegI32(0)});
  EXPECT_THAT(LoadError(global.builder),
              HasSubstr("global i1 out of range (1)"));
  // The bank comes from the op: i32 globals do not make ref globals valid.
  ModuleBuilder ref_global("bad");
  ref_global.SetGlobalCounts({.i32 = 5});
  FunctionBuilder &g = ref_global.AddFunction("g", "0v_v", {.ref = 1});
  g.Op(Opcode::GlobalStoreRef).Global(0).Reg(0);
  g.Op(Opcode::Return).List({});
  EXPECT_THAT(LoadError(ref_global), HasSubstr("global r0 out of range (0)"));
  OneFunction rodata;
  rodata.f.Op(Opcode::Fail).Reg(0).Rodata(0);
  EXPECT_THAT(LoadError(rodata.builder),
              HasSubstr("rodata ordinal 0 out of range (0)"));
}

TEST(VerifierTest, FunctionRangeInsideBytecode) {
  OneFunction m;
  m.f.Op(Opcode::Return).List({RegI32(0)});
  m.f.override_bytecode_length = 1000;
  EXPECT_THAT(LoadError(m.builder),
              HasSubstr("is outside the module's bytecode"));
  OneFunction offset;
  offset.f.Op(Opcode::Return).List({RegI32(0)});
  offset.f.override_bytecode_offset = 0xFFFFFFF0u;
  EXPECT_THAT(LoadError(offset.builder),
              HasSubstr("is outside the module's bytecode"));
}

TEST(VerifierTest, ExportOrdinalInRange) {
  OneFunction m;
  m.f.Op(Opcode::Return).List({RegI32(0)});
  m.builder.AddExport("ghost", 3);
  EXPECT_THAT(LoadError(m.builder),
              HasSubstr("export 'ghost' refers to function 3 of 1"));
}

TEST(VerifierTest, SignaturesAreParsed) {
  ModuleBuilder function("bad");
  FunctionBuilder &f = function.AddFunction("f", "0ix_i", {.i32 = 1});
  f.Op(Opcode::Return).List({RegI32(0)});
  EXPECT_THAT(LoadError(function),
              HasSubstr("function 'f': malformed calling convention '0ix_i'"));
  ModuleBuilder import("bad");
  import.AddImport("x.y", "1i_i");
  EXPECT_THAT(LoadError(import), HasSubstr("unsupported version"));
  ModuleBuilder variadic("bad");
  FunctionBuilder &v = variadic.AddFunction("v", "0CiD_v", {.i32 = 1});
  v.Op(Opcode::Return).List({});
  EXPECT_THAT(LoadError(variadic), HasSubstr("only native functions may"));
}

TEST(VerifierTest, ArgumentsMustFitRegisters) {
  ModuleBuilder builder("bad");
  FunctionBuilder &f = builder.AddFunction("f", "0iir_v", {.i32 = 1, .ref = 1});
  f.Op(Opcode::Return).List({});
  EXPECT_THAT(LoadError(builder),
              HasSubstr("takes 2 'i' arguments but has only 1"));
  ModuleBuilder many("bad");
  FunctionBuilder &g = many.AddFunction("g", "0v_v", {.i32 = 0x2001});
  g.Op(Opcode::Return).List({});
  EXPECT_THAT(LoadError(many), HasSubstr("8193 registers in one bank"));
}

TEST(VerifierTest, InitializerMustBeNullary) {
  ModuleBuilder builder("bad");
  FunctionBuilder &f = builder.AddFunction("__init", "0i_v", {.i32 = 1});
  f.Op(Opcode::Return).List({});
  EXPECT_THAT(LoadError(builder), HasSubstr("must take no arguments"));
}

TEST(VerifierTest, LoadTakesOwnershipEvenOnFailure) {
  bool released = false;
  auto *storage = new std::vector<uint8_t>(64, 0);
  Result<RefPtr<BytecodeModule>> module =
      BytecodeModule::FromMemory(OwnedBytes::Wrap(
          std::span<const uint8_t>(*storage), [storage, &released] {
            released = true;
            delete storage;
          }));
  EXPECT_FALSE(module.ok());
  EXPECT_TRUE(released);
}

} // namespace
} // namespace strata::vm::testing
