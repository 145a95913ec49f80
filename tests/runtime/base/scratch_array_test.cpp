#include "strata/base/scratch_array.h"

#include <gtest/gtest.h>

#include <memory>

namespace strata {
namespace {

// Counts live instances, so a test sees every element constructed once and
// destroyed once, inline or on the heap.
struct Tracked {
  static inline int live = 0;
  Tracked() { ++live; }
  explicit Tracked(int v) : value(v) { ++live; }
  Tracked(const Tracked &other) : value(other.value) { ++live; }
  Tracked(Tracked &&other) noexcept : value(other.value) { ++live; }
  Tracked &operator=(const Tracked &) = default;
  Tracked &operator=(Tracked &&) = default;
  ~Tracked() { --live; }
  int value = 0;
};

TEST(ScratchArrayTest, InlineAndHeap) {
  for (size_t size : {size_t(0), size_t(3), size_t(4), size_t(9)}) {
    {
      ScratchArray<Tracked, 4> array(size);
      EXPECT_EQ(array.size(), size);
      EXPECT_EQ(Tracked::live, int(size));
      for (size_t i = 0; i < size; ++i)
        array[i].value = int(i);
      int sum = 0;
      for (const Tracked &element : array.span())
        sum += element.value;
      EXPECT_EQ(sum, int(size * (size - (size ? 1 : 0)) / 2));
      // Inline up to N: the data lives inside the object.
      bool inside = reinterpret_cast<const char *>(array.data()) >=
                        reinterpret_cast<const char *>(&array) &&
                    reinterpret_cast<const char *>(array.data()) <
                        reinterpret_cast<const char *>(&array + 1);
      EXPECT_EQ(inside, size <= 4) << size;
    }
    EXPECT_EQ(Tracked::live, 0);
  }
}

TEST(ScratchVectorTest, SpillsToTheHeapKeepingOrder) {
  {
    ScratchVector<std::unique_ptr<Tracked>, 2> vector;
    EXPECT_TRUE(vector.empty());
    for (int i = 0; i < 5; ++i)
      vector.push_back(std::make_unique<Tracked>(i));
    ASSERT_EQ(vector.size(), 5u);
    for (int i = 0; i < 5; ++i)
      EXPECT_EQ(vector[i]->value, i);
    EXPECT_EQ(Tracked::live, 5);
  }
  EXPECT_EQ(Tracked::live, 0);
  {
    ScratchVector<Tracked, 4> vector;
    vector.push_back(Tracked(7));
    vector.push_back(Tracked(8));
    EXPECT_EQ(vector.span().size(), 2u);
    EXPECT_EQ(vector.span()[1].value, 8);
    EXPECT_EQ(Tracked::live, 2);
  }
  EXPECT_EQ(Tracked::live, 0);
}

} // namespace
} // namespace strata
