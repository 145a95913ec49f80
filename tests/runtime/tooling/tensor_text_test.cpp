#include "strata/tooling/tensor_text.h"

#include <cstring>

#include <gtest/gtest.h>

namespace strata::tooling {
namespace {

class TensorTextTest : public ::testing::Test {
protected:
  RefPtr<hal::HeapAllocator> allocator = hal::HeapAllocator::Create("test", {});

  std::string RoundTrip(std::string_view text) {
    auto view = ParseTensorArgument(text, *allocator);
    EXPECT_TRUE(view.ok()) << view.status().ToString();
    if (!view.ok())
      return "";
    auto formatted = FormatBufferView(**view);
    EXPECT_TRUE(formatted.ok());
    return formatted.ok() ? *formatted : "";
  }
  Status ParseError(std::string_view text) {
    auto view = ParseTensorArgument(text, *allocator);
    EXPECT_FALSE(view.ok()) << text;
    return view.ok() ? OkStatus() : view.status();
  }
};

TEST_F(TensorTextTest, RoundTripsEveryElementType) {
  EXPECT_EQ(RoundTrip("4xf32=1 2 3 4"), "4xf32=1 2 3 4");
  EXPECT_EQ(RoundTrip("2x2xf32=0.5,-1.25,3e10,inf"),
            "2x2xf32=0.5 -1.25 3e+10 inf");
  EXPECT_EQ(RoundTrip("3xf64=0.1 0.2 0.3"), "3xf64=0.1 0.2 0.3");
  EXPECT_EQ(RoundTrip("3xi8=-128 0 127"), "3xi8=-128 0 127");
  EXPECT_EQ(RoundTrip("2xi16=-32768 32767"), "2xi16=-32768 32767");
  EXPECT_EQ(RoundTrip("2xi32=-7 2147483647"), "2xi32=-7 2147483647");
  EXPECT_EQ(RoundTrip("2xi64=-9223372036854775808 5"),
            "2xi64=-9223372036854775808 5");
  EXPECT_EQ(RoundTrip("4xi1=1 0 true false"), "4xi1=1 0 1 0");
  EXPECT_EQ(RoundTrip("2xf16=1.5 -2"), "2xf16=1.5 -2");
  EXPECT_EQ(RoundTrip("2xbf16=1 -0.5"), "2xbf16=1 -0.5");
}

TEST_F(TensorTextTest, OneValueFillsTheTensor) {
  EXPECT_EQ(RoundTrip("2x3xi32=7"), "2x3xi32=7 7 7 7 7 7");
}

TEST_F(TensorTextTest, NumpyStyleBracketsAreAccepted) {
  EXPECT_EQ(RoundTrip("2x2xi32=[[1, 2], [3, 4]]"), "2x2xi32=1 2 3 4");
}

TEST_F(TensorTextTest, BadTextIsAClearError) {
  EXPECT_NE(ParseError("4xf32").message().find("no '='"), std::string::npos);
  EXPECT_NE(ParseError("4xf32=1 2 3").message().find("4 elements but 3"),
            std::string::npos);
  EXPECT_NE(ParseError("2xi8=1 300").message().find("does not fit in i8"),
            std::string::npos);
  EXPECT_NE(ParseError("2xf32=1 x").message().find("'x' is not a number"),
            std::string::npos);
  EXPECT_NE(ParseError("1xi1=2").message().find("not a boolean"),
            std::string::npos);
  ParseError("4xq32=1").IgnoreError();
  ParseError("-4xf32=1").IgnoreError();
  ParseError("@/nonexistent/file.npy").IgnoreError();
}

TEST_F(TensorTextTest, CompareHonoursTolerances) {
  auto a = *ParseTensorArgument("3xf32=1 2 3", *allocator);
  auto b = *ParseTensorArgument("3xf32=1 2 3.001", *allocator);
  EXPECT_TRUE(CompareBufferViews(*a, *b, 1e-3, 0).ok());
  Status status = CompareBufferViews(*a, *b, 1e-6, 0);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("element 2"), std::string::npos);
  auto c = *ParseTensorArgument("3xi32=1 2 3", *allocator);
  EXPECT_FALSE(CompareBufferViews(*a, *c, 1, 1).ok()); // type differs
}

} // namespace
} // namespace strata::tooling
