#include "strata/hal/drivers/cuda/cuda_driver.h"

#include <charconv>

#include "strata/hal/drivers/cuda/cuda_context.h"
#include "strata/hal/drivers/cuda/cuda_device.h"

namespace strata::hal {
namespace {

using cuda::CudaSymbols;

// The loaded driver and its GPU count; UNAVAILABLE "no CUDA device: ..."
// saying what is missing.
struct LoadedDriver {
  std::shared_ptr<const CudaSymbols> symbols;
  int device_count = 0;
};

Result<LoadedDriver> LoadDriver() {
  auto symbols = cuda::LoadCudaSymbols();
  if (!symbols.ok())
    return symbols.status().Annotate("no CUDA device");
  LoadedDriver loaded{std::move(*symbols), 0};
  const CudaSymbols &table = *loaded.symbols;
  if (table.init_result != cuda::CUDA_SUCCESS)
    return UnavailableError(
        "no CUDA device: ",
        cuda::CudaResultToStatus(table, table.init_result, "cuInit").message());
  Status counted =
      STRATA_CUDA_CALL(table, cuDeviceGetCount, &loaded.device_count);
  if (!counted.ok())
    return UnavailableError("no CUDA device: ", counted.message());
  if (loaded.device_count <= 0)
    return UnavailableError("no CUDA device: the CUDA driver reports no GPU");
  return loaded;
}

std::string AvailablePaths(int device_count) {
  std::string paths;
  for (int i = 0; i < device_count; ++i)
    paths += StrCat(i ? ", " : "", i);
  return paths;
}

// The GPU ordinal `path` names ("" = 0).
Result<int> ParsePath(std::string_view path, int device_count) {
  if (path.empty())
    return 0;
  if (path[0] == '?')
    return InvalidArgumentError("cuda devices take no options ('", path, "')");
  int ordinal = -1;
  auto [end, error] =
      std::from_chars(path.data(), path.data() + path.size(), ordinal);
  if (error != std::errc() || end != path.data() + path.size() || ordinal < 0 ||
      ordinal >= device_count)
    return NotFoundError(
        "driver '", kCudaDriverName, "' has no device '", path,
        "'; available devices: ", AvailablePaths(device_count));
  return ordinal;
}

class CudaDriver final : public Driver {
public:
  std::string_view name() const override { return kCudaDriverName; }

  // Listing works everywhere: no driver or no GPU lists nothing.
  Result<std::vector<DeviceInfo>> QueryAvailableDevices() override {
    std::vector<DeviceInfo> devices;
    auto loaded = LoadDriver();
    if (!loaded.ok())
      return devices;
    for (int i = 0; i < loaded->device_count; ++i) {
      auto properties = cuda::QueryCudaDeviceProperties(*loaded->symbols, i);
      devices.push_back(
          {std::to_string(i),
           properties.ok()
               ? cuda::FormatCudaDeviceName(*properties)
               : StrCat("GPU ", i, " (", properties.status().message(), ")")});
    }
    return devices;
  }

  Result<RefPtr<Device>> CreateDevice(std::string_view path) override {
    STRATA_ASSIGN_OR_RETURN(LoadedDriver loaded, LoadDriver());
    STRATA_ASSIGN_OR_RETURN(int ordinal, ParsePath(path, loaded.device_count));
    STRATA_ASSIGN_OR_RETURN(
        RefPtr<cuda::CudaDevice> device,
        cuda::CudaDevice::Create(std::move(loaded.symbols), ordinal));
    return RefPtr<Device>(std::move(device));
  }

  Result<std::string> DumpDeviceInfo(std::string_view path) override {
    STRATA_ASSIGN_OR_RETURN(LoadedDriver loaded, LoadDriver());
    STRATA_ASSIGN_OR_RETURN(int ordinal, ParsePath(path, loaded.device_count));
    STRATA_ASSIGN_OR_RETURN(RefPtr<Device> device, CreateDevice(path));
    return StrCat("driver: ", kCudaDriverName, "\n", "path: ", ordinal, "\n",
                  device->DumpInfo());
  }
};

} // namespace

RefPtr<Driver> CreateCudaDriver() {
  return RefPtr<Driver>::Adopt(new CudaDriver());
}

Status RegisterCudaDriver(DriverRegistry &registry) {
  return registry.Register(
      std::string(kCudaDriverName),
      "NVIDIA GPUs through the CUDA driver API (libcuda.so.1, loaded at run "
      "time)",
      []() -> Result<RefPtr<Driver>> { return CreateCudaDriver(); });
}

} // namespace strata::hal
