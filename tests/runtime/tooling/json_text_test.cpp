#include "strata/tooling/json_text.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "strata/tooling/dispatch_profile.h"

namespace strata::tooling {
namespace {

TEST(JsonTextTest, EscapesWhatAStringHolds) {
  nlohmann::ordered_json value;
  value["name"] = std::string("a\"b\\c\td\x01") + "\xc3\xa9";
  value["n"] = 3;
  EXPECT_EQ(JsonText(value),
            "{\"name\":\"a\\\"b\\\\c\\td\\u0001\xc3\xa9\",\"n\":3}");
}

TEST(JsonTextTest, ReplacesInvalidUtf8AndNonFiniteNumbers) {
  nlohmann::ordered_json value;
  value["name"] = std::string("x\xff") + "y";
  value["nan"] = std::numeric_limits<double>::quiet_NaN();
  value["inf"] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(JsonText(value),
            "{\"name\":\"x\xef\xbf\xbdy\",\"nan\":null,\"inf\":null}");
}

TEST(JsonTextTest, RoundsLikePrintf) {
  EXPECT_EQ(RoundTo(0.1234567, 6), 0.123457);
  EXPECT_EQ(RoundTo(2.0004, 3), 2.0);
  EXPECT_EQ(JsonText(RoundTo(1.23456789, 3)), "1.235");
  EXPECT_TRUE(std::isnan(RoundTo(std::nan(""), 3)));
  EXPECT_EQ(RoundTo(1e300, 6), 1e300);
}

TEST(JsonTextTest, DispatchRowsKeepTheirKeysInOrder) {
  DispatchTimes::Row row;
  row.site = 2;
  row.name = "matmul:/fc\"1\"/Gemm";
  row.count = 4;
  row.total_ns = 8000;
  nlohmann::ordered_json rows = DispatchJson({row}, 2, 0.016);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(JsonText(rows),
            "[{\"site\":2,\"name\":\"matmul:/fc\\\"1\\\"/Gemm\","
            "\"calls_per_iteration\":2.0,\"mean_us\":2.0,\"total_ms\":0.004,"
            "\"share\":0.25,\"gflops\":null}]");
}

} // namespace
} // namespace strata::tooling
