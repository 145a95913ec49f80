#include "strata/hal/driver_registry.h"

namespace strata::hal {

Result<DeviceUri> ParseDeviceUri(std::string_view uri) {
  DeviceUri result;
  size_t separator = uri.find("://");
  if (separator == std::string_view::npos) {
    // "driver?options": the options stay with the (empty) path.
    size_t question = uri.find('?');
    result.driver = std::string(uri.substr(0, question));
    if (question != std::string_view::npos)
      result.path = std::string(uri.substr(question));
  } else {
    result.driver = std::string(uri.substr(0, separator));
    result.path = std::string(uri.substr(separator + 3));
  }
  if (result.driver.empty())
    return InvalidArgumentError("device URI '", uri, "' has no driver name");
  return result;
}

Status DriverRegistry::Register(std::string name, std::string description,
                                Factory factory) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (drivers_.count(name))
    return AlreadyExistsError("driver '", name, "' is already registered");
  drivers_.emplace(std::move(name), Registration{std::move(description),
                                                 std::move(factory), nullptr});
  return OkStatus();
}

std::vector<DriverRegistry::DriverEntry>
DriverRegistry::EnumerateDrivers() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<DriverEntry> entries;
  for (const auto &[name, registration] : drivers_)
    entries.push_back({name, registration.description});
  return entries;
}

std::vector<DriverRegistry::DeviceEntry> DriverRegistry::EnumerateDevices() {
  std::vector<DeviceEntry> entries;
  for (const DriverEntry &driver_entry : EnumerateDrivers()) {
    auto driver = GetDriver(driver_entry.name);
    if (!driver.ok())
      continue;
    auto devices = (*driver)->QueryAvailableDevices();
    if (!devices.ok())
      continue;
    for (DeviceInfo &info : *devices) {
      std::string uri = driver_entry.name + "://" + info.path;
      entries.push_back({driver_entry.name, std::move(info), std::move(uri)});
    }
  }
  return entries;
}

Result<RefPtr<Driver>> DriverRegistry::GetDriver(std::string_view name) {
  Factory factory;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = drivers_.find(name);
    if (it == drivers_.end()) {
      std::string available;
      for (const auto &[driver_name, registration] : drivers_)
        available += (available.empty() ? "" : ", ") + driver_name;
      return NotFoundError(
          "no HAL driver named '", name,
          "'; available drivers: ", available.empty() ? "none" : available);
    }
    if (it->second.driver)
      return it->second.driver;
    factory = it->second.factory;
  }
  // Create outside the lock: factories may be slow or use the registry.
  STRATA_ASSIGN_OR_RETURN(RefPtr<Driver> driver, factory());
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = drivers_.find(name);
  if (!it->second.driver)
    it->second.driver = std::move(driver);
  return it->second.driver;
}

Result<RefPtr<Device>> DriverRegistry::CreateDevice(std::string_view uri) {
  STRATA_ASSIGN_OR_RETURN(DeviceUri parsed, ParseDeviceUri(uri));
  STRATA_ASSIGN_OR_RETURN(RefPtr<Driver> driver, GetDriver(parsed.driver));
  return driver->CreateDevice(parsed.path);
}

Result<std::string> DriverRegistry::DumpDeviceInfo(std::string_view uri) {
  STRATA_ASSIGN_OR_RETURN(DeviceUri parsed, ParseDeviceUri(uri));
  STRATA_ASSIGN_OR_RETURN(RefPtr<Driver> driver, GetDriver(parsed.driver));
  return driver->DumpDeviceInfo(parsed.path);
}

} // namespace strata::hal
