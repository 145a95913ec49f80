// Checked arithmetic: every overflow is reported, nothing wraps.
#include "strata/base/checked_math.h"

#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

namespace strata {
namespace {

constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();

TEST(CheckedMathTest, AddSubMul) {
  EXPECT_EQ(CheckedAdd<uint64_t>(2, 3), 5u);
  EXPECT_EQ(CheckedAdd<uint64_t>(kMax, 0), kMax);
  EXPECT_EQ(CheckedAdd<uint64_t>(kMax, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd<int64_t>(INT64_MAX, 1), std::nullopt);
  EXPECT_EQ(CheckedAdd<int64_t>(INT64_MIN, -1), std::nullopt);
  EXPECT_EQ(CheckedSub<uint64_t>(3, 2), 1u);
  EXPECT_EQ(CheckedSub<uint64_t>(2, 3), std::nullopt);
  EXPECT_EQ(CheckedMul<uint64_t>(uint64_t(1) << 32, uint64_t(1) << 31),
            uint64_t(1) << 63);
  EXPECT_EQ(CheckedMul<uint64_t>(uint64_t(1) << 32, uint64_t(1) << 32),
            std::nullopt);
  EXPECT_EQ(CheckedMul<uint32_t>(65536, 65536), std::nullopt);
  EXPECT_EQ(CheckedMul<int32_t>(-65536, 32768), INT32_MIN);
  EXPECT_EQ(CheckedMul<int32_t>(65536, 32768), std::nullopt);
  static_assert(*CheckedMul<uint64_t>(6, 7) == 42);
}

TEST(CheckedMathTest, Cast) {
  EXPECT_EQ(CheckedCast<uint32_t>(int64_t{-1}), std::nullopt);
  EXPECT_EQ(CheckedCast<uint32_t>(uint64_t{1} << 32), std::nullopt);
  EXPECT_EQ(CheckedCast<uint32_t>(uint64_t{0xFFFFFFFF}), 0xFFFFFFFFu);
  EXPECT_EQ(CheckedCast<int64_t>(kMax), std::nullopt);
  EXPECT_EQ(CheckedCast<uint64_t>(INT64_MAX), uint64_t(INT64_MAX));
  EXPECT_EQ(CheckedCast<int32_t>(uint32_t{0x80000000}), std::nullopt);
}

TEST(CheckedMathTest, RangeInBounds) {
  EXPECT_TRUE(RangeInBounds(0, 0, 0));
  EXPECT_TRUE(RangeInBounds(0, 16, 16));
  EXPECT_TRUE(RangeInBounds(16, 0, 16));
  EXPECT_FALSE(RangeInBounds(17, 0, 16));
  EXPECT_FALSE(RangeInBounds(8, 9, 16));
  // offset + length wraps to a small number: still out of bounds.
  EXPECT_FALSE(RangeInBounds(8, kMax - 3, 16));
  EXPECT_FALSE(RangeInBounds(kMax, 2, 16));
  EXPECT_TRUE(RangeInBounds(kMax, 0, kMax));
}

TEST(CheckedMathTest, Product) {
  EXPECT_EQ(CheckedProduct({}), 1u);
  std::vector<uint64_t> fits = {uint64_t(1) << 20, uint64_t(1) << 20,
                                uint64_t(1) << 23};
  EXPECT_EQ(CheckedProduct(fits), uint64_t(1) << 63);
  std::vector<uint64_t> overflows = {uint64_t(1) << 20, uint64_t(1) << 20,
                                     uint64_t(1) << 24};
  EXPECT_EQ(CheckedProduct(overflows), std::nullopt);
  // 2^32 x 2^32 wraps to 0 in plain arithmetic; not here.
  std::vector<uint64_t> wraps_to_zero = {uint64_t(1) << 32, uint64_t(1) << 32};
  EXPECT_EQ(CheckedProduct(wraps_to_zero), std::nullopt);
}

TEST(CheckedMathTest, ShapeByteSize) {
  std::vector<int64_t> shape = {2, 3, 4};
  EXPECT_EQ(*CheckedShapeByteSize(shape, 4), 96u);
  EXPECT_EQ(*CheckedShapeByteSize({}, 8), 8u); // rank 0: one element
  EXPECT_EQ(*CheckedElementCount(shape), 24u);
  EXPECT_EQ(*CheckedElementCount({}), 1u);

  // 2^32 x 2^32 x 4 wraps to 0 in 64 bits.
  std::vector<int64_t> huge = {int64_t(1) << 32, int64_t(1) << 32};
  Result<uint64_t> bytes = CheckedShapeByteSize(huge, 4);
  ASSERT_FALSE(bytes.ok());
  EXPECT_EQ(bytes.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(bytes.status().message(),
            "shape 4294967296x4294967296 x 4 bytes overflows 64 bits");
  // The element count alone fits; the bytes do not.
  std::vector<int64_t> bytes_only = {int64_t(1) << 62};
  EXPECT_EQ(*CheckedElementCount(bytes_only), uint64_t(1) << 62);
  EXPECT_FALSE(CheckedShapeByteSize(bytes_only, 4).ok());
  std::vector<int64_t> three = {int64_t(1) << 32, int64_t(1) << 32, 2};
  EXPECT_EQ(CheckedElementCount(three).status().message(),
            "shape 4294967296x4294967296x2 has an element count that "
            "overflows 64 bits");

  // A zero dimension anywhere makes the shape empty, even after huge ones.
  std::vector<int64_t> empty = {int64_t(1) << 40, int64_t(1) << 40, 0};
  EXPECT_EQ(*CheckedShapeByteSize(empty, 4), 0u);
  EXPECT_EQ(*CheckedElementCount(empty), 0u);

  std::vector<int64_t> negative = {2, -1};
  EXPECT_EQ(CheckedShapeByteSize(negative, 4).status().message(),
            "negative dimension -1 in shape 2x-1");
  EXPECT_EQ(CheckedElementCount(negative).status().code(),
            StatusCode::kInvalidArgument);
}

TEST(CheckedMathTest, FormatDims) {
  EXPECT_EQ(FormatDims({}), "");
  std::vector<int64_t> dims = {1, 22, 333};
  EXPECT_EQ(FormatDims(dims), "1x22x333");
}

} // namespace
} // namespace strata
