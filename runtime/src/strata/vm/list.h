// vm.list: a growable, bounds-checked array of Values of any type. New slots
// are empty (none); reading an empty slot as i32/i64 gives 0 and as a ref
// gives null, reading a slot of another type is an error.
#ifndef STRATA_VM_LIST_H_
#define STRATA_VM_LIST_H_

#include <cstdint>
#include <vector>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/vm/value.h"

namespace strata::vm {

class List final : public RefObject {
public:
  static const RefTypeDescriptor kRefType; // "vm.list"

  // Most elements a list may hold; growing beyond is RESOURCE_EXHAUSTED.
  static constexpr uint64_t kMaxSize = uint64_t(1) << 20;

  // An empty list; `initial_capacity` is a hint (clamped).
  static RefPtr<List> Create(uint64_t initial_capacity = 0);

  uint64_t size() const { return values_.size(); }
  // Grows with empty slots or shrinks (releasing dropped refs).
  Status Resize(uint64_t new_size);
  Status PushBack(Value value);

  // OUT_OF_RANGE when `index` >= size().
  Result<Value> Get(uint64_t index) const;
  Status Set(uint64_t index, Value value);

  // Typed access with the empty-slot rules above.
  Result<int32_t> GetI32(uint64_t index) const;
  Result<int64_t> GetI64(uint64_t index) const;
  Result<RefPtr<RefObject>> GetRef(uint64_t index) const;

private:
  List() : RefObject(&kRefType) {}
  Status CheckIndex(uint64_t index) const;

  std::vector<Value> values_;
};

} // namespace strata::vm

#endif // STRATA_VM_LIST_H_
