#include "strata/vm/bytecode_disassembler.h"

#include <sstream>

#include "vm_test_util.h"

namespace strata::vm::testing {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> BuildSimpleMul() {
  ModuleBuilder builder("simple_mul", 3);
  builder.AddDependency("hal", 2);
  builder.AddDependency("extras", 1, /*is_optional=*/true);
  uint32_t create = builder.AddImport("hal.buffer_view.create", "0rIIiiCID_r");
  builder.AddImport("hal.fence.signal", "0r_v", /*is_optional=*/true);
  builder.AddRodata("executable", std::string(100, '\0'), 64);
  builder.AddSourceFile("simple_mul.mlir");
  builder.SetGlobalCounts({.i32 = 1, .ref = 2});

  FunctionBuilder &helper = builder.AddFunction("helper", "0i_i", {.i32 = 4});
  Label loop = helper.NewLabel(), done = helper.NewLabel();
  helper.Op(Opcode::ConstI32).Reg(1).I32(-1);
  helper.Bind(loop);
  helper.Op(Opcode::AddI32).Reg(0).Reg(0).Reg(1);
  helper.Op(Opcode::CmpNzI32).Reg(2).Reg(0);
  helper.Op(Opcode::CondBranch)
      .Reg(2)
      .Branch(loop, {{RegI32(0), RegI32(3)}})
      .Branch(done);
  helper.Bind(done);
  helper.Op(Opcode::Return).List({RegI32(0)});

  FunctionBuilder &main = builder.AddFunction(
      "simple_mul", "0rr_r", {.i32 = 2, .i64 = 3, .f32 = 1, .ref = 3});
  main.Locate(3, 10);
  main.Op(Opcode::ConstI64).Reg(0).I64(16);
  main.Op(Opcode::ConstF32).Reg(0).F32(0.5f);
  main.Op(Opcode::GlobalLoadI32).Reg(0).Global(0);
  main.Op(Opcode::Call)
      .Function(helper.ordinal())
      .List({RegI32(0)})
      .List({RegI32(1)});
  main.Op(Opcode::CallVariadic)
      .Import(create)
      .Segments({1})
      .List({RegRef(0), RegI64(0), RegI64(0), RegI32(0), RegI32(1), RegI64(1)})
      .List({RegRef(2)});
  main.Op(Opcode::Return).List({RegRef(2)});
  TensorTypeInfo f32x4{{4}, 0x21000020};
  builder.AddExport("simple_mul", main.ordinal(), {f32x4, f32x4}, {f32x4});
  return builder.Build();
}

TEST(DisassemblerTest, DumpsTablesAndInstructions) {
  std::vector<uint8_t> bytes = BuildSimpleMul();
  std::ostringstream os;
  STRATA_ASSERT_OK(DisassembleModuleFile(bytes, os));
  std::string text = os.str();
  EXPECT_THAT(text, HasSubstr("module \"simple_mul\" version 3 (schema 1, "
                              "bytecode 2)\n"));
  EXPECT_THAT(text, HasSubstr("dependencies: 2\n  hal >= 2\n"
                              "  extras >= 1 (optional)\n"));
  EXPECT_THAT(text,
              HasSubstr("  [0] hal.buffer_view.create 0rIIiiCID_r (ref, i64, "
                        "i64, i32, i32, [i64]...) -> (ref)\n"));
  EXPECT_THAT(text, HasSubstr("  [1] hal.fence.signal 0r_v (ref) -> () "
                              "(optional)\n"));
  EXPECT_THAT(text, HasSubstr("  [0] simple_mul 0rr_r -> function 1 "
                              "(4xf32, 4xf32) -> (4xf32)\n"));
  EXPECT_THAT(text, HasSubstr("  [0] \"executable\" 100 bytes, align 64\n"));
  EXPECT_THAT(text, HasSubstr("globals: i32 1, i64 0, f32 0, f64 0, ref 2\n"));
  EXPECT_THAT(text, HasSubstr("registers: i32 4, i64 0, f32 0, f64 0, ref 0"));
  EXPECT_THAT(text, HasSubstr("    0000: %i1 = const.i32 -1\n"
                              "    0007: %i0 = add.i32 %i0, %i1\n"
                              "    000e: %i2 = cmp.nz.i32 %i0\n"
                              "    0013: cond_br %i2, ^0007 [%i0 -> %i3], "
                              "^0026\n"
                              "    0026: ret %i0\n"));
  EXPECT_THAT(text, HasSubstr("%I0 = const.i64 16  // simple_mul.mlir:3:10\n"));
  EXPECT_THAT(text, HasSubstr("%f0 = const.f32 0.5\n"));
  EXPECT_THAT(text, HasSubstr("%i0 = global.load.i32 global[0]"));
  EXPECT_THAT(text, HasSubstr("%i1 = call @helper(%i0)"));
  EXPECT_THAT(text, HasSubstr("%r2 = call.variadic @hal.buffer_view.create "
                              "segments[1](%r0, %I0, %I0, %i0, %i1, %I1)"));
  EXPECT_THAT(text, HasSubstr("ret %r2\n"));
}

TEST(DisassemblerTest, TablesOnly) {
  std::vector<uint8_t> bytes = BuildSimpleMul();
  std::ostringstream os;
  STRATA_ASSERT_OK(
      DisassembleModuleFile(bytes, os, {.include_bytecode = false}));
  EXPECT_THAT(os.str(), HasSubstr("functions: 2"));
  EXPECT_THAT(os.str(), ::testing::Not(HasSubstr("0000:")));
}

TEST(DisassemblerTest, VerifiesFirst) {
  std::vector<uint8_t> bytes = BuildSimpleMul();
  bytes.resize(bytes.size() / 2);
  std::ostringstream os;
  EXPECT_FALSE(DisassembleModuleFile(bytes, os).ok());
  EXPECT_EQ(os.str(), "");
}

TEST(DisassemblerTest, EveryOpcodeFormats) {
  // One instruction per opcode, with operands of the right kinds; the
  // formatter must name the mnemonic of each.
  STRATA_ASSERT_OK_AND_ASSIGN(
      RefPtr<BytecodeModule> module,
      BytecodeModule::FromMemory(OwnedBytes::CopyOf(BuildSimpleMul())));
  for (uint32_t op = 0; op < kOpcodeCount; ++op) {
    std::vector<uint8_t> code = {static_cast<uint8_t>(op)};
    for (const char *kind = kOpcodeInfos[op].format; *kind; ++kind) {
      switch (*kind) {
      case 'k':
      case 'm':
      case 'n':
      case 'x':
      case 'g':
      case 'd':
      case 'c':
        code.insert(code.end(), {0, 0, 0, 0});
        break;
      case 'K':
      case 'X':
        code.insert(code.end(), 8, 0);
        break;
      case 'b':
        code.insert(code.end(), {0, 0, 0, 0, 0, 0});
        break;
      default: // registers and empty lists
        code.insert(code.end(), {0, 0});
      }
    }
    DecodedInstruction instruction;
    STRATA_ASSERT_OK(DecodeInstruction(code, 0, &instruction));
    EXPECT_EQ(instruction.length, code.size());
    std::string text = FormatInstruction(*module, instruction);
    EXPECT_THAT(text, HasSubstr(kOpcodeInfos[op].mnemonic)) << op;
  }
}

} // namespace
} // namespace strata::vm::testing
