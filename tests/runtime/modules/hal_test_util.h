// Shared fixture of the hal module tests: a local-sync device, the hal
// module over it in a context, and helpers to call its functions and to
// build bytecode programs importing them.
#ifndef STRATA_TESTS_RUNTIME_MODULES_HAL_TEST_UTIL_H_
#define STRATA_TESTS_RUNTIME_MODULES_HAL_TEST_UTIL_H_

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/hal/api.h"
#include "strata/modules/hal/hal_module.h"
#include "vm_test_util.h"

namespace strata::modules::testing {

using vm::Value;

// One row of hal_imports.def.
struct HalImportRow {
  const char *full_name;
  const char *calling_convention;
};
std::span<const HalImportRow> HalImportTable();
// The calling convention of `full_name` in the table ("" if absent).
std::string_view HalCallingConvention(std::string_view full_name);
// Declares the import `full_name` on `builder` with the table's convention.
uint32_t ImportHal(vm::testing::ModuleBuilder &builder,
                   std::string_view full_name);

std::vector<uint8_t> ReadFileBytes(const char *path);

inline Value RefValue(RefPtr<RefObject> ref) {
  return Value::Ref(std::move(ref));
}
inline Value Text(std::string_view text) {
  return Value::Ref(vm::ByteBuffer::FromString(text));
}

class HalModuleTest : public ::testing::Test {
protected:
  void SetUp() override;

  // Calls "hal.<function>" through the context.
  Result<std::vector<Value>> Call(std::string_view full_name,
                                  std::vector<Value> arguments);
  // Calls and asserts success (returns no results on failure).
  std::vector<Value> CallOk(std::string_view full_name,
                            std::vector<Value> arguments);

  RefPtr<hal::Buffer> Allocate(uint64_t size);
  RefPtr<hal::BufferView> MakeView(std::vector<int64_t> shape,
                                   std::span<const float> values);
  std::vector<float> ReadFloats(hal::Buffer &buffer, uint64_t offset,
                                size_t count);

  hal::DriverRegistry registry_;
  RefPtr<hal::Device> device_;
  RefPtr<vm::Module> module_;
  RefPtr<vm::Context> context_;
};

} // namespace strata::modules::testing

#endif // STRATA_TESTS_RUNTIME_MODULES_HAL_TEST_UTIL_H_
