// Loading from files and the tables a loaded module exposes.
#include <cstdio>
#include <unistd.h>

#include "strata/base/file_contents.h"
#include "vm_test_util.h"

namespace strata::vm::testing {
namespace {

using ::testing::HasSubstr;

ModuleBuilder MakeModule() {
  ModuleBuilder builder("tables", 4);
  builder.AddDependency("hal", 2, /*is_optional=*/true);
  builder.AddImport("hal.devices.count", "0v_i", /*is_optional=*/true);
  uint32_t file = builder.AddSourceFile("tables.mlir");
  builder.AddRodata("blob", "0123456789", 32);
  FunctionBuilder &helper = builder.AddFunction("helper", "0v_v", {});
  helper.Op(Opcode::Return).List({});
  FunctionBuilder &add = builder.AddFunction("add", "0ff_f", {.f32 = 3});
  add.Locate(5, 1, file);
  add.Op(Opcode::AddF32).Reg(2).Reg(0).Reg(1);
  add.Locate(6, 3, file);
  add.Op(Opcode::Return).List({RegF32(2)});
  builder.AddExport("add", add.ordinal(), {{{4, -1}, 0x21000020}},
                    {{{4, -1}, 0x21000020}});
  return builder;
}

TEST(BytecodeModuleTest, ExposesTables) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> module,
                              LoadModule(MakeModule()));
  EXPECT_EQ(module->name(), "tables");
  EXPECT_EQ(module->version(), 4u);
  ASSERT_EQ(module->dependencies().size(), 1u);
  EXPECT_TRUE(module->dependencies()[0].is_optional);
  ASSERT_EQ(module->imports().size(), 1u);
  EXPECT_EQ(module->imports()[0].signature.calling_convention(), "0v_i");
  ASSERT_EQ(module->exports().size(), 1u);
  const ModuleExport &add = module->exports()[0];
  EXPECT_EQ(add.name, "add");
  EXPECT_EQ(add.signature.calling_convention(), "0ff_f");
  ASSERT_EQ(add.argument_types.size(), 1u);
  EXPECT_EQ(add.argument_types[0].shape, (std::vector<int64_t>{4, -1}));
  EXPECT_EQ(add.FormatTensorTypes(), "(4x?xf32) -> (4x?xf32)");
  EXPECT_EQ(module->export_function_ordinal(0), 1u);
  EXPECT_EQ(module->FindFunction("helper"), 0u);
  EXPECT_EQ(module->FindFunction("nope"), std::nullopt);
  EXPECT_EQ(module->FindExport("helper"), std::nullopt);
  ASSERT_EQ(module->rodata_count(), 1u);
  EXPECT_EQ(module->rodata(0).size(), 10u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(module->rodata(0).data()) % 32, 0u);
  EXPECT_EQ(module->FormatSourceLocation(1, 0), "tables.mlir:5:1");
  EXPECT_EQ(module->FormatSourceLocation(1, 9), "tables.mlir:6:3");
  EXPECT_EQ(module->FormatSourceLocation(0, 0), "");
}

TEST(BytecodeModuleTest, LoadsFromFile) {
  std::string path = StrCat("/tmp/strata_vm_", ::getpid(), ".smod");
  std::vector<uint8_t> bytes = MakeModule().Build();
  STRATA_ASSERT_OK(WriteFileContents(path, bytes));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> module,
                              LoadBytecodeModuleFromFile(path));
  std::remove(path.c_str()); // the mapping stays valid
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> context, MakeContext({module}));
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<Value> results,
      InvokeByName(*context, "tables.add", {Value::F32(1), Value::F32(2)}));
  EXPECT_FLOAT_EQ(results[0].f32(), 3.0f);

  Result<RefPtr<BytecodeModule>> missing =
      LoadBytecodeModuleFromFile("/nonexistent.smod");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);

  std::string bad_path = StrCat("/tmp/strata_vm_bad_", ::getpid(), ".smod");
  bytes[8] = 'X'; // the file identifier
  STRATA_ASSERT_OK(WriteFileContents(bad_path, bytes));
  Result<RefPtr<BytecodeModule>> bad = LoadBytecodeModuleFromFile(bad_path);
  std::remove(bad_path.c_str());
  EXPECT_EQ(bad.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr(StrCat("'", bad_path, "': not a Strata module file")));
}

TEST(BytecodeModuleTest, SharedAcrossContexts) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> module,
                              LoadModule(MakeModule()));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> first, MakeContext({module}));
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<Context> second, MakeContext({module}));
  first.reset();
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<Value> results,
      InvokeByName(*second, "tables.add", {Value::F32(1), Value::F32(1)}));
  EXPECT_FLOAT_EQ(results[0].f32(), 2.0f);
}

// Rodata checksums: CRC-32 (zlib) of "0123456789" is 0xA684C7C6.
constexpr uint32_t kBlobCrc32 = 0xA684C7C6u;

TEST(BytecodeModuleTest, AcceptsMatchingRodataChecksums) {
  ModuleBuilder builder = MakeModule();
  builder.SetRodataCrc32(0, kBlobCrc32);
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<BytecodeModule> module,
                              LoadModule(builder));
  EXPECT_EQ(module->rodata_count(), 1u);
}

TEST(BytecodeModuleTest, RejectsDamagedRodata) {
  ModuleBuilder builder = MakeModule();
  builder.AddRodata("simple_mul_dispatch_0_data", "ELF bytes");
  builder.AddRodata("", "anonymous");
  builder.SetRodataCrc32(0, kBlobCrc32);
  builder.SetRodataCrc32(1, kBlobCrc32); // Wrong for "ELF bytes".
  Status status = LoadModule(builder).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("loading module 'tables': rodata segment 1 "
                        "'simple_mul_dispatch_0_data' is damaged: CRC-32 "
                        "mismatch (recorded 0xa684c7c6, computed 0x"));

  // A segment without a name is reported by ordinal only.
  builder.SetRodataCrc32(1, 0);
  builder.SetRodataCrc32(2, 1);
  status = LoadModule(builder).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("rodata segment 2 is damaged: CRC-32 mismatch"));
}

TEST(BytecodeModuleTest, DetectsASingleFlippedBit) {
  ModuleBuilder builder = MakeModule();
  builder.SetRodataCrc32(0, kBlobCrc32);
  std::vector<uint8_t> bytes = builder.Build();
  // Find the blob in the file and flip one bit of it.
  std::string_view file(reinterpret_cast<const char *>(bytes.data()),
                        bytes.size());
  size_t at = file.find("0123456789");
  ASSERT_NE(at, std::string_view::npos);
  bytes[at + 4] ^= 0x10;
  Status status =
      BytecodeModule::FromMemory(OwnedBytes::FromVector(std::move(bytes)))
          .status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss) << status.ToString();
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("rodata segment 0 'blob' is damaged"));
}

} // namespace
} // namespace strata::vm::testing
