// The hal module's functions called directly through a context, one area at
// a time: the table, devices, buffers, views, command buffers, fences and
// executables.
#include "hal_test_util.h"

#include <cstring>

#include "strata/hal/local/executable_library.h"

namespace strata::modules::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int32_t kF32 = STRATA_HAL_ELEMENT_TYPE_FLOAT_32;
constexpr int32_t kDense = STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR;
constexpr int64_t kAny = STRATA_HAL_QUEUE_AFFINITY_ANY;
constexpr int32_t kOneShot = STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT;
constexpr int32_t kAllCategories =
    STRATA_HAL_COMMAND_CATEGORY_TRANSFER | STRATA_HAL_COMMAND_CATEGORY_DISPATCH;

std::string MessageOf(const Status &status) {
  return std::string(status.message());
}

TEST_F(HalModuleTest, ExportsExactlyTheImportTable) {
  EXPECT_EQ(module_->name(), "hal");
  EXPECT_EQ(module_->version(), STRATA_HAL_MODULE_VERSION);
  std::span<const HalImportRow> table = HalImportTable();
  ASSERT_EQ(module_->exports().size(), table.size());
  for (const HalImportRow &row : table) {
    Result<vm::Function> function = context_->LookupFunction(row.full_name);
    ASSERT_TRUE(function.ok()) << row.full_name;
    EXPECT_EQ(function->signature().calling_convention(),
              row.calling_convention);
  }
}

TEST(HalModuleCreateTest, RejectsNullDevices) {
  Result<RefPtr<vm::Module>> module = CreateHalModule({nullptr});
  EXPECT_EQ(module.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(MessageOf(module.status()), HasSubstr("device 0 is null"));
  // No devices is fine: programs that never touch one still run.
  EXPECT_TRUE(CreateHalModule({}).ok());
}

TEST_F(HalModuleTest, Devices) {
  EXPECT_EQ(CallOk("hal.devices.count", {}).at(0).i32(), 1);
  std::vector<Value> results = CallOk("hal.devices.get", {Value::I32(0)});
  EXPECT_EQ(results.at(0).ref(), device_.get());

  for (int32_t index : {1, -1}) {
    Status status = Call("hal.devices.get", {Value::I32(index)}).status();
    EXPECT_EQ(status.code(), StatusCode::kOutOfRange);
    EXPECT_THAT(MessageOf(status),
                StartsWith(StrCat("hal.devices.get: device index ", index,
                                  " is out of range; the hal module was "
                                  "given 1 device(s)")));
  }

  RefPtr<vm::Module> two_devices = *CreateHalModule({device_, device_});
  RefPtr<vm::Context> context = *vm::testing::MakeContext({two_devices});
  EXPECT_EQ((*vm::testing::InvokeByName(*context, "hal.devices.count", {}))
                .at(0)
                .i32(),
            2);
}

TEST_F(HalModuleTest, DeviceAllocatorAndQueries) {
  std::vector<Value> results =
      CallOk("hal.device.allocator", {RefValue(device_)});
  EXPECT_EQ(results.at(0).ref(), device_->allocator().get());

  results = CallOk("hal.device.query.i64",
                   {RefValue(device_), Text("hal.executable.format"),
                    Text(STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64)});
  EXPECT_EQ(results.at(0).i32(), 1);
  EXPECT_EQ(results.at(1).i64(), 1);
  // Unknown keys are "not found", reported as ok = 0 rather than an error.
  results = CallOk("hal.device.query.i64",
                   {RefValue(device_), Text("no.such"), Text("key")});
  EXPECT_EQ(results.at(0).i32(), 0);
  EXPECT_EQ(results.at(1).i64(), 0);
}

TEST_F(HalModuleTest, RefArgumentsAreTypeChecked) {
  // Wrong type.
  Status status = Call("hal.device.allocator", {Text("not a device")}).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.device.allocator: device must be a hal.device, "
                         "got vm.buffer"));
  // Null.
  status = Call("hal.device.allocator", {Value::NullRef()}).status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.device.allocator: device must be a hal.device, "
                         "got a null ref"));
  // Strings must be vm.buffers.
  status = Call("hal.device.query.i64",
                {RefValue(device_), RefValue(device_), Text("key")})
               .status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.device.query.i64: category must be a vm.buffer, "
                         "got hal.device"));
  // A HAL object of another kind.
  status = Call("hal.buffer.length", {RefValue(device_->allocator())}).status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.buffer.length: buffer must be a hal.buffer, got "
                         "hal.allocator"));
  // The backtrace names the native frame.
  EXPECT_THAT(MessageOf(status), HasSubstr("at hal.buffer.length"));
}

