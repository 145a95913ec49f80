// The local-task driver: URI options, dispatch grids spread over the worker
// pool (each workgroup exactly once, distinct processor ids, failures,
// concurrent submitters), and which submissions run inline. Runs the HAL test
// library.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "strata/hal/api.h"
#include "strata/hal/drivers/local_task/local_task_driver.h"
#include "strata/hal/drivers/local_task/task_grid_runner.h"
#include "strata/hal/drivers/register_drivers.h"
#include "strata/hal/local/executable_library.h"
#include "strata/hal/local/local_device_options.h"

namespace strata::hal {
namespace {

constexpr QueueAffinity kAny = STRATA_HAL_QUEUE_AFFINITY_ANY;
constexpr uint32_t kAddExport = 0, kFailExport = 2, kGridExport = 3,
                   kProcessorExport = 4;

std::vector<uint8_t> ReadFile(const char *path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file.good()) << "cannot open " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), {});
}

RefPtr<Device> CreateDevice(std::string_view uri) {
  DriverRegistry registry;
  EXPECT_TRUE(RegisterAllDrivers(registry).ok());
  auto device = registry.CreateDevice(uri);
  EXPECT_TRUE(device.ok()) << uri << ": " << device.status().ToString();
  return device.ok() ? *device : nullptr;
}

Status CreateDeviceStatus(std::string_view uri) {
  DriverRegistry registry;
  EXPECT_TRUE(RegisterAllDrivers(registry).ok());
  return registry.CreateDevice(uri).status();
}

RefPtr<Buffer> Allocate(Device &device, uint64_t size) {
  auto buffer =
      device.allocator()->AllocateBuffer(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL,
                                         STRATA_HAL_BUFFER_USAGE_DEFAULT, size);
  EXPECT_TRUE(buffer.ok());
  return *buffer;
}

template <typename T> std::vector<T> Read(Buffer &buffer) {
  std::vector<T> values(buffer.byte_length() / sizeof(T));
  EXPECT_TRUE(buffer
                  .ReadData(0, {reinterpret_cast<uint8_t *>(values.data()),
                                values.size() * sizeof(T)})
                  .ok());
  return values;
}

// Records a dispatch of `ordinal` over `count` on `bindings` and submits it
// after `wait_fence` (may be null); returns the fence that reports it.
Result<RefPtr<Fence>> SubmitDispatch(Device &device, Executable &executable,
                                     uint32_t ordinal, WorkgroupCount count,
                                     std::span<const BufferBinding> bindings,
                                     Fence *wait_fence = nullptr) {
  STRATA_ASSIGN_OR_RETURN(
      RefPtr<CommandBuffer> cb,
      device.CreateCommandBuffer(STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
                                 STRATA_HAL_COMMAND_CATEGORY_TRANSFER |
                                     STRATA_HAL_COMMAND_CATEGORY_DISPATCH,
                                 kAny, 0));
  STRATA_RETURN_IF_ERROR(
      cb->Dispatch(&executable, ordinal, count, {}, bindings));
  STRATA_RETURN_IF_ERROR(cb->Finalize());
  STRATA_ASSIGN_OR_RETURN(RefPtr<Fence> fence, device.CreateFence());
  CommandBuffer *list[] = {cb.get()};
  STRATA_RETURN_IF_ERROR(
      device.QueueExecute(kAny, wait_fence, fence.get(), list));
  return fence;
}

// Submits a dispatch and waits for it.
Status Dispatch(Device &device, Executable &executable, uint32_t ordinal,
                WorkgroupCount count, std::span<const BufferBinding> bindings,
                RefPtr<Fence> *out_fence = nullptr) {
  STRATA_ASSIGN_OR_RETURN(
      RefPtr<Fence> fence,
      SubmitDispatch(device, executable, ordinal, count, bindings));
  if (out_fence)
    *out_fence = fence;
  // Failures of the work arrive through the fence, whether it ran inline
  // (the queue was idle) or on the queue thread.
  return fence->Wait(Deadline::AfterMs(60000));
}

TEST(LocalTaskOptionsTest, WorkerCountAndLoaders) {
  RefPtr<Device> device = CreateDevice("local-task?workers=3");
  ASSERT_TRUE(device);
  EXPECT_EQ(device->id(), "local-task");
  EXPECT_EQ(*device->QueryI64("hal.dispatch", "concurrency"), 3);
  EXPECT_NE(device->DumpInfo().find("dispatch concurrency: 3"),
            std::string::npos);

  device = CreateDevice("local-task://0");
  ASSERT_TRUE(device);
  EXPECT_EQ(*device->QueryI64("hal.dispatch", "concurrency"),
            int64_t(HardwareConcurrency()));
  device = CreateDevice("local-task://0?workers=0&loader=system");
  ASSERT_TRUE(device);
  EXPECT_TRUE(*device->QueryI64("hal.executable.format", "elf-x86_64") == 1);
  EXPECT_TRUE(CreateDevice("local-sync?loader=system"));
}

