// Deadlines and cancellation of device work on both local drivers: huge
// dispatch grids stop between workgroups, VMVX kernels that never end stop
// on their VM stacks, queued submissions whose wait fence is never reached
// are dropped, and semaphore waits wake; each fails its signal fence with
// the abort signal's status and leaves the device usable.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>
#include <vector>

#include "module_builder.h"
#include "strata/base/abort_signal.h"
#include "strata/hal/api.h"
#include "strata/hal/drivers/register_drivers.h"
#include "strata/hal/local/executable_library.h"
#include "strata/hal/local/vmvx_abi.h"

namespace strata::hal {
namespace {

using ::testing::HasSubstr;
using vm::Opcode;
using vm::testing::FunctionBuilder;
using vm::testing::ModuleBuilder;

constexpr QueueAffinity kAny = STRATA_HAL_QUEUE_AFFINITY_ANY;
constexpr uint32_t kAddExport = 0;
constexpr int64_t kMs = 1000000;
// The largest grid a dispatch may have (2^24 workgroups), dispatched 256
// times in one submission: 2^32 workgroups, far more than run in a test's
// time, so the deadline stops the grid runner between workgroups.
constexpr WorkgroupCount kLargestGrid = {4096, 4096, 1};
static_assert(uint64_t(kLargestGrid.x) * kLargestGrid.y * kLargestGrid.z ==
              kMaxWorkgroupsPerDispatch);
constexpr uint32_t kHugeGridDispatches = 256;

std::vector<uint8_t> ReadFile(const char *path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file.good()) << "cannot open " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), {});
}

// vmvx "spin" export (one binding): loops forever.
std::vector<uint8_t> SpinKernel() {
  ModuleBuilder builder("spin_kernel");
  FunctionBuilder &f =
      builder.AddFunction("spin", "0rIIIIII_v", {.i64 = 6, .ref = 1});
  vm::testing::Label loop = f.NewLabel();
  f.Bind(loop);
  f.Op(Opcode::Branch).Branch(loop);
  builder.AddExport("spin", f.ordinal());
  return builder.Build();
}

RefPtr<AbortSignal> DeadlineIn(int64_t ns) {
  return AbortSignal::Create("function 'test.main'", Deadline::AfterNs(ns));
}

// Cancels `token` after `delay_ms` on another thread.
std::thread CancelLater(RefPtr<CancellationToken> token, int delay_ms) {
  return std::thread([token = std::move(token), delay_ms] {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms));
    token->Cancel();
  });
}

