#include "strata/base/owned_bytes.h"

#include <gtest/gtest.h>

namespace strata {
namespace {

TEST(OwnedBytesTest, FromVectorKeepsTheBytes) {
  std::vector<uint8_t> bytes = {1, 2, 3};
  const uint8_t *data = bytes.data();
  OwnedBytes owned = OwnedBytes::FromVector(std::move(bytes));
  EXPECT_EQ(owned.size(), 3u);
  EXPECT_EQ(owned.data(), data); // no copy
  EXPECT_EQ(owned.span()[2], 3);
}

TEST(OwnedBytesTest, CopyOfIsAligned) {
  std::string text = "module bytes";
  OwnedBytes owned = OwnedBytes::CopyOf(text, 128);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(owned.data()) % 128, 0u);
  EXPECT_EQ(std::string(owned.span().begin(), owned.span().end()), text);
  OwnedBytes empty = OwnedBytes::CopyOf(std::string_view());
  EXPECT_TRUE(empty.empty());
}

TEST(OwnedBytesTest, ReleaseRunsOnceOnDestructionOrMoveAssignment) {
  static const uint8_t kBytes[] = {9};
  int releases = 0;
  {
    OwnedBytes owned = OwnedBytes::Wrap(kBytes, [&] { ++releases; });
    OwnedBytes moved = std::move(owned);
    EXPECT_TRUE(owned.empty());
    EXPECT_EQ(moved.size(), 1u);
    EXPECT_EQ(releases, 0);
  }
  EXPECT_EQ(releases, 1);

  OwnedBytes target = OwnedBytes::Wrap(kBytes, [&] { ++releases; });
  target = OwnedBytes::Wrap(kBytes, [&] { releases += 10; });
  EXPECT_EQ(releases, 2);
  target.reset();
  EXPECT_EQ(releases, 12);
  target.reset();
  EXPECT_EQ(releases, 12);
}

TEST(OwnedBytesTest, BorrowedBytesNeedNoRelease) {
  static const uint8_t kBytes[] = {1, 2};
  OwnedBytes borrowed = OwnedBytes::Wrap(kBytes, nullptr);
  EXPECT_EQ(borrowed.size(), 2u);
}

} // namespace
} // namespace strata