TEST_F(HalModuleTest, AllocateAndBuffers) {
  std::vector<Value> results =
      CallOk("hal.allocator.allocate",
             {RefValue(device_->allocator()), Value::I64(kAny),
              Value::I32(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL),
              Value::I32(STRATA_HAL_BUFFER_USAGE_DEFAULT), Value::I64(24)});
  auto *buffer = RefCast<hal::Buffer>(results.at(0).ref());
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(buffer->byte_length(), 24u);
  EXPECT_EQ(CallOk("hal.buffer.length", {results[0]}).at(0).i64(), 24);

  Status status =
      Call("hal.allocator.allocate",
           {RefValue(device_->allocator()), Value::I64(kAny), Value::I32(0),
            Value::I32(STRATA_HAL_BUFFER_USAGE_DEFAULT), Value::I64(-8)})
          .status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.allocator.allocate: allocation size must be >= "
                         "0, got -8"));

  // hal.buffer.assert: minimum length, with the program's message.
  CallOk("hal.buffer.assert", {results[0], Text("input"), Value::I64(24)});
  status =
      Call("hal.buffer.assert", {results[0], Text("input 2"), Value::I64(32)})
          .status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(MessageOf(status),
              StartsWith("input 2: expected a buffer of at least 32 bytes, "
                         "got 24 bytes"));
  status = Call("hal.buffer.assert",
                {Value::NullRef(), Text("input 3"), Value::I64(4)})
               .status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("input 3: expected a buffer of at least 4 bytes, got "
                         "null"));
}

// hal.buffer.load reads 1, 2, 4 or 8 little-endian bytes, zero-extended.
TEST_F(HalModuleTest, BufferLoad) {
  RefPtr<hal::Buffer> buffer = Allocate(16);
  ASSERT_NE(buffer, nullptr);
  const Value bufferValue = RefValue(buffer);
  const uint8_t bytes[16] = {0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x88,
                             0xff, 0xfe, 0xfd, 0xfc, 0x10, 0x20, 0x30, 0x40};
  ASSERT_TRUE(buffer->WriteData(0, bytes).ok());
  auto load = [&](int64_t offset, int32_t length) {
    return CallOk("hal.buffer.load",
                  {bufferValue, Value::I64(offset), Value::I32(length)})
        .at(0)
        .i64();
  };
  EXPECT_EQ(load(0, 1), 0x01);
  EXPECT_EQ(load(8, 1), 0xff);
  EXPECT_EQ(load(0, 2), 0x0201);
  EXPECT_EQ(load(8, 4), 0xfcfdfeffLL);
  EXPECT_EQ(load(0, 8), static_cast<int64_t>(0x8807060504030201ULL));
  EXPECT_EQ(load(12, 4), 0x40302010);

  Status status =
      Call("hal.buffer.load", {bufferValue, Value::I64(14), Value::I32(4)})
          .status();
  EXPECT_EQ(status.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(MessageOf(status), HasSubstr("exceeds a buffer of 16 bytes"));
  EXPECT_THAT(MessageOf(status), HasSubstr("hal.buffer.load"));
  status = Call("hal.buffer.load", {bufferValue, Value::I64(0), Value::I32(3)})
               .status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.buffer.load: byte length must be 1, 2, 4 or 8, "
                         "got 3"));
  status = Call("hal.buffer.load", {bufferValue, Value::I64(-1), Value::I32(4)})
               .status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
}

