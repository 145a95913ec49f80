#include "hal_test_util.h"

#include <fstream>
#include <iterator>

#include "strata/hal/drivers/local_sync/local_sync_driver.h"

namespace strata::modules::testing {

std::span<const HalImportRow> HalImportTable() {
  static constexpr HalImportRow kRows[] = {
#define STRATA_HAL_IMPORT(identifier, full_name, calling_convention)           \
  {full_name, calling_convention},
#include "strata/modules/hal/hal_imports.def"
#undef STRATA_HAL_IMPORT
  };
  return kRows;
}

std::string_view HalCallingConvention(std::string_view full_name) {
  for (const HalImportRow &row : HalImportTable()) {
    if (row.full_name == full_name)
      return row.calling_convention;
  }
  return {};
}

uint32_t ImportHal(vm::testing::ModuleBuilder &builder,
                   std::string_view full_name) {
  std::string_view calling_convention = HalCallingConvention(full_name);
  EXPECT_FALSE(calling_convention.empty()) << full_name << " not in table";
  return builder.AddImport(std::string(full_name),
                           std::string(calling_convention));
}

std::vector<uint8_t> ReadFileBytes(const char *path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file.good()) << "cannot open " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), {});
}

void HalModuleTest::SetUp() {
  ASSERT_TRUE(hal::RegisterLocalSyncDriver(registry_).ok());
  Result<RefPtr<hal::Device>> device = registry_.CreateDevice("local-sync");
  ASSERT_TRUE(device.ok()) << device.status().ToString();
  device_ = *device;
  Result<RefPtr<vm::Module>> module = CreateHalModule({device_});
  ASSERT_TRUE(module.ok()) << module.status().ToString();
  module_ = *module;
  Result<RefPtr<vm::Context>> context = vm::testing::MakeContext({module_});
  ASSERT_TRUE(context.ok()) << context.status().ToString();
  context_ = *context;
}

Result<std::vector<Value>> HalModuleTest::Call(std::string_view full_name,
                                               std::vector<Value> arguments) {
  return vm::testing::InvokeByName(*context_, full_name, std::move(arguments));
}

std::vector<Value> HalModuleTest::CallOk(std::string_view full_name,
                                         std::vector<Value> arguments) {
  Result<std::vector<Value>> results = Call(full_name, std::move(arguments));
  EXPECT_TRUE(results.ok()) << full_name << ": " << results.status().ToString();
  return results.ok() ? *results : std::vector<Value>();
}

RefPtr<hal::Buffer> HalModuleTest::Allocate(uint64_t size) {
  Result<RefPtr<hal::Buffer>> buffer = device_->allocator()->AllocateBuffer(
      STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, STRATA_HAL_BUFFER_USAGE_DEFAULT,
      size);
  EXPECT_TRUE(buffer.ok()) << buffer.status().ToString();
  return buffer.ok() ? *buffer : nullptr;
}

RefPtr<hal::BufferView> HalModuleTest::MakeView(std::vector<int64_t> shape,
                                                std::span<const float> values) {
  Result<RefPtr<hal::BufferView>> view = hal::BufferView::Allocate(
      *device_->allocator(), shape, STRATA_HAL_ELEMENT_TYPE_FLOAT_32,
      STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, STRATA_HAL_BUFFER_USAGE_DEFAULT,
      {reinterpret_cast<const uint8_t *>(values.data()), values.size_bytes()});
  EXPECT_TRUE(view.ok()) << view.status().ToString();
  return view.ok() ? *view : nullptr;
}

std::vector<float> HalModuleTest::ReadFloats(hal::Buffer &buffer,
                                             uint64_t offset, size_t count) {
  std::vector<float> values(count);
  Status status = buffer.ReadData(
      offset, {reinterpret_cast<uint8_t *>(values.data()), count * 4});
  EXPECT_TRUE(status.ok()) << status.ToString();
  return values;
}

} // namespace strata::modules::testing
