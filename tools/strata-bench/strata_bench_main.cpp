// strata-bench: calls one function repeatedly and reports latency, and with
// --per-dispatch where the time of a call goes, dispatch by dispatch.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "strata/hal/device.h"
#include "strata/tooling/dispatch_profile.h"
#include "strata/tooling/flags.h"
#include "strata/tooling/heap_counter.h"
#include "strata/tooling/json_text.h"
#include "strata/tooling/program_runner.h"
#include "strata/tooling/terminal.h"

namespace {

using namespace strata;

int Fail(const Status &status) {
  return tooling::ReportError("strata-bench", status);
}

double Percentile(const std::vector<double> &sorted, double fraction) {
  size_t index = std::min(sorted.size() - 1,
                          size_t(fraction * double(sorted.size() - 1) + 0.5));
  return sorted[index];
}

int Run(int argc, char **argv) {
  tooling::ProgramOptions options;
  int64_t warmup = 5, iterations = 100;
  bool json = false;
  tooling::FlagParser flags("strata-bench",
                            "--module=FILE.smod --function=NAME "
                            "[--input=...]... [--iterations=N]");
  tooling::AddProgramFlags(flags, options);
  flags.AddInt("warmup", &warmup, "untimed calls first (default 5)");
  flags.AddInt("iterations", &iterations, "timed calls (default 100)");
  flags.AddBool("json", &json, "print the statistics as JSON");
  std::string trace;
  flags.AddString("trace", &trace,
                  "FILE.json: after the timed calls, profile one more (warm) "
                  "call and write a Chrome trace with one span per dispatch "
                  "(named after the model ops it runs)");
  bool per_dispatch = false;
  flags.AddBool("per-dispatch", &per_dispatch,
                "after the timed calls, profile as many more and print a "
                "table with a row per dispatch call site (calls per call, "
                "mean time, total ms per call, share of the call, GFLOP/s "
                "where the compiler counted the FLOPs), the most time "
                "first");
  std::vector<std::string> positional;
  Status status = flags.Parse(argc, argv, &positional);
  if (flags.help_requested()) {
    std::cout << flags.Help();
    return 0;
  }
  if (flags.version_requested()) {
    std::cout << flags.Version();
    return 0;
  }
  if (!status.ok())
    return Fail(status);
  if (!positional.empty())
    return Fail(InvalidArgumentError("unexpected argument '", positional[0],
                                     "' (see --help)"));
  if (warmup < 0 || iterations < 1)
    return Fail(
        InvalidArgumentError("--warmup must be >= 0 and --iterations >= 1"));

  auto program = tooling::LoadProgram(options);
  if (!program.ok())
    return Fail(program.status());
  std::vector<vm::Value> results;
  for (int64_t i = 0; i < warmup; ++i) {
    status =
        program->session->Call(program->function, program->inputs, &results);
    if (!status.ok())
      return Fail(status);
  }
  std::vector<double> millis;
  millis.reserve(iterations);
  RefPtr<hal::Allocator> allocator = program->session->device_allocator();
  uint64_t allocations_before = allocator->statistics().allocation_count;
  uint64_t heap_allocations_before = tooling::HeapAllocationCount();
  for (int64_t i = 0; i < iterations; ++i) {
    auto start = std::chrono::steady_clock::now();
    status =
        program->session->Call(program->function, program->inputs, &results);
    auto end = std::chrono::steady_clock::now();
    if (!status.ok())
      return Fail(status);
    millis.push_back(
        std::chrono::duration<double, std::milli>(end - start).count());
  }
  // Device allocations per call (buffers the program allocates: results and
  // transients), averaged over the timed calls.
  double allocations_per_call =
      double(allocator->statistics().allocation_count - allocations_before) /
      double(iterations);
  // Heap allocations (operator new) per call, the runtime's and the
  // program's together: what a steady call costs the process heap.
  double heap_allocations_per_call =
      double(tooling::HeapAllocationCount() - heap_allocations_before) /
      double(iterations);
  // Profiled apart from the timed calls: profiling has its own cost, and a
  // warm call shows where time goes in steady state (a first call's spans
  // include page faults on fresh buffers).
  std::vector<tooling::DispatchSite> sites =
      tooling::ReadDispatchSites(program->function);
  hal::Device &device = program->session->device();
  if (!trace.empty()) {
    hal::ProfilingOptions profiling = tooling::ProfilingOptionsForSites(sites);
    profiling.file_path = trace;
    status = device.ProfilingBegin(profiling);
    if (!status.ok())
      return Fail(status);
    status =
        program->session->Call(program->function, program->inputs, &results);
    Status ended = device.ProfilingEnd();
    if (status.ok())
      status = ended;
    if (!status.ok())
      return Fail(status);
  }
  std::vector<tooling::DispatchTimes::Row> dispatch_rows;
  double profiled_call_ms = 0;
  if (per_dispatch) {
    tooling::DispatchTimes times;
    hal::ProfilingOptions profiling = tooling::ProfilingOptionsForSites(sites);
    profiling.on_dispatch = [&times](const hal::DispatchProfile &dispatch) {
      times.Record(dispatch);
    };
    status = device.ProfilingBegin(profiling);
    if (!status.ok())
      return Fail(status);
    for (int64_t i = 0; i < iterations && status.ok(); ++i) {
      auto start = std::chrono::steady_clock::now();
      status =
          program->session->Call(program->function, program->inputs, &results);
      profiled_call_ms += std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - start)
                              .count() /
                          double(iterations);
    }
    Status ended = device.ProfilingEnd();
    if (status.ok())
      status = ended;
    if (!status.ok())
      return Fail(status);
    dispatch_rows = times.Rows(sites);
  }
  std::sort(millis.begin(), millis.end());
  std::string device_uri = tooling::DeviceUri(options);
  double mean = 0;
  for (double ms : millis)
    mean += ms / double(millis.size());
  std::string name = program->function.FullName();
  if (json) {
    // Keys in this order; bench/*.py read median_ms and the others.
    nlohmann::ordered_json stats;
    stats["function"] = name;
    stats["device"] = device_uri;
    stats["iterations"] = iterations;
    stats["min_ms"] = tooling::RoundTo(millis.front(), 6);
    stats["median_ms"] = tooling::RoundTo(Percentile(millis, 0.5), 6);
    stats["p90_ms"] = tooling::RoundTo(Percentile(millis, 0.9), 6);
    stats["mean_ms"] = tooling::RoundTo(mean, 6);
    stats["max_ms"] = tooling::RoundTo(millis.back(), 6);
    stats["allocations_per_call"] = tooling::RoundTo(allocations_per_call, 3);
    stats["heap_allocations_per_call"] =
        tooling::RoundTo(heap_allocations_per_call, 3);
    if (per_dispatch) {
      stats["profiled_call_ms"] = tooling::RoundTo(profiled_call_ms, 6);
      stats["dispatches"] =
          tooling::DispatchJson(dispatch_rows, iterations, profiled_call_ms);
    }
    std::printf("%s\n", tooling::JsonText(stats).c_str());
  } else {
    std::printf("%s on %s: %lld calls\n  min    %10.4f ms\n  median %10.4f "
                "ms\n  p90    %10.4f ms\n  mean   %10.4f ms\n  max    %10.4f "
                "ms\n  allocations per call %.3f\n  heap allocations per "
                "call %.3f\n",
                name.c_str(), device_uri.c_str(), (long long)iterations,
                millis.front(), Percentile(millis, 0.5),
                Percentile(millis, 0.9), mean, millis.back(),
                allocations_per_call, heap_allocations_per_call);
    if (per_dispatch)
      std::printf("%s", tooling::FormatDispatchTable(dispatch_rows, iterations,
                                                     profiled_call_ms)
                            .c_str());
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) { return Run(argc, argv); }
