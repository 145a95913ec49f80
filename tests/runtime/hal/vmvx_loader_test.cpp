// The VMVX loader on hand-built bytecode executables: dispatch calling
// convention, workgroups on pooled contexts (also from several threads),
// the matmul microkernel and its bounds checks, and rejection of modules
// that are not dispatchable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "module_builder.h"
#include "strata/hal/loaders/vmvx_module_loader.h"
#include "strata/hal/local/local_executable.h"
#include "strata/hal/local/vmvx_abi.h"

namespace strata::hal {
namespace {

using ::testing::HasSubstr;
using vm::Opcode;
using vm::testing::FunctionBuilder;
using vm::testing::ModuleBuilder;
using vm::testing::RegF32;
using vm::testing::RegI64;
using vm::testing::RegRef;

constexpr const char *kFormat = STRATA_HAL_EXECUTABLE_FORMAT_VMVX;
constexpr const char *kDispatch3 = "0rrrIIIIII_v";

// out[id] = lhs[id] + rhs[id] for workgroup id `id` (one f32 per workgroup).
void AddElementwiseExport(ModuleBuilder &builder) {
  FunctionBuilder &f =
      builder.AddFunction("add", kDispatch3, {.i64 = 8, .f32 = 3, .ref = 3});
  f.Op(Opcode::ConstI64).Reg(6).I64(4);
  f.Op(Opcode::MulI64).Reg(7).Reg(0).Reg(6);
  f.Op(Opcode::BufferLoadF32).Reg(0).Reg(0).Reg(7);
  f.Op(Opcode::BufferLoadF32).Reg(1).Reg(1).Reg(7);
  f.Op(Opcode::AddF32).Reg(2).Reg(0).Reg(1);
  f.Op(Opcode::BufferStoreF32).Reg(2).Reg(7).Reg(2);
  f.Op(Opcode::Return).List({});
  builder.AddExport("add", f.ordinal());
}

// out (MxN) += lhs (MxK) * rhs (KxN) through vmvx.matmul.f32, row-major.
void AddMatmulExport(ModuleBuilder &builder, int64_t m, int64_t n, int64_t k,
                     int64_t lhs_row_stride = -1) {
  builder.AddDependency(STRATA_HAL_VMVX_MODULE_NAME,
                        STRATA_HAL_VMVX_MODULE_VERSION);
  uint32_t matmul = builder.AddImport("vmvx.matmul.f32", "0rIIIrIIIrIIIIII_v");
  FunctionBuilder &f =
      builder.AddFunction("mm", kDispatch3, {.i64 = 12, .ref = 3});
  int64_t constants[] = {0, 1, k, n, m};
  for (int i = 0; i < 5; ++i)
    f.Op(Opcode::ConstI64).Reg(6 + i).I64(constants[i]);
  f.Op(Opcode::ConstI64).Reg(11).I64(k);
  // I6 = 0, I7 = 1, I8 = lhs row stride (K), I9 = N, I10 = M, I11 = K
  if (lhs_row_stride >= 0)
    f.Op(Opcode::ConstI64).Reg(8).I64(lhs_row_stride);
  f.Op(Opcode::Call)
      .Import(matmul)
      .List({RegRef(0), RegI64(6), RegI64(8), RegI64(7), RegRef(1), RegI64(6),
             RegI64(9), RegI64(7), RegRef(2), RegI64(6), RegI64(9), RegI64(7),
             RegI64(10), RegI64(9), RegI64(11)})
      .List({});
  f.Op(Opcode::Return).List({});
  builder.AddExport("mm", f.ordinal());
}

Result<RefPtr<Executable>> Load(const ModuleBuilder &builder) {
  VmvxModuleLoader loader;
  std::vector<uint8_t> bytes = builder.Build();
  return loader.Load(kFormat, bytes, {});
}

struct Dispatch {
  std::vector<void *> pointers;
  std::vector<size_t> lengths;
  strata_hal_executable_dispatch_state_v0_t state = {};

