#include "strata/hal/drivers/local_task/task_grid_runner.h"

#include <algorithm>
#include <bit>
#include <chrono>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif
#if defined(__linux__)
#include <pthread.h>
#include <sched.h>
#endif

#include "strata/base/abort_signal.h"
#include "strata/base/scratch_array.h"
#include "strata/hal/local/local_device_options.h"

namespace strata::hal {

// A contiguous part of a grid's workgroups, claimed in chunks from `next`
// up to `end`. Each on its own cache line: threads claim from their own.
struct alignas(64) TaskGridRunner::WorkRange {
  std::atomic<uint64_t> next{0};
  uint64_t end = 0;
};

struct TaskGridRunner::Grid {
  explicit Grid(size_t range_count) : ranges(range_count) {}

  const LocalExecutable *executable;
  uint32_t export_ordinal;
  const strata_hal_executable_dispatch_state_v0_t *dispatch;
  // The submitting thread's; kept alive by it until RunGrid returns.
  AbortSignal *abort_signal;
  // The slice of z this grid covers (all of it unless the grid has more
  // than 2^64 workgroups).
  uint32_t z_begin;
  uint64_t total;
  uint64_t chunk;
  // The workgroups split evenly into one range per thread, in order: a
  // thread starts on its own range, the same part of every grid (see
  // Work), then takes chunks from the others.
  ScratchArray<WorkRange, kMaxWorkRanges> ranges;
  // Set by the first failure; later claims stop.
  std::atomic<bool> failed{false};
  std::mutex status_mutex;
  Status status;
  // Workers inside Work() for this grid; changed under the runner's mutex,
  // read without it by the submitter spinning for them to leave.
  std::atomic<uint32_t> active_workers{0};

  // Workgroups no thread has claimed yet.
  uint64_t Unclaimed() {
    uint64_t unclaimed = 0;
    for (WorkRange &range : ranges) {
      uint64_t next = range.next.load(std::memory_order_relaxed);
      unclaimed += next < range.end ? range.end - next : 0;
    }
    return unclaimed;
  }
};

Result<std::unique_ptr<TaskGridRunner>>
TaskGridRunner::Create(uint32_t worker_count,
                       std::chrono::microseconds spin_time, bool pin_workers) {
  if (worker_count == 0)
    return InvalidArgumentError("a task grid runner needs at least 1 worker");
  std::unique_ptr<TaskGridRunner> runner(
      new TaskGridRunner(worker_count, spin_time));
  runner->threads_.reserve(worker_count - 1);
  // One grid per concurrent submitter; grows only past that.
  runner->queue_.reserve(64);
  for (uint32_t i = 0; i + 1 < worker_count; ++i)
    runner->threads_.emplace_back(&TaskGridRunner::WorkerMain, runner.get(), i);
  if (pin_workers)
    runner->PinWorkers();
  return runner;
}

void TaskGridRunner::PinWorkers() {
  std::vector<uint32_t> cpus = AllowedCpus();
  for (size_t i = 0; i < threads_.size(); ++i) {
    int pinned = -1;
#if defined(__linux__)
    if (!cpus.empty()) {
      uint32_t cpu = cpus[(i + 1) % cpus.size()];
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(cpu, &set);
      // A refusal (a container's policy) leaves the thread where it is.
      if (pthread_setaffinity_np(threads_[i].native_handle(), sizeof(set),
                                 &set) == 0)
        pinned = int(cpu);
    }
#endif
    pinned_cpus_.push_back(pinned);
  }
}

TaskGridRunner::TaskGridRunner(uint32_t worker_count,
                               std::chrono::microseconds spin_time)
    : worker_count_(worker_count), spin_time_(spin_time) {}

template <typename Done> bool TaskGridRunner::SpinUntil(Done done) const {
  if (spin_time_.count() == 0)
    return done();
  auto deadline = std::chrono::steady_clock::now() + spin_time_;
  while (!done()) {
    for (int i = 0; i < 64; ++i) {
#if defined(__x86_64__) || defined(__i386__)
      _mm_pause();
#endif
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return done();
  }
  return true;
}

TaskGridRunner::~TaskGridRunner() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    shutdown_ = true;
    queue_generation_.fetch_add(1, std::memory_order_release);
  }
  work_available_.notify_all();
  for (std::thread &thread : threads_)
    thread.join();
}

// total * part / parts without overflow (total may be near 2^64).
static uint64_t SplitPoint(uint64_t total, uint64_t part, uint64_t parts) {
  return total / parts * part + total % parts * part / parts;
}

