// Bytecode programs importing the hal module, shaped like what the compiler
// emits for a host program: assert the inputs, allocate, record, submit,
// await, wrap the result in a buffer view.
#include "hal_test_util.h"

#include <map>

#include "strata/base/crc32.h"
#include "strata/hal/local/executable_library.h"

namespace strata::modules::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using vm::Opcode;
using vm::testing::FunctionBuilder;
using vm::testing::ModuleBuilder;
using vm::testing::RegI32;
using vm::testing::RegI64;
using vm::testing::RegRef;

constexpr int32_t kF32 = STRATA_HAL_ELEMENT_TYPE_FLOAT_32;

// Declares each hal import of a program once, on first use.
class HalImports {
public:
  explicit HalImports(ModuleBuilder &builder) : builder_(builder) {}
  uint32_t operator()(std::string_view name) {
    auto it = ordinals_.find(name);
    if (it == ordinals_.end())
      it =
          ordinals_.emplace(std::string(name), ImportHal(builder_, name)).first;
    return it->second;
  }

private:
  ModuleBuilder &builder_;
  std::map<std::string, uint32_t, std::less<>> ordinals_;
};

// Emits the tail every program shares: allocate a 16-byte result buffer in
// r4 from the allocator in r2, record into a command buffer r5 via
// `record`, submit it and await it (status in i9), and return the buffer
// as a 4xf32 view together with the await status.
// Registers used: i0 = 0, i1 = f32, i2 = dense, I0 = 4, I1 = -1, I3 = 0.
template <typename Record>
void EmitSubmitAndReturn(FunctionBuilder &f, HalImports &hal, Record record) {
  f.Op(Opcode::ConstI32).Reg(3).I32(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL);
  f.Op(Opcode::ConstI32).Reg(4).I32(STRATA_HAL_BUFFER_USAGE_DEFAULT);
  f.Op(Opcode::ConstI64).Reg(2).I64(16);
  f.Op(Opcode::Call)
      .Import(hal("hal.allocator.allocate"))
      .List({RegRef(2), RegI64(1), RegI32(3), RegI32(4), RegI64(2)})
      .List({RegRef(4)});
  f.Op(Opcode::ConstI32).Reg(5).I32(STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT);
  f.Op(Opcode::ConstI32)
      .Reg(6)
      .I32(STRATA_HAL_COMMAND_CATEGORY_TRANSFER |
           STRATA_HAL_COMMAND_CATEGORY_DISPATCH);
  f.Op(Opcode::Call)
      .Import(hal("hal.command_buffer.create"))
      .List({RegRef(1), RegI32(5), RegI32(6), RegI64(1), RegI32(0)})
      .List({RegRef(5)});
  record();
  f.Op(Opcode::Call)
      .Import(hal("hal.command_buffer.finalize"))
      .List({RegRef(5)})
      .List({});
  f.Op(Opcode::Call)
      .Import(hal("hal.fence.create"))
      .List({RegRef(1), RegI32(0)})
      .List({RegRef(6)});
  f.Op(Opcode::ConstRefZero).Reg(7);
  f.Op(Opcode::CallVariadic)
      .Import(hal("hal.device.queue.execute"))
      .Segments({1})
      .List({RegRef(1), RegI64(1), RegRef(7), RegRef(6), RegRef(5)})
      .List({});
  f.Op(Opcode::ConstI32).Reg(10).I32(STRATA_HAL_WAIT_FOREVER);
  f.Op(Opcode::CallVariadic)
      .Import(hal("hal.fence.await"))
      .Segments({1})
      .List({RegI32(10), RegRef(6)})
      .List({RegI32(9)});
  f.Op(Opcode::CallVariadic)
      .Import(hal("hal.buffer_view.create"))
      .Segments({1})
      .List({RegRef(4), RegI64(3), RegI64(1), RegI32(1), RegI32(2), RegI64(0)})
      .List({RegRef(8)});
  f.Op(Opcode::Return).List({RegRef(8), RegI32(9)});
}

