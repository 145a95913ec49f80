// Value: one VM value (i32, i64, f32, f64 or a ref) as it crosses a call
// boundary or sits in a vm.list. Register banks inside the interpreter store
// raw scalars instead; Values are for APIs.
#ifndef STRATA_VM_VALUE_H_
#define STRATA_VM_VALUE_H_

#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/vm/bytecode.h"

namespace strata::vm {

enum class ValueType : uint8_t {
  kNone = 0, // empty: a fresh list slot or an unset result
  kI32,
  kI64,
  kF32,
  kF64,
  kRef,
};

// "i32", "i64", "f32", "f64", "ref", "none".
const char *ValueTypeName(ValueType type);
// Calling-convention character: 'i', 'I', 'f', 'F', 'r' ('?' for none).
char ValueTypeChar(ValueType type);
// The register bank holding values of `type` (type must not be kNone).
RegisterBank RegisterBankOf(ValueType type);
ValueType ValueTypeOf(RegisterBank bank);

class Value {
public:
  Value() = default;

  static Value I32(int32_t value) {
    return Value(RawScalar{}, ValueType::kI32, value);
  }
  static Value I64(int64_t value) {
    return Value(RawScalar{}, ValueType::kI64, value);
  }
  // Inline, like the accessors: the interpreter builds a Value for every
  // argument of every import call.
  static Value F32(float value) {
    return Value(RawScalar{}, ValueType::kF32,
                 static_cast<int64_t>(std::bit_cast<uint32_t>(value)));
  }
  static Value F64(double value) {
    return Value(RawScalar{}, ValueType::kF64, std::bit_cast<int64_t>(value));
  }
  // A (possibly null) ref.
  static Value Ref(RefPtr<RefObject> ref) { return Value(std::move(ref)); }
  static Value NullRef() { return Ref(nullptr); }

  ValueType type() const { return type_; }
  bool is_none() const { return type_ == ValueType::kNone; }
  bool is_ref() const { return type_ == ValueType::kRef; }

  // Accessors assert the type; check type() first (or rely on a validated
  // signature, as native functions may).
  int32_t i32() const {
    assert(type_ == ValueType::kI32);
    return static_cast<int32_t>(bits_);
  }
  int64_t i64() const {
    assert(type_ == ValueType::kI64);
    return static_cast<int64_t>(bits_);
  }
  float f32() const {
    assert(type_ == ValueType::kF32);
    return std::bit_cast<float>(static_cast<uint32_t>(bits_));
  }
  double f64() const {
    assert(type_ == ValueType::kF64);
    return std::bit_cast<double>(bits_);
  }
  // Null when the ref is null.
  RefObject *ref() const {
    assert(type_ == ValueType::kRef);
    return ref_.get();
  }
  const RefPtr<RefObject> &ref_ptr() const {
    assert(type_ == ValueType::kRef);
    return ref_;
  }
  // Moves the ref out, leaving a null ref behind.
  RefPtr<RefObject> TakeRef() {
    assert(type_ == ValueType::kRef);
    return std::move(ref_);
  }

  // Human-readable form: "i32 42", "f32 1.5", "ref vm.buffer", "ref null".
  std::string ToString() const;

  // For building a Value in place (vector::emplace_back) without a
  // temporary: a scalar from its raw bits (floats bit-copied), or a ref.
  struct RawScalar {};
  Value(RawScalar, ValueType type, int64_t bits)
      : type_(type), bits_(static_cast<uint64_t>(bits)) {}
  explicit Value(RefPtr<RefObject> ref)
      : type_(ValueType::kRef), ref_(std::move(ref)) {}

private:
  ValueType type_ = ValueType::kNone;
  // Raw scalar bits (floats bit-copied).
  uint64_t bits_ = 0;
  RefPtr<RefObject> ref_;
};

// The non-null ref of type T that `value` holds (borrowed), or nullptr. For
// hot paths that build their error message only on failure.
template <typename T> T *TryCastRef(const Value &value) {
  if (value.type() != ValueType::kRef || !value.ref())
    return nullptr;
  return RefCast<T>(value.ref());
}

// Checks that `value` is a non-null ref of type T and returns it (borrowed).
// `what` names the value in the error ("argument 2", "buffer view").
template <typename T>
Result<T *> CastRef(const Value &value, std::string_view what) {
  if (T *typed = TryCastRef<T>(value))
    return typed;
  if (value.type() != ValueType::kRef)
    return InvalidArgumentError(what, " must be a ref to ", T::kRefType.name,
                                ", got ", ValueTypeName(value.type()));
  RefObject *object = value.ref();
  if (!object)
    return InvalidArgumentError(what, " must be a ", T::kRefType.name,
                                ", got a null ref");
  return InvalidArgumentError(what, " must be a ", T::kRefType.name, ", got ",
                              object->ref_type()->name);
}

// Like CastRef but a null ref gives nullptr instead of an error.
template <typename T>
Result<T *> CastOptionalRef(const Value &value, std::string_view what) {
  if (value.type() == ValueType::kRef && !value.ref())
    return static_cast<T *>(nullptr);
  return CastRef<T>(value, what);
}

} // namespace strata::vm

#endif // STRATA_VM_VALUE_H_