bool TaskGridRunner::Work(Grid &grid, uint32_t processor_id,
                          uint64_t max_chunks) {
  const strata_hal_executable_dispatch_state_v0_t &dispatch = *grid.dispatch;
  const uint64_t count_x = dispatch.workgroup_count_x;
  const uint64_t count_xy = count_x * dispatch.workgroup_count_y;
  strata_hal_executable_workgroup_state_v0_t workgroup = {};
  workgroup.processor_id = processor_id;
  ScopedAbortSignal current_signal(grid.abort_signal);
  AbortPoller abort_poller(grid.abort_signal);
  // Its own range first: a grid split like the one before it (the channel
  // blocks of successive layers) then finds in this thread's caches the
  // part of the data this thread wrote, instead of moving it between
  // cores. Pool threads own ranges 0, 1, ...; submitters the last ones.
  const size_t range_count = grid.ranges.size();
  size_t range_index = processor_id % range_count;
  uint64_t chunks = 0;
  for (size_t visited = 0; visited < range_count && chunks < max_chunks;) {
    if (grid.failed.load(std::memory_order_relaxed))
      return false;
    WorkRange &range = grid.ranges[range_index];
    // Claimed with compare-exchange rather than fetch_add, so the counter
    // never passes the range's end (and cannot wrap for grids near 2^64).
    uint64_t begin = range.next.load(std::memory_order_relaxed), end;
    bool claimed = true;
    do {
      if (begin >= range.end) {
        claimed = false;
        break;
      }
      end = begin + std::min(grid.chunk, range.end - begin);
    } while (!range.next.compare_exchange_weak(begin, end,
                                               std::memory_order_relaxed));
    if (!claimed) {
      range_index = range_index + 1 == range_count ? 0 : range_index + 1;
      ++visited;
      continue;
    }
    ++chunks;
    for (uint64_t index = begin; index < end; ++index) {
      workgroup.workgroup_id_x = uint32_t(index % count_x);
      workgroup.workgroup_id_y = uint32_t((index % count_xy) / count_x);
      workgroup.workgroup_id_z = grid.z_begin + uint32_t(index / count_xy);
      Status status = abort_poller.Poll();
      if (status.ok())
        status = grid.executable->IssueWorkgroup(grid.export_ordinal, dispatch,
                                                 workgroup);
      if (!status.ok()) {
        std::lock_guard<std::mutex> lock(grid.status_mutex);
        if (!grid.failed.exchange(true))
          grid.status = std::move(status);
        return false;
      }
      // Another thread's failure (or the signal it noticed) stops this
      // chunk too.
      if (grid.failed.load(std::memory_order_relaxed))
        return false;
    }
  }
  return grid.Unclaimed() > 0;
}

void TaskGridRunner::WorkerMain(uint32_t processor_id) {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    if (!shutdown_ && queue_.empty()) {
      // Out of work: watch for the next grid a while before sleeping.
      uint64_t seen = queue_generation_.load(std::memory_order_relaxed);
      lock.unlock();
      SpinUntil([&] {
        return queue_generation_.load(std::memory_order_acquire) != seen;
      });
      lock.lock();
    }
    ++sleeping_workers_;
    work_available_.wait(lock, [&] { return shutdown_ || !queue_.empty(); });
    --sleeping_workers_;
    if (shutdown_)
      return;
    Grid *grid = queue_.front();
    grid->active_workers.fetch_add(1, std::memory_order_relaxed);
    lock.unlock();
    Work(*grid, processor_id);
    lock.lock();
    // Nothing left to claim: later workers need not look at this grid.
    if (!queue_.empty() && queue_.front() == grid)
      queue_.erase(queue_.begin());
    if (grid->active_workers.fetch_sub(1, std::memory_order_acq_rel) == 1)
      worker_left_.notify_all();
  }
}

bool TaskGridRunner::ShouldWakeWorkers(
    double work_left_ns, std::chrono::steady_clock::time_point now) {
  std::lock_guard<std::mutex> lock(mutex_);
  // A worker woken for the previous grids would have stayed awake for this
  // one only if it came within the spin time.
  if (now - split_work_time_ > spin_time_)
    split_work_alone_ns_ = 0;
  split_work_alone_ns_ += work_left_ns;
  split_work_time_ = now;
  if (split_work_alone_ns_ < kWakeWorthItNs)
    return false;
  split_work_alone_ns_ = 0;
  return true;
}

void TaskGridRunner::WakeWorkers(uint64_t count) {
  if (count >= threads_.size()) {
    work_available_.notify_all();
    return;
  }
  for (uint64_t i = 0; i < count; ++i)
    work_available_.notify_one();
}