TEST_F(HalModuleTest, BufferViews) {
  RefPtr<hal::Buffer> buffer = Allocate(64);
  // 2x3xf32 at byte 8 of the buffer, to its end.
  std::vector<Value> results =
      CallOk("hal.buffer_view.create",
             {RefValue(buffer), Value::I64(8), Value::I64(-1), Value::I32(kF32),
              Value::I32(kDense), Value::I32(2), Value::I64(2), Value::I64(3)});
  auto *view = RefCast<hal::BufferView>(results.at(0).ref());
  ASSERT_NE(view, nullptr);
  EXPECT_EQ(view->FormatShape(), "2x3xf32");
  EXPECT_EQ(view->buffer()->byte_length(), 56u);
  EXPECT_EQ(view->buffer()->byte_offset(), 8u);

  Value view_value = results[0];
  auto *view_buffer = RefCast<hal::Buffer>(
      CallOk("hal.buffer_view.buffer", {view_value}).at(0).ref());
  EXPECT_EQ(view_buffer, view->buffer().get());
  EXPECT_EQ(CallOk("hal.buffer_view.element_type", {view_value}).at(0).i32(),
            kF32);
  EXPECT_EQ(CallOk("hal.buffer_view.rank", {view_value}).at(0).i32(), 2);
  EXPECT_EQ(
      CallOk("hal.buffer_view.dim", {view_value, Value::I32(1)}).at(0).i64(),
      3);
  Status status =
      Call("hal.buffer_view.dim", {view_value, Value::I32(2)}).status();
  EXPECT_EQ(status.code(), StatusCode::kOutOfRange);
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.buffer_view.dim: dimension index 2 is out of "
                         "range for a buffer view of shape 2x3xf32"));

  // Explicit length; then ranges and shapes that do not fit.
  CallOk("hal.buffer_view.create",
         {RefValue(buffer), Value::I64(0), Value::I64(16), Value::I32(kF32),
          Value::I32(kDense), Value::I32(1), Value::I64(4)});
  status = Call("hal.buffer_view.create",
                {RefValue(buffer), Value::I64(-4), Value::I64(-1),
                 Value::I32(kF32), Value::I32(kDense), Value::I32(0)})
               .status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.buffer_view.create: byte offset must be >= 0"));
  status = Call("hal.buffer_view.create",
                {RefValue(buffer), Value::I64(0), Value::I64(-2),
                 Value::I32(kF32), Value::I32(kDense), Value::I32(0)})
               .status();
  EXPECT_THAT(MessageOf(status), HasSubstr("byte length must be >= 0 or -1"));
  status =
      Call("hal.buffer_view.create",
           {RefValue(buffer), Value::I64(0), Value::I64(8), Value::I32(kF32),
            Value::I32(kDense), Value::I32(1), Value::I64(4)})
          .status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(MessageOf(status), StartsWith("hal.buffer_view.create: "));
  EXPECT_THAT(MessageOf(status), HasSubstr("needs 16 bytes"));
  std::vector<Value> too_many_dims = {RefValue(buffer),   Value::I64(0),
                                      Value::I64(-1),     Value::I32(kF32),
                                      Value::I32(kDense), Value::I32(17)};
  for (int i = 0; i < 17; ++i)
    too_many_dims.push_back(Value::I64(1));
  status = Call("hal.buffer_view.create", too_many_dims).status();
  EXPECT_THAT(MessageOf(status), HasSubstr("rank 17, more than the maximum"));
}

