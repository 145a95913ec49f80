#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <map>
#include <thread>

#include <unistd.h>

#include "json_value.h"
#include "strata/base/file_contents.h"
#include "strata/hal/api.h"
#include "strata/hal/drivers/local_sync/local_sync_driver.h"
#include "strata/hal/drivers/register_drivers.h"
#include "strata/hal/local/executable_library.h"

namespace strata::hal {
namespace {

using namespace std::chrono_literals;

constexpr QueueAffinity kAny = STRATA_HAL_QUEUE_AFFINITY_ANY;

TEST(DriverRegistryTest, ParseDeviceUri) {
  auto plain = ParseDeviceUri("local-sync");
  ASSERT_TRUE(plain.ok());
  EXPECT_EQ(plain->driver, "local-sync");
  EXPECT_EQ(plain->path, "");
  auto with_path = ParseDeviceUri("local-sync://0");
  ASSERT_TRUE(with_path.ok());
  EXPECT_EQ(with_path->driver, "local-sync");
  EXPECT_EQ(with_path->path, "0");
  auto with_options = ParseDeviceUri("local-task?workers=2");
  ASSERT_TRUE(with_options.ok());
  EXPECT_EQ(with_options->driver, "local-task");
  EXPECT_EQ(with_options->path, "?workers=2");
  EXPECT_FALSE(ParseDeviceUri("://0").ok());
  EXPECT_FALSE(ParseDeviceUri("").ok());
}

TEST(DriverRegistryTest, RegisterListAndCreate) {
  DriverRegistry registry;
  ASSERT_TRUE(RegisterAllDrivers(registry).ok());
  EXPECT_EQ(RegisterLocalSyncDriver(registry).code(),
            StatusCode::kAlreadyExists);

  // The cuda driver (when built) lists the machine's GPUs, if any; the
  // local drivers are always there.
  std::vector<DriverRegistry::DriverEntry> drivers;
  for (DriverRegistry::DriverEntry &driver : registry.EnumerateDrivers())
    if (driver.name != "cuda")
      drivers.push_back(std::move(driver));
  ASSERT_EQ(drivers.size(), 2u);
  EXPECT_EQ(drivers[0].name, "local-sync");
  EXPECT_FALSE(drivers[0].description.empty());
  EXPECT_EQ(drivers[1].name, "local-task");

  std::vector<DriverRegistry::DeviceEntry> devices;
  for (DriverRegistry::DeviceEntry &device : registry.EnumerateDevices())
    if (device.driver != "cuda")
      devices.push_back(std::move(device));
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].uri, "local-sync://0");
  EXPECT_EQ(devices[1].uri, "local-task://0");

  for (const char *uri : {"local-sync", "local-sync://", "local-sync://0"}) {
    auto device = registry.CreateDevice(uri);
    ASSERT_TRUE(device.ok()) << uri << ": " << device.status().ToString();
    EXPECT_EQ((*device)->id(), "local-sync");
    EXPECT_EQ(RefCast<Device>(device->get()), device->get());
    EXPECT_EQ(std::string((*device)->ref_type()->name), "hal.device");
  }

  // The driver is created once and reused.
  auto driver_a = registry.GetDriver("local-sync");
  auto driver_b = registry.GetDriver("local-sync");
  ASSERT_TRUE(driver_a.ok() && driver_b.ok());
  EXPECT_EQ(driver_a->get(), driver_b->get());
  EXPECT_EQ(RefCast<Driver>(driver_a->get()), driver_a->get());
  EXPECT_EQ(std::string((*driver_a)->ref_type()->name), "hal.driver");
}

TEST(DriverRegistryTest, UnknownDriverOrDevice) {
  DriverRegistry registry;
  ASSERT_TRUE(RegisterLocalSyncDriver(registry).ok());
  auto missing = registry.CreateDevice("cuda://0");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("'cuda'"), std::string_view::npos);
  EXPECT_NE(missing.status().message().find("local-sync"),
            std::string_view::npos)
      << missing.status().ToString();
  auto bad_path = registry.CreateDevice("local-sync://7");
  EXPECT_EQ(bad_path.status().code(), StatusCode::kNotFound);
  EXPECT_NE(bad_path.status().message().find("'7'"), std::string_view::npos);

  DriverRegistry empty;
  EXPECT_NE(empty.CreateDevice("local-sync").status().message().find("none"),
            std::string_view::npos);
}

