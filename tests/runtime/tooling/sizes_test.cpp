// Sizes the tools compute from user text: --input shapes, .npy headers
// and byte counts of flags; overflow is an error, never a small buffer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "strata/tooling/flags.h"
#include "strata/tooling/numpy_io.h"
#include "strata/tooling/tensor_text.h"

namespace strata::tooling {
namespace {

TEST(ByteSizeTest, ParsesUnits) {
  EXPECT_EQ(*ParseByteSize("0"), 0u);
  EXPECT_EQ(*ParseByteSize("1048576"), 1048576u);
  EXPECT_EQ(*ParseByteSize("64K"), 65536u);
  EXPECT_EQ(*ParseByteSize("512M"), uint64_t(512) << 20);
  EXPECT_EQ(*ParseByteSize("2G"), uint64_t(2) << 30);
  EXPECT_EQ(*ParseByteSize("2g"), uint64_t(2) << 30);
  EXPECT_EQ(*ParseByteSize("2GiB"), uint64_t(2) << 30);
  EXPECT_EQ(*ParseByteSize("2GB"), uint64_t(2) << 30);
  EXPECT_EQ(*ParseByteSize("3T"), uint64_t(3) << 40);
  EXPECT_EQ(*ParseByteSize("100B"), 100u);
  // (2^24 - 1) x 2^40 = 2^64 - 2^40, the largest whole number of T.
  EXPECT_EQ(*ParseByteSize("16777215T"),
            ~uint64_t{0} - ((uint64_t(1) << 40) - 1));
  for (const char *bad : {"", "G", "-1", "1.5G", "2X", "2Gi", "1 G", "0x10"})
    EXPECT_FALSE(ParseByteSize(bad).ok()) << bad;
  Result<uint64_t> overflow = ParseByteSize("16777216T");
  EXPECT_EQ(overflow.status().message(),
            "byte count '16777216T' does not fit 64 bits");
  EXPECT_FALSE(ParseByteSize("99999999999999999999").ok());
}

TEST(ByteSizeTest, FlagNamesItself) {
  uint64_t limit = 0;
  FlagParser parser("tool", "");
  parser.AddByteSize("device-memory-limit", &limit, "help");
  std::vector<std::string> positional;
  std::string good = "--device-memory-limit=1M";
  std::vector<char *> argv = {const_cast<char *>("tool"), good.data()};
  ASSERT_TRUE(parser.Parse(2, argv.data(), &positional).ok());
  EXPECT_EQ(limit, uint64_t(1) << 20);
  std::string bad = "--device-memory-limit=lots";
  argv[1] = bad.data();
  Status status = parser.Parse(2, argv.data(), &positional);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message().substr(0, 34),
            "--device-memory-limit: 'lots' is n");
}

class ToolSizesTest : public ::testing::Test {
protected:
  RefPtr<hal::HeapAllocator> allocator =
      hal::HeapAllocator::Create("tools", {.memory_limit = uint64_t(1) << 20});

  Status TextError(std::string_view text) {
    auto view = ParseTensorArgument(text, *allocator);
    EXPECT_FALSE(view.ok()) << text;
    EXPECT_EQ(allocator->statistics().allocation_count, 0u) << text;
    return view.ok() ? OkStatus() : view.status();
  }

  // A .npy file with `header` as its dict and `data_bytes` zero bytes.
  static std::vector<uint8_t> Npy(std::string header, size_t data_bytes = 0) {
    std::vector<uint8_t> bytes = {0x93,
                                  'N',
                                  'U',
                                  'M',
                                  'P',
                                  'Y',
                                  1,
                                  0,
                                  uint8_t(header.size() & 0xFF),
                                  uint8_t(header.size() >> 8)};
    bytes.insert(bytes.end(), header.begin(), header.end());
    bytes.resize(bytes.size() + data_bytes, 0);
    return bytes;
  }
  Status NpyError(const std::vector<uint8_t> &bytes) {
    auto view = ParseNumpy(bytes, *allocator);
    EXPECT_FALSE(view.ok());
    EXPECT_EQ(allocator->statistics().allocation_count, 0u);
    return view.ok() ? OkStatus() : view.status();
  }
};

TEST_F(ToolSizesTest, InputShapesThatOverflow) {
  // 2^64 x 4 bytes.
  Status status = TextError("4294967296x4294967296xf32=0");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "shape 4294967296x4294967296 x 4 bytes overflows 64 bits");
  // Element count itself past 2^64.
  status = TextError("4294967296x4294967296x4294967296xi8=1");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  // A dimension past int64.
  status = TextError("99999999999999999999xf32=0");
  EXPECT_EQ(status.message(), "dimension 99999999999999999999 in "
                              "'99999999999999999999xf32' does not fit 64 "
                              "bits");
  // Fits 64 bits; the allocator refuses it (4 * 10^18 bytes).
  status = TextError("1000000000x1000000000xf32=0");
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(status.message(),
            "allocation of 4000000000000000000 bytes exceeds the limit of "
            "allocator 'tools' (1048576 bytes)");
  // Too many values for a huge shape is refused before allocating.
  status = TextError("1000000000x1000000000xf32=1 2");
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  // An empty tensor of huge other dimensions is fine and allocates nothing
  // worth speaking of.
  auto empty = ParseTensorArgument("4294967296x0x4294967296xf32=0", *allocator);
  ASSERT_TRUE(empty.ok()) << empty.status().ToString();
  EXPECT_EQ((*empty)->byte_length(), 0u);
}

TEST_F(ToolSizesTest, NumpyHeadersWithHugeShapes) {
  Status status = NpyError(Npy("{'descr': '<f4', 'fortran_order': False, "
                               "'shape': (4294967296, 4294967296), }"));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "shape 4294967296x4294967296 x 4 bytes overflows 64 bits");
  status = NpyError(Npy("{'descr': '<f8', 'fortran_order': False, "
                        "'shape': (99999999999999999999,), }"));
  EXPECT_EQ(status.message(), "npy shape dimension is too large");
  // Fits 64 bits but the file holds no such data.
  status = NpyError(Npy("{'descr': '<f4', 'fortran_order': False, "
                        "'shape': (1000000000, 1000000000), }",
                        16));
  EXPECT_EQ(status.message(), ".npy data is 16 bytes but shape and dtype need "
                              "4000000000000000000");
  // Rank 40: refused before allocating.
  std::string rank40 = "{'descr': '<f4', 'fortran_order': False, 'shape': (";
  for (int i = 0; i < 40; ++i)
    rank40 += "1, ";
  rank40 += "), }";
  status = NpyError(Npy(rank40, 4));
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "rank 40 exceeds the maximum of 16");
  // A header length past the end of the file.
  std::vector<uint8_t> truncated =
      Npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }");
  truncated[8] = 0xFF;
  truncated[9] = 0xFF;
  EXPECT_EQ(NpyError(truncated).message(), ".npy header is truncated");
  // Version 2 with a 4 GiB header length.
  std::vector<uint8_t> v2 = {0x93, 'N',  'U',  'M',  'P',  'Y', 2,
                             0,    0xFF, 0xFF, 0xFF, 0xFF, '{', '}'};
  EXPECT_EQ(NpyError(v2).message(), ".npy header is truncated");
}

} // namespace
} // namespace strata::tooling