class DeadlineDispatchTest : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    DriverRegistry registry;
    ASSERT_TRUE(RegisterAllDrivers(registry).ok());
    auto device = registry.CreateDevice(GetParam());
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = *device;
    auto library =
        device_->CreateExecutable(STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64,
                                  ReadFile(HAL_TEST_LIBRARY_PATH));
    ASSERT_TRUE(library.ok()) << library.status().ToString();
    library_ = *library;
    auto spin = device_->CreateExecutable(STRATA_HAL_EXECUTABLE_FORMAT_VMVX,
                                          SpinKernel());
    ASSERT_TRUE(spin.ok()) << spin.status().ToString();
    spin_ = *spin;
    for (RefPtr<Buffer> *buffer : {&a_, &b_, &out_}) {
      auto allocated = device_->allocator()->AllocateBuffer(
          STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, STRATA_HAL_BUFFER_USAGE_DEFAULT,
          32 * sizeof(float));
      ASSERT_TRUE(allocated.ok());
      *buffer = *allocated;
    }
  }

  // Submits one dispatch under `signal` (the submitting thread's current
  // signal, as during a call) after `wait_fence`, and waits for its fence.
  // Returns the submission's outcome; `*fence` is its signal fence.
  Status Submit(Executable &executable, uint32_t ordinal, WorkgroupCount count,
                std::span<const BufferBinding> bindings, AbortSignal *signal,
                Fence *wait_fence = nullptr, RefPtr<Fence> *fence = nullptr,
                uint32_t dispatch_count = 1) {
    STRATA_ASSIGN_OR_RETURN(RefPtr<CommandBuffer> cb,
                            device_->CreateCommandBuffer(
                                STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
                                STRATA_HAL_COMMAND_CATEGORY_DISPATCH, kAny, 0));
    for (uint32_t i = 0; i < dispatch_count; ++i)
      STRATA_RETURN_IF_ERROR(
          cb->Dispatch(&executable, ordinal, count, {}, bindings));
    STRATA_RETURN_IF_ERROR(cb->Finalize());
    STRATA_ASSIGN_OR_RETURN(RefPtr<Fence> signal_fence, device_->CreateFence());
    if (fence)
      *fence = signal_fence;
    CommandBuffer *list[] = {cb.get()};
    Status status;
    {
      ScopedAbortSignal current(signal);
      status =
          device_->QueueExecute(kAny, wait_fence, signal_fence.get(), list);
    }
    // local-task returns at once; the outcome arrives through the fence.
    if (status.ok())
      status = signal_fence->Wait(Deadline::AfterMs(60000));
    return status;
  }

  // The device still runs work and gets it right.
  void ExpectUsable() {
    std::vector<float> a(32), b(32);
    for (int i = 0; i < 32; ++i) {
      a[i] = float(i);
      b[i] = float(100 * i);
    }
    ASSERT_TRUE(a_->WriteData(0, {reinterpret_cast<uint8_t *>(a.data()),
                                  a.size() * sizeof(float)})
                    .ok());
    ASSERT_TRUE(b_->WriteData(0, {reinterpret_cast<uint8_t *>(b.data()),
                                  b.size() * sizeof(float)})
                    .ok());
    BufferBinding bindings[] = {{a_.get()}, {b_.get()}, {out_.get()}};
    Status status =
        Submit(*library_, kAddExport, {32, 1, 1}, bindings, nullptr);
    ASSERT_TRUE(status.ok()) << status.ToString();
    std::vector<float> out(32);
    ASSERT_TRUE(out_->ReadData(0, {reinterpret_cast<uint8_t *>(out.data()),
                                   out.size() * sizeof(float)})
                    .ok());
    for (int i = 0; i < 32; ++i)
      EXPECT_EQ(out[i], float(101 * i)) << i;
  }

  Status HugeGrid(AbortSignal *signal, RefPtr<Fence> *fence = nullptr) {
    BufferBinding bindings[] = {{a_.get()}, {b_.get()}, {out_.get()}};
    return Submit(*library_, kAddExport, kLargestGrid, bindings, signal,
                  nullptr, fence, kHugeGridDispatches);
  }

  RefPtr<Device> device_;
  RefPtr<Executable> library_, spin_;
  RefPtr<Buffer> a_, b_, out_;
};

TEST_P(DeadlineDispatchTest, HugeGridStopsAtTheDeadline) {
  RefPtr<Fence> fence;
  Status status = HugeGrid(DeadlineIn(100 * kMs).get(), &fence);
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status.ToString();
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("function 'test.main' exceeded its deadline (0.1 s)"));
  // The signal fence reports it to whoever waits on it.
  EXPECT_EQ(fence->Query().code(), StatusCode::kDeadlineExceeded);
  ExpectUsable();
}

TEST_P(DeadlineDispatchTest, HugeGridIsCancelledFromAnotherThread) {
  auto token = CancellationToken::Create();
  RefPtr<AbortSignal> signal =
      AbortSignal::Create("function 'test.main'", Deadline::Infinite(), token);
  std::thread canceller = CancelLater(token, 30);
  Status status = HugeGrid(signal.get());
  canceller.join();
  EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.ToString();
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("function 'test.main' was cancelled"));
  ExpectUsable();
}

// More than 2^64 workgroups: local-task runs it in slices along z. Either
// the deadline stops it or, where the device documents smaller limits,
// validation refuses it; it never wraps around to a small grid that
// "succeeds".
TEST_P(DeadlineDispatchTest, GridOfMoreThan2To64WorkgroupsEnds) {
  BufferBinding bindings[] = {{a_.get()}, {b_.get()}, {out_.get()}};
  Status status =
      Submit(*library_, kAddExport, {UINT32_MAX, UINT32_MAX, UINT32_MAX},
             bindings, DeadlineIn(100 * kMs).get());
  EXPECT_FALSE(status.ok());
  ExpectUsable();
}

