#include "strata/hal/drivers/local_sync/local_sync_driver.h"

#include "strata/hal/local/local_device.h"
#include "strata/hal/local/local_device_options.h"

namespace strata::hal {
namespace {

class LocalSyncDriver final : public Driver {
public:
  std::string_view name() const override { return kLocalSyncDriverName; }

  Result<std::vector<DeviceInfo>> QueryAvailableDevices() override {
    return std::vector<DeviceInfo>{
        {"0", "synchronous host CPU (work runs on the calling thread)"}};
  }

  Result<RefPtr<Device>> CreateDevice(std::string_view path) override {
    STRATA_ASSIGN_OR_RETURN(LocalDeviceOptions options,
                            ParseLocalDeviceOptions(path, false));
    STRATA_RETURN_IF_ERROR(CheckPath(options.path));
    LocalDeviceParams params;
    params.id = std::string(kLocalSyncDriverName);
    STRATA_ASSIGN_OR_RETURN(params.loaders, CreateLocalLoaders(options));
    params.grid_runner = std::make_unique<InlineGridRunner>();
    STRATA_ASSIGN_OR_RETURN(RefPtr<LocalDevice> device,
                            LocalDevice::Create(std::move(params)));
    return RefPtr<Device>(std::move(device));
  }

  Result<std::string> DumpDeviceInfo(std::string_view path) override {
    STRATA_ASSIGN_OR_RETURN(RefPtr<Device> device, CreateDevice(path));
    return StrCat("driver: ", kLocalSyncDriverName, "\n", "path: 0\n",
                  device->DumpInfo());
  }

private:
  static Status CheckPath(std::string_view path) {
    if (path.empty() || path == "0")
      return OkStatus();
    return NotFoundError("driver '", kLocalSyncDriverName, "' has no device '",
                         path, "'; available devices: 0");
  }
};

} // namespace

RefPtr<Driver> CreateLocalSyncDriver() {
  return RefPtr<Driver>::Adopt(new LocalSyncDriver());
}

Status RegisterLocalSyncDriver(DriverRegistry &registry) {
  return registry.Register(
      std::string(kLocalSyncDriverName),
      "runs work inline on the calling thread (synchronous, deterministic)",
      []() -> Result<RefPtr<Driver>> { return CreateLocalSyncDriver(); });
}

} // namespace strata::hal
