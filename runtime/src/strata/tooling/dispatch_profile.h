// What the tools know about a program's dispatches: the call sites its
// module file lists (each named after the model ops it runs, with a FLOP
// count for contractions) and, for `strata-bench --per-dispatch`, where the
// time of a call goes, site by site, from the device's profiling capture
// (the same timing source as `--trace`).
#ifndef STRATA_TOOLING_DISPATCH_PROFILE_H_
#define STRATA_TOOLING_DISPATCH_PROFILE_H_

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/hal/device.h"
#include "strata/vm/module.h"

namespace strata::tooling {

struct DispatchSite {
  // "conv2d_relu:/layer1/layer1.0/conv1/Conv".
  std::string name;
  std::string executable;
  // Operations per call; 0 = unknown.
  uint64_t flops = 0;
};

// The dispatch sites of the module defining `function`, site N at index
// N - 1; empty for modules that list none (native modules, files from
// before sites were recorded).
std::vector<DispatchSite> ReadDispatchSites(const vm::Function &function);

// Profiling options that name dispatch spans after `sites`.
hal::ProfilingOptions
ProfilingOptionsForSites(const std::vector<DispatchSite> &sites);

// Time per dispatch site over some profiled calls.
class DispatchTimes {
public:
  // Adds one dispatch (from ProfilingOptions::on_dispatch).
  void Record(const hal::DispatchProfile &dispatch);

  struct Row {
    // 0 when the module numbers no sites: the row is then one export.
    uint32_t site = 0;
    std::string name;
    uint64_t flops = 0;
    uint64_t count = 0;
    int64_t total_ns = 0;
  };
  // One row per site (or per export where dispatches carry no site), the
  // most time first.
  std::vector<Row> Rows(const std::vector<DispatchSite> &sites) const;

private:
  // Keyed by site, then executable and export for site 0.
  std::map<std::tuple<uint32_t, std::string, std::string>, Row> rows_;
};

// The --per-dispatch table for `calls` profiled calls taking `call_ms` on
// average: per row the calls per program call, mean time per dispatch,
// milliseconds per program call, share of the call and GFLOP/s where the
// FLOP count is known.
std::string FormatDispatchTable(const std::vector<DispatchTimes::Row> &rows,
                                uint64_t calls, double call_ms);

// The same as a JSON array of objects (site, name, calls_per_iteration,
// mean_us, total_ms, share, gflops: null where unknown), for JsonText
// (json_text.h).
nlohmann::ordered_json DispatchJson(const std::vector<DispatchTimes::Row> &rows,
                                    uint64_t calls, double call_ms);

} // namespace strata::tooling

#endif // STRATA_TOOLING_DISPATCH_PROFILE_H_