TEST_F(HalModuleTest, BufferViewAssertNamesTheArgument) {
  std::vector<float> four = {1, 2, 3, 4};
  std::vector<float> three = {1, 2, 3};
  RefPtr<hal::BufferView> good = MakeView({4}, four);
  RefPtr<hal::BufferView> bad = MakeView({3}, three);
  Value message = Text("argument 0 of @simple_mul");
  auto assert_view = [&](Value view, int32_t element_type,
                         std::vector<int64_t> dims) {
    std::vector<Value> arguments = {
        view, message, Value::I32(element_type), Value::I32(kDense),
        Value::I32(static_cast<int32_t>(dims.size()))};
    for (int64_t dim : dims)
      arguments.push_back(Value::I64(dim));
    return Call("hal.buffer_view.assert", arguments).status();
  };

  EXPECT_TRUE(assert_view(RefValue(good), kF32, {4}).ok());

  Status status = assert_view(RefValue(bad), kF32, {4});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(MessageOf(status),
              StartsWith("argument 0 of @simple_mul: expected 4xf32, got "
                         "3xf32"));
  status = assert_view(RefValue(good), STRATA_HAL_ELEMENT_TYPE_SINT_32, {4});
  EXPECT_THAT(MessageOf(status),
              StartsWith("argument 0 of @simple_mul: expected 4xi32, got "
                         "4xf32"));
  status = assert_view(RefValue(good), kF32, {2, 2});
  EXPECT_THAT(MessageOf(status),
              StartsWith("argument 0 of @simple_mul: expected 2x2xf32, got "
                         "4xf32"));
  status = assert_view(Value::NullRef(), kF32, {4});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(MessageOf(status),
              StartsWith("argument 0 of @simple_mul: expected a buffer view "
                         "4xf32, got null"));
  status = assert_view(Text("a string"), kF32, {4});
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(MessageOf(status),
              StartsWith("argument 0 of @simple_mul: expected a buffer view "
                         "4xf32, got a vm.buffer"));
  // Encoding.
  status = Call("hal.buffer_view.assert",
                {RefValue(good), message, Value::I32(kF32), Value::I32(7),
                 Value::I32(1), Value::I64(4)})
               .status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("argument 0 of @simple_mul: expected encoding 7"));
}

TEST_F(HalModuleTest, FillCopyExecuteAndAwait) {
  RefPtr<hal::Buffer> source = Allocate(16);
  RefPtr<hal::Buffer> target = Allocate(16);
  std::vector<Value> results =
      CallOk("hal.command_buffer.create",
             {RefValue(device_), Value::I32(kOneShot),
              Value::I32(kAllCategories), Value::I64(kAny), Value::I32(0)});
  Value cmd = results.at(0);
  ASSERT_NE(RefCast<hal::CommandBuffer>(cmd.ref()), nullptr);
  float two = 2.0f;
  int32_t two_bits;
  std::memcpy(&two_bits, &two, 4);
  CallOk("hal.command_buffer.fill_buffer",
         {cmd, RefValue(source), Value::I64(0), Value::I64(-1),
          Value::I32(two_bits), Value::I32(4)});
  CallOk("hal.command_buffer.execution_barrier",
         {cmd, Value::I32(0), Value::I32(0), Value::I32(0)});
  CallOk("hal.command_buffer.copy_buffer",
         {cmd, RefValue(source), Value::I64(4), RefValue(target), Value::I64(0),
          Value::I64(8)});
  CallOk("hal.command_buffer.finalize", {cmd});

  Value fence =
      CallOk("hal.fence.create", {RefValue(device_), Value::I32(0)}).at(0);
  ASSERT_NE(RefCast<hal::Fence>(fence.ref()), nullptr);
  // Not reached yet: a poll times out, reported through the result.
  EXPECT_EQ(CallOk("hal.fence.await", {Value::I32(0), Value::I32(1), fence})
                .at(0)
                .i32(),
            static_cast<int32_t>(StatusCode::kDeadlineExceeded));

  CallOk("hal.device.queue.execute",
         {RefValue(device_), Value::I64(kAny), Value::NullRef(), fence,
          Value::I32(1), cmd});
  // A null fence in the list counts as reached.
  EXPECT_EQ(CallOk("hal.fence.await",
                   {Value::I32(-1), Value::I32(2), fence, Value::NullRef()})
                .at(0)
                .i32(),
            0);
  // Only the copied bytes are defined: allocations are not zeroed.
  EXPECT_EQ(ReadFloats(*target, 0, 2), (std::vector<float>{2.0f, 2.0f}));

  // One-shot command buffers run once.
  Value fence2 =
      CallOk("hal.fence.create", {RefValue(device_), Value::I32(0)}).at(0);
  Status status =
      Call("hal.device.queue.execute", {RefValue(device_), Value::I64(kAny),
                                        fence, fence2, Value::I32(1), cmd})
          .status();
  EXPECT_FALSE(status.ok());
  // The device failed the signal fence too, so awaiting it reports the same.
  Status await_status =
      Call("hal.fence.await", {Value::I32(-1), Value::I32(1), fence2}).status();
  EXPECT_EQ(await_status.code(), status.code());
  EXPECT_THAT(MessageOf(await_status), HasSubstr("command buffer 0"));
}