TEST(LocalTaskOptionsTest, BadOptionsAreNamedErrors) {
  struct Case {
    const char *uri;
    StatusCode code;
    const char *needle;
  } cases[] = {
      {"local-task?workers=abc", StatusCode::kInvalidArgument, "'abc'"},
      {"local-task?workers=-1", StatusCode::kInvalidArgument, "workers"},
      {"local-task?workers=100000", StatusCode::kInvalidArgument, "workers"},
      {"local-task?spin_us=20000", StatusCode::kInvalidArgument, "spin_us"},
      {"local-task?spin_us=x", StatusCode::kInvalidArgument, "'x'"},
      {"local-task?pin=2", StatusCode::kInvalidArgument,
       "'pin' expects an integer in [0, 1]"},
      {"local-sync?pin=1", StatusCode::kInvalidArgument,
       "unknown device option 'pin'"},
      {"local-sync?spin_us=10", StatusCode::kInvalidArgument,
       "unknown device option 'spin_us'"},
      {"local-task?threads=2", StatusCode::kInvalidArgument,
       "unknown device option 'threads'"},
      {"local-task?workers", StatusCode::kInvalidArgument, "needs a value"},
      {"local-task?loader=jit", StatusCode::kInvalidArgument,
       "unknown loader 'jit'"},
      {"local-sync?workers=2", StatusCode::kInvalidArgument,
       "unknown device option 'workers'"},
      {"local-task://1", StatusCode::kNotFound, "no device '1'"},
  };
  for (const Case &c : cases) {
    Status status = CreateDeviceStatus(c.uri);
    EXPECT_EQ(status.code(), c.code) << c.uri << ": " << status.ToString();
    EXPECT_NE(status.message().find(c.needle), std::string_view::npos)
        << c.uri << ": " << status.ToString();
  }
}

// (workers, microseconds idle threads spin before sleeping): both the
// sleeping and the spinning hand-offs.
class LocalTaskGridTest
    : public ::testing::TestWithParam<std::pair<uint32_t, uint32_t>> {
protected:
  void SetUp() override {
    device_ = CreateDevice(StrCat("local-task?workers=", GetParam().first,
                                  "&spin_us=", GetParam().second));
    ASSERT_TRUE(device_);
    std::vector<uint8_t> bytes = ReadFile(HAL_TEST_LIBRARY_PATH);
    auto executable = device_->CreateExecutable(
        STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64, bytes);
    ASSERT_TRUE(executable.ok()) << executable.status().ToString();
    executable_ = *executable;
  }

  RefPtr<Device> device_;
  RefPtr<Executable> executable_;
};

TEST_P(LocalTaskGridTest, EveryWorkgroupRunsOnce) {
  const WorkgroupCount grids[] = {{1, 1, 1},  {2, 1, 1},    {5, 1, 1},
                                  {3, 2, 4},  {1000, 1, 1}, {7, 13, 5},
                                  {1, 1, 257}};
  for (WorkgroupCount count : grids) {
    uint32_t total = count.x * count.y * count.z;
    RefPtr<Buffer> out = Allocate(*device_, (8 + 2 * total) * 4);
    ASSERT_TRUE(
        out->WriteData(0, std::vector<uint8_t>(out->byte_length())).ok());
    BufferBinding bindings[] = {{out.get()}};
    ASSERT_TRUE(
        Dispatch(*device_, *executable_, kGridExport, count, bindings).ok());
    std::vector<uint32_t> values = Read<uint32_t>(*out);
    EXPECT_EQ(values[0], count.x);
    EXPECT_EQ(values[1], count.y);
    EXPECT_EQ(values[2], count.z);
    for (uint32_t z = 0; z < count.z; ++z)
      for (uint32_t y = 0; y < count.y; ++y)
        for (uint32_t x = 0; x < count.x; ++x) {
          uint32_t linear = (z * count.y + y) * count.x + x;
          ASSERT_EQ(values[8 + linear], 1u) << x << "," << y << "," << z;
          ASSERT_EQ(values[8 + total + linear], x | y << 8 | z << 16);
        }
  }
}

TEST_P(LocalTaskGridTest, ProcessorIdsAreInRange) {
  constexpr uint32_t kTotal = 4096;
  RefPtr<Buffer> out = Allocate(*device_, kTotal * 4);
  BufferBinding bindings[] = {{out.get()}};
  ASSERT_TRUE(Dispatch(*device_, *executable_, kProcessorExport, {kTotal, 1, 1},
                       bindings)
                  .ok());
  // One submitter: pool threads are 0..N-2 and the caller is N-1.
  for (uint32_t id_plus_one : Read<uint32_t>(*out)) {
    ASSERT_GE(id_plus_one, 1u);
    ASSERT_LE(id_plus_one, GetParam().first);
  }
}

