#include "strata/hal/element_type_util.h"

#include <gtest/gtest.h>

namespace strata::hal {
namespace {

struct Expectation {
  ElementType type;
  const char *name;
  uint64_t byte_size;
  const char *numpy; // null: no numpy dtype
};

const Expectation kExpectations[] = {
    {STRATA_HAL_ELEMENT_TYPE_FLOAT_16, "f16", 2, "<f2"},
    {STRATA_HAL_ELEMENT_TYPE_FLOAT_32, "f32", 4, "<f4"},
    {STRATA_HAL_ELEMENT_TYPE_FLOAT_64, "f64", 8, "<f8"},
    {STRATA_HAL_ELEMENT_TYPE_BFLOAT_16, "bf16", 2, nullptr},
    {STRATA_HAL_ELEMENT_TYPE_BOOL_8, "i1", 1, "|b1"},
    {STRATA_HAL_ELEMENT_TYPE_SINT_8, "i8", 1, "|i1"},
    {STRATA_HAL_ELEMENT_TYPE_SINT_16, "i16", 2, "<i2"},
    {STRATA_HAL_ELEMENT_TYPE_SINT_32, "i32", 4, "<i4"},
    {STRATA_HAL_ELEMENT_TYPE_SINT_64, "i64", 8, "<i8"},
    {STRATA_HAL_ELEMENT_TYPE_UINT_8, "u8", 1, "|u1"},
    {STRATA_HAL_ELEMENT_TYPE_UINT_16, "u16", 2, "<u2"},
    {STRATA_HAL_ELEMENT_TYPE_UINT_32, "u32", 4, "<u4"},
    {STRATA_HAL_ELEMENT_TYPE_UINT_64, "u64", 8, "<u8"},
};

TEST(ElementTypeTest, NamesSizesAndRoundTrips) {
  for (const Expectation &e : kExpectations) {
    SCOPED_TRACE(e.name);
    EXPECT_TRUE(IsKnownElementType(e.type));
    EXPECT_EQ(ElementTypeByteSize(e.type), e.byte_size);
    EXPECT_EQ(ElementTypeName(e.type), e.name);
    auto parsed = ParseElementType(e.name);
    ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
    EXPECT_EQ(*parsed, e.type);

    auto dtype = ElementTypeToNumpyDtype(e.type);
    if (!e.numpy) {
      EXPECT_EQ(dtype.status().code(), StatusCode::kInvalidArgument);
      continue;
    }
    ASSERT_TRUE(dtype.ok()) << dtype.status().ToString();
    EXPECT_EQ(*dtype, e.numpy);
    auto from_dtype = ElementTypeFromNumpyDtype(*dtype);
    ASSERT_TRUE(from_dtype.ok()) << from_dtype.status().ToString();
    EXPECT_EQ(*from_dtype, e.type);
  }
}

TEST(ElementTypeTest, UnknownTypes) {
  EXPECT_FALSE(IsKnownElementType(STRATA_HAL_ELEMENT_TYPE_NONE));
  EXPECT_EQ(ElementTypeByteSize(STRATA_HAL_ELEMENT_TYPE_NONE), 0u);
  EXPECT_EQ(ElementTypeName(0x12345678u), "type(0x12345678)");
  auto parsed = ParseElementType("f128");
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.status().message().find("f128"), std::string_view::npos);
  EXPECT_NE(parsed.status().message().find("f32"), std::string_view::npos);
}

TEST(ElementTypeTest, NumpyDtypeVariants) {
  EXPECT_EQ(*ElementTypeFromNumpyDtype("=f4"),
            ElementType(STRATA_HAL_ELEMENT_TYPE_FLOAT_32));
  EXPECT_EQ(*ElementTypeFromNumpyDtype("<i1"),
            ElementType(STRATA_HAL_ELEMENT_TYPE_SINT_8));
  EXPECT_EQ(*ElementTypeFromNumpyDtype("?"),
            ElementType(STRATA_HAL_ELEMENT_TYPE_BOOL_8));
  // Byte order does not matter for single bytes.
  EXPECT_EQ(*ElementTypeFromNumpyDtype(">u1"),
            ElementType(STRATA_HAL_ELEMENT_TYPE_UINT_8));
  EXPECT_EQ(ElementTypeFromNumpyDtype(">f4").status().code(),
            StatusCode::kUnimplemented);
  EXPECT_EQ(ElementTypeFromNumpyDtype("<c8").status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ElementTypeFromNumpyDtype("").status().code(),
            StatusCode::kInvalidArgument);
}

TEST(ElementTypeTest, ShapeAndElementType) {
  auto parsed = ParseShapeAndElementType("2x3xf32");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(parsed->element_type,
            ElementType(STRATA_HAL_ELEMENT_TYPE_FLOAT_32));
  EXPECT_EQ(FormatShapeAndElementType(parsed->shape, parsed->element_type),
            "2x3xf32");

  auto scalar = ParseShapeAndElementType("i64");
  ASSERT_TRUE(scalar.ok());
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(FormatShapeAndElementType({}, scalar->element_type), "i64");

  auto zero = ParseShapeAndElementType("0x4xi1");
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->shape, (std::vector<int64_t>{0, 4}));

  EXPECT_FALSE(ParseShapeAndElementType("2x").ok());
  EXPECT_FALSE(ParseShapeAndElementType("2xfoo").ok());
  EXPECT_FALSE(ParseShapeAndElementType("-1xf32").ok());
  EXPECT_FALSE(ParseShapeAndElementType("").ok());
}

} // namespace
} // namespace strata::hal
