#include "strata/base/object_pool.h"

#include <gtest/gtest.h>

#include "strata/base/ref_ptr.h"

namespace strata {
namespace {

// A ref-counted object that parks itself in its pool on its last release,
// as the HAL's pooled types do.
class Pooled final : public RefObject {
public:
  static const RefTypeDescriptor kRefType;
  static inline int live = 0;

  static ObjectPool<Pooled> &Pool() {
    static auto *pool = new ObjectPool<Pooled>(2);
    return *pool;
  }
  static RefPtr<Pooled> Create(int value) {
    Pooled *object = Pool().Take();
    if (object)
      object->ReviveFromPool();
    else
      object = new Pooled();
    object->value = value;
    return RefPtr<Pooled>::Adopt(object);
  }

  int value = 0;

private:
  friend class ObjectPool<Pooled>;
  Pooled() : RefObject(&kRefType) { ++live; }
  ~Pooled() override { --live; }
  void OnLastReference() const override {
    Pool().Park(const_cast<Pooled *>(this));
  }
};
const RefTypeDescriptor Pooled::kRefType = {"test.pooled"};

TEST(ObjectPoolTest, ReusesUpToItsCapacity) {
#if defined(STRATA_OBJECT_POOL_DISABLED)
  GTEST_SKIP() << "object pools keep nothing under AddressSanitizer";
#endif
  RefPtr<Pooled> first = Pooled::Create(1);
  const Pooled *address = first.get();
  first.reset();
  // Parked, not deleted; the next Create gets it back, revived.
  EXPECT_EQ(Pooled::live, 1);
  RefPtr<Pooled> again = Pooled::Create(2);
  EXPECT_EQ(again.get(), address);
  EXPECT_EQ(again->value, 2);
  EXPECT_EQ(again->ref_count(), 1);

  // Three released at once: two parked (the capacity), one deleted.
  RefPtr<Pooled> b = Pooled::Create(3), c = Pooled::Create(4);
  EXPECT_EQ(Pooled::live, 3);
  again.reset();
  b.reset();
  c.reset();
  EXPECT_EQ(Pooled::live, 2);
}

} // namespace
} // namespace strata
