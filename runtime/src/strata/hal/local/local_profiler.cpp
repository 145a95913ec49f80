#include "strata/hal/local/local_profiler.h"

#include <cstdio>

#include "strata/base/file_contents.h"
#include "strata/base/wait.h"

namespace strata::hal {
namespace {

// JSON string contents: quotes, backslashes and control characters escaped.
void AppendJsonString(std::string_view text, std::string *out) {
  out->push_back('"');
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out->push_back('\\');
      out->push_back(c);
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      *out += escaped;
    } else {
      out->push_back(c);
    }
  }
  out->push_back('"');
}

std::string Microseconds(int64_t ns) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.3f", double(ns) / 1000.0);
  return text;
}

} // namespace

Status LocalProfiler::Begin(ProfilingOptions options) {
  if (options.file_path.empty() && !options.on_dispatch)
    return InvalidArgumentError("profiling needs a file to write the trace "
                                "to");
  std::lock_guard<std::mutex> lock(mutex_);
  if (active_.load())
    return FailedPreconditionError("a profiling capture to '", path_,
                                   "' is already running");
  path_ = std::move(options.file_path);
  site_names_ = std::move(options.dispatch_site_names);
  on_dispatch_ = std::move(options.on_dispatch);
  keep_spans_.store(!path_.empty(), std::memory_order_relaxed);
  events_.clear();
  threads_.clear();
  origin_ns_ = NowNs();
  active_.store(true, std::memory_order_release);
  return OkStatus();
}

Status LocalProfiler::Flush() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!active_.load() || path_.empty())
    return OkStatus();
  return WriteLocked();
}

Status LocalProfiler::End() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!active_.load())
    return OkStatus();
  active_.store(false, std::memory_order_release);
  Status status = path_.empty() ? OkStatus() : WriteLocked();
  events_.clear();
  threads_.clear();
  site_names_.clear();
  on_dispatch_ = nullptr;
  return status;
}

uint32_t LocalProfiler::ThreadIndexLocked(std::thread::id id) {
  for (size_t i = 0; i < threads_.size(); ++i)
    if (threads_[i] == id)
      return uint32_t(i + 1);
  threads_.push_back(id);
  return uint32_t(threads_.size());
}

void LocalProfiler::RecordSpan(std::string_view category, std::string_view name,
                               std::initializer_list<TraceArg> args,
                               int64_t start_ns, int64_t end_ns,
                               const Status &status) {
  if (!is_active())
    return;
  if (!keep_spans_.load(std::memory_order_relaxed))
    return;
  // Rendered outside the lock: spans may come from several threads.
  std::string rendered;
  auto append_key = [&](std::string_view key) {
    if (!rendered.empty())
      rendered += ", ";
    AppendJsonString(key, &rendered);
    rendered += ": ";
  };
  for (const TraceArg &arg : args) {
    append_key(arg.key);
    if (const uint64_t *number = std::get_if<uint64_t>(&arg.value))
      rendered += std::to_string(*number);
    else
      AppendJsonString(std::get<std::string_view>(arg.value), &rendered);
  }
  if (!status.ok()) {
    append_key("error");
    AppendJsonString(StatusCodeName(status.code()), &rendered);
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (!active_.load())
    return;
  events_.push_back(Event{std::string(name), std::string(category),
                          std::move(rendered), start_ns, end_ns,
                          ThreadIndexLocked(std::this_thread::get_id())});
}

void LocalProfiler::RecordDispatch(std::string_view export_name,
                                   std::string_view executable_name,
                                   uint32_t site, uint32_t x, uint32_t y,
                                   uint32_t z, int64_t start_ns,
                                   int64_t end_ns) {
  if (!is_active())
    return;
  std::string name;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!active_.load())
      return;
    if (on_dispatch_)
      on_dispatch_(DispatchProfile{executable_name, export_name, site,
                                   end_ns - start_ns});
    if (!keep_spans_.load(std::memory_order_relaxed))
      return;
    name = site > 0 && site <= site_names_.size() ? site_names_[site - 1]
                                                  : std::string(export_name);
  }
  std::string count = StrCat(x, "x", y, "x", z);
  if (site == 0) {
    RecordSpan("dispatch", name,
               {{"workgroup_count", std::string_view(count)},
                {"executable", executable_name}},
               start_ns, end_ns);
    return;
  }
  RecordSpan("dispatch", name,
             {{"workgroup_count", std::string_view(count)},
              {"executable", executable_name},
              {"export", export_name},
              {"site", uint64_t(site)}},
             start_ns, end_ns);
}

Status LocalProfiler::WriteLocked() {
  std::string json = "{\"displayTimeUnit\": \"ns\", \"traceEvents\": [";
  bool first = true;
  auto separator = [&] {
    json += first ? "\n" : ",\n";
    first = false;
  };
  for (size_t i = 0; i < threads_.size(); ++i) {
    separator();
    json += StrCat("{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, "
                   "\"tid\": ",
                   i + 1, ", \"args\": {\"name\": \"thread ", i + 1, "\"}}");
  }
  for (const Event &event : events_) {
    separator();
    json += "{\"name\": ";
    AppendJsonString(event.name, &json);
    json += ", \"cat\": ";
    AppendJsonString(event.category, &json);
    json += StrCat(
        ", \"ph\": \"X\", \"ts\": ", Microseconds(event.start_ns - origin_ns_),
        ", \"dur\": ", Microseconds(event.end_ns - event.start_ns),
        ", \"pid\": 1, \"tid\": ", event.thread, ", \"args\": {", event.args,
        "}}");
  }
  json += "\n]}\n";
  return WriteFileContents(
             path_,
             {reinterpret_cast<const uint8_t *>(json.data()), json.size()})
      .Annotate("writing the profiling trace '", path_, "'");
}

} // namespace strata::hal