// Device r1, allocator r2 and the constants listed above.
void EmitPrologue(FunctionBuilder &f, HalImports &hal) {
  f.Op(Opcode::ConstI32).Reg(0).I32(0);
  f.Op(Opcode::ConstI32).Reg(1).I32(kF32);
  f.Op(Opcode::ConstI32).Reg(2).I32(STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR);
  f.Op(Opcode::ConstI64).Reg(0).I64(4);
  f.Op(Opcode::ConstI64).Reg(1).I64(-1);
  f.Op(Opcode::ConstI64).Reg(3).I64(0);
  f.Op(Opcode::Call)
      .Import(hal("hal.devices.get"))
      .List({RegI32(0)})
      .List({RegRef(1)});
  f.Op(Opcode::Call)
      .Import(hal("hal.device.allocator"))
      .List({RegRef(1)})
      .List({RegRef(2)});
}

// hal.buffer_view.assert(r<view>, "argument N of @main", f32, dense, 4).
void EmitAssert(FunctionBuilder &f, HalImports &hal, uint16_t view,
                uint16_t message_register, uint32_t message_rodata) {
  f.Op(Opcode::ConstRefRodata).Reg(message_register).Rodata(message_rodata);
  f.Op(Opcode::CallVariadic)
      .Import(hal("hal.buffer_view.assert"))
      .Segments({1})
      .List({RegRef(view), RegRef(message_register), RegI32(1), RegI32(2),
             RegI64(0)})
      .List({});
}

class HalProgramTest : public HalModuleTest {
protected:
  Result<RefPtr<vm::Context>> Load(const ModuleBuilder &builder) {
    STRATA_ASSIGN_OR_RETURN(RefPtr<vm::BytecodeModule> program,
                            vm::testing::LoadModule(builder));
    return vm::testing::MakeContext({module_, program});
  }
};

// app.main(view) -> (view, i32): asserts a 4xf32 input, fills a new buffer
// with 1.0f through a command buffer and returns it.
ModuleBuilder MakeFillProgram() {
  ModuleBuilder builder("app");
  builder.AddDependency("hal", STRATA_HAL_MODULE_VERSION);
  HalImports hal(builder);
  uint32_t message = builder.AddRodata("message", "argument 0 of @main", 1);
  FunctionBuilder &f =
      builder.AddFunction("main", "0r_ri", {.i32 = 11, .i64 = 4, .ref = 9});
  EmitPrologue(f, hal);
  EmitAssert(f, hal, /*view=*/0, /*message_register=*/3, message);
  EmitSubmitAndReturn(f, hal, [&] {
    f.Op(Opcode::ConstI32).Reg(7).I32(0x3F800000); // 1.0f
    f.Op(Opcode::ConstI32).Reg(8).I32(4);
    f.Op(Opcode::Call)
        .Import(hal("hal.command_buffer.fill_buffer"))
        .List(
            {RegRef(5), RegRef(4), RegI64(3), RegI64(1), RegI32(7), RegI32(8)})
        .List({});
  });
  builder.AddExport("main", f.ordinal());
  return builder;
}

TEST_F(HalProgramTest, FillProgram) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<vm::Context> context,
                              Load(MakeFillProgram()));
  std::vector<float> input = {0, 0, 0, 0};
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<Value> results,
      vm::testing::InvokeByName(*context, "app.main",
                                {RefValue(MakeView({4}, input))}));
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[1].i32(), 0);
  auto *view = RefCast<hal::BufferView>(results[0].ref());
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->FormatShape(), "4xf32");
  EXPECT_EQ(ReadFloats(*view->buffer(), 0, 4),
            (std::vector<float>{1, 1, 1, 1}));
}

TEST_F(HalProgramTest, WrongInputShapeNamesTheArgument) {
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<vm::Context> context,
                              Load(MakeFillProgram()));
  std::vector<float> input = {0, 0, 0};
  Status status = vm::testing::InvokeByName(*context, "app.main",
                                            {RefValue(MakeView({3}, input))})
                      .status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("argument 0 of @main: expected 4xf32, got 3xf32"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("at app.main"));

  status = vm::testing::InvokeByName(*context, "app.main", {Value::NullRef()})
               .status();
  EXPECT_THAT(std::string(status.message()),
              StartsWith("argument 0 of @main: expected a buffer view 4xf32, "
                         "got null"));
}

