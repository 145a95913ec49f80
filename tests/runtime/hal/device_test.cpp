#include <gtest/gtest.h>

#include <thread>

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

  std::vector<DriverRegistry::DriverEntry> drivers =
      registry.EnumerateDrivers();
  ASSERT_EQ(drivers.size(), 2u);
  EXPECT_EQ(drivers[0].name, "local-sync");
  EXPECT_FALSE(drivers[0].description.empty());
  EXPECT_EQ(drivers[1].name, "local-task");

  std::vector<DriverRegistry::DeviceEntry> devices =
      registry.EnumerateDevices();
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
  EXPECT_FALSE(device_->CanLoadExecutableFormat("vmvx-bytecode-fb"));
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

} // namespace
} // namespace strata::hal