uint32_t TaskGridRunner::AcquireCallerSlot() {
  // Lock-free while a slot is free (every dispatch takes one); more than 64
  // concurrent submitters wait under the lock.
  while (true) {
    uint64_t slots = caller_slots_.load(std::memory_order_relaxed);
    while (slots != ~uint64_t(0)) {
      uint32_t slot = uint32_t(std::countr_one(slots));
      if (caller_slots_.compare_exchange_weak(
              slots, slots | (uint64_t(1) << slot), std::memory_order_acquire))
        return slot;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    ++slot_waiters_;
    // Sequentially consistent with the release below: either it sees this
    // waiter or this waiter sees its slot free.
    worker_left_.wait(lock,
                      [&] { return caller_slots_.load() != ~uint64_t(0); });
    --slot_waiters_;
  }
}

void TaskGridRunner::ReleaseCallerSlot(uint32_t slot) {
  caller_slots_.fetch_and(~(uint64_t(1) << slot));
  if (slot_waiters_.load() == 0)
    return;
  // Through the lock, so a submitter between its check and its wait hears
  // the notification.
  mutex_.lock();
  mutex_.unlock();
  worker_left_.notify_all();
}

Status TaskGridRunner::RunGrid(
    const LocalExecutable &executable, uint32_t export_ordinal,
    const strata_hal_executable_dispatch_state_v0_t &dispatch) {
  uint64_t count_xy =
      uint64_t(dispatch.workgroup_count_x) * dispatch.workgroup_count_y;
  uint64_t count_z = dispatch.workgroup_count_z;
  if (count_xy == 0 || count_z == 0)
    return OkStatus();
  // Workgroups are numbered by one 64-bit counter per grid: a grid of more
  // than 2^64 workgroups (counts near 2^32 in every dimension) runs as
  // several slices along z.
  uint64_t slice_z = std::min(count_z, UINT64_MAX / count_xy);
  for (uint64_t z = 0; z < count_z; z += slice_z)
    STRATA_RETURN_IF_ERROR(RunSlice(executable, export_ordinal, dispatch,
                                    uint32_t(z),
                                    std::min(slice_z, count_z - z)));
  return OkStatus();
}

Status TaskGridRunner::RunSlice(
    const LocalExecutable &executable, uint32_t export_ordinal,
    const strata_hal_executable_dispatch_state_v0_t &dispatch, uint32_t z_begin,
    uint64_t z_count) {
  uint64_t total = uint64_t(dispatch.workgroup_count_x) *
                   dispatch.workgroup_count_y * z_count;
  Grid grid(std::min<uint64_t>({worker_count_, kMaxWorkRanges, total}));
  grid.executable = &executable;
  grid.export_ordinal = export_ordinal;
  grid.dispatch = &dispatch;
  grid.abort_signal = AbortSignal::Current();
  grid.z_begin = z_begin;
  grid.total = total;
  // About 4 chunks per worker balances uneven workgroups against the cost
  // of claiming.
  grid.chunk =
      std::max<uint64_t>(1, grid.total / (uint64_t(worker_count_) * 4));
  // Range i: workgroups [total * i / n, total * (i + 1) / n).
  const uint64_t range_count = grid.ranges.size();
  for (uint64_t i = 0; i < range_count; ++i) {
    grid.ranges[i].next.store(SplitPoint(total, i, range_count),
                              std::memory_order_relaxed);
    grid.ranges[i].end = SplitPoint(total, i + 1, range_count);
  }

  uint64_t chunks = (grid.total + grid.chunk - 1) / grid.chunk;
  uint64_t helpers = std::min<uint64_t>(chunks - 1, threads_.size());
  uint32_t sleepers = 0;
  if (helpers) {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(&grid);
    // Spinning workers see this and join at once; sleeping ones are woken
    // below only if the grid is worth it.
    queue_generation_.fetch_add(1, std::memory_order_release);
    sleepers = sleeping_workers_;
  }

  uint32_t slot = AcquireCallerSlot();
  const uint32_t processor_id = uint32_t(threads_.size()) + slot;
  if (sleepers) {
    auto start = std::chrono::steady_clock::now();
    bool more = Work(grid, processor_id, /*max_chunks=*/1);
    if (more) {
      auto now = std::chrono::steady_clock::now();
      uint64_t chunks_left = (grid.Unclaimed() + grid.chunk - 1) / grid.chunk;
      double left_ns =
          std::chrono::duration<double, std::nano>(now - start).count() *
          double(chunks_left);
      if (ShouldWakeWorkers(left_ns, now))
        WakeWorkers(std::min<uint64_t>(helpers, sleepers));
    }
  }
  Work(grid, processor_id);
  ReleaseCallerSlot(slot);

  if (helpers) {
    // Every chunk is claimed (or the grid failed); wait for the workers
    // still running claimed chunks, after which no worker touches `grid`.
    // Out of the queue first, so no worker joins the grid any more.
    std::unique_lock<std::mutex> lock(mutex_);
    auto it = std::find(queue_.begin(), queue_.end(), &grid);
    if (it != queue_.end())
      queue_.erase(it);
    auto left = [&] {
      return grid.active_workers.load(std::memory_order_acquire) == 0;
    };
    if (!left()) {
      lock.unlock();
      SpinUntil(left);
      lock.lock();
    }
    worker_left_.wait(lock, left);
  }
  return grid.status;
}

} // namespace strata::hal
