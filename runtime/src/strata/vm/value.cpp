#include "strata/vm/value.h"

namespace strata::vm {

const char *ValueTypeName(ValueType type) {
  switch (type) {
  case ValueType::kNone:
    return "none";
  case ValueType::kI32:
    return "i32";
  case ValueType::kI64:
    return "i64";
  case ValueType::kF32:
    return "f32";
  case ValueType::kF64:
    return "f64";
  case ValueType::kRef:
    return "ref";
  }
  return "?";
}

char ValueTypeChar(ValueType type) {
  switch (type) {
  case ValueType::kI32:
    return 'i';
  case ValueType::kI64:
    return 'I';
  case ValueType::kF32:
    return 'f';
  case ValueType::kF64:
    return 'F';
  case ValueType::kRef:
    return 'r';
  case ValueType::kNone:
    break;
  }
  return '?';
}

RegisterBank RegisterBankOf(ValueType type) {
  switch (type) {
  case ValueType::kI32:
    return RegisterBank::kI32;
  case ValueType::kI64:
    return RegisterBank::kI64;
  case ValueType::kF32:
    return RegisterBank::kF32;
  case ValueType::kF64:
    return RegisterBank::kF64;
  case ValueType::kRef:
  case ValueType::kNone:
    break;
  }
  assert(type == ValueType::kRef && "kNone has no register bank");
  return RegisterBank::kRef;
}

ValueType ValueTypeOf(RegisterBank bank) {
  switch (bank) {
  case RegisterBank::kI32:
    return ValueType::kI32;
  case RegisterBank::kI64:
    return ValueType::kI64;
  case RegisterBank::kF32:
    return ValueType::kF32;
  case RegisterBank::kF64:
    return ValueType::kF64;
  case RegisterBank::kRef:
    return ValueType::kRef;
  }
  return ValueType::kNone;
}

std::string Value::ToString() const {
  switch (type_) {
  case ValueType::kNone:
    return "none";
  case ValueType::kI32:
    return StrCat("i32 ", i32());
  case ValueType::kI64:
    return StrCat("i64 ", i64());
  case ValueType::kF32:
    return StrCat("f32 ", f32());
  case ValueType::kF64:
    return StrCat("f64 ", f64());
  case ValueType::kRef:
    if (!ref_)
      return "ref null";
    return StrCat("ref ", ref_->ref_type()->name);
  }
  return "?";
}

} // namespace strata::vm