TEST_F(HalProgramTest, DependencyVersionIsChecked) {
  ModuleBuilder builder("future");
  builder.AddDependency("hal", STRATA_HAL_MODULE_VERSION + 1);
  Status status = Load(builder).status();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()), HasSubstr("'hal'"));
}

TEST_F(HalProgramTest, ImportsWithAnotherConventionAreRejected) {
  ModuleBuilder builder("drifted");
  builder.AddDependency("hal", STRATA_HAL_MODULE_VERSION);
  builder.AddImport("hal.devices.get", "0I_r");
  EXPECT_FALSE(Load(builder).ok());
}

// Like the compiled simple_mul: __init loads an executable from rodata into
// a global; main(a, b) asserts both inputs and dispatches add_f32 (export 0)
// or, for main_fail, `fail` (export 2), which fails in workgroup 2.
ModuleBuilder MakeDispatchProgram(std::span<const uint8_t> library) {
  ModuleBuilder builder("dispatch");
  builder.AddDependency("hal", STRATA_HAL_MODULE_VERSION);
  builder.SetGlobalCounts({.ref = 1});
  HalImports hal(builder);
  uint32_t format = builder.AddRodata(
      "add_dispatch_0_format", STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64, 1);
  std::string_view library_text(reinterpret_cast<const char *>(library.data()),
                                library.size());
  uint32_t data = builder.AddRodata("add_dispatch_0_data", library_text, 64);
  builder.SetRodataCrc32(data, Crc32(library));
  uint32_t message_0 = builder.AddRodata("m0", "argument 0 of @main", 1);
  uint32_t message_1 = builder.AddRodata("m1", "argument 1 of @main", 1);

  FunctionBuilder &init =
      builder.AddFunction("__init", "0v_v", {.i32 = 1, .i64 = 1, .ref = 5});
  init.Op(Opcode::ConstI32).Reg(0).I32(0);
  init.Op(Opcode::Call)
      .Import(hal("hal.devices.get"))
      .List({RegI32(0)})
      .List({RegRef(0)});
  init.Op(Opcode::ConstI64).Reg(0).I64(STRATA_HAL_QUEUE_AFFINITY_ANY);
  init.Op(Opcode::ConstRefZero).Reg(1);
  init.Op(Opcode::ConstRefRodata).Reg(2).Rodata(format);
  init.Op(Opcode::ConstRefRodata).Reg(3).Rodata(data);
  init.Op(Opcode::Call)
      .Import(hal("hal.executable.create"))
      .List({RegRef(0), RegI64(0), RegRef(2), RegRef(3), RegRef(1)})
      .List({RegRef(4)});
  init.Op(Opcode::GlobalStoreRef).Global(0).Reg(4);
  init.Op(Opcode::Return).List({});

  for (bool failing : {false, true}) {
    FunctionBuilder &f =
        builder.AddFunction(failing ? "main_fail" : "main", "0rr_ri",
                            {.i32 = 16, .i64 = 4, .ref = 14});
    // Arguments are r0 and r1; move them past the prologue's registers.
    f.Op(Opcode::MovRef).Reg(10).Reg(0);
    f.Op(Opcode::MovRef).Reg(11).Reg(1);
    EmitPrologue(f, hal);
    EmitAssert(f, hal, 10, 3, message_0);
    EmitAssert(f, hal, 11, 3, message_1);
    f.Op(Opcode::Call)
        .Import(hal("hal.buffer_view.buffer"))
        .List({RegRef(10)})
        .List({RegRef(10)});
    f.Op(Opcode::Call)
        .Import(hal("hal.buffer_view.buffer"))
        .List({RegRef(11)})
        .List({RegRef(11)});
    EmitSubmitAndReturn(f, hal, [&] {
      f.Op(Opcode::GlobalLoadRef).Reg(12).Global(0);
      f.Op(Opcode::ConstI32).Reg(11).I32(1);
      f.Op(Opcode::ConstI64).Reg(2).I64(16);
      if (!failing) {
        f.Op(Opcode::CallVariadic)
            .Import(hal("hal.command_buffer.dispatch"))
            .Segments({0, 3})
            .List({RegRef(5), RegRef(12), RegI32(0), RegI32(11), RegI32(11),
                   RegI32(11), RegI64(3), RegRef(10), RegI64(3), RegI64(2),
                   RegRef(11), RegI64(3), RegI64(2), RegRef(4), RegI64(3),
                   RegI64(2)})
            .List({});
      } else {
        f.Op(Opcode::ConstI32).Reg(12).I32(2);
        f.Op(Opcode::ConstI32).Reg(13).I32(3);
        f.Op(Opcode::CallVariadic)
            .Import(hal("hal.command_buffer.dispatch"))
            .Segments({0, 1})
            .List({RegRef(5), RegRef(12), RegI32(12), RegI32(13), RegI32(11),
                   RegI32(11), RegI64(3), RegRef(4), RegI64(3), RegI64(2)})
            .List({});
      }
    });
    builder.AddExport(failing ? "main_fail" : "main", f.ordinal());
  }
  return builder;
}

