// Run-time sizes through the hal module: every import that turns program
// numbers into sizes or offsets refuses those that overflow, with the
// function's name; the allocator's limit applies to programs; and the
// verifier refuses, from hal_import_contracts.def, constant workgroup counts
// past the limits and waits on fences nothing can signal.
#include <cstdint>
#include <cstdio>
#include <limits>

#include "hal_test_util.h"
#include "strata/hal/local/executable_library.h"
#include "strata/vm/call_contract.h"

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
constexpr int32_t kDense = STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR;
constexpr int64_t kAny = STRATA_HAL_QUEUE_AFFINITY_ANY;
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();

std::string MessageOf(const Status &status) {
  return std::string(status.message());
}

TEST_F(HalModuleTest, BufferViewCreateShapesThatOverflow) {
  RefPtr<hal::Buffer> buffer = Allocate(64);
  // 2^32 x 2^32 f32: 2^66 bytes, 0 after wrapping in 64 bits.
  Status status =
      Call("hal.buffer_view.create",
           {RefValue(buffer), Value::I64(0), Value::I64(-1), Value::I32(kF32),
            Value::I32(kDense), Value::I32(2), Value::I64(int64_t(1) << 32),
            Value::I64(int64_t(1) << 32)})
          .status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.buffer_view.create: shape "
                         "4294967296x4294967296 x 4 bytes overflows 64 bits"));
  // Negative dimensions.
  status =
      Call("hal.buffer_view.create",
           {RefValue(buffer), Value::I64(0), Value::I64(-1), Value::I32(kF32),
            Value::I32(kDense), Value::I32(2), Value::I64(4), Value::I64(-4)})
          .status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.buffer_view.create: negative dimension -4 in "
                         "shape 4x-4"));
  // Offset + length past 2^64.
  status = Call("hal.buffer_view.create",
                {RefValue(buffer), Value::I64(8), Value::I64(kI64Max),
                 Value::I32(kF32), Value::I32(kDense), Value::I32(0)})
               .status();
  EXPECT_EQ(status.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(MessageOf(status), StartsWith("hal.buffer_view.create: "));
  status = Call("hal.buffer_view.create",
                {RefValue(buffer), Value::I64(kI64Max), Value::I64(8),
                 Value::I32(kF32), Value::I32(kDense), Value::I32(0)})
               .status();
  EXPECT_EQ(status.code(), StatusCode::kOutOfRange);
}

TEST_F(HalModuleTest, AllocatorSizesAndLimit) {
  Value allocator = RefValue(device_->allocator());
  auto allocate = [&](int64_t size) {
    return Call("hal.allocator.allocate",
                {allocator, Value::I64(kAny),
                 Value::I32(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL),
                 Value::I32(STRATA_HAL_BUFFER_USAGE_DEFAULT),
                 Value::I64(size)});
  };
  Status status = allocate(kI64Max).status();
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.allocator.allocate: allocation of "
                         "9223372036854775807 bytes exceeds the limit of "
                         "allocator 'local-sync'"));

  // The device allocator's limit bounds what programs keep live.
  ASSERT_TRUE(device_->allocator()->SetMemoryLimit(4096).ok());
  Result<std::vector<Value>> kept = allocate(3000);
  ASSERT_TRUE(kept.ok()) << kept.status().ToString();
  status = allocate(3000).status();
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.allocator.allocate: allocation of 3000 bytes "
                         "would bring allocator 'local-sync' to 6000 live "
                         "bytes, over its memory limit of 4096 bytes"));
  kept = std::vector<Value>();
  EXPECT_TRUE(allocate(3000).ok());
}

TEST_F(HalModuleTest, AllocatorImportRangesThatOverflow) {
  Value source = Text("four");
  auto import = [&](int64_t offset, int64_t length) {
    return Call("hal.allocator.import",
                {RefValue(device_->allocator()), Value::I64(kAny),
                 Value::I32(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL),
                 Value::I32(STRATA_HAL_BUFFER_USAGE_DEFAULT), source,
                 Value::I64(offset), Value::I64(length)})
        .status();
  };
  EXPECT_TRUE(import(1, 3).ok());
  Status status = import(kI64Max, kI64Max);
  EXPECT_EQ(status.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.allocator.import: 9223372036854775807 bytes at "
                         "offset 9223372036854775807 are outside the 4-byte "
                         "source"));
  EXPECT_EQ(import(2, kI64Max).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(import(5, 0).code(), StatusCode::kOutOfRange);
}

