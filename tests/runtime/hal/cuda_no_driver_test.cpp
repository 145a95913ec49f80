// The cuda driver without a CUDA driver library: listing devices works
// and finds none, creating one is UNAVAILABLE saying why. Its own binary:
// the library, once loaded, stays loaded for the process.
#include <cstdlib>

#include <gtest/gtest.h>

#include "strata/hal/drivers/cuda/cuda_driver.h"
#include "strata/hal/drivers/cuda/cuda_dynamic_symbols.h"
#include "strata/hal/drivers/register_drivers.h"

namespace strata::hal {
namespace {

class CudaNoDriverTest : public ::testing::Test {
protected:
  void SetUp() override {
    setenv(cuda::kCudaDriverLibraryEnv, "/nonexistent/libcuda.so.1", 1);
  }
  void TearDown() override { unsetenv(cuda::kCudaDriverLibraryEnv); }
};

TEST_F(CudaNoDriverTest, LoadFailsNamingTheLibrary) {
  auto symbols = cuda::LoadCudaSymbols();
  ASSERT_FALSE(symbols.ok());
  EXPECT_EQ(symbols.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(symbols.status().message().find(
                "no CUDA driver: cannot load /nonexistent/libcuda.so.1 ("),
            std::string_view::npos)
      << symbols.status().ToString();
}

TEST_F(CudaNoDriverTest, RegistryListsNoCudaDevice) {
  DriverRegistry registry;
  ASSERT_TRUE(RegisterAllDrivers(registry).ok());
  bool registered = false;
  for (const auto &driver : registry.EnumerateDrivers())
    registered |= driver.name == kCudaDriverName;
  EXPECT_TRUE(registered);
  for (const auto &device : registry.EnumerateDevices())
    EXPECT_NE(device.driver, kCudaDriverName) << device.uri;
}

TEST_F(CudaNoDriverTest, CreateDeviceIsUnavailable) {
  DriverRegistry registry;
  ASSERT_TRUE(RegisterAllDrivers(registry).ok());
  for (const char *uri : {"cuda", "cuda://0"}) {
    auto device = registry.CreateDevice(uri);
    ASSERT_FALSE(device.ok()) << uri;
    EXPECT_EQ(device.status().code(), StatusCode::kUnavailable);
    EXPECT_NE(device.status().message().find("no CUDA device"),
              std::string_view::npos)
        << device.status().ToString();
    EXPECT_NE(device.status().message().find("no CUDA driver"),
              std::string_view::npos)
        << device.status().ToString();
  }
  auto info = registry.DumpDeviceInfo("cuda");
  EXPECT_EQ(info.status().code(), StatusCode::kUnavailable);
}

} // namespace
} // namespace strata::hal