TEST_F(HalProgramTest, DispatchProgram) {
  std::vector<uint8_t> library = ReadFileBytes(HAL_TEST_LIBRARY_PATH);
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<vm::Context> context,
                              Load(MakeDispatchProgram(library)));
  std::vector<float> a = {1, 2, 3, 4}, b = {0.5f, 0.25f, 2, -4};
  STRATA_ASSERT_OK_AND_ASSIGN(
      std::vector<Value> results,
      vm::testing::InvokeByName(
          *context, "dispatch.main",
          {RefValue(MakeView({4}, a)), RefValue(MakeView({4}, b))}));
  EXPECT_EQ(results.at(1).i32(), 0);
  auto *view = RefCast<hal::BufferView>(results.at(0).ref());
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(ReadFloats(*view->buffer(), 0, 4),
            (std::vector<float>{1.5f, 2.25f, 5, 0}));

  // The second argument is checked with its own message.
  std::vector<float> wrong = {1, 2, 3, 4, 5};
  Status status = vm::testing::InvokeByName(*context, "dispatch.main",
                                            {RefValue(MakeView({4}, a)),
                                             RefValue(MakeView({5}, wrong))})
                      .status();
  EXPECT_THAT(std::string(status.message()),
              StartsWith("argument 1 of @main: expected 4xf32, got 5xf32"));
}

TEST_F(HalProgramTest, FailingDispatchFailsTheInvocation) {
  std::vector<uint8_t> library = ReadFileBytes(HAL_TEST_LIBRARY_PATH);
  STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<vm::Context> context,
                              Load(MakeDispatchProgram(library)));
  std::vector<float> a = {1, 2, 3, 4};
  Status status = vm::testing::InvokeByName(
                      *context, "dispatch.main_fail",
                      {RefValue(MakeView({4}, a)), RefValue(MakeView({4}, a))})
                      .status();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("export 'fail' failed with code 7 in workgroup (2, 0, "
                        "0)"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("at dispatch.main_fail"));
}

TEST_F(HalProgramTest, DamagedExecutableIsRejectedAtLoad) {
  std::vector<uint8_t> library = ReadFileBytes(HAL_TEST_LIBRARY_PATH);
  ModuleBuilder builder = MakeDispatchProgram(library);
  builder.SetRodataCrc32(1, Crc32(library) ^ 1);
  Status status = Load(builder).status();
  EXPECT_EQ(status.code(), StatusCode::kDataLoss);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("rodata segment 1 'add_dispatch_0_data' is damaged: "
                        "CRC-32 mismatch"));
}

} // namespace
} // namespace strata::modules::testing
