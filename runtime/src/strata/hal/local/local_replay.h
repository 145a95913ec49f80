// Executes recorded command buffers on the host: the code every local
// driver shares. Drivers differ only in how a dispatch's workgroup grid is
// run, which they supply as a LocalGridRunner: local-sync runs it inline,
// a worker pool (local-task) can split the grid across threads.
#ifndef STRATA_HAL_LOCAL_LOCAL_REPLAY_H_
#define STRATA_HAL_LOCAL_LOCAL_REPLAY_H_

#include "strata/hal/deferred_command_buffer.h"
#include "strata/hal/local/local_executable.h"
#include "strata/hal/local/local_profiler.h"

namespace strata::hal {

// Deadlines and cancellation: replay runs under the calling thread's
// AbortSignal::Current() (the call that submitted the work;
// base/abort_signal.h). It is checked between commands, and grid runners
// poll it between workgroups (AbortPoller: the flag every workgroup, the
// clock every few), so a dispatch of a huge grid ends soon after the signal
// fires with
// its CANCELLED or DEADLINE_EXCEEDED. A workgroup of native code that never
// returns cannot be interrupted (native executables are trusted code); VMVX
// workgroups run on VM stacks that poll the same signal.
class LocalGridRunner {
public:
  virtual ~LocalGridRunner() = default;

  // Runs every workgroup of the grid in `dispatch` (each workgroup exactly
  // once, in any order) and returns the first failure, or the status of
  // AbortSignal::Current() once it fired. `dispatch` and what it points to
  // stay valid until this returns.
  virtual Status
  RunGrid(const LocalExecutable &executable, uint32_t export_ordinal,
          const strata_hal_executable_dispatch_state_v0_t &dispatch) = 0;

  // Workgroups that may run at once (for the device's concurrency query).
  virtual uint32_t concurrency() const = 0;
};

// Runs the grid on the calling thread, z-major then y then x, stopping at
// the first failing workgroup or when the abort signal fires.
class InlineGridRunner final : public LocalGridRunner {
public:
  Status
  RunGrid(const LocalExecutable &executable, uint32_t export_ordinal,
          const strata_hal_executable_dispatch_state_v0_t &dispatch) override;
  uint32_t concurrency() const override { return 1; }
};

// Executes the commands of `command_buffer` in order. Stops at the first
// failure and returns it, annotated with the command index. Dispatches and
// fill/copy/update commands are recorded in `profiler` (may be null) while it
// captures.
Status ReplayCommandBuffer(const DeferredCommandBuffer &command_buffer,
                           LocalGridRunner &grid_runner,
                           LocalProfiler *profiler = nullptr);

} // namespace strata::hal

#endif // STRATA_HAL_LOCAL_LOCAL_REPLAY_H_