TEST(DriverRegistryTest, DumpDeviceInfo) {
  DriverRegistry registry;
  ASSERT_TRUE(RegisterLocalSyncDriver(registry).ok());
  auto info = registry.DumpDeviceInfo("local-sync://0");
  ASSERT_TRUE(info.ok()) << info.status().ToString();
  EXPECT_NE(info->find("local-sync"), std::string::npos);
  EXPECT_NE(info->find(STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64),
            std::string::npos)
      << *info;
}

class DeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto device = CreateLocalSyncDriver()->CreateDevice("0");
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = *device;
  }
  RefPtr<Device> device_;
};

TEST_F(DeviceTest, Queries) {
  EXPECT_EQ(*device_->QueryI64("hal.executable.format",
                               STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64),
            1);
  EXPECT_EQ(*device_->QueryI64("hal.executable.format", "vulkan-spirv"), 0);
  EXPECT_EQ(*device_->QueryI64("hal.device", "concurrency"), 1);
  EXPECT_EQ(*device_->QueryI64("hal.dispatch", "concurrency"), 1);
  EXPECT_EQ(*device_->QueryI64("hal.device.id", "local-*"), 1);
  EXPECT_EQ(*device_->QueryI64("hal.device.id", "local-sync"), 1);
  EXPECT_EQ(*device_->QueryI64("hal.device.id", "cuda*"), 0);
  EXPECT_EQ(device_->QueryI64("hal.device", "color").status().code(),
            StatusCode::kNotFound);
  EXPECT_TRUE(device_->CanLoadExecutableFormat(
      STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64));
  // VMVX bytecode loads through one of the default loaders.
  EXPECT_TRUE(device_->CanLoadExecutableFormat("vmvx-bytecode-fb"));
  EXPECT_FALSE(device_->CanLoadExecutableFormat("vulkan-spirv"));
}