TEST_P(LocalTaskGridTest, FailingWorkgroupFailsTheSubmission) {
  RefPtr<Buffer> out = Allocate(*device_, 4 * 64);
  BufferBinding bindings[] = {{out.get()}};
  RefPtr<Fence> fence;
  Status status = Dispatch(*device_, *executable_, kFailExport, {64, 1, 1},
                           bindings, &fence);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("'fail' failed with code 7 in workgroup "
                                  "(2, 0, 0)"),
            std::string_view::npos)
      << status.ToString();
  EXPECT_EQ(fence->Query().code(), StatusCode::kInternal);
  // The device keeps working after a failed grid.
  RefPtr<Buffer> grid = Allocate(*device_, (8 + 2 * 10) * 4);
  BufferBinding grid_bindings[] = {{grid.get()}};
  EXPECT_TRUE(
      Dispatch(*device_, *executable_, kGridExport, {10, 1, 1}, grid_bindings)
          .ok());
}

TEST_P(LocalTaskGridTest, ConcurrentSubmittersShareThePool) {
  constexpr int kThreads = 4, kRounds = 10;
  constexpr uint32_t kCount = 8 * 300; // 300 workgroups of 8.
  std::vector<std::thread> threads;
  std::vector<int> failures(kThreads, 0);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        std::vector<float> a(kCount), b(kCount);
        for (uint32_t i = 0; i < kCount; ++i) {
          a[i] = float(i + t);
          b[i] = float(round * 1000);
        }
        auto upload = [&](const std::vector<float> &values) {
          RefPtr<Buffer> buffer = Allocate(*device_, kCount * 4);
          EXPECT_TRUE(buffer
                          ->WriteData(0, {reinterpret_cast<const uint8_t *>(
                                              values.data()),
                                          kCount * 4})
                          .ok());
          return buffer;
        };
        RefPtr<Buffer> a_buffer = upload(a), b_buffer = upload(b);
        RefPtr<Buffer> sum = Allocate(*device_, kCount * 4);
        BufferBinding bindings[] = {
            {a_buffer.get()}, {b_buffer.get()}, {sum.get()}};
        if (!Dispatch(*device_, *executable_, kAddExport, {kCount / 8, 1, 1},
                      bindings)
                 .ok()) {
          ++failures[t];
          continue;
        }
        std::vector<float> values = Read<float>(*sum);
        for (uint32_t i = 0; i < kCount; ++i)
          if (values[i] != a[i] + b[i]) {
            ++failures[t];
            break;
          }
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[t], 0) << "thread " << t;
}

INSTANTIATE_TEST_SUITE_P(
    Workers, LocalTaskGridTest,
    ::testing::Values(std::pair(1u, 100u), std::pair(2u, 100u),
                      std::pair(3u, 100u), std::pair(8u, 100u),
                      std::pair(2u, 0u), std::pair(3u, 0u),
                      std::pair(3u, 5000u)),
    [](const auto &info) {
      return StrCat("workers", info.param.first, "_spin", info.param.second);
    });

TEST_P(LocalTaskGridTest, IdleQueueRunsReadyWorkOnTheSubmitter) {
  // Nothing queued and no wait: the submitter runs the grid itself instead
  // of waking the queue thread, so the work is done when the call returns.
  RefPtr<Buffer> grid = Allocate(*device_, (8 + 2 * 10) * 4);
  BufferBinding bindings[] = {{grid.get()}};
  auto fence =
      SubmitDispatch(*device_, *executable_, kGridExport, {10, 1, 1}, bindings);
  ASSERT_TRUE(fence.ok()) << fence.status().ToString();
  EXPECT_TRUE((*fence)->Query().ok()) << (*fence)->Query().ToString();
}

