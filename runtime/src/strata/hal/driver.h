// A driver enumerates and creates devices of one kind ("local-sync", ...).
#ifndef STRATA_HAL_DRIVER_H_
#define STRATA_HAL_DRIVER_H_

#include <string>
#include <string_view>
#include <vector>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/hal/device.h"

namespace strata::hal {

struct DeviceInfo {
  // What follows "driver://" in a device URI ("0").
  std::string path;
  // Human-readable ("synchronous host CPU").
  std::string name;
};

class Driver : public RefObject {
public:
  static const RefTypeDescriptor kRefType;

  virtual std::string_view name() const = 0;
  virtual Result<std::vector<DeviceInfo>> QueryAvailableDevices() = 0;
  // `path` as in DeviceInfo; "" = the default device. NOT_FOUND lists the
  // available paths.
  virtual Result<RefPtr<Device>> CreateDevice(std::string_view path) = 0;
  // Text describing the device at `path` ("" = default).
  virtual Result<std::string> DumpDeviceInfo(std::string_view path) = 0;

protected:
  Driver() : RefObject(&kRefType) {}
};

} // namespace strata::hal

#endif // STRATA_HAL_DRIVER_H_
