#include "strata/hal/drivers/local_task/local_task_driver.h"

#include "strata/hal/drivers/local_task/task_grid_runner.h"
#include "strata/hal/local/local_device.h"
#include "strata/hal/local/local_device_options.h"

namespace strata::hal {
namespace {

class LocalTaskDriver final : public Driver {
public:
  std::string_view name() const override { return kLocalTaskDriverName; }

  Result<std::vector<DeviceInfo>> QueryAvailableDevices() override {
    return std::vector<DeviceInfo>{
        {"0", StrCat("host CPU with a pool of ", HardwareConcurrency(),
                     " workers (dispatch grids run in parallel)")}};
  }

  Result<RefPtr<Device>> CreateDevice(std::string_view path) override {
    STRATA_ASSIGN_OR_RETURN(LocalDeviceOptions options,
                            ParseLocalDeviceOptions(path, true));
    if (!options.path.empty() && options.path != "0")
      return NotFoundError("driver '", kLocalTaskDriverName,
                           "' has no device '", options.path,
                           "'; available devices: 0");
    uint32_t workers =
        options.worker_count ? options.worker_count : HardwareConcurrency();
    LocalDeviceParams params;
    params.id = std::string(kLocalTaskDriverName);
    // Submissions return at once and complete later, as on a real device.
    params.async_queue = true;
    STRATA_ASSIGN_OR_RETURN(params.loaders, CreateLocalLoaders(options));
    STRATA_ASSIGN_OR_RETURN(
        params.grid_runner,
        TaskGridRunner::Create(
            workers, std::chrono::microseconds(options.spin_microseconds),
            options.pin_workers));
    STRATA_ASSIGN_OR_RETURN(RefPtr<LocalDevice> device,
                            LocalDevice::Create(std::move(params)));
    return RefPtr<Device>(std::move(device));
  }

  Result<std::string> DumpDeviceInfo(std::string_view path) override {
    STRATA_ASSIGN_OR_RETURN(RefPtr<Device> device, CreateDevice(path));
    return StrCat("driver: ", kLocalTaskDriverName, "\n", "path: 0\n",
                  device->DumpInfo());
  }
};

} // namespace

RefPtr<Driver> CreateLocalTaskDriver() {
  return RefPtr<Driver>::Adopt(new LocalTaskDriver());
}

Status RegisterLocalTaskDriver(DriverRegistry &registry) {
  return registry.Register(
      std::string(kLocalTaskDriverName),
      "runs dispatch grids on a pool of worker threads (workers=N, "
      "spin_us=U, pin=0|1)",
      []() -> Result<RefPtr<Driver>> { return CreateLocalTaskDriver(); });
}

} // namespace strata::hal
