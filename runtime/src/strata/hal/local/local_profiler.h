// Dispatch profiling for local devices: between ProfilingBegin and
// ProfilingEnd every dispatch becomes one complete ("X") event of a
// Chrome-trace JSON file (open it in Perfetto or chrome://tracing):
//
//   {"traceEvents": [
//     {"name": "main_dispatch_0", "cat": "dispatch", "ph": "X",
//      "ts": 12.3, "dur": 4.5, "pid": 1, "tid": 2,
//      "args": {"workgroup_count": "4x1x1", "executable": "exe"}}, ...]}
//
// Timestamps are microseconds since the capture began; tid numbers the
// threads that ran dispatches (named in "thread_name" metadata events).
// Thread-safe: dispatches record from any thread.
#ifndef STRATA_HAL_LOCAL_LOCAL_PROFILER_H_
#define STRATA_HAL_LOCAL_LOCAL_PROFILER_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "strata/base/status.h"

namespace strata::hal {

class LocalProfiler {
public:
  // Starts a capture written to `path` (FAILED_PRECONDITION when one is
  // already running).
  Status Begin(std::string path);
  // Writes what was captured so far (the whole file, valid JSON).
  Status Flush();
  // Writes the file and stops capturing.
  Status End();

  // Cheap check on the dispatch path.
  bool is_active() const { return active_.load(std::memory_order_acquire); }

  // Records one dispatch that ran from `start_ns` to `end_ns` (NowNs clock)
  // on the calling thread.
  void RecordDispatch(std::string_view export_name,
                      std::string_view executable_name, uint32_t x, uint32_t y,
                      uint32_t z, int64_t start_ns, int64_t end_ns);

private:
  struct Event {
    std::string name;
    std::string executable;
    uint32_t x, y, z;
    int64_t start_ns, end_ns;
    uint32_t thread;
  };

  Status WriteLocked();
  uint32_t ThreadIndexLocked(std::thread::id id);

  std::atomic<bool> active_{false};
  std::mutex mutex_;
  std::string path_;
  int64_t origin_ns_ = 0;
  std::vector<Event> events_;
  std::vector<std::thread::id> threads_;
};

} // namespace strata::hal

#endif // STRATA_HAL_LOCAL_LOCAL_PROFILER_H_