TEST_P(DeadlineDispatchTest, VmvxKernelThatNeverEndsStops) {
  BufferBinding bindings[] = {{out_.get()}};
  RefPtr<Fence> fence;
  Status status = Submit(*spin_, 0, {4, 1, 1}, bindings,
                         DeadlineIn(100 * kMs).get(), nullptr, &fence);
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status.ToString();
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("executable 'spin_kernel' export 'spin' stopped in "
                        "workgroup"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("function 'test.main' exceeded its deadline"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("at spin_kernel.spin"));
  EXPECT_EQ(fence->Query().code(), StatusCode::kDeadlineExceeded);

  auto token = CancellationToken::Create();
  RefPtr<AbortSignal> signal =
      AbortSignal::Create("function 'test.main'", Deadline::Infinite(), token);
  std::thread canceller = CancelLater(token, 30);
  status = Submit(*spin_, 0, {4, 1, 1}, bindings, signal.get());
  canceller.join();
  EXPECT_EQ(status.code(), StatusCode::kCancelled) << status.ToString();
  ExpectUsable();
}

TEST_P(DeadlineDispatchTest, WaitFenceThatIsNeverReached) {
  // Nothing signals `never`: the submission waits until its call's
  // deadline, then fails its fence and the queue moves on.
  RefPtr<Fence> never = *device_->CreateFence();
  BufferBinding bindings[] = {{a_.get()}, {b_.get()}, {out_.get()}};
  RefPtr<Fence> fence;
  Status status = Submit(*library_, kAddExport, {1, 1, 1}, bindings,
                         DeadlineIn(50 * kMs).get(), never.get(), &fence);
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status.ToString();
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("function 'test.main' exceeded its deadline"));
  EXPECT_EQ(fence->Query().code(), StatusCode::kDeadlineExceeded);
  ExpectUsable();
  // Reaching the fence later changes nothing for the dropped submission.
  ASSERT_TRUE(never->Signal().ok());
  ExpectUsable();
}

INSTANTIATE_TEST_SUITE_P(Drivers, DeadlineDispatchTest,
                         ::testing::Values("local-sync",
                                           "local-task?workers=3"),
                         [](const auto &info) {
                           return std::string(info.index == 0 ? "LocalSync"
                                                              : "LocalTask");
                         });

TEST(DeadlineSemaphoreTest, WaitsEndWhenTheSignalFires) {
  RefPtr<HostSemaphore> semaphore = HostSemaphore::Create(0);
  SemaphoreTimepoint timepoints[] = {{semaphore, 1}};
  RefPtr<AbortSignal> signal = DeadlineIn(30 * kMs);
  Status status = WaitSemaphores(WaitMode::kAll, timepoints,
                                 Deadline::Infinite(), signal.get());
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("function 'test.main' exceeded its deadline"));

  // The caller's own earlier deadline is a plain timeout.
  status = WaitSemaphores(WaitMode::kAll, timepoints, Deadline::AfterNs(kMs),
                          DeadlineIn(60000 * kMs).get());
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(status.message()), HasSubstr("timed out"));

  auto token = CancellationToken::Create();
  signal =
      AbortSignal::Create("function 'test.main'", Deadline::Infinite(), token);
  std::thread canceller = CancelLater(token, 20);
  status = WaitSemaphores(WaitMode::kAll, timepoints, Deadline::Infinite(),
                          signal.get());
  canceller.join();
  EXPECT_EQ(status.code(), StatusCode::kCancelled);

  // A semaphore that is reached wins over a signal that never fires.
  ASSERT_TRUE(semaphore->Signal(1).ok());
  EXPECT_TRUE(WaitSemaphores(WaitMode::kAll, timepoints, Deadline::Infinite(),
                             DeadlineIn(60000 * kMs).get())
                  .ok());
}

} // namespace
} // namespace strata::hal