TEST_F(HalModuleTest, CommandArgumentErrors) {
  Value cmd =
      CallOk("hal.command_buffer.create",
             {RefValue(device_), Value::I32(kOneShot),
              Value::I32(kAllCategories), Value::I64(kAny), Value::I32(0)})
          .at(0);
  Status status =
      Call("hal.command_buffer.create",
           {RefValue(device_), Value::I32(kOneShot), Value::I32(kAllCategories),
            Value::I64(kAny), Value::I32(-1)})
          .status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.command_buffer.create: binding capacity must be "
                         ">= 0, got -1"));
  status = Call("hal.command_buffer.fill_buffer",
                {cmd, Value::NullRef(), Value::I64(0), Value::I64(-1),
                 Value::I32(0), Value::I32(4)})
               .status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.command_buffer.fill_buffer: target buffer must "
                         "be a hal.buffer, got a null ref"));
  status = Call("hal.command_buffer.fill_buffer",
                {cmd, RefValue(Allocate(8)), Value::I64(0), Value::I64(-1),
                 Value::I32(0), Value::I32(3)})
               .status();
  EXPECT_THAT(MessageOf(status), HasSubstr("pattern length must be 1, 2 or 4"));
  CallOk("hal.command_buffer.finalize", {cmd});

  Value fence =
      CallOk("hal.fence.create", {RefValue(device_), Value::I32(0)}).at(0);
  status = Call("hal.device.queue.execute",
                {RefValue(device_), Value::I64(kAny), Value::NullRef(),
                 Value::NullRef(), Value::I32(1), cmd})
               .status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.device.queue.execute: signal fence must be a "
                         "hal.fence, got a null ref"));
  status = Call("hal.device.queue.execute",
                {RefValue(device_), Value::I64(kAny), Value::NullRef(), fence,
                 Value::I32(2), cmd, Value::NullRef()})
               .status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.device.queue.execute: command buffer 1 must be "
                         "a hal.command_buffer, got a null ref"));
  status =
      Call("hal.fence.await", {Value::I32(0), Value::I32(1), cmd}).status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.fence.await: fence 0 must be a hal.fence, got "
                         "hal.command_buffer"));
}

TEST_F(HalModuleTest, FenceSignalAndFailure) {
  Value fence =
      CallOk("hal.fence.create", {RefValue(device_), Value::I32(0)}).at(0);
  CallOk("hal.fence.signal", {fence});
  EXPECT_EQ(CallOk("hal.fence.await", {Value::I32(0), Value::I32(1), fence})
                .at(0)
                .i32(),
            0);
  // Awaiting nothing succeeds at once.
  EXPECT_EQ(
      CallOk("hal.fence.await", {Value::I32(0), Value::I32(0)}).at(0).i32(), 0);

  // A failed fence fails the await with its own status, even when another
  // fence in the list is still pending and the wait is unbounded.
  Value pending =
      CallOk("hal.fence.create", {RefValue(device_), Value::I32(0)}).at(0);
  Value failed =
      CallOk("hal.fence.create", {RefValue(device_), Value::I32(0)}).at(0);
  RefCast<hal::Fence>(failed.ref())
      ->Fail(AbortedError("dispatch 'f' failed with code 7"));
  Status status =
      Call("hal.fence.await", {Value::I32(-1), Value::I32(2), pending, failed})
          .status();
  EXPECT_EQ(status.code(), StatusCode::kAborted);
  EXPECT_THAT(MessageOf(status), StartsWith("dispatch 'f' failed with code 7"));

  // A failure whose code happens to be DEADLINE_EXCEEDED is still a failure.
  Value timed_out =
      CallOk("hal.fence.create", {RefValue(device_), Value::I32(0)}).at(0);
  RefCast<hal::Fence>(timed_out.ref())
      ->Fail(DeadlineExceededError("work timed out"));
  status = Call("hal.fence.await", {Value::I32(5), Value::I32(1), timed_out})
               .status();
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(MessageOf(status), StartsWith("work timed out"));
}