  explicit Dispatch(std::vector<std::vector<float> *> bindings,
                    uint32_t workgroups = 1) {
    for (std::vector<float> *binding : bindings) {
      pointers.push_back(binding->data());
      lengths.push_back(binding->size() * sizeof(float));
    }
    state.workgroup_count_x = workgroups;
    state.workgroup_count_y = state.workgroup_count_z = 1;
    state.binding_count = uint32_t(bindings.size());
    state.binding_ptrs = pointers.data();
    state.binding_lengths = lengths.data();
  }
};

Status RunWorkgroup(const Executable &executable, uint32_t ordinal,
                    const Dispatch &dispatch, uint32_t id) {
  strata_hal_executable_workgroup_state_v0_t workgroup = {};
  workgroup.workgroup_id_x = id;
  return static_cast<const LocalExecutable &>(executable)
      .IssueWorkgroup(ordinal, dispatch.state, workgroup);
}

TEST(VmvxLoaderTest, RunsEveryWorkgroup) {
  ModuleBuilder builder("elementwise");
  AddElementwiseExport(builder);
  auto executable = Load(builder);
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  EXPECT_EQ((*executable)->name(), "elementwise");
  ASSERT_EQ((*executable)->export_count(), 1u);
  EXPECT_EQ((*executable)->export_binding_count(0), 3u);

  std::vector<float> lhs = {1, 2, 3, 4}, rhs = {10, 20, 30, 40}, out(4, 0);
  Dispatch dispatch({&lhs, &rhs, &out}, 4);
  for (uint32_t id = 0; id < 4; ++id)
    ASSERT_TRUE(RunWorkgroup(**executable, 0, dispatch, id).ok());
  EXPECT_EQ(out, (std::vector<float>{11, 22, 33, 44}));
}

TEST(VmvxLoaderTest, WorkgroupsFromSeveralThreads) {
  ModuleBuilder builder("elementwise");
  AddElementwiseExport(builder);
  auto executable = Load(builder);
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  constexpr uint32_t kCount = 256;
  std::vector<float> lhs(kCount), rhs(kCount), out(kCount, 0);
  for (uint32_t i = 0; i < kCount; ++i)
    lhs[i] = float(i), rhs[i] = float(2 * i);
  Dispatch dispatch({&lhs, &rhs, &out}, kCount);
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (uint32_t id = t; id < kCount; id += 4)
        EXPECT_TRUE(RunWorkgroup(**executable, 0, dispatch, id).ok());
    });
  for (std::thread &thread : threads)
    thread.join();
  for (uint32_t i = 0; i < kCount; ++i)
    EXPECT_EQ(out[i], float(3 * i)) << i;
}

TEST(VmvxLoaderTest, OutOfBoundsAccessFailsTheWorkgroup) {
  ModuleBuilder builder("elementwise");
  AddElementwiseExport(builder);
  auto executable = Load(builder);
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  std::vector<float> lhs(2), rhs(2), out(2);
  Dispatch dispatch({&lhs, &rhs, &out}, 4);
  Status status = RunWorkgroup(**executable, 0, dispatch, 3);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("export 'add' failed in workgroup (3, 0, 0)"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("OUT_OF_RANGE"));
}

TEST(VmvxLoaderTest, MatmulMicrokernel) {
  ModuleBuilder builder("matmul");
  AddMatmulExport(builder, 2, 3, 4);
  auto executable = Load(builder);
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  std::vector<float> lhs(8), rhs(12), out(6, 1.0f);
  for (int i = 0; i < 8; ++i)
    lhs[i] = float(i + 1);
  for (int i = 0; i < 12; ++i)
    rhs[i] = float(i % 5) - 2.0f;
  Dispatch dispatch({&lhs, &rhs, &out});
  ASSERT_TRUE(RunWorkgroup(**executable, 0, dispatch, 0).ok());
  for (int m = 0; m < 2; ++m)
    for (int n = 0; n < 3; ++n) {
      float expected = 1.0f; // accumulates into the output
      for (int k = 0; k < 4; ++k)
        expected += lhs[m * 4 + k] * rhs[k * 3 + n];
      EXPECT_EQ(out[m * 3 + n], expected) << m << "," << n;
    }
}

