#include "strata/hal/local/local_device_options.h"

#include <charconv>
#include <thread>

#if defined(__linux__)
#include <sched.h>
#endif

#include "strata_runtime_config.h"

#if STRATA_HAL_LOADER_EMBEDDED_ELF
#include "strata/hal/loaders/embedded_elf_loader.h"
#endif
#if STRATA_HAL_LOADER_SYSTEM_LIBRARY
#include "strata/hal/loaders/system_library_loader.h"
#endif
#if STRATA_HAL_LOADER_VMVX
#include "strata/hal/loaders/vmvx_module_loader.h"
#endif

namespace strata::hal {
namespace {

// Upper bound on pool sizes: far above any host, low enough that a typo
// (workers=10000) is an error instead of thousands of threads.
constexpr uint32_t kMaxWorkers = 1024;
// Spinning longer than this is never worth it: a sleeping thread wakes in
// far less.
constexpr uint32_t kMaxSpinMicroseconds = 10000;

// The value of option `key` as an integer in [0, max]; `meaning` says what
// it counts in the error.
Result<uint32_t> ParseBoundedOption(std::string_view key,
                                    std::string_view value, uint32_t max,
                                    std::string_view meaning) {
  uint32_t number = 0;
  auto [end, error] =
      std::from_chars(value.data(), value.data() + value.size(), number);
  if (error != std::errc() || end != value.data() + value.size() ||
      number > max)
    return InvalidArgumentError("device option '", key,
                                "' expects an integer in [0, ", max, "] (",
                                meaning, "), got '", value, "'");
  return number;
}

struct LoaderName {
  std::string_view name;
  // The CMake option that builds it in.
  std::string_view option;
  bool built;
};

constexpr LoaderName kLoaderNames[] = {
    {"embedded", "STRATA_HAL_LOADER_EMBEDDED_ELF",
     STRATA_HAL_LOADER_EMBEDDED_ELF},
    {"system", "STRATA_HAL_LOADER_SYSTEM_LIBRARY",
     STRATA_HAL_LOADER_SYSTEM_LIBRARY},
    {"vmvx", "STRATA_HAL_LOADER_VMVX", STRATA_HAL_LOADER_VMVX},
};

// BuiltLocalLoaders() for an error message: "embedded, system".
std::string BuiltLoaderList() {
  std::string list;
  for (const std::string &name : BuiltLocalLoaders())
    list.append(list.empty() ? "" : ", ").append(name);
  return list.empty() ? "none" : list;
}

Result<std::vector<std::string>> ParseLoaderList(std::string_view value) {
  std::vector<std::string> loaders;
  while (true) {
    size_t comma = value.find(',');
    std::string_view name = value.substr(0, comma);
    const LoaderName *known = nullptr;
    for (const LoaderName &loader : kLoaderNames)
      if (loader.name == name)
        known = &loader;
    if (!known)
      return InvalidArgumentError("device option 'loader': unknown loader '",
                                  name, "'; loaders: ", BuiltLoaderList());
    if (!known->built)
      return InvalidArgumentError("device option 'loader': loader '", name,
                                  "' is not in this build of the runtime (",
                                  known->option,
                                  "=OFF); loaders: ", BuiltLoaderList());
    loaders.emplace_back(name);
    if (comma == std::string_view::npos)
      break;
    value.remove_prefix(comma + 1);
  }
  return loaders;
}

} // namespace

Result<LocalDeviceOptions> ParseLocalDeviceOptions(std::string_view path,
                                                   bool allow_workers) {
  LocalDeviceOptions options;
  size_t question = path.find('?');
  options.path = std::string(path.substr(0, question));
  if (question == std::string_view::npos)
    return options;
  std::string_view query = path.substr(question + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view item = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view()
                                          : query.substr(amp + 1);
    if (item.empty())
      continue;
    size_t equals = item.find('=');
    if (equals == std::string_view::npos)
      return InvalidArgumentError("device option '", item,
                                  "' needs a value (key=value)");
    std::string_view key = item.substr(0, equals);
    std::string_view value = item.substr(equals + 1);
    if (key == "workers" && allow_workers) {
      STRATA_ASSIGN_OR_RETURN(
          options.worker_count,
          ParseBoundedOption(key, value, kMaxWorkers, "0 = one per core"));
    } else if (key == "spin_us" && allow_workers) {
      STRATA_ASSIGN_OR_RETURN(
          options.spin_microseconds,
          ParseBoundedOption(key, value, kMaxSpinMicroseconds, "microseconds"));
    } else if (key == "pin" && allow_workers) {
      STRATA_ASSIGN_OR_RETURN(uint32_t pin,
                              ParseBoundedOption(key, value, 1, "0 or 1"));
      options.pin_workers = pin == 1;
    } else if (key == "loader") {
      STRATA_ASSIGN_OR_RETURN(options.loaders, ParseLoaderList(value));
    } else {
      return InvalidArgumentError(
          "unknown device option '", key, "'; options: ",
          allow_workers ? "workers, spin_us, pin, loader" : "loader");
    }
  }
  return options;
}

std::vector<std::string> BuiltLocalLoaders() {
  std::vector<std::string> names;
  for (const LoaderName &loader : kLoaderNames)
    if (loader.built)
      names.emplace_back(loader.name);
  return names;
}

Result<std::vector<std::unique_ptr<ExecutableLoader>>>
CreateLocalLoaders(const LocalDeviceOptions &options) {
  std::vector<std::unique_ptr<ExecutableLoader>> loaders;
  for (const std::string &name : options.loaders) {
#if STRATA_HAL_LOADER_EMBEDDED_ELF
    if (name == "embedded") {
      loaders.push_back(std::make_unique<EmbeddedElfLoader>());
      continue;
    }
#endif
#if STRATA_HAL_LOADER_SYSTEM_LIBRARY
    if (name == "system") {
      loaders.push_back(std::make_unique<SystemLibraryLoader>());
      continue;
    }
#endif
#if STRATA_HAL_LOADER_VMVX
    if (name == "vmvx") {
      loaders.push_back(std::make_unique<VmvxModuleLoader>());
      continue;
    }
#endif
    return InvalidArgumentError("loader '", name,
                                "' is not in this build of the runtime");
  }
  return loaders;
}

std::vector<uint32_t> AllowedCpus() {
  std::vector<uint32_t> cpus;
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0)
    return cpus;
  for (uint32_t cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &set))
      cpus.push_back(cpu);
#endif
  return cpus;
}

uint32_t HardwareConcurrency() {
  std::vector<uint32_t> cpus = AllowedCpus();
  if (!cpus.empty())
    return uint32_t(cpus.size());
  unsigned count = std::thread::hardware_concurrency();
  return count ? count : 1;
}

} // namespace strata::hal
