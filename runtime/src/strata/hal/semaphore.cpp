#include "strata/hal/semaphore.h"

#include <algorithm>
#include <chrono>

namespace strata::hal {
namespace {

std::chrono::steady_clock::time_point ToTimePoint(Deadline deadline) {
  return std::chrono::steady_clock::time_point(
      std::chrono::nanoseconds(deadline.ns()));
}

} // namespace

namespace {
// Every call creates a fence and its semaphore; a few dozen kept cover the
// calls in flight of a busy process.
constexpr size_t kPooledSemaphores = 64;
constexpr size_t kPooledFences = 64;

ObjectPool<HostSemaphore> &SemaphorePool() {
  static auto *pool = new ObjectPool<HostSemaphore>(kPooledSemaphores);
  return *pool;
}
ObjectPool<Fence> &FencePool() {
  static auto *pool = new ObjectPool<Fence>(kPooledFences);
  return *pool;
}
} // namespace

RefPtr<HostSemaphore> HostSemaphore::Create(uint64_t initial_value) {
  if (HostSemaphore *semaphore = SemaphorePool().Take()) {
    semaphore->ReviveFromPool();
    semaphore->value_ = initial_value;
    return RefPtr<HostSemaphore>::Adopt(semaphore);
  }
  return RefPtr<HostSemaphore>::Adopt(new HostSemaphore(initial_value));
}

void HostSemaphore::OnLastReference() const {
  auto *self = const_cast<HostSemaphore *>(this);
  // No reference is left, so no waiter or notifier either.
  self->failure_ = OkStatus();
  self->notifiers_.clear();
  SemaphorePool().Park(self);
}

Result<uint64_t> HostSemaphore::Query() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failure_.ok())
    return failure_;
  return value_;
}

Status HostSemaphore::Signal(uint64_t value) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_.ok())
      return failure_;
    if (value <= value_)
      return FailedPreconditionError(
          "semaphore values must increase: current value ", value_,
          ", signalled ", value);
    value_ = value;
    NotifyLocked();
  }
  return OkStatus();
}

void HostSemaphore::Fail(Status status) {
  if (status.ok())
    status = InternalError("semaphore failed with an OK status");
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!failure_.ok())
      return;
    failure_ = std::move(status);
    NotifyLocked();
  }
}

void HostSemaphore::NotifyLocked() {
  condition_.notify_all();
  for (SemaphoreNotifier *notifier : notifiers_)
    notifier->Notify();
}

void HostSemaphore::AddNotifier(SemaphoreNotifier *notifier) {
  std::lock_guard<std::mutex> lock(mutex_);
  notifiers_.push_back(notifier);
}

void HostSemaphore::RemoveNotifier(SemaphoreNotifier *notifier) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = std::find(notifiers_.begin(), notifiers_.end(), notifier);
  if (it != notifiers_.end())
    notifiers_.erase(it);
}

Status HostSemaphore::Wait(uint64_t value, Deadline deadline) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    if (!failure_.ok())
      return failure_;
    if (value_ >= value)
      return OkStatus();
    if (deadline.is_infinite()) {
      condition_.wait(lock);
      continue;
    }
    if (NowNs() >= deadline.ns())
      return DeadlineExceededError("semaphore wait for value ", value,
                                   " timed out at value ", value_);
    condition_.wait_until(lock, ToTimePoint(deadline));
  }
}

RefPtr<Fence> Fence::Create() {
  if (Fence *fence = FencePool().Take()) {
    fence->ReviveFromPool();
    return RefPtr<Fence>::Adopt(fence);
  }
  return RefPtr<Fence>::Adopt(new Fence());
}

void Fence::OnLastReference() const {
  auto *self = const_cast<Fence *>(this);
  // Releases its semaphores (into their own pool).
  self->timepoints_.clear();
  FencePool().Park(self);
}

RefPtr<Fence> Fence::CreateAt(RefPtr<Semaphore> semaphore, uint64_t value) {
  RefPtr<Fence> fence = Create();
  fence->Insert(std::move(semaphore), value);
  return fence;
}

RefPtr<Fence> Fence::Join(std::span<Fence *const> fences) {
  RefPtr<Fence> joined = Create();
  for (Fence *fence : fences) {
    if (!fence)
      continue;
    for (SemaphoreTimepoint &timepoint : fence->timepoints())
      joined->Insert(std::move(timepoint.semaphore), timepoint.value);
  }
  return joined;
}

