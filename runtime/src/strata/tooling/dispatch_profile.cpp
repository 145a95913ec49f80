#include "strata/tooling/dispatch_profile.h"

#include <algorithm>
#include <cstdarg>
#include <cstdio>

#include "strata/schema/module_generated.h"
#include "strata/tooling/json_text.h"
#include "strata/vm/bytecode_module.h"

namespace strata::tooling {
namespace {

// printf into a std::string (table cells are short).
__attribute__((format(printf, 1, 2))) std::string Format(const char *format,
                                                         ...) {
  char text[128];
  va_list args;
  va_start(args, format);
  int length = std::vsnprintf(text, sizeof(text), format, args);
  va_end(args);
  return std::string(text,
                     std::min(size_t(std::max(length, 0)), sizeof(text) - 1));
}

// What one row means per program call.
struct RowFigures {
  double calls_per_iteration;
  double mean_us;
  double total_ms;
  double share;
  // < 0: unknown.
  double gflops;
};

RowFigures GetFigures(const DispatchTimes::Row &row, uint64_t calls,
                      double call_ms) {
  RowFigures figures;
  figures.calls_per_iteration = double(row.count) / double(calls);
  figures.mean_us = double(row.total_ns) / 1e3 / double(row.count);
  figures.total_ms = double(row.total_ns) / 1e6 / double(calls);
  figures.share = call_ms > 0 ? figures.total_ms / call_ms : 0;
  // FLOP per nanosecond is GFLOP/s.
  figures.gflops =
      row.flops && row.total_ns > 0
          ? double(row.flops) * double(row.count) / double(row.total_ns)
          : -1;
  return figures;
}

} // namespace

std::vector<DispatchSite> ReadDispatchSites(const vm::Function &function) {
  std::vector<DispatchSite> sites;
  const vm::BytecodeModule *module =
      function.module ? function.module->AsBytecodeModule() : nullptr;
  if (!module || !module->def().dispatch_sites())
    return sites;
  for (const schema::DispatchSiteDef *def : *module->def().dispatch_sites()) {
    DispatchSite &site = sites.emplace_back();
    site.name = def->name()->str();
    if (def->executable())
      site.executable = def->executable()->str();
    site.flops = def->flops();
  }
  return sites;
}

hal::ProfilingOptions
ProfilingOptionsForSites(const std::vector<DispatchSite> &sites) {
  hal::ProfilingOptions options;
  for (const DispatchSite &site : sites)
    options.dispatch_site_names.push_back(site.name);
  return options;
}

void DispatchTimes::Record(const hal::DispatchProfile &dispatch) {
  auto key =
      dispatch.site
          ? std::make_tuple(dispatch.site, std::string(), std::string())
          : std::make_tuple(uint32_t(0), std::string(dispatch.executable),
                            std::string(dispatch.export_name));
  auto [it, inserted] = rows_.try_emplace(key);
  Row &row = it->second;
  if (inserted) {
    row.site = dispatch.site;
    row.name = std::string(dispatch.export_name);
  }
  ++row.count;
  row.total_ns += dispatch.duration_ns;
}

std::vector<DispatchTimes::Row>
DispatchTimes::Rows(const std::vector<DispatchSite> &sites) const {
  std::vector<Row> rows;
  for (const auto &[key, recorded] : rows_) {
    Row row = recorded;
    if (row.site > 0 && row.site <= sites.size()) {
      row.name = sites[row.site - 1].name;
      row.flops = sites[row.site - 1].flops;
    }
    rows.push_back(std::move(row));
  }
  std::sort(rows.begin(), rows.end(), [](const Row &a, const Row &b) {
    return a.total_ns != b.total_ns ? a.total_ns > b.total_ns : a.site < b.site;
  });
  return rows;
}

std::string FormatDispatchTable(const std::vector<DispatchTimes::Row> &rows,
                                uint64_t calls, double call_ms) {
  std::string table = Format("per dispatch, over %llu profiled calls of "
                             "%.4f ms on average:\n",
                             (unsigned long long)calls, call_ms);
  table += "  site  calls    mean us   total ms   share  GFLOP/s  dispatch\n";
  double dispatch_ms = 0;
  for (const DispatchTimes::Row &row : rows) {
    RowFigures figures = GetFigures(row, calls, call_ms);
    dispatch_ms += figures.total_ms;
    table += row.site ? Format("  %4u", row.site) : std::string("     -");
    table +=
        Format("  %5.4g %10.2f %10.4f %6.1f%%", figures.calls_per_iteration,
               figures.mean_us, figures.total_ms, figures.share * 100);
    table += figures.gflops >= 0 ? Format(" %8.1f", figures.gflops)
                                 : std::string("        -");
    table += "  " + row.name + "\n";
  }
  table +=
      Format("  dispatches %.4f ms of %.4f ms per call (%.1f%%)\n", dispatch_ms,
             call_ms, call_ms > 0 ? dispatch_ms / call_ms * 100 : 0.0);
  return table;
}

nlohmann::ordered_json DispatchJson(const std::vector<DispatchTimes::Row> &rows,
                                    uint64_t calls, double call_ms) {
  nlohmann::ordered_json json = nlohmann::ordered_json::array();
  for (const DispatchTimes::Row &row : rows) {
    RowFigures figures = GetFigures(row, calls, call_ms);
    nlohmann::ordered_json object;
    object["site"] = row.site;
    object["name"] = row.name;
    object["calls_per_iteration"] = RoundTo(figures.calls_per_iteration, 3);
    object["mean_us"] = RoundTo(figures.mean_us, 3);
    object["total_ms"] = RoundTo(figures.total_ms, 6);
    object["share"] = RoundTo(figures.share, 6);
    object["gflops"] = figures.gflops >= 0
                           ? nlohmann::ordered_json(RoundTo(figures.gflops, 3))
                           : nlohmann::ordered_json(nullptr);
    json.push_back(std::move(object));
  }
  return json;
}

} // namespace strata::tooling
