// Executables of format "cuda-ptx-v1" (cuda_executable_format.h): a PTX
// module and its exports. ParseCudaExecutable checks the bytes without any
// CUDA call; the loader then JIT-compiles the PTX on the device.
#ifndef STRATA_HAL_DRIVERS_CUDA_CUDA_EXECUTABLE_H_
#define STRATA_HAL_DRIVERS_CUDA_CUDA_EXECUTABLE_H_

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/hal/drivers/cuda/cuda_context.h"
#include "strata/hal/drivers/cuda/cuda_executable_format.h"
#include "strata/hal/executable.h"

namespace strata::hal::cuda {

struct CudaExportLayout {
  std::string_view name; // Views the executable bytes.
  uint32_t binding_count = 0;
  uint32_t push_constant_count = 0;
  std::array<uint32_t, 3> block_size = {1, 1, 1};
  uint32_t blocks_per_workgroup = 1;
};

struct CudaExecutableLayout {
  // Major * 10 + minor.
  uint32_t min_compute_capability = 0;
  // The PTX text without its terminating NUL (which follows it in the
  // bytes, so ptx.data() is a C string).
  std::string_view ptx;
  std::vector<CudaExportLayout> exports;
};

// CUDA's limit on a kernel's parameters: the bindings' addresses (8 bytes
// each) and the push constants (4 bytes each) must fit in it.
inline constexpr uint64_t kCudaMaxKernelParameterBytes = 4096;

// Checks every field of `bytes` (sizes, magic, version, reserved fields,
// export table, name and PTX ranges, block sizes, counts) before anything
// reads through an offset; INVALID_ARGUMENT naming the field otherwise.
// The layout views `bytes`.
Result<CudaExecutableLayout>
ParseCudaExecutable(std::span<const uint8_t> bytes);

class CudaExecutable final : public Executable {
public:
  // The family tag of every CudaExecutable (Executable::family()).
  static const void *Family() { return &kFamily; }

  struct Export {
    std::string name;
    uint32_t binding_count = 0;
    uint32_t push_constant_count = 0;
    std::array<uint32_t, 3> block_size = {1, 1, 1};
    // Blocks launched per workgroup along x.
    uint32_t blocks_per_workgroup = 1;
    CUfunction function = nullptr;
  };

  std::string_view name() const override { return name_; }
  uint32_t export_count() const override { return uint32_t(exports_.size()); }
  std::string_view export_name(uint32_t ordinal) const override {
    return exports_[ordinal].name;
  }
  uint32_t export_binding_count(uint32_t ordinal) const override {
    return exports_[ordinal].binding_count;
  }
  const Export &export_info(uint32_t ordinal) const {
    return exports_[ordinal];
  }

  ~CudaExecutable() override;

private:
  friend class CudaExecutableLoader;
  static constexpr char kFamily = 0;
  CudaExecutable(std::shared_ptr<CudaContext> context, CUmodule module,
                 std::vector<Export> exports);

  std::shared_ptr<CudaContext> context_;
  CUmodule module_;
  std::vector<Export> exports_;
  std::string name_;
};

class CudaExecutableLoader final : public ExecutableLoader {
public:
  explicit CudaExecutableLoader(std::shared_ptr<CudaContext> context)
      : context_(std::move(context)) {}

  std::string_view name() const override { return "cuda-ptx"; }
  std::vector<std::string> SupportedFormats() const override {
    return {STRATA_HAL_EXECUTABLE_FORMAT_CUDA_PTX};
  }
  bool CanLoad(std::string_view format) const override {
    return format == STRATA_HAL_EXECUTABLE_FORMAT_CUDA_PTX;
  }
  // Parses, refuses a device below the executable's compute capability,
  // JIT-compiles the PTX (a rejected PTX returns the JIT's error log) and
  // looks up every export's kernel.
  Result<RefPtr<Executable>> Load(std::string_view format,
                                  std::span<const uint8_t> bytes,
                                  std::span<const uint32_t> constants) override;

private:
  std::shared_ptr<CudaContext> context_;
};

} // namespace strata::hal::cuda

#endif // STRATA_HAL_DRIVERS_CUDA_CUDA_EXECUTABLE_H_
