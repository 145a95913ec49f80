#include "strata/hal/semaphore.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace strata::hal {
namespace {

using namespace std::chrono_literals;

TEST(SemaphoreTest, QueryAndSignal) {
  RefPtr<Semaphore> semaphore = HostSemaphore::Create(5);
  EXPECT_EQ(RefCast<Semaphore>(semaphore.get()), semaphore.get());
  EXPECT_EQ(std::string(semaphore->ref_type()->name), "hal.semaphore");
  EXPECT_EQ(*semaphore->Query(), 5u);
  EXPECT_TRUE(semaphore->Signal(6).ok());
  EXPECT_TRUE(semaphore->Signal(100).ok());
  EXPECT_EQ(*semaphore->Query(), 100u);
  // Values only move forward.
  EXPECT_EQ(semaphore->Signal(100).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(semaphore->Signal(3).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(*semaphore->Query(), 100u);
}

TEST(SemaphoreTest, WaitOnReachedValueReturnsImmediately) {
  RefPtr<Semaphore> semaphore = HostSemaphore::Create(3);
  EXPECT_TRUE(semaphore->Wait(3, Deadline::Immediate()).ok());
  EXPECT_TRUE(semaphore->Wait(1, Deadline::Infinite()).ok());
  EXPECT_EQ(semaphore->Wait(4, Deadline::Immediate()).code(),
            StatusCode::kDeadlineExceeded);
}

TEST(SemaphoreTest, WaitTimesOut) {
  RefPtr<Semaphore> semaphore = HostSemaphore::Create(0);
  auto start = std::chrono::steady_clock::now();
  Status status = semaphore->Wait(1, Deadline::AfterMs(30));
  auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
  EXPECT_GE(elapsed, 30ms);
  EXPECT_LT(elapsed, 5s);
}

TEST(SemaphoreTest, SignalFromAnotherThreadWakesWaiter) {
  RefPtr<Semaphore> semaphore = HostSemaphore::Create(0);
  std::thread signaller([&] {
    std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(semaphore->Signal(1).ok());
    std::this_thread::sleep_for(10ms);
    EXPECT_TRUE(semaphore->Signal(2).ok());
  });
  EXPECT_TRUE(semaphore->Wait(2, Deadline::AfterMs(10000)).ok());
  EXPECT_EQ(*semaphore->Query(), 2u);
  signaller.join();
}

TEST(SemaphoreTest, ManyWaitersAllWake) {
  RefPtr<Semaphore> semaphore = HostSemaphore::Create(0);
  std::vector<std::thread> waiters;
  std::atomic<int> woken{0};
  for (int i = 0; i < 4; ++i) {
    waiters.emplace_back([&, i] {
      if (semaphore->Wait(uint64_t(i + 1), Deadline::Infinite()).ok())
        ++woken;
    });
  }
  std::this_thread::sleep_for(5ms);
  EXPECT_TRUE(semaphore->Signal(4).ok());
  for (auto &waiter : waiters)
    waiter.join();
  EXPECT_EQ(woken.load(), 4);
}

TEST(SemaphoreTest, FailurePropagatesToWaiters) {
  RefPtr<Semaphore> semaphore = HostSemaphore::Create(0);
  Status waiter_status;
  std::thread waiter(
      [&] { waiter_status = semaphore->Wait(10, Deadline::Infinite()); });
  std::this_thread::sleep_for(10ms);
  semaphore->Fail(AbortedError("dispatch exploded"));
  waiter.join();
  EXPECT_EQ(waiter_status.code(), StatusCode::kAborted);
  EXPECT_EQ(waiter_status.message(), "dispatch exploded");

  // Failed for good: queries, later waits and signals see the failure, and
  // a second failure does not replace the first.
  semaphore->Fail(InternalError("second"));
  EXPECT_EQ(semaphore->Query().status().code(), StatusCode::kAborted);
  EXPECT_EQ(semaphore->Wait(0, Deadline::Immediate()).code(),
            StatusCode::kAborted);
  EXPECT_EQ(semaphore->Signal(1).code(), StatusCode::kAborted);

  RefPtr<Semaphore> ok_failed = HostSemaphore::Create(0);
  ok_failed->Fail(OkStatus());
  EXPECT_EQ(ok_failed->Query().status().code(), StatusCode::kInternal);
}

TEST(DeadlineTest, Conversions) {
  EXPECT_TRUE(Deadline::AfterMs(-1).is_infinite());
  EXPECT_TRUE(Deadline::AfterMs(0).HasPassed());
  EXPECT_FALSE(Deadline::AfterMs(100000).HasPassed());
  EXPECT_TRUE(Deadline::AfterNs(Deadline::kInfiniteFutureNs).is_infinite());
  EXPECT_TRUE(Deadline::Immediate().HasPassed());
  EXPECT_FALSE(Deadline::Infinite().HasPassed());
}

TEST(FenceTest, EmptyFenceIsReached) {
  RefPtr<Fence> fence = Fence::Create();
  EXPECT_EQ(std::string(fence->ref_type()->name), "hal.fence");
  EXPECT_TRUE(fence->Query().ok());
  EXPECT_TRUE(fence->Wait(Deadline::Immediate()).ok());
  EXPECT_TRUE(fence->Signal().ok());
}

TEST(FenceTest, InsertQuerySignalWait) {
  RefPtr<Semaphore> a = HostSemaphore::Create(0);
  RefPtr<Semaphore> b = HostSemaphore::Create(0);
  RefPtr<Fence> fence = Fence::CreateAt(a, 1);
  fence->Insert(b, 2);
  fence->Insert(a, 3); // Same semaphore: keeps the max.
  fence->Insert(a, 2);
  EXPECT_EQ(fence->timepoint_count(), 2u);
  EXPECT_EQ(fence->Query().code(), StatusCode::kDeferred);
  EXPECT_EQ(fence->Wait(Deadline::AfterMs(1)).code(),
            StatusCode::kDeadlineExceeded);

  EXPECT_TRUE(a->Signal(3).ok());
  EXPECT_EQ(fence->Query().code(), StatusCode::kDeferred);
  EXPECT_TRUE(b->Signal(2).ok());
  EXPECT_TRUE(fence->Query().ok());
  EXPECT_TRUE(fence->Wait(Deadline::Immediate()).ok());
}

TEST(FenceTest, HostSignalReachesEveryTimepoint) {
  RefPtr<Semaphore> a = HostSemaphore::Create(0);
  RefPtr<Semaphore> b = HostSemaphore::Create(10);
  RefPtr<Fence> fence = Fence::CreateAt(a, 1);
  fence->Insert(b, 11);
  std::thread signaller([&] {
    std::this_thread::sleep_for(5ms);
    EXPECT_TRUE(fence->Signal().ok());
  });
  EXPECT_TRUE(fence->Wait(Deadline::AfterMs(10000)).ok());
  signaller.join();
  EXPECT_EQ(*a->Query(), 1u);
  EXPECT_EQ(*b->Query(), 11u);
}

TEST(FenceTest, Join) {
  RefPtr<Semaphore> a = HostSemaphore::Create(0);
  RefPtr<Semaphore> b = HostSemaphore::Create(0);
  RefPtr<Fence> f1 = Fence::CreateAt(a, 1);
  RefPtr<Fence> f2 = Fence::CreateAt(a, 4);
  f2->Insert(b, 2);
  Fence *fences[] = {f1.get(), nullptr, f2.get()};
  RefPtr<Fence> joined = Fence::Join(fences);
  std::vector<SemaphoreTimepoint> timepoints = joined->timepoints();
  ASSERT_EQ(timepoints.size(), 2u);
  EXPECT_EQ(timepoints[0].semaphore.get(), a.get());
  EXPECT_EQ(timepoints[0].value, 4u);
  EXPECT_EQ(timepoints[1].semaphore.get(), b.get());
  EXPECT_EQ(timepoints[1].value, 2u);
}

TEST(FenceTest, FailurePropagatesAcrossThreads) {
  RefPtr<Semaphore> a = HostSemaphore::Create(0);
  RefPtr<Semaphore> b = HostSemaphore::Create(0);
  RefPtr<Fence> waited = Fence::CreateAt(a, 1);
  waited->Insert(b, 1);
  Status wait_status;
  std::thread waiter(
      [&] { wait_status = waited->Wait(Deadline::AfterMs(10000)); });
  std::this_thread::sleep_for(5ms);
  // Failing another fence sharing the semaphore fails this one too.
  RefPtr<Fence> failing = Fence::CreateAt(b, 5);
  failing->Fail(DataLossError("bad bits"));
  waiter.join();
  EXPECT_EQ(wait_status.code(), StatusCode::kDataLoss);
  EXPECT_EQ(waited->Query().code(), StatusCode::kDataLoss);
  EXPECT_EQ(waited->Signal().code(), StatusCode::kDataLoss);
}

TEST(WaitSemaphoresTest, AnyAndAll) {
  RefPtr<Semaphore> a = HostSemaphore::Create(0);
  RefPtr<Semaphore> b = HostSemaphore::Create(0);
  SemaphoreTimepoint timepoints[] = {{a, 1}, {b, 1}};
  EXPECT_TRUE(WaitSemaphores(WaitMode::kAll, {}, Deadline::Immediate()).ok());
  EXPECT_EQ(
      WaitSemaphores(WaitMode::kAny, timepoints, Deadline::AfterMs(1)).code(),
      StatusCode::kDeadlineExceeded);
  std::thread signaller([&] {
    std::this_thread::sleep_for(5ms);
    EXPECT_TRUE(b->Signal(1).ok());
  });
  EXPECT_TRUE(
      WaitSemaphores(WaitMode::kAny, timepoints, Deadline::AfterMs(10000))
          .ok());
  signaller.join();
  EXPECT_EQ(
      WaitSemaphores(WaitMode::kAll, timepoints, Deadline::Immediate()).code(),
      StatusCode::kDeadlineExceeded);
  std::thread signaller2([&] {
    std::this_thread::sleep_for(5ms);
    EXPECT_TRUE(a->Signal(1).ok());
  });
  EXPECT_TRUE(
      WaitSemaphores(WaitMode::kAll, timepoints, Deadline::AfterMs(10000))
          .ok());
  signaller2.join();
}

TEST(WaitSemaphoresTest, StressManySignals) {
  // Many small signals from two threads while a third waits on both.
  RefPtr<Semaphore> a = HostSemaphore::Create(0);
  RefPtr<Semaphore> b = HostSemaphore::Create(0);
  constexpr uint64_t kSteps = 2000;
  std::thread ta([&] {
    for (uint64_t i = 1; i <= kSteps; ++i)
      EXPECT_TRUE(a->Signal(i).ok());
  });
  std::thread tb([&] {
    for (uint64_t i = 1; i <= kSteps; ++i)
      EXPECT_TRUE(b->Signal(i).ok());
  });
  RefPtr<Fence> fence = Fence::CreateAt(a, kSteps);
  fence->Insert(b, kSteps);
  EXPECT_TRUE(fence->Wait(Deadline::AfterMs(10000)).ok());
  ta.join();
  tb.join();
}

} // namespace
} // namespace strata::hal
