// Profiling for local devices: between ProfilingBegin and ProfilingEnd
// every dispatch, queue operation and transfer command becomes one complete
// ("X") event of a Chrome-trace JSON file (open it in Perfetto or
// chrome://tracing):
//
//   {"traceEvents": [
//     {"name": "queue_execute", "cat": "queue", "ph": "X", "ts": 10.0,
//      "dur": 9.1, "pid": 1, "tid": 2,
//      "args": {"command_buffer_count": 1, "command_count": 2}},
//     {"name": "fill_buffer", "cat": "command", ..., "args":
//      {"byte_length": 64, "pattern_length": 4}},
//     {"name": "main_dispatch_0", "cat": "dispatch", "ph": "X",
//      "ts": 12.3, "dur": 4.5, "pid": 1, "tid": 2,
//      "args": {"workgroup_count": "4x1x1", "executable": "exe"}}, ...]}
//
// Categories: "queue" (queue_alloca, queue_dealloca, queue_read,
// queue_write, queue_execute, queue_flush: the work after the wait fence was
// reached, not the wait), "command" (fill_buffer, copy_buffer,
// update_buffer inside a queue_execute), "dispatch" (one per dispatch, named
// after its call site when ProfilingOptions names the program's sites, as
// "conv2d_relu:/layer1/layer1.0/conv1/Conv", else after its executable
// export; args "site" and "export" then say which call site of which
// export ran). A span whose work failed has an "error"
// argument with the status code. Timestamps are microseconds since the
// capture began; tid numbers the threads that recorded spans (named in
// "thread_name" metadata events). Thread-safe: spans record from any thread.
#ifndef STRATA_HAL_LOCAL_LOCAL_PROFILER_H_
#define STRATA_HAL_LOCAL_LOCAL_PROFILER_H_

#include <atomic>
#include <cstdint>
#include <initializer_list>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <variant>
#include <vector>

#include "strata/base/status.h"
#include "strata/base/wait.h"
#include "strata/hal/device.h"
#include "strata_runtime_config.h"

namespace strata::hal {

// One argument of a span: a number or a string.
struct TraceArg {
  std::string_view key;
  std::variant<uint64_t, std::string_view> value;
};

#if STRATA_ENABLE_PROFILING

class LocalProfiler {
public:
  // Starts a capture written to `options.file_path` and/or reported to
  // `options.on_dispatch` (FAILED_PRECONDITION when one is already
  // running, INVALID_ARGUMENT with neither).
  Status Begin(ProfilingOptions options);
  // Writes what was captured so far (the whole file, valid JSON).
  Status Flush();
  // Writes the file and stops capturing.
  Status End();

  // Cheap check on the hot paths.
  bool is_active() const { return active_.load(std::memory_order_acquire); }

  // Records one span that ran from `start_ns` to `end_ns` (NowNs clock) on
  // the calling thread; a failed `status` adds an "error" argument.
  void RecordSpan(std::string_view category, std::string_view name,
                  std::initializer_list<TraceArg> args, int64_t start_ns,
                  int64_t end_ns, const Status &status = OkStatus());

  // Records one dispatch of call site `site` (0 = none): category
  // "dispatch", named after the site or else the export.
  void RecordDispatch(std::string_view export_name,
                      std::string_view executable_name, uint32_t site,
                      uint32_t x, uint32_t y, uint32_t z, int64_t start_ns,
                      int64_t end_ns);

  // Runs `work` (returning Status) and, while capturing, records it as a
  // span. Costs one atomic load when not capturing.
  template <typename Work>
  Status Span(std::string_view category, std::string_view name,
              std::initializer_list<TraceArg> args, Work &&work) {
    if (!is_active())
      return work();
    int64_t start_ns = NowNs();
    Status status = work();
    RecordSpan(category, name, args, start_ns, NowNs(), status);
    return status;
  }

private:
  struct Event {
    std::string name;
    std::string category;
    // The "args" object's members, already JSON.
    std::string args;
    int64_t start_ns, end_ns;
    uint32_t thread;
  };

  Status WriteLocked();
  uint32_t ThreadIndexLocked(std::thread::id id);

  std::atomic<bool> active_{false};
  // Whether spans are kept for a file (false: dispatches are only
  // reported to on_dispatch_).
  std::atomic<bool> keep_spans_{false};
  std::mutex mutex_;
  // Empty: nothing is written, spans are not kept.
  std::string path_;
  std::vector<std::string> site_names_;
  std::function<void(const DispatchProfile &)> on_dispatch_;
  int64_t origin_ns_ = 0;
  std::vector<Event> events_;
  std::vector<std::thread::id> threads_;
};

#else // !STRATA_ENABLE_PROFILING

// Built without profiling: a capture is refused with an error that says so,
// and spans cost nothing.
class LocalProfiler {
public:
  Status Begin(const ProfilingOptions &) {
    return UnimplementedError("profiling is not in this build of the runtime "
                              "(STRATA_ENABLE_PROFILING=OFF)");
  }
  Status Flush() { return OkStatus(); }
  Status End() { return OkStatus(); }
  bool is_active() const { return false; }
  void RecordSpan(std::string_view, std::string_view,
                  std::initializer_list<TraceArg>, int64_t, int64_t,
                  const Status & = OkStatus()) {}
  void RecordDispatch(std::string_view, std::string_view, uint32_t, uint32_t,
                      uint32_t, uint32_t, int64_t, int64_t) {}
  template <typename Work>
  Status Span(std::string_view, std::string_view,
              std::initializer_list<TraceArg>, Work &&work) {
    return work();
  }
};

#endif // STRATA_ENABLE_PROFILING

} // namespace strata::hal

#endif // STRATA_HAL_LOCAL_LOCAL_PROFILER_H_
