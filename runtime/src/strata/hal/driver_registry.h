// Maps driver names to factories and devices URIs to devices. The runtime
// instance owns one; drivers add themselves with e.g.
// RegisterLocalSyncDriver(registry). Thread-safe.
#ifndef STRATA_HAL_DRIVER_REGISTRY_H_
#define STRATA_HAL_DRIVER_REGISTRY_H_

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "strata/hal/driver.h"

namespace strata::hal {

// "local-sync" -> {"local-sync", ""}; "local-sync://0" -> {"local-sync",
// "0"}; options stay in the path for the driver to parse:
// "local-task?workers=2" -> {"local-task", "?workers=2"}. INVALID_ARGUMENT
// for an empty driver name.
struct DeviceUri {
  std::string driver;
  std::string path;
};
Result<DeviceUri> ParseDeviceUri(std::string_view uri);

class DriverRegistry {
public:
  using Factory = std::function<Result<RefPtr<Driver>>()>;

  struct DriverEntry {
    std::string name;
    std::string description;
  };

  struct DeviceEntry {
    std::string driver;
    DeviceInfo info;
    // "local-sync://0": what CreateDevice accepts.
    std::string uri;
  };

  // ALREADY_EXISTS if `name` is taken.
  Status Register(std::string name, std::string description, Factory factory);

  // Registered drivers, sorted by name.
  std::vector<DriverEntry> EnumerateDrivers() const;
  // Every device of every driver (drivers failing to enumerate are skipped).
  std::vector<DeviceEntry> EnumerateDevices();

  // The driver called `name`, created on first use and kept. NOT_FOUND lists
  // the registered drivers.
  Result<RefPtr<Driver>> GetDriver(std::string_view name);

  // By name ("local-sync") or URI ("local-sync://0").
  Result<RefPtr<Device>> CreateDevice(std::string_view uri);
  Result<std::string> DumpDeviceInfo(std::string_view uri);

private:
  struct Registration {
    std::string description;
    Factory factory;
    RefPtr<Driver> driver;
  };

  mutable std::mutex mutex_;
  std::map<std::string, Registration, std::less<>> drivers_;
};

} // namespace strata::hal

#endif // STRATA_HAL_DRIVER_REGISTRY_H_