TEST_F(DeviceTest, AllocatorIsReplaceable) {
  RefPtr<Allocator> original = device_->allocator();
  ASSERT_TRUE(original);
  EXPECT_EQ(original->name(), "local-sync");
  RefPtr<HeapAllocator> replacement =
      HeapAllocator::Create("replacement", {.max_allocation_size = 128});
  device_->SetAllocator(replacement);
  EXPECT_EQ(device_->allocator().get(), replacement.get());
  auto too_big = device_->QueueAlloca(kAny, nullptr, nullptr,
                                      STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                      STRATA_HAL_BUFFER_USAGE_DEFAULT, 256);
  EXPECT_EQ(too_big.status().code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(device_->Trim().ok());
}

TEST_F(DeviceTest, FencesOrderQueueOperations) {
  auto wait = device_->CreateFence();
  auto allocated = device_->CreateFence();
  auto written = device_->CreateFence();
  auto read = device_->CreateFence();
  ASSERT_TRUE(wait.ok() && allocated.ok() && written.ok() && read.ok());
  EXPECT_EQ((*wait)->timepoint_count(), 1u);
  EXPECT_EQ((*wait)->Query().code(), StatusCode::kDeferred);

  // local-sync blocks the submitting thread on the wait fence.
  std::thread signaller([&] {
    std::this_thread::sleep_for(5ms);
    EXPECT_TRUE((*wait)->Signal().ok());
  });
  auto buffer = device_->QueueAlloca(kAny, wait->get(), allocated->get(),
                                     STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                     STRATA_HAL_BUFFER_USAGE_DEFAULT, 8);
  signaller.join();
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  EXPECT_TRUE((*allocated)->Query().ok());

  uint8_t source[] = {1, 2, 3, 4};
  ASSERT_TRUE(device_
                  ->QueueWrite(kAny, allocated->get(), written->get(), source,
                               buffer->get(), 4)
                  .ok());
  uint8_t target[4] = {};
  ASSERT_TRUE(device_
                  ->QueueRead(kAny, written->get(), read->get(), buffer->get(),
                              4, target)
                  .ok());
  EXPECT_EQ(target[3], 4);
  EXPECT_TRUE((*read)->Wait(Deadline::Immediate()).ok());
  EXPECT_TRUE(
      device_->QueueDealloca(kAny, read->get(), nullptr, buffer->get()).ok());
  EXPECT_TRUE(device_->QueueFlush(kAny).ok());
  // A capture without dispatches is a valid, empty trace.
  std::string trace = ::testing::TempDir() + "device_test_trace.json";
  EXPECT_TRUE(device_->ProfilingBegin({.file_path = trace}).ok());
  EXPECT_EQ(device_->ProfilingBegin({.file_path = trace}).code(),
            StatusCode::kFailedPrecondition);
  EXPECT_TRUE(device_->ProfilingFlush().ok());
  EXPECT_TRUE(device_->ProfilingEnd().ok());
  Result<OwnedBytes> trace_bytes = ReadFileContents(trace);
  ASSERT_TRUE(trace_bytes.ok());
  std::string_view json(reinterpret_cast<const char *>(trace_bytes->data()),
                        trace_bytes->size());
  EXPECT_EQ(json, "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [\n]}\n");
  EXPECT_EQ(device_->ProfilingBegin({}).code(), StatusCode::kInvalidArgument);
}

TEST_F(DeviceTest, FailedOperationFailsSignalFence) {
  auto buffer = device_->allocator()->AllocateBuffer(
      STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, STRATA_HAL_BUFFER_USAGE_DEFAULT, 4);
  ASSERT_TRUE(buffer.ok());
  auto signal = device_->CreateFence();
  ASSERT_TRUE(signal.ok());
  uint8_t too_much[8] = {};
  Status status = device_->QueueWrite(kAny, nullptr, signal->get(), too_much,
                                      buffer->get(), 0);
  EXPECT_EQ(status.code(), StatusCode::kOutOfRange);
  EXPECT_EQ((*signal)->Wait(Deadline::Immediate()).code(),
            StatusCode::kOutOfRange);

  // A failed wait fence fails the operation and its signal fence.
  auto next = device_->CreateFence();
  ASSERT_TRUE(next.ok());
  Status chained = device_->QueueWrite(kAny, signal->get(), next->get(),
                                       std::span<const uint8_t>(too_much, 4),
                                       buffer->get(), 0);
  EXPECT_EQ(chained.code(), StatusCode::kOutOfRange);
  EXPECT_EQ((*next)->Query().code(), StatusCode::kOutOfRange);
}

// Profiling: one known submission on each local driver, the trace parsed
// back. local-sync runs queue work on the caller; so does local-task when its
// queue is idle, as here.
class DeviceProfilingTest : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    DriverRegistry registry;
    ASSERT_TRUE(RegisterAllDrivers(registry).ok());
    auto device = registry.CreateDevice(GetParam());
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = *device;
    std::ifstream file(HAL_TEST_LIBRARY_PATH, std::ios::binary);
    std::vector<uint8_t> bytes(std::istreambuf_iterator<char>(file), {});
    auto executable = device_->CreateExecutable(
        STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64, bytes);
    ASSERT_TRUE(executable.ok()) << executable.status().ToString();
    executable_ = *executable;
    trace_path_ = ::testing::TempDir() +
                  StrCat("device_profiling_", getpid(), "_",
                         std::string_view(GetParam()).substr(0, 10), ".json");
  }

  // The "X" events of the trace at trace_path_ (fails the test when the
  // file is not valid JSON of the expected layout).
  std::vector<testing::JsonValue> ReadSpans() {
    Result<OwnedBytes> bytes = ReadFileContents(trace_path_);
    EXPECT_TRUE(bytes.ok()) << bytes.status().ToString();
    if (!bytes.ok())
      return {};
    std::optional<testing::JsonValue> trace = testing::ParseJson(
        {reinterpret_cast<const char *>(bytes->data()), bytes->size()});
    EXPECT_TRUE(trace.has_value()) << "the trace is not valid JSON";
    const testing::JsonValue *events =
        trace ? trace->Find("traceEvents") : nullptr;
    EXPECT_TRUE(events && events->is_array());
    if (!events)
      return {};
    std::vector<testing::JsonValue> spans;
    std::map<double, int> named_threads;
    for (const testing::JsonValue &event : events->array()) {
      const testing::JsonValue *ph = event.Find("ph");
      EXPECT_TRUE(ph && ph->is_string());
      if (ph && ph->string() == "M")
        ++named_threads[event.Find("tid")->number()];
      if (ph && ph->string() == "X")
        spans.push_back(event);
    }
    for (const testing::JsonValue &span : spans) {
      for (const char *key : {"name", "cat", "ts", "dur", "tid", "args"})
        EXPECT_NE(span.Find(key), nullptr) << key;
      EXPECT_GE(span.Find("dur")->number(), 0);
      EXPECT_EQ(named_threads[span.Find("tid")->number()], 1)
          << "every thread has one thread_name event";
    }
    return spans;
  }

  RefPtr<Device> device_;
  RefPtr<Executable> executable_;
  std::string trace_path_;
};

