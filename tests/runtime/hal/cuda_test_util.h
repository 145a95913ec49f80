// Builds cuda-ptx-v1 executables (cuda_executable_format.h) for the cuda
// driver tests, and a small PTX kernel they load.
#ifndef STRATA_TESTS_RUNTIME_HAL_CUDA_TEST_UTIL_H_
#define STRATA_TESTS_RUNTIME_HAL_CUDA_TEST_UTIL_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "strata/hal/drivers/cuda/cuda_executable_format.h"

namespace strata::hal::cuda::testing {

struct ExportSpec {
  std::string name;
  uint32_t binding_count = 0;
  uint32_t push_constant_count = 0;
  std::array<uint32_t, 3> block_size = {1, 1, 1};
  uint32_t blocks_per_workgroup = 1;
};

// Header, export table, names, then the PTX and its NUL.
inline std::vector<uint8_t>
BuildCudaExecutable(const std::vector<ExportSpec> &exports,
                    const std::string &ptx,
                    uint32_t min_compute_capability = 50) {
  strata_cuda_executable_header_t header = {};
  std::memcpy(header.magic, STRATA_CUDA_EXECUTABLE_MAGIC, 8);
  header.version = STRATA_CUDA_EXECUTABLE_VERSION;
  header.export_count = uint32_t(exports.size());
  header.min_compute_capability = min_compute_capability;
  size_t offset =
      sizeof(header) + exports.size() * sizeof(strata_cuda_export_t);
  std::vector<strata_cuda_export_t> table;
  std::string names;
  for (const ExportSpec &spec : exports) {
    strata_cuda_export_t entry = {};
    entry.name_offset = uint32_t(offset + names.size());
    entry.name_length = uint32_t(spec.name.size());
    entry.binding_count = spec.binding_count;
    entry.push_constant_count = spec.push_constant_count;
    for (int i = 0; i < 3; ++i)
      entry.block_size[i] = spec.block_size[i];
    entry.blocks_per_workgroup = spec.blocks_per_workgroup;
    names += spec.name;
    table.push_back(entry);
  }
  header.ptx_offset = uint32_t(offset + names.size());
  header.ptx_length = uint32_t(ptx.size() + 1);
  std::vector<uint8_t> bytes(sizeof(header));
  std::memcpy(bytes.data(), &header, sizeof(header));
  for (const strata_cuda_export_t &entry : table) {
    const auto *raw = reinterpret_cast<const uint8_t *>(&entry);
    bytes.insert(bytes.end(), raw, raw + sizeof(entry));
  }
  bytes.insert(bytes.end(), names.begin(), names.end());
  bytes.insert(bytes.end(), ptx.begin(), ptx.end());
  bytes.push_back(0);
  return bytes;
}

// out[i] = in[i] + addend for i = blockIdx.x * blockDim.x + threadIdx.x:
// parameters (u64 in, u64 out, u32 addend), as the executable format
// orders them (bindings, then push constants).
inline constexpr const char *kAddConstantPtx = R"(
.version 7.0
.target sm_50
.address_size 64

.visible .entry add_constant(
    .param .u64 in_ptr,
    .param .u64 out_ptr,
    .param .u32 addend
)
{
    .reg .b32 %r<7>;
    .reg .b64 %rd<8>;
    ld.param.u64 %rd1, [in_ptr];
    ld.param.u64 %rd2, [out_ptr];
    ld.param.u32 %r1, [addend];
    cvta.to.global.u64 %rd3, %rd1;
    cvta.to.global.u64 %rd4, %rd2;
    mov.u32 %r2, %ctaid.x;
    mov.u32 %r3, %ntid.x;
    mov.u32 %r4, %tid.x;
    mad.lo.s32 %r5, %r2, %r3, %r4;
    mul.wide.u32 %rd5, %r5, 4;
    add.s64 %rd6, %rd3, %rd5;
    ld.global.u32 %r6, [%rd6];
    add.s32 %r6, %r6, %r1;
    add.s64 %rd7, %rd4, %rd5;
    st.global.u32 [%rd7], %r6;
    ret;
}
)";

} // namespace strata::hal::cuda::testing

#endif // STRATA_TESTS_RUNTIME_HAL_CUDA_TEST_UTIL_H_
