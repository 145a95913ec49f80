#include "strata/tooling/numpy_io.h"

#include <gtest/gtest.h>

#include "strata/tooling/tensor_text.h"

namespace strata::tooling {
namespace {

class NumpyIoTest : public ::testing::Test {
protected:
  RefPtr<hal::HeapAllocator> allocator = hal::HeapAllocator::Create("test", {});
};

TEST_F(NumpyIoTest, RoundTripsShapesAndTypes) {
  for (const char *text : {"2x3xf32=1 2 3 4 5 6", "4xi64=1 -2 3 -4", "f64=2.5",
                           "3xi1=1 0 1", "2x1x2xi8=1 2 3 4", "0x3xf32=0"}) {
    auto view = ParseTensorArgument(text, *allocator);
    ASSERT_TRUE(view.ok()) << text;
    auto bytes = SerializeNumpy(**view);
    ASSERT_TRUE(bytes.ok());
    EXPECT_EQ((*bytes)[8 + 2 + ((*bytes)[8] | ((*bytes)[9] << 8)) - 1], '\n');
    auto parsed = ParseNumpy(*bytes, *allocator);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(*FormatBufferView(**parsed), *FormatBufferView(**view));
  }
}

TEST_F(NumpyIoTest, WritesBFloat16AsItsFloat32Values) {
  // bf16 1.5 is 0x3FC0, -2.0 is 0xC000: as float32 0x3FC00000, 0xC0000000.
  auto view = *ParseTensorArgument("2xbf16=1.5 -2", *allocator);
  auto bytes = SerializeNumpy(*view);
  ASSERT_TRUE(bytes.ok()) << bytes.status().ToString();
  auto parsed = ParseNumpy(*bytes, *allocator);
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(*FormatBufferView(**parsed), "2xf32=1.5 -2");
}

TEST_F(NumpyIoTest, ReadsAHandWrittenFile) {
  std::string header = "{'descr': '<i4', 'fortran_order': False, "
                       "'shape': (2, 2), }";
  std::vector<uint8_t> bytes = {
      0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, uint8_t(header.size()), 0};
  bytes.insert(bytes.end(), header.begin(), header.end());
  for (int32_t v : {1, -2, 3, 40000})
    for (int b = 0; b < 4; ++b)
      bytes.push_back(uint8_t(uint32_t(v) >> (8 * b)));
  auto view = ParseNumpy(bytes, *allocator);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(*FormatBufferView(**view), "2x2xi32=1 -2 3 40000");
}

TEST_F(NumpyIoTest, RejectsDamagedFiles) {
  auto view = *ParseTensorArgument("2x2xf32=1 2 3 4", *allocator);
  auto bytes = *SerializeNumpy(*view);
  // Every truncation fails cleanly.
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::vector<uint8_t> cut(bytes.begin(), bytes.begin() + n);
    EXPECT_FALSE(ParseNumpy(cut, *allocator).ok()) << n;
  }
  std::vector<uint8_t> fortran = bytes;
  std::string text(fortran.begin(), fortran.end());
  size_t at = text.find("False");
  std::copy_n("True ", 5, fortran.begin() + at);
  auto status = ParseNumpy(fortran, *allocator).status();
  EXPECT_EQ(status.code(), StatusCode::kUnimplemented);
  std::vector<uint8_t> big_endian = bytes;
  at = text.find("<f4");
  big_endian[at] = '>';
  EXPECT_FALSE(ParseNumpy(big_endian, *allocator).ok());
}

} // namespace
} // namespace strata::tooling