class HalModuleExecutableTest : public HalModuleTest {
protected:
  Value CreateExecutable() {
    std::vector<uint8_t> bytes = ReadFileBytes(HAL_TEST_LIBRARY_PATH);
    std::vector<Value> results =
        CallOk("hal.executable.create",
               {RefValue(device_), Value::I64(kAny),
                Text(STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64),
                RefValue(vm::ByteBuffer::CopyOf(bytes)), Value::NullRef()});
    return results.empty() ? Value::NullRef() : results[0];
  }

  Value NewCommandBuffer() {
    return CallOk("hal.command_buffer.create",
                  {RefValue(device_), Value::I32(kOneShot),
                   Value::I32(kAllCategories), Value::I64(kAny), Value::I32(0)})
        .at(0);
  }

  // Finalizes, submits and awaits `cmd`; the first failing step's status.
  Status Run(Value cmd) {
    STRATA_RETURN_IF_ERROR(Call("hal.command_buffer.finalize", {cmd}).status());
    Value fence =
        CallOk("hal.fence.create", {RefValue(device_), Value::I32(0)}).at(0);
    STRATA_RETURN_IF_ERROR(Call("hal.device.queue.execute",
                                {RefValue(device_), Value::I64(kAny),
                                 Value::NullRef(), fence, Value::I32(1), cmd})
                               .status());
    return Call("hal.fence.await", {Value::I32(-1), Value::I32(1), fence})
        .status();
  }
};

TEST_F(HalModuleExecutableTest, DispatchesWithBindingsAndConstants) {
  Value executable = CreateExecutable();
  ASSERT_NE(RefCast<hal::Executable>(executable.ref()), nullptr);
  std::vector<float> a = {1, 2, 3, 4}, b = {10, 20, 30, 40};
  RefPtr<hal::BufferView> a_view = MakeView({4}, a);
  RefPtr<hal::BufferView> b_view = MakeView({4}, b);
  RefPtr<hal::Buffer> out = Allocate(32);

  Value cmd = NewCommandBuffer();
  // add_f32 (export 0): out[0..4) = a + b, written at byte 16 of `out`.
  CallOk("hal.command_buffer.dispatch",
         {cmd, executable, Value::I32(0), Value::I32(1), Value::I32(1),
          Value::I32(1), Value::I64(0), Value::I32(0), Value::I32(3),
          RefValue(a_view->buffer()), Value::I64(0), Value::I64(16),
          RefValue(b_view->buffer()), Value::I64(0), Value::I64(-1),
          RefValue(out), Value::I64(16), Value::I64(16)});
  CallOk("hal.command_buffer.execution_barrier",
         {cmd, Value::I32(0), Value::I32(0), Value::I32(0)});
  // scale (export 1, constant 0 = f32 bits): out[0..4) = a * 0.5.
  float half = 0.5f;
  int32_t half_bits;
  std::memcpy(&half_bits, &half, 4);
  CallOk("hal.command_buffer.dispatch",
         {cmd, executable, Value::I32(1), Value::I32(4), Value::I32(1),
          Value::I32(1), Value::I64(0), Value::I32(1), Value::I32(half_bits),
          Value::I32(2), RefValue(a_view->buffer()), Value::I64(0),
          Value::I64(-1), RefValue(out), Value::I64(0), Value::I64(16)});
  Status status = Run(cmd);
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(ReadFloats(*out, 0, 8),
            (std::vector<float>{0.5f, 1, 1.5f, 2, 11, 22, 33, 44}));
}