void Fence::Insert(RefPtr<Semaphore> semaphore, uint64_t value) {
  if (!semaphore)
    return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (SemaphoreTimepoint &timepoint : timepoints_) {
    if (timepoint.semaphore.get() == semaphore.get()) {
      if (value > timepoint.value)
        timepoint.value = value;
      return;
    }
  }
  timepoints_.push_back({std::move(semaphore), value});
}

std::vector<SemaphoreTimepoint> Fence::timepoints() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::vector<SemaphoreTimepoint>(timepoints_.begin(),
                                         timepoints_.end());
}

size_t Fence::timepoint_count() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return timepoints_.size();
}

Status Fence::Query() const {
  return VisitTimepoints([](std::span<const SemaphoreTimepoint> timepoints) {
    bool pending = false;
    for (const SemaphoreTimepoint &timepoint : timepoints) {
      Result<uint64_t> value = timepoint.semaphore->Query();
      if (!value.ok())
        return value.status();
      if (*value < timepoint.value)
        pending = true;
    }
    return pending ? Status(StatusCode::kDeferred, "fence not yet reached")
                   : OkStatus();
  });
}

Status Fence::Signal() {
  return VisitTimepoints([](std::span<const SemaphoreTimepoint> timepoints) {
    for (const SemaphoreTimepoint &timepoint : timepoints)
      STRATA_RETURN_IF_ERROR(timepoint.semaphore->Signal(timepoint.value));
    return OkStatus();
  });
}

void Fence::Fail(Status status) {
  VisitTimepoints([&](std::span<const SemaphoreTimepoint> timepoints) {
    for (const SemaphoreTimepoint &timepoint : timepoints)
      timepoint.semaphore->Fail(status);
  });
}

Status Fence::Wait(Deadline deadline, const AbortSignal *abort_signal) const {
  return VisitTimepoints([&](std::span<const SemaphoreTimepoint> timepoints) {
    return WaitSemaphores(WaitMode::kAll, timepoints, deadline, abort_signal);
  });
}

namespace {

// OK when `mode` is satisfied, DEFERRED when not yet, else the failure.
Status PollTimepoints(WaitMode mode,
                      std::span<const SemaphoreTimepoint> timepoints) {
  size_t reached = 0;
  for (const SemaphoreTimepoint &timepoint : timepoints) {
    Result<uint64_t> value = timepoint.semaphore->Query();
    if (!value.ok())
      return value.status();
    if (*value >= timepoint.value)
      ++reached;
  }
  bool satisfied =
      mode == WaitMode::kAll ? reached == timepoints.size() : reached > 0;
  return satisfied ? OkStatus() : Status(StatusCode::kDeferred, "");
}

} // namespace

Status WaitSemaphores(WaitMode mode,
                      std::span<const SemaphoreTimepoint> timepoints,
                      Deadline deadline, const AbortSignal *abort_signal) {
  if (timepoints.empty())
    return OkStatus();
  // One semaphore and nothing else to wake for: its own wait already wakes
  // on failure.
  if (timepoints.size() == 1 && !abort_signal)
    return timepoints[0].semaphore->Wait(timepoints[0].value, deadline);

  // Several: register one notifier with all (and the abort signal) so that
  // any signal, failure or cancellation wakes us to re-check them all.
  // Registering before polling means no change can slip between a poll and
  // the wait.
  SemaphoreNotifier notifier;
  for (const SemaphoreTimepoint &timepoint : timepoints)
    timepoint.semaphore->AddNotifier(&notifier);
  if (abort_signal)
    abort_signal->AddNotifier(&notifier);
  Deadline wake = abort_signal
                      ? Deadline::Min(deadline, abort_signal->deadline())
                      : deadline;
  Status status;
  while (true) {
    uint64_t epoch = notifier.epoch();
    status = PollTimepoints(mode, timepoints);
    if (status.code() != StatusCode::kDeferred)
      break;
    if (abort_signal) {
      status = abort_signal->Check();
      if (!status.ok())
        break;
    }
    if (!notifier.WaitForChange(epoch, wake) && deadline.HasPassed()) {
      status = DeadlineExceededError("wait on ", timepoints.size(),
                                     " semaphores timed out");
      break;
    }
  }
  if (abort_signal)
    abort_signal->RemoveNotifier(&notifier);
  for (const SemaphoreTimepoint &timepoint : timepoints)
    timepoint.semaphore->RemoveNotifier(&notifier);
  return status;
}

} // namespace strata::hal