TEST_P(LocalTaskGridTest, ReadyWorkBehindWaitingWorkRunsOnTheQueueThread) {
  // The first submission waits on a semaphore nobody has signalled yet; the
  // second, ready, goes to the queue behind it (not inline) and runs there
  // without waiting for the first.
  RefPtr<Semaphore> semaphore = *device_->CreateSemaphore(0);
  RefPtr<Fence> gate = Fence::CreateAt(semaphore, 1);
  RefPtr<Buffer> first = Allocate(*device_, (8 + 2 * 10) * 4);
  RefPtr<Buffer> second = Allocate(*device_, (8 + 2 * 10) * 4);
  BufferBinding first_bindings[] = {{first.get()}};
  BufferBinding second_bindings[] = {{second.get()}};
  auto waiting = SubmitDispatch(*device_, *executable_, kGridExport, {10, 1, 1},
                                first_bindings, gate.get());
  ASSERT_TRUE(waiting.ok()) << waiting.status().ToString();
  auto ready = SubmitDispatch(*device_, *executable_, kGridExport, {10, 1, 1},
                              second_bindings);
  ASSERT_TRUE(ready.ok()) << ready.status().ToString();
  EXPECT_TRUE((*ready)->Wait(Deadline::AfterMs(60000)).ok());
  EXPECT_EQ((*waiting)->Query().code(), StatusCode::kDeferred);
  ASSERT_TRUE(semaphore->Signal(1).ok());
  EXPECT_TRUE((*waiting)->Wait(Deadline::AfterMs(60000)).ok());
  // The queue is idle again: the next ready submission runs inline.
  auto after = SubmitDispatch(*device_, *executable_, kGridExport, {10, 1, 1},
                              second_bindings);
  ASSERT_TRUE(after.ok()) << after.status().ToString();
  EXPECT_TRUE((*after)->Query().ok()) << (*after)->Query().ToString();
}

TEST(LocalTaskTest, MoreSubmittersThanCallerSlotsTakeTurns) {
  // More submitters than the 64 caller slots: any beyond them wait for a
  // slot to free (how often they meet depends on scheduling).
  RefPtr<Device> device = CreateDevice("local-task?workers=2");
  ASSERT_TRUE(device);
  std::vector<uint8_t> bytes = ReadFile(HAL_TEST_LIBRARY_PATH);
  auto executable =
      device->CreateExecutable(STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64, bytes);
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  constexpr int kThreads = 72;
  std::vector<int> failures(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        RefPtr<Buffer> grid = Allocate(*device, (8 + 2 * 10) * 4);
        BufferBinding bindings[] = {{grid.get()}};
        if (!Dispatch(*device, **executable, kGridExport, {10, 1, 1}, bindings)
                 .ok())
          ++failures[t];
      }
    });
  for (std::thread &thread : threads)
    thread.join();
  for (int t = 0; t < kThreads; ++t)
    EXPECT_EQ(failures[t], 0) << "thread " << t;
}

TEST(LocalTaskOptionsTest, DefaultWorkersFollowTheAffinityMask) {
  std::vector<uint32_t> cpus = AllowedCpus();
  if (!cpus.empty())
    EXPECT_EQ(HardwareConcurrency(), cpus.size());
  EXPECT_GE(HardwareConcurrency(), 1u);
}

TEST(LocalTaskTest, PinnedPoolThreadsTakeTheAllowedCpusAfterTheFirst) {
  std::vector<uint32_t> cpus = AllowedCpus();
  auto runner = TaskGridRunner::Create(3, std::chrono::microseconds(0),
                                       /*pin_workers=*/true);
  ASSERT_TRUE(runner.ok()) << runner.status().ToString();
  const std::vector<int> &pinned = (*runner)->pinned_cpus();
  ASSERT_EQ(pinned.size(), 2u);
  if (cpus.empty())
    GTEST_SKIP() << "the OS does not report an affinity mask";
  for (size_t i = 0; i < pinned.size(); ++i)
    if (pinned[i] >= 0)
      EXPECT_EQ(uint32_t(pinned[i]), cpus[(i + 1) % cpus.size()]);
  auto unpinned = TaskGridRunner::Create(3, std::chrono::microseconds(0));
  ASSERT_TRUE(unpinned.ok());
  EXPECT_TRUE((*unpinned)->pinned_cpus().empty());
}

TEST(LocalTaskTest, PinnedPoolRunsEveryWorkgroup) {
  RefPtr<Device> device = CreateDevice("local-task?workers=3&pin=1");
  ASSERT_TRUE(device);
  std::vector<uint8_t> bytes = ReadFile(HAL_TEST_LIBRARY_PATH);
  auto executable =
      device->CreateExecutable(STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64, bytes);
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  constexpr uint32_t kTotal = 999;
  RefPtr<Buffer> out = Allocate(*device, (8 + 2 * kTotal) * 4);
  ASSERT_TRUE(out->WriteData(0, std::vector<uint8_t>(out->byte_length())).ok());
  BufferBinding bindings[] = {{out.get()}};
  ASSERT_TRUE(
      Dispatch(*device, **executable, kGridExport, {kTotal, 1, 1}, bindings)
          .ok());
  std::vector<uint32_t> values = Read<uint32_t>(*out);
  for (uint32_t x = 0; x < kTotal; ++x)
    ASSERT_EQ(values[8 + x], 1u) << x;
}

TEST(LocalTaskTest, DeviceDestroyedWhileIdleJoinsWorkers) {
  for (int i = 0; i < 20; ++i)
    ASSERT_TRUE(CreateDevice("local-task?workers=4"));
}

} // namespace
} // namespace strata::hal