TEST_F(HalModuleTest, TransferRangesThatOverflow) {
  RefPtr<hal::Buffer> buffer = Allocate(64);
  Value cmd = CallOk("hal.command_buffer.create",
                     {RefValue(device_),
                      Value::I32(STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT),
                      Value::I32(STRATA_HAL_COMMAND_CATEGORY_TRANSFER),
                      Value::I64(kAny), Value::I32(0)})
                  .at(0);
  Status status = Call("hal.command_buffer.fill_buffer",
                       {cmd, RefValue(buffer), Value::I64(8),
                        Value::I64(kI64Max), Value::I32(0), Value::I32(1)})
                      .status();
  EXPECT_EQ(status.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.command_buffer.fill_buffer: fill_buffer target: "
                         "range [8, 8 + 9223372036854775807) exceeds a buffer "
                         "of 64 bytes"));
  status = Call("hal.command_buffer.copy_buffer",
                {cmd, RefValue(buffer), Value::I64(kI64Max), RefValue(buffer),
                 Value::I64(0), Value::I64(8)})
               .status();
  EXPECT_EQ(status.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.command_buffer.copy_buffer: copy_buffer source: "
                         "offset 9223372036854775807 is past the end"));
  status = Call("hal.command_buffer.copy_buffer",
                {cmd, RefValue(buffer), Value::I64(0), RefValue(buffer),
                 Value::I64(60), Value::I64(8)})
               .status();
  EXPECT_THAT(MessageOf(status), HasSubstr("copy_buffer target"));
  // hal.buffer.assert compares without arithmetic.
  status = Call("hal.buffer.assert",
                {RefValue(buffer), Text("input"), Value::I64(kI64Max)})
               .status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("input: expected a buffer of at least "
                         "9223372036854775807 bytes, got 64 bytes"));
}

class HalDispatchSizesTest : public HalModuleTest {
protected:
  void SetUp() override {
    HalModuleTest::SetUp();
    std::vector<uint8_t> bytes = ReadFileBytes(HAL_TEST_LIBRARY_PATH);
    executable_ =
        CallOk("hal.executable.create",
               {RefValue(device_), Value::I64(kAny),
                Text(STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64),
                RefValue(vm::ByteBuffer::CopyOf(bytes)), Value::NullRef()})
            .at(0);
    cmd_ = CallOk("hal.command_buffer.create",
                  {RefValue(device_),
                   Value::I32(STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT),
                   Value::I32(STRATA_HAL_COMMAND_CATEGORY_DISPATCH),
                   Value::I64(kAny), Value::I32(0)})
               .at(0);
  }

  // Export 2 ("fail", one binding) over x*y*z workgroups.
  Status Dispatch(int32_t x, int32_t y, int32_t z, int64_t offset = 0,
                  int64_t length = -1) {
    return Call("hal.command_buffer.dispatch",
                {cmd_, executable_, Value::I32(2), Value::I32(x), Value::I32(y),
                 Value::I32(z), Value::I64(0), Value::I32(0), Value::I32(1),
                 RefValue(Allocate(16)), Value::I64(offset),
                 Value::I64(length)})
        .status();
  }

  Value executable_;
  Value cmd_;
};

TEST_F(HalDispatchSizesTest, WorkgroupCountsPastTheLimits) {
  EXPECT_TRUE(Dispatch(1, 1, 1).ok());
  Status status = Dispatch(0x7FFFFFFF, 0x7FFFFFFF, 0x7FFFFFFF);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.command_buffer.dispatch: dispatch of 'fail': "
                         "workgroup count 2147483647x2147483647x2147483647 "
                         "exceeds the limit of 65535 per dimension"));
  status = Dispatch(65535, 65535, 1);
  EXPECT_THAT(MessageOf(status),
              HasSubstr("workgroup count 65535x65535x1 (4294836225 "
                        "workgroups) exceeds the limit of 16777216 "
                        "workgroups per dispatch"));
}

TEST_F(HalDispatchSizesTest, BindingRangesThatOverflow) {
  Status status = Dispatch(1, 1, 1, 8, kI64Max);
  EXPECT_EQ(status.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.command_buffer.dispatch: dispatch of 'fail': "
                         "binding 0: range [8, 8 + 9223372036854775807) "
                         "exceeds a buffer of 16 bytes"));
  status = Dispatch(1, 1, 1, kI64Max, 0);
  EXPECT_EQ(status.code(), StatusCode::kOutOfRange);
}

