// Options the local drivers read from the path part of a device URI:
//   local-task://0?workers=4&loader=system
//   local-sync?loader=embedded,system
// `workers` is the worker count of drivers with a pool (0 = hardware
// cores) and `spin_us` how long their idle threads spin before sleeping
// (0-10000 microseconds, default 300); `pin=1` binds each pool thread to one
// of the CPUs the process may run on; `loader` lists executable loaders to try
// in order. Unknown keys and malformed values are errors naming them, so typos
// never go unnoticed.
#ifndef STRATA_HAL_LOCAL_LOCAL_DEVICE_OPTIONS_H_
#define STRATA_HAL_LOCAL_LOCAL_DEVICE_OPTIONS_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "strata/base/status.h"
#include "strata/hal/executable.h"

namespace strata::hal {

// The loaders this build has (the STRATA_HAL_LOADER_* options), in the
// default order: "embedded", "system", "vmvx".
std::vector<std::string> BuiltLocalLoaders();

struct LocalDeviceOptions {
  // The device path without the query ("" or "0").
  std::string path;
  // 0 = one per hardware core.
  uint32_t worker_count = 0;
  // Microseconds an idle pool thread spins for new work before it sleeps
  // (0: sleep at once). 300 keeps a worker awake across a recurrent
  // model's one-workgroup stretches (lstm: ~90 us between split grids; 100
  // let it fall asleep and lose them: 0.237 -> 0.220 ms at 2 workers).
  uint32_t spin_microseconds = 300;
  // Whether pool threads are bound to CPUs (the second allowed CPU, the
  // third, ..., wrapping; the first is left to the submitting thread, which
  // stays where the OS puts it). Off by default: on a shared host a bound
  // thread cannot move away from a busy core.
  bool pin_workers = false;
  // Loader names in the order the executable cache asks them; by default
  // every loader this build has.
  std::vector<std::string> loaders = BuiltLocalLoaders();
};

// Parses "PATH?key=value&key=value". `allow_workers` says whether the
// driver has a worker pool (local-sync rejects `workers`).
Result<LocalDeviceOptions> ParseLocalDeviceOptions(std::string_view path,
                                                   bool allow_workers);

// The loaders `options.loaders` names ("embedded", "system", "vmvx"), in
// order.
Result<std::vector<std::unique_ptr<ExecutableLoader>>>
CreateLocalLoaders(const LocalDeviceOptions &options);

// The CPUs this process may run on (its affinity mask), ascending; empty
// where the OS does not say.
std::vector<uint32_t> AllowedCpus();

// Hardware threads this process may use (at least 1): its affinity mask
// where the OS has one (`taskset -c 0` gives 1), else the host's count.
uint32_t HardwareConcurrency();

} // namespace strata::hal

#endif // STRATA_HAL_LOCAL_LOCAL_DEVICE_OPTIONS_H_
