#include "strata/base/status.h"

#include <gtest/gtest.h>

#include "strata/base/ref_ptr.h"

namespace strata {
namespace {

TEST(StatusTest, OkAndErrors) {
  EXPECT_TRUE(OkStatus().ok());
  EXPECT_EQ(OkStatus().ToString(), "OK");
  Status error = NotFoundError("no module '", "hal", "'");
  EXPECT_EQ(error.code(), StatusCode::kNotFound);
  EXPECT_EQ(error.ToString(), "NOT_FOUND: no module 'hal'");
  EXPECT_EQ(error.Annotate("loading").message(), "loading: no module 'hal'");
  EXPECT_TRUE(OkStatus().Annotate("x").ok());
}

struct Formatted {
  mutable int calls = 0;
};
// Counts how often StrCat formats it.
void AppendToString(std::string &out, const Formatted &formatted) {
  ++formatted.calls;
  out += "formatted";
}

enum class Small : uint8_t { kSeven = 7 };

TEST(StatusTest, StrCatFormatsWithoutStreams) {
  EXPECT_EQ(StrCat("a", 'b', std::string("c"), std::string_view("d")), "abcd");
  EXPECT_EQ(StrCat(int64_t(-9223372036854775807 - 1), " ", UINT64_MAX),
            "-9223372036854775808 18446744073709551615");
  // 8-bit integers and enums print as numbers, not characters.
  EXPECT_EQ(StrCat(int8_t(-3), " ", uint8_t(200), " ", Small::kSeven),
            "-3 200 7");
  EXPECT_EQ(StrCat(true, " ", false), "true false");
  // Floating point: the shortest text that reads back as the same value.
  EXPECT_EQ(StrCat(0.1, " ", 0.1f, " ", 1e300, " ", -2.5f),
            "0.1 0.1 1e+300 -2.5");
  EXPECT_EQ(StrCat(Hex{0xdeadbeef}, " ", Hex{0}), "deadbeef 0");
}

TEST(StatusTest, AnnotateFormatsOnlyOnFailure) {
  Formatted context;
  EXPECT_TRUE(OkStatus().Annotate("while ", context).ok());
  EXPECT_EQ(context.calls, 0);
  Status annotated = InternalError("broke").Annotate("while ", context, " ", 2);
  EXPECT_EQ(annotated.message(), "while formatted 2: broke");
  EXPECT_EQ(annotated.code(), StatusCode::kInternal);
  EXPECT_EQ(context.calls, 1);
}

Result<int> Half(int value) {
  if (value % 2)
    return InvalidArgumentError(value, " is odd");
  return value / 2;
}

Status Quarter(int value, int *out) {
  STRATA_ASSIGN_OR_RETURN(int half, Half(value));
  STRATA_ASSIGN_OR_RETURN(*out, Half(half));
  return OkStatus();
}

TEST(StatusTest, ResultAndMacros) {
  int out = 0;
  EXPECT_TRUE(Quarter(8, &out).ok());
  EXPECT_EQ(out, 2);
  EXPECT_EQ(Quarter(6, &out).message(), "3 is odd");
}

class Counted final : public RefObject {
public:
  static const RefTypeDescriptor kRefType;
  Counted() : RefObject(&kRefType) {}
};
const RefTypeDescriptor Counted::kRefType = {"test.counted"};

TEST(RefPtrTest, CountsAndCompares) {
  RefPtr<Counted> a = MakeRef<Counted>();
  EXPECT_EQ(a->ref_count(), 1);
  RefPtr<RefObject> b = a;
  EXPECT_EQ(a->ref_count(), 2);
  EXPECT_TRUE(a == b);
  EXPECT_FALSE(a == nullptr);
  EXPECT_TRUE(RefPtr<Counted>() == nullptr);
  EXPECT_TRUE(nullptr != a);
  EXPECT_EQ(RefCast<Counted>(b.get()), a.get());
  b.reset();
  EXPECT_EQ(a->ref_count(), 1);
}

} // namespace
} // namespace strata