TEST_F(HalModuleTest, ContractsComeFromTheTable) {
  auto contract_of = [&](std::string_view name) {
    std::optional<uint32_t> ordinal = module_->FindExport(name);
    EXPECT_TRUE(ordinal.has_value()) << name;
    return ordinal ? module_->exports()[*ordinal].contract : nullptr;
  };
  const vm::CallContract *dispatch = contract_of("command_buffer.dispatch");
  ASSERT_NE(dispatch, nullptr);
  EXPECT_EQ(dispatch->bounded_counts.first_argument, 3);
  EXPECT_EQ(dispatch->bounded_counts.count, 3);
  EXPECT_EQ(dispatch->bounded_counts.max_each,
            STRATA_HAL_MAX_WORKGROUP_COUNT_PER_DIMENSION);
  EXPECT_EQ(dispatch->bounded_counts.max_product,
            STRATA_HAL_MAX_WORKGROUPS_PER_DISPATCH);
  ASSERT_NE(contract_of("fence.create"), nullptr);
  EXPECT_EQ(contract_of("fence.create")->creates_waitable_result, 0);
  ASSERT_NE(contract_of("fence.await"), nullptr);
  EXPECT_EQ(contract_of("fence.await")->awaits_argument, 1);
  EXPECT_EQ(contract_of("allocator.allocate"), nullptr);
}

// A program "p" whose function "main" gets the device (r0) and then runs
// what the test records.
struct HalProgram {
  ModuleBuilder builder{"p"};
  FunctionBuilder &f =
      builder.AddFunction("main", "0v_v", {.i32 = 8, .i64 = 4, .ref = 8});

  HalProgram() {
    builder.AddDependency("hal", STRATA_HAL_MODULE_VERSION);
    builder.AddExport("main", f.ordinal());
    f.Op(Opcode::ConstI32).Reg(0).I32(0);
    f.Op(Opcode::Call)
        .Import(ImportHal(builder, "hal.devices.get"))
        .List({RegI32(0)})
        .List({RegRef(0)});
  }
};

// Registers `program` after the hal module `hal`.
Status Register(RefPtr<vm::Module> hal, const HalProgram &program) {
  Result<RefPtr<vm::BytecodeModule>> module =
      vm::testing::LoadModule(program.builder);
  if (!module.ok())
    return module.status();
  return vm::testing::MakeContext({std::move(hal), *module}).status();
}

std::string At(uint32_t offset) {
  char text[16];
  std::snprintf(text, sizeof(text), "+0x%04x", offset);
  return text;
}

TEST_F(HalModuleTest, VerifierRefusesConstantWorkgroupCountsPastTheLimits) {
  HalProgram program;
  FunctionBuilder &f = program.f;
  uint32_t dispatch = ImportHal(program.builder, "hal.command_buffer.dispatch");
  // cmd and executable stay null: the call never runs.
  f.Op(Opcode::ConstRefZero).Reg(1);
  f.Op(Opcode::ConstI32).Reg(1).I32(1);
  f.Op(Opcode::ConstI32).Reg(2).I32(0x7FFFFFFF);
  f.Op(Opcode::ConstI64).Reg(0).I64(0);
  uint32_t at = f.offset();
  f.Op(Opcode::CallVariadic)
      .Import(dispatch)
      .Segments({0, 0})
      .List({RegRef(1), RegRef(1), RegI32(0), RegI32(2), RegI32(1), RegI32(1),
             RegI64(0)})
      .List({});
  f.Op(Opcode::Return).List({});
  Status status = Register(module_, program);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MessageOf(status),
            StrCat("initializing module 'p': invalid bytecode in function "
                   "'main' at ",
                   At(at),
                   ": call to 'hal.command_buffer.dispatch': workgroup count "
                   "2147483647x1x1 exceeds the limit of 65535 per dimension"));
}

TEST_F(HalModuleTest, VerifierRefusesAwaitsOnFencesNothingSignals) {
  for (bool submitted : {false, true}) {
    HalProgram program;
    FunctionBuilder &f = program.f;
    uint32_t create = ImportHal(program.builder, "hal.fence.create");
    uint32_t await = ImportHal(program.builder, "hal.fence.await");
    uint32_t signal = ImportHal(program.builder, "hal.fence.signal");
    uint32_t created_at = f.offset();
    f.Op(Opcode::Call)
        .Import(create)
        .List({RegRef(0), RegI32(0)})
        .List({RegRef(1)});
    if (submitted)
      f.Op(Opcode::Call).Import(signal).List({RegRef(1)}).List({});
    f.Op(Opcode::ConstI32).Reg(1).I32(STRATA_HAL_WAIT_FOREVER);
    uint32_t awaited_at = f.offset();
    f.Op(Opcode::CallVariadic)
        .Import(await)
        .Segments({1})
        .List({RegI32(1), RegRef(1)})
        .List({RegI32(2)});
    f.Op(Opcode::Return).List({});
    Status status = Register(module_, program);
    if (submitted) {
      EXPECT_TRUE(status.ok()) << status.ToString();
      continue;
    }
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(
        MessageOf(status),
        HasSubstr(StrCat("in function 'main' at ", At(awaited_at),
                         ": call to 'hal.fence.await': waits on the "
                         "result of 'hal.fence.create' at ",
                         At(created_at), ", which nothing can signal")));
  }
}

} // namespace
} // namespace strata::modules::testing
