// ParseCudaExecutable: a valid executable round-trips, and each corrupt
// field is INVALID_ARGUMENT naming it. No CUDA needed.
#include <gtest/gtest.h>

#include "cuda_test_util.h"
#include "strata/hal/drivers/cuda/cuda_executable.h"

namespace strata::hal::cuda {
namespace {

using testing::BuildCudaExecutable;
using testing::ExportSpec;

std::vector<uint8_t> ValidExecutable() {
  return BuildCudaExecutable(
      {{"add_constant", 2, 1, {256, 1, 1}}, {"fill", 1, 0, {8, 8, 4}, 3}},
      testing::kAddConstantPtx, 80);
}

strata_cuda_executable_header_t *Header(std::vector<uint8_t> &bytes) {
  return reinterpret_cast<strata_cuda_executable_header_t *>(bytes.data());
}

strata_cuda_export_t *Export(std::vector<uint8_t> &bytes, size_t i) {
  return reinterpret_cast<strata_cuda_export_t *>(
      bytes.data() + sizeof(strata_cuda_executable_header_t) +
      i * sizeof(strata_cuda_export_t));
}

// Expects INVALID_ARGUMENT with `text` in the message.
void ExpectInvalid(const std::vector<uint8_t> &bytes, const char *text) {
  auto layout = ParseCudaExecutable(bytes);
  ASSERT_FALSE(layout.ok()) << "expected an error mentioning " << text;
  EXPECT_EQ(layout.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(layout.status().message().find(text), std::string_view::npos)
      << layout.status().ToString();
}

TEST(CudaExecutableParser, ValidRoundTrips) {
  std::vector<uint8_t> bytes = ValidExecutable();
  auto layout = ParseCudaExecutable(bytes);
  ASSERT_TRUE(layout.ok()) << layout.status().ToString();
  EXPECT_EQ(layout->min_compute_capability, 80u);
  EXPECT_EQ(layout->ptx, std::string_view(testing::kAddConstantPtx));
  EXPECT_EQ(layout->ptx.data()[layout->ptx.size()], '\0');
  ASSERT_EQ(layout->exports.size(), 2u);
  EXPECT_EQ(layout->exports[0].name, "add_constant");
  EXPECT_EQ(layout->exports[0].binding_count, 2u);
  EXPECT_EQ(layout->exports[0].push_constant_count, 1u);
  EXPECT_EQ(layout->exports[0].block_size[0], 256u);
  EXPECT_EQ(layout->exports[1].name, "fill");
  EXPECT_EQ(layout->exports[1].block_size[1], 8u);
  EXPECT_EQ(layout->exports[1].block_size[2], 4u);
  EXPECT_EQ(layout->exports[1].blocks_per_workgroup, 3u);
}

TEST(CudaExecutableParser, Truncated) {
  std::vector<uint8_t> bytes = ValidExecutable();
  ExpectInvalid(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 31),
                "smaller than its 32-byte header");
  ExpectInvalid({}, "smaller than its 32-byte header");
  // Cut inside the export table.
  ExpectInvalid(std::vector<uint8_t>(bytes.begin(), bytes.begin() + 40),
                "exports ends at byte 96");
}

TEST(CudaExecutableParser, BadMagicVersionReserved) {
  std::vector<uint8_t> bytes = ValidExecutable();
  Header(bytes)->magic[7] = 'X';
  ExpectInvalid(bytes, "bad magic");
  bytes = ValidExecutable();
  Header(bytes)->version = 1;
  ExpectInvalid(bytes, "version 1 is not the supported version 2");
  bytes = ValidExecutable();
  Header(bytes)->reserved = 1;
  ExpectInvalid(bytes, "header reserved field is 1");
  bytes = ValidExecutable();
  Export(bytes, 1)->blocks_per_workgroup = 0;
  ExpectInvalid(bytes, "export 1: blocks_per_workgroup 0 is outside 1..65536");
  Export(bytes, 1)->blocks_per_workgroup = 65537;
  ExpectInvalid(bytes, "export 1: blocks_per_workgroup 65537 is outside");
}

TEST(CudaExecutableParser, ExportCount) {
  std::vector<uint8_t> bytes = ValidExecutable();
  Header(bytes)->export_count = 0;
  ExpectInvalid(bytes, "export_count 0");
  Header(bytes)->export_count = STRATA_CUDA_MAX_EXPORTS + 1;
  ExpectInvalid(bytes, "export_count 65537");
  // Large enough that the table's end would wrap 32 bits if unchecked.
  Header(bytes)->export_count = STRATA_CUDA_MAX_EXPORTS;
  ExpectInvalid(bytes, "past the");
}

TEST(CudaExecutableParser, Names) {
  std::vector<uint8_t> bytes = ValidExecutable();
  Export(bytes, 0)->name_offset = uint32_t(bytes.size());
  ExpectInvalid(bytes, "export 0: name range");
  bytes = ValidExecutable();
  Export(bytes, 0)->name_offset = 0xFFFFFFF0u;
  Export(bytes, 0)->name_length = 0x20;
  ExpectInvalid(bytes, "export 0: name range");
  bytes = ValidExecutable();
  Export(bytes, 1)->name_length = 0;
  ExpectInvalid(bytes, "export 1: empty name");
  bytes = ValidExecutable();
  // Export 1 names the same bytes as export 0.
  Export(bytes, 1)->name_offset = Export(bytes, 0)->name_offset;
  Export(bytes, 1)->name_length = Export(bytes, 0)->name_length;
  ExpectInvalid(bytes, "is used by an earlier export");
  bytes = ValidExecutable();
  bytes[Export(bytes, 0)->name_offset + 1] = 0;
  ExpectInvalid(bytes, "name contains a NUL byte");
}

TEST(CudaExecutableParser, Ptx) {
  std::vector<uint8_t> bytes = ValidExecutable();
  bytes.back() = 'x';
  ExpectInvalid(bytes, "does not end with a NUL byte");
  bytes = ValidExecutable();
  bytes[Header(bytes)->ptx_offset + 3] = 0;
  ExpectInvalid(bytes, "has a NUL byte at offset 3");
  bytes = ValidExecutable();
  Header(bytes)->ptx_length += 1;
  ExpectInvalid(bytes, "PTX range");
  bytes = ValidExecutable();
  Header(bytes)->ptx_offset = 0xFFFFFFFFu;
  ExpectInvalid(bytes, "PTX range");
  bytes = ValidExecutable();
  Header(bytes)->ptx_length = 1;
  ExpectInvalid(bytes, "ptx_length 1");
}

TEST(CudaExecutableParser, BlockSizesAndCounts) {
  std::vector<uint8_t> bytes = ValidExecutable();
  Export(bytes, 0)->block_size[1] = 0;
  ExpectInvalid(bytes, "export 0: block_size[1] is 0");
  bytes = ValidExecutable();
  Export(bytes, 0)->block_size[0] = 1024;
  Export(bytes, 0)->block_size[1] = 2;
  ExpectInvalid(bytes, "exceeds 1024 threads per block");
  bytes = ValidExecutable();
  // 2^16 * 2^16 * 2^16 would wrap a 32-bit product to 0.
  for (int i = 0; i < 3; ++i)
    Export(bytes, 1)->block_size[i] = 65536;
  ExpectInvalid(bytes, "export 1: block size 65536x65536x65536");
  bytes = ValidExecutable();
  Export(bytes, 0)->binding_count = STRATA_CUDA_MAX_BINDINGS + 1;
  ExpectInvalid(bytes, "binding_count 257");
  bytes = ValidExecutable();
  Export(bytes, 0)->push_constant_count = 1024;
  ExpectInvalid(bytes, "bytes of kernel parameters");
  bytes = ValidExecutable();
  Export(bytes, 0)->push_constant_count = 0xFFFFFFFFu;
  ExpectInvalid(bytes, "bytes of kernel parameters");
}

// Every truncation of a valid executable fails cleanly (no read past the
// end; sanitizer builds check).
TEST(CudaExecutableParser, EveryTruncationFails) {
  std::vector<uint8_t> bytes = ValidExecutable();
  for (size_t size = 0; size < bytes.size(); ++size) {
    std::vector<uint8_t> prefix(bytes.begin(), bytes.begin() + size);
    EXPECT_FALSE(ParseCudaExecutable(prefix).ok()) << size;
  }
}

} // namespace
} // namespace strata::hal::cuda