TEST_F(HalModuleExecutableTest, FailingDispatchFailsTheCall) {
  Value executable = CreateExecutable();
  Value cmd = NewCommandBuffer();
  // fail (export 2) returns 7 in workgroup x == 2.
  CallOk("hal.command_buffer.dispatch",
         {cmd, executable, Value::I32(2), Value::I32(4), Value::I32(1),
          Value::I32(1), Value::I64(0), Value::I32(0), Value::I32(1),
          RefValue(Allocate(16)), Value::I64(0), Value::I64(-1)});
  Status status = Run(cmd);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(MessageOf(status),
              HasSubstr("export 'fail' failed with code 7 in workgroup (2, 0, "
                        "0)"));
}

TEST_F(HalModuleExecutableTest, DispatchArgumentErrors) {
  Value executable = CreateExecutable();
  Value cmd = NewCommandBuffer();
  Status status =
      Call("hal.command_buffer.dispatch",
           {cmd, executable, Value::I32(2), Value::I32(-1), Value::I32(1),
            Value::I32(1), Value::I64(0), Value::I32(0), Value::I32(1),
            RefValue(Allocate(16)), Value::I64(0), Value::I64(-1)})
          .status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.command_buffer.dispatch: workgroup count x must "
                         "be >= 0, got -1"));
  status = Call("hal.command_buffer.dispatch",
                {cmd, executable, Value::I32(2), Value::I32(1), Value::I32(1),
                 Value::I32(1), Value::I64(0), Value::I32(0), Value::I32(1),
                 Value::NullRef(), Value::I64(0), Value::I64(-1)})
               .status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.command_buffer.dispatch: binding 0 buffer must "
                         "be a hal.buffer, got a null ref"));
  status = Call("hal.command_buffer.dispatch",
                {cmd, executable, Value::I32(2), Value::I32(1), Value::I32(1),
                 Value::I32(1), Value::I64(0), Value::I32(0), Value::I32(1),
                 RefValue(Allocate(16)), Value::I64(-3), Value::I64(-1)})
               .status();
  EXPECT_THAT(MessageOf(status), HasSubstr("binding 0 offset must be >= 0"));
  // Binding count checked by the HAL against the export.
  status = Call("hal.command_buffer.dispatch",
                {cmd, executable, Value::I32(0), Value::I32(1), Value::I32(1),
                 Value::I32(1), Value::I64(0), Value::I32(0), Value::I32(1),
                 RefValue(Allocate(16)), Value::I64(0), Value::I64(-1)})
               .status();
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
}

TEST_F(HalModuleExecutableTest, CreateErrors) {
  std::vector<uint8_t> bytes = ReadFileBytes(HAL_TEST_LIBRARY_PATH);
  Value data = RefValue(vm::ByteBuffer::CopyOf(bytes));
  Status status =
      Call("hal.executable.create", {RefValue(device_), Value::I64(kAny),
                                     Text("spirv"), data, Value::NullRef()})
          .status();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.executable.create: loading a 'spirv' executable "
                         "of "));
  status = Call("hal.executable.create",
                {RefValue(device_), Value::I64(kAny),
                 Text(STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64),
                 Text("not an ELF file"), Value::NullRef()})
               .status();
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(MessageOf(status), HasSubstr("executable of 15 bytes"));
  status =
      Call("hal.executable.create",
           {RefValue(device_), Value::I64(kAny),
            Text(STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64), data, Text("abc")})
          .status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.executable.create: constants must be a whole "
                         "number of 32-bit values, got 3 bytes"));
  // Library ABI v0 takes no executable constants; the loader says so.
  status =
      Call("hal.executable.create",
           {RefValue(device_), Value::I64(kAny),
            Text(STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64), data, Text("abcd")})
          .status();
  EXPECT_FALSE(status.ok());
  status =
      Call("hal.executable.create", {RefValue(device_), Value::I64(kAny),
                                     Value::NullRef(), data, Value::NullRef()})
          .status();
  EXPECT_THAT(MessageOf(status),
              StartsWith("hal.executable.create: format must be a vm.buffer, "
                         "got a null ref"));
}

} // namespace
} // namespace strata::modules::testing
