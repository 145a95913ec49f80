// A LocalGridRunner that spreads a dispatch's workgroup grid over a pool of
// worker threads. The submitting thread works on its own grid too, so a
// one-workgroup dispatch never wakes a worker and a pool of N workers runs
// N-1 threads plus the caller.
//
// A grid's workgroups (the linearised x-fastest index) split into one
// contiguous range per thread, each claimed in chunks from its own atomic
// counter, so the cost per workgroup is one atomic add per chunk; chunks
// shrink with the grid so every worker gets work (a grid of more than 2^64
// workgroups runs as slices along z). A thread starts on its own range, the
// same part of every grid, and then helps with the others': successive
// dispatches split the same way (the channel blocks of one layer and the
// next) so find their data in the caches of the core that wrote it. The
// first failing workgroup stops further claims and its status is returned.
// The submitting thread's abort signal (AbortSignal::Current()) goes with
// the grid: every thread polls it between workgroups and works under it (so
// VMVX workgroups inherit it), and once it fires the grid stops with its
// status.
//
// Waking a sleeping thread costs tens of microseconds on some systems, more
// than a small dispatch takes: a worker that runs out of work and a
// submitter waiting for workers to leave its grid spin for a short while
// (the spin time) before they sleep, so back-to-back dispatches find the pool
// awake.
//
// processor_id: pool threads use 0..N-2; each concurrent submitter takes a
// free caller slot, N-1 + slot (so ids stay distinct when several sessions
// share the device). Thread-safe: RunGrid may be called concurrently.
#ifndef STRATA_HAL_DRIVERS_LOCAL_TASK_TASK_GRID_RUNNER_H_
#define STRATA_HAL_DRIVERS_LOCAL_TASK_TASK_GRID_RUNNER_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "strata/hal/local/local_replay.h"

namespace strata::hal {

class TaskGridRunner final : public LocalGridRunner {
public:
  // `worker_count` >= 1: pool threads + the submitting thread. Idle
  // threads spin for `spin_time` before they sleep. `pin_workers` binds pool
  // thread i to the (i+1)-th CPU the process may run on (wrapping), where
  // the OS allows it.
  static Result<std::unique_ptr<TaskGridRunner>>
  Create(uint32_t worker_count,
         std::chrono::microseconds spin_time = std::chrono::microseconds(300),
         bool pin_workers = false);
  ~TaskGridRunner() override;

  Status
  RunGrid(const LocalExecutable &executable, uint32_t export_ordinal,
          const strata_hal_executable_dispatch_state_v0_t &dispatch) override;
  uint32_t concurrency() const override { return worker_count_; }
  // The CPU each pool thread is bound to, -1 where binding failed; empty
  // when the pool is not pinned.
  const std::vector<int> &pinned_cpus() const { return pinned_cpus_; }

private:
  struct WorkRange;
  struct Grid;
  // Threads beyond this many share ranges (a grid's ranges live on the
  // submitter's stack).
  static constexpr size_t kMaxWorkRanges = 16;

  TaskGridRunner(uint32_t worker_count, std::chrono::microseconds spin_time);
  // Runs the workgroups with z in [z_begin, z_begin + z_count) as one grid
  // (at most 2^64 - 1 workgroups).
  Status RunSlice(const LocalExecutable &executable, uint32_t export_ordinal,
                  const strata_hal_executable_dispatch_state_v0_t &dispatch,
                  uint32_t z_begin, uint64_t z_count);
  void WorkerMain(uint32_t processor_id);
  // Binds the pool threads to CPUs (Create's `pin_workers`).
  void PinWorkers();
  // Claims and runs chunks of `grid` until none are left or `max_chunks`
  // ran; returns whether chunks are left.
  static bool Work(Grid &grid, uint32_t processor_id,
                   uint64_t max_chunks = UINT64_MAX);
  // Spins until `done()` or the spin time passes; returns done().
  template <typename Done> bool SpinUntil(Done done) const;
  // Adds `work_left_ns` of split work that found the workers asleep; returns
  // whether they should be woken for it.
  bool ShouldWakeWorkers(double work_left_ns,
                         std::chrono::steady_clock::time_point now);
  void WakeWorkers(uint64_t count);
  uint32_t AcquireCallerSlot();
  void ReleaseCallerSlot(uint32_t slot);

  // Waking a sleeping worker costs the caller a system call and the worker
  // tens of microseconds before it runs; once awake it spins between grids
  // (the spin time). So callers time the first chunk of each split grid
  // that finds workers asleep and add up the work they were left to do
  // alone over a run of such grids, each within the spin time of the one
  // before (a woken worker would have stayed awake through them). Workers
  // are woken when that sum reaches kWakeWorthItNs: one long grid wakes
  // them at once, and so does a stream of small grids (a small model called
  // back to back); small grids far apart (a recurrence between them) never
  // pay a wake-up.
  static constexpr double kWakeWorthItNs = 50e3;

  const uint32_t worker_count_;
  const std::chrono::microseconds spin_time_;
  std::vector<std::thread> threads_;
  std::vector<int> pinned_cpus_;

  std::mutex mutex_;
  // Wakes workers when a grid is queued or at shutdown.
  std::condition_variable work_available_;
  // Wakes submitters when a worker leaves a grid or a caller slot frees.
  std::condition_variable worker_left_;
  // Grids that may still have unclaimed chunks, oldest first.
  // A vector, not a deque: it holds a few grids at most, and keeps its
  // capacity (a deque allocates and frees blocks as grids come and go).
  std::vector<Grid *> queue_;
  // Bumped (under mutex_) whenever a grid is queued or at shutdown: what
  // spinning workers watch without the lock.
  std::atomic<uint64_t> queue_generation_{0};
  bool shutdown_ = false;
  // Workers asleep on work_available_.
  uint32_t sleeping_workers_ = 0;
  // Split work callers were left to do alone over the current run of grids
  // (under mutex_), and when the last of them started.
  double split_work_alone_ns_ = 0;
  std::chrono::steady_clock::time_point split_work_time_;
  // Bit i set = caller slot i in use.
  std::atomic<uint64_t> caller_slots_{0};
  // Submitters waiting for a free caller slot (changed under mutex_).
  std::atomic<uint32_t> slot_waiters_{0};
};

} // namespace strata::hal

#endif // STRATA_HAL_DRIVERS_LOCAL_TASK_TASK_GRID_RUNNER_H_