TEST(VmvxLoaderTest, MatmulWindowOutsideItsBufferIsAnError) {
  ModuleBuilder builder("matmul");
  AddMatmulExport(builder, 2, 3, 4);
  auto executable = Load(builder);
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  std::vector<float> lhs(8), rhs(11), out(6); // rhs one element short
  Dispatch dispatch({&lhs, &rhs, &out});
  Status status = RunWorkgroup(**executable, 0, dispatch, 0);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("rhs window [4x3] at offset 0"));
}

TEST(VmvxLoaderTest, MatmulWindowArithmeticDoesNotOverflow) {
  // (2^31 - 1) rows x a 2^40 stride is past 64 bits: still a clean error.
  ModuleBuilder builder("matmul");
  AddMatmulExport(builder, (int64_t(1) << 31) - 1, 3, 4, int64_t(1) << 40);
  auto executable = Load(builder);
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  std::vector<float> lhs(8), rhs(12), out(6);
  Dispatch dispatch({&lhs, &rhs, &out});
  Status status = RunWorkgroup(**executable, 0, dispatch, 0);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_THAT(std::string(status.message()), HasSubstr("lhs window"));
}

TEST(VmvxLoaderTest, WrongBindingCountIsAnError) {
  ModuleBuilder builder("elementwise");
  AddElementwiseExport(builder);
  auto executable = Load(builder);
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  std::vector<float> a(4), b(4);
  Dispatch dispatch({&a, &b});
  Status status = RunWorkgroup(**executable, 0, dispatch, 0);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("takes 3 bindings, dispatch has 2"));
}

TEST(VmvxLoaderTest, RejectsExportsThatAreNotDispatchEntryPoints) {
  ModuleBuilder builder("bad");
  FunctionBuilder &f = builder.AddFunction("f", "0rI_v", {.i64 = 1, .ref = 1});
  f.Op(Opcode::Return).List({});
  builder.AddExport("f", f.ordinal());
  auto executable = Load(builder);
  ASSERT_FALSE(executable.ok());
  EXPECT_THAT(std::string(executable.status().message()),
              HasSubstr("export 'f' has calling convention '0rI_v'"));
}

TEST(VmvxLoaderTest, RejectsUnknownMicrokernels) {
  ModuleBuilder builder("bad");
  builder.AddDependency(STRATA_HAL_VMVX_MODULE_NAME, 1);
  builder.AddImport("vmvx.conv9d.f32", "0r_v");
  FunctionBuilder &f =
      builder.AddFunction("f", "0rIIIIII_v", {.i64 = 6, .ref = 1});
  f.Op(Opcode::Return).List({});
  builder.AddExport("f", f.ordinal());
  auto executable = Load(builder);
  ASSERT_FALSE(executable.ok());
  EXPECT_THAT(std::string(executable.status().message()),
              HasSubstr("vmvx.conv9d.f32"));
}

TEST(VmvxLoaderTest, RejectsNewerMicrokernelModule) {
  ModuleBuilder builder("bad");
  builder.AddDependency(STRATA_HAL_VMVX_MODULE_NAME,
                        STRATA_HAL_VMVX_MODULE_VERSION + 1);
  AddElementwiseExport(builder);
  auto executable = Load(builder);
  ASSERT_FALSE(executable.ok());
  EXPECT_THAT(std::string(executable.status().message()), HasSubstr("vmvx"));
}

TEST(VmvxLoaderTest, RejectsDamagedModulesAndOtherFormats) {
  ModuleBuilder builder("elementwise");
  AddElementwiseExport(builder);
  std::vector<uint8_t> bytes = builder.Build();
  bytes.resize(bytes.size() / 2);
  VmvxModuleLoader loader;
  auto truncated = loader.Load(kFormat, bytes, {});
  ASSERT_FALSE(truncated.ok());
  EXPECT_THAT(std::string(truncated.status().message()),
              HasSubstr("vmvx executable"));
  EXPECT_FALSE(loader.CanLoad("elf-x86_64"));
  EXPECT_TRUE(loader.CanLoad(kFormat));
}

} // namespace
} // namespace strata::hal