double Arg(const testing::JsonValue &span, const char *key) {
  const testing::JsonValue *value = span.Find("args")->Find(key);
  EXPECT_TRUE(value && value->is_number())
      << span.Find("name")->string() << " has no number '" << key << "'";
  return value ? value->number() : -1;
}

std::string StringArg(const testing::JsonValue &span, const char *key) {
  const testing::JsonValue *value = span.Find("args")->Find(key);
  return value ? value->string() : "<none>";
}

TEST_P(DeviceProfilingTest, SpansForQueueOperationsCommandsAndDispatches) {
  constexpr uint32_t kGridExport = 3;
  auto allocated = device_->CreateFence();
  auto written = device_->CreateFence();
  auto executed = device_->CreateFence();
  auto read = device_->CreateFence();
  auto failed = device_->CreateFence();
  ASSERT_TRUE(allocated.ok() && written.ok() && executed.ok() && read.ok() &&
              failed.ok());
  auto grid_buffer = device_->allocator()->AllocateBuffer(
      STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, STRATA_HAL_BUFFER_USAGE_DEFAULT,
      (8 + 2 * 3) * 4);
  ASSERT_TRUE(grid_buffer.ok());

  ASSERT_TRUE(device_->ProfilingBegin({.file_path = trace_path_}).ok());
  auto buffer = device_->QueueAlloca(kAny, nullptr, allocated->get(),
                                     STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                     STRATA_HAL_BUFFER_USAGE_DEFAULT, 256);
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  std::vector<uint8_t> source(16, 7);
  ASSERT_TRUE(device_
                  ->QueueWrite(kAny, allocated->get(), written->get(), source,
                               buffer->get(), 0)
                  .ok());
  auto command_buffer =
      device_->CreateCommandBuffer(STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
                                   STRATA_HAL_COMMAND_CATEGORY_TRANSFER |
                                       STRATA_HAL_COMMAND_CATEGORY_DISPATCH,
                                   kAny, 0);
  ASSERT_TRUE(command_buffer.ok());
  CommandBuffer &cb = **command_buffer;
  uint8_t update[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  BufferBinding bindings[] = {{grid_buffer->get()}};
  ASSERT_TRUE(cb.FillBuffer(buffer->get(), 64, 32, 0xab, 1).ok());
  ASSERT_TRUE(cb.CopyBuffer(buffer->get(), 0, buffer->get(), 128, 16).ok());
  ASSERT_TRUE(cb.UpdateBuffer(update, buffer->get(), 192).ok());
  ASSERT_TRUE(cb.ExecutionBarrier().ok());
  ASSERT_TRUE(
      cb.Dispatch(executable_.get(), kGridExport, {3, 1, 1}, {}, bindings)
          .ok());
  ASSERT_TRUE(cb.Finalize().ok());
  CommandBuffer *list[] = {&cb};
  ASSERT_TRUE(
      device_->QueueExecute(kAny, written->get(), executed->get(), list).ok());
  uint8_t target[16] = {};
  ASSERT_TRUE(device_
                  ->QueueRead(kAny, executed->get(), read->get(), buffer->get(),
                              128, target)
                  .ok());
  EXPECT_EQ(target[15], 7); // The copy ran before the read.
  // A failing operation is a span too, with the error.
  std::vector<uint8_t> too_much(300);
  EXPECT_EQ(device_
                ->QueueWrite(kAny, read->get(), failed->get(), too_much,
                             buffer->get(), 0)
                .code(),
            StatusCode::kOutOfRange);
  ASSERT_TRUE(
      device_->QueueDealloca(kAny, read->get(), nullptr, buffer->get()).ok());
  ASSERT_TRUE(device_->QueueFlush(kAny).ok());
  ASSERT_TRUE(device_->ProfilingEnd().ok());
  // Not captured: the capture ended.
  ASSERT_TRUE(device_->QueueFlush(kAny).ok());

  std::vector<testing::JsonValue> spans = ReadSpans();
  std::map<std::string, int> counts;
  std::map<std::string, const testing::JsonValue *> by_name;
  for (const testing::JsonValue &span : spans) {
    std::string key =
        span.Find("cat")->string() + "/" + span.Find("name")->string();
    ++counts[key];
    if (!by_name.count(key) || !span.Find("args")->Find("error"))
      by_name[key] = &span;
  }
  std::map<std::string, int> expected = {
      {"queue/queue_alloca", 1},    {"queue/queue_write", 2},
      {"queue/queue_execute", 1},   {"queue/queue_read", 1},
      {"queue/queue_dealloca", 1},  {"queue/queue_flush", 1},
      {"command/fill_buffer", 1},   {"command/copy_buffer", 1},
      {"command/update_buffer", 1}, {"dispatch/grid", 1}};
  EXPECT_EQ(counts, expected);
  if (counts != expected)
    return;

  EXPECT_EQ(Arg(*by_name["queue/queue_alloca"], "byte_length"), 256);
  const testing::JsonValue &write = *by_name["queue/queue_write"];
  EXPECT_EQ(Arg(write, "byte_length"), 16);
  EXPECT_EQ(Arg(write, "target_offset"), 0);
  int failed_writes = 0;
  for (const testing::JsonValue &span : spans)
    if (span.Find("name")->string() == "queue_write" &&
        span.Find("args")->Find("error")) {
      ++failed_writes;
      EXPECT_EQ(StringArg(span, "error"), "OUT_OF_RANGE");
      EXPECT_EQ(Arg(span, "byte_length"), 300);
    }
  EXPECT_EQ(failed_writes, 1);
  const testing::JsonValue &execute = *by_name["queue/queue_execute"];
  EXPECT_EQ(Arg(execute, "command_buffer_count"), 1);
  EXPECT_EQ(Arg(execute, "command_count"), 5);
  const testing::JsonValue &read_span = *by_name["queue/queue_read"];
  EXPECT_EQ(Arg(read_span, "byte_length"), 16);
  EXPECT_EQ(Arg(read_span, "source_offset"), 128);
  EXPECT_EQ(Arg(*by_name["queue/queue_dealloca"], "byte_length"), 256);
  EXPECT_EQ(Arg(*by_name["command/fill_buffer"], "byte_length"), 32);
  EXPECT_EQ(Arg(*by_name["command/fill_buffer"], "pattern_length"), 1);
  EXPECT_EQ(Arg(*by_name["command/copy_buffer"], "byte_length"), 16);
  EXPECT_EQ(Arg(*by_name["command/update_buffer"], "byte_length"), 8);
  EXPECT_EQ(StringArg(*by_name["dispatch/grid"], "workgroup_count"), "3x1x1");
  EXPECT_EQ(StringArg(*by_name["dispatch/grid"], "executable"),
            std::string(executable_->name()));

  // Commands and the dispatch run inside queue_execute, on its thread, in
  // recording order. Timestamps are printed with 1 ns resolution.
  const double begin = execute.Find("ts")->number();
  const double end = begin + execute.Find("dur")->number();
  double previous = begin;
  for (const char *name : {"command/fill_buffer", "command/copy_buffer",
                           "command/update_buffer", "dispatch/grid"}) {
    const testing::JsonValue &span = *by_name[name];
    double ts = span.Find("ts")->number();
    EXPECT_EQ(span.Find("tid")->number(), execute.Find("tid")->number())
        << name;
    EXPECT_GE(ts, previous - 0.001) << name;
    EXPECT_LE(ts + span.Find("dur")->number(), end + 0.002) << name;
    previous = ts;
  }
  // Queue operations ordered by fences appear in that order.
  EXPECT_LE(by_name["queue/queue_alloca"]->Find("ts")->number(),
            write.Find("ts")->number());
  EXPECT_LE(write.Find("ts")->number(), begin);
  EXPECT_LE(end, read_span.Find("ts")->number() + 0.002);

  // A new capture starts empty.
  ASSERT_TRUE(device_->ProfilingBegin({.file_path = trace_path_}).ok());
  ASSERT_TRUE(device_->QueueFlush(kAny).ok());
  ASSERT_TRUE(device_->ProfilingEnd().ok());
  spans = ReadSpans();
  ASSERT_EQ(spans.size(), 1u);
  EXPECT_EQ(spans[0].Find("name")->string(), "queue_flush");
  std::remove(trace_path_.c_str());
}

// Dispatches of numbered call sites are named after them; every dispatch
// reaches on_dispatch, also without a file.
TEST_P(DeviceProfilingTest, DispatchSpansNamedAfterTheirCallSites) {
  constexpr uint32_t kGridExport = 3;
  auto grid_buffer = device_->allocator()->AllocateBuffer(
      STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, STRATA_HAL_BUFFER_USAGE_DEFAULT,
      (8 + 2 * 3) * 4);
  ASSERT_TRUE(grid_buffer.ok());
  BufferBinding bindings[] = {{grid_buffer->get()}};
  // Three dispatches of one export: sites 2, 1 and none.
  auto run_dispatches = [&] {
    auto command_buffer = device_->CreateCommandBuffer(
        STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
        STRATA_HAL_COMMAND_CATEGORY_DISPATCH, kAny, 0);
    ASSERT_TRUE(command_buffer.ok());
    CommandBuffer &cb = **command_buffer;
    for (uint32_t site : {2u, 1u, 0u})
      ASSERT_TRUE(cb.Dispatch(executable_.get(), kGridExport, {1, 1, 1}, {},
                              bindings, site)
                      .ok());
    ASSERT_TRUE(cb.Finalize().ok());
    auto done = device_->CreateFence();
    ASSERT_TRUE(done.ok());
    CommandBuffer *list[] = {&cb};
    ASSERT_TRUE(device_->QueueExecute(kAny, nullptr, done->get(), list).ok());
    ASSERT_TRUE((*done)->Wait(Deadline::Infinite()).ok());
  };

  std::vector<std::pair<uint32_t, std::string>> seen;
  ProfilingOptions options;
  options.file_path = trace_path_;
  options.dispatch_site_names = {"matmul:first", "conv2d_relu:second"};
  options.on_dispatch = [&](const DispatchProfile &dispatch) {
    EXPECT_GE(dispatch.duration_ns, 0);
    seen.emplace_back(dispatch.site, std::string(dispatch.export_name));
  };
  ASSERT_TRUE(device_->ProfilingBegin(options).ok());
  run_dispatches();
  ASSERT_TRUE(device_->ProfilingEnd().ok());
  std::vector<std::pair<uint32_t, std::string>> expected = {
      {2, "grid"}, {1, "grid"}, {0, "grid"}};
  EXPECT_EQ(seen, expected);
  std::vector<std::string> names;
  for (const testing::JsonValue &span : ReadSpans())
    if (span.Find("cat")->string() == "dispatch") {
      names.push_back(span.Find("name")->string());
      const testing::JsonValue *site = span.Find("args")->Find("site");
      EXPECT_EQ(site ? site->number() : 0,
                names.back() == "conv2d_relu:second" ? 2
                : names.back() == "matmul:first"     ? 1
                                                     : 0);
      if (site)
        EXPECT_EQ(StringArg(span, "export"), "grid");
    }
  EXPECT_EQ(names, (std::vector<std::string>{"conv2d_relu:second",
                                             "matmul:first", "grid"}));
  std::remove(trace_path_.c_str());

  // Only reported: nothing is written.
  seen.clear();
  options.file_path.clear();
  ASSERT_TRUE(device_->ProfilingBegin(options).ok());
  run_dispatches();
  ASSERT_TRUE(device_->ProfilingEnd().ok());
  EXPECT_EQ(seen, expected);
  EXPECT_FALSE(ReadFileContents(trace_path_).ok());
}

INSTANTIATE_TEST_SUITE_P(Drivers, DeviceProfilingTest,
                         ::testing::Values("local-sync",
                                           "local-task?workers=2"),
                         [](const auto &info) {
                           return std::string(info.index == 0 ? "local_sync"
                                                              : "local_task");
                         });

} // namespace
} // namespace strata::hal
