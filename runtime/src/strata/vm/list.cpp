#include "strata/vm/list.h"

#include <algorithm>

namespace strata::vm {

const RefTypeDescriptor List::kRefType = {"vm.list"};

RefPtr<List> List::Create(uint64_t initial_capacity) {
  auto list = RefPtr<List>::Adopt(new List());
  // The capacity is only a hint; never let it reserve absurd amounts.
  list->values_.reserve(
      static_cast<size_t>(std::min<uint64_t>(initial_capacity, 4096)));
  return list;
}

Status List::Resize(uint64_t new_size) {
  if (new_size > kMaxSize)
    return ResourceExhaustedError("vm.list size ", new_size,
                                  " exceeds the limit of ", kMaxSize);
  values_.resize(static_cast<size_t>(new_size));
  return OkStatus();
}

Status List::PushBack(Value value) {
  if (values_.size() >= kMaxSize)
    return ResourceExhaustedError("vm.list size exceeds the limit of ",
                                  kMaxSize);
  values_.push_back(std::move(value));
  return OkStatus();
}

Status List::CheckIndex(uint64_t index) const {
  if (index >= values_.size())
    return OutOfRangeError("vm.list index ", index, " is out of range (size ",
                           values_.size(), ")");
  return OkStatus();
}

Result<Value> List::Get(uint64_t index) const {
  STRATA_RETURN_IF_ERROR(CheckIndex(index));
  return values_[index];
}

Status List::Set(uint64_t index, Value value) {
  STRATA_RETURN_IF_ERROR(CheckIndex(index));
  values_[index] = std::move(value);
  return OkStatus();
}

namespace {
Status TypeMismatch(uint64_t index, ValueType actual, ValueType requested) {
  return InvalidArgumentError("vm.list element ", index, " holds ",
                              ValueTypeName(actual), ", read as ",
                              ValueTypeName(requested));
}
} // namespace

Result<int32_t> List::GetI32(uint64_t index) const {
  STRATA_RETURN_IF_ERROR(CheckIndex(index));
  const Value &value = values_[index];
  if (value.is_none())
    return 0;
  if (value.type() != ValueType::kI32)
    return TypeMismatch(index, value.type(), ValueType::kI32);
  return value.i32();
}

Result<int64_t> List::GetI64(uint64_t index) const {
  STRATA_RETURN_IF_ERROR(CheckIndex(index));
  const Value &value = values_[index];
  if (value.is_none())
    return int64_t{0};
  if (value.type() != ValueType::kI64)
    return TypeMismatch(index, value.type(), ValueType::kI64);
  return value.i64();
}

Result<RefPtr<RefObject>> List::GetRef(uint64_t index) const {
  STRATA_RETURN_IF_ERROR(CheckIndex(index));
  const Value &value = values_[index];
  if (value.is_none())
    return RefPtr<RefObject>();
  if (value.type() != ValueType::kRef)
    return TypeMismatch(index, value.type(), ValueType::kRef);
  return value.ref_ptr();
}

} // namespace strata::vm
