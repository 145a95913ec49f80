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
