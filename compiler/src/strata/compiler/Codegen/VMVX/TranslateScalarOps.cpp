//===- TranslateScalarOps.cpp - vmvx kernels: arith and math -------------===//
//
// Scalars in VM register banks: index and i64 in i64 registers, i1..i32 in
// i32 registers (narrower integers zero-extended, sign-extended on the fly
// by signed ops), f32 and f64 in their own.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/VMVX/KernelTranslator.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "strata/vm/bytecode.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

namespace strata::vmvx {

//===----------------------------------------------------------------------===//
// Scalars
//===----------------------------------------------------------------------===//

LogicalResult FunctionTranslator::translateConstant(arith::ConstantOp op) {
  Type type = op.getType();
  if (auto integer = dyn_cast<IntegerAttr>(op.getValue())) {
    unsigned width = getIntWidth(type);
    APInt bits = integer.getValue();
    if (width == 64) {
      mapping.map(op.getResult(), constI64(bits.getSExtValue()));
      return success();
    }
    // Zero-extended canonical form.
    mapping.map(op.getResult(),
                constI32(static_cast<int32_t>(bits.getZExtValue())));
    return success();
  }
  if (auto floating = dyn_cast<FloatAttr>(op.getValue())) {
    if (isHalfFloat(type)) {
      mapping.map(op.getResult(),
                  constI32(static_cast<int32_t>(
                      floating.getValue().bitcastToAPInt().getZExtValue())));
      return success();
    }
    if (!type.isF32() && !type.isF64())
      return op.emitOpError("has type ")
             << type << ", which the vmvx target does not support yet";
    mapping.map(op.getResult(), constFloat(type, floating.getValueAsDouble()));
    return success();
  }
  return op.emitOpError("is not a scalar constant; the vmvx target needs "
                        "scalars here");
}

LogicalResult FunctionTranslator::translateIntegerBinary(Operation *op) {
  Type type = op->getResult(0).getType();
  unsigned width = getIntWidth(type);
  Type vmType = width == 64 ? i64() : i32();
  StringRef bank = suffix(vmType);
  Value lhs = get(op->getOperand(0)), rhs = get(op->getOperand(1));
  auto binary = [&](StringRef name, Value a, Value b) {
    return emit((name + "." + bank).str(), vmType, {a, b});
  };
  auto signedBinary = [&](StringRef name) {
    // name.<bank>.s on sign-extended operands, masked back.
    Value result = emit((name + "." + bank + ".s").str(), vmType,
                        {signExtend(lhs, width), signExtend(rhs, width)});
    return mask(result, width);
  };
  Value result =
      TypeSwitch<Operation *, Value>(op)
          .Case([&](arith::AddIOp) {
            return mask(binary("add", lhs, rhs), width);
          })
          .Case([&](arith::SubIOp) {
            return mask(binary("sub", lhs, rhs), width);
          })
          .Case([&](arith::MulIOp) {
            return mask(binary("mul", lhs, rhs), width);
          })
          .Case([&](arith::AndIOp) { return binary("and", lhs, rhs); })
          .Case([&](arith::OrIOp) { return binary("or", lhs, rhs); })
          .Case([&](arith::XOrIOp) { return binary("xor", lhs, rhs); })
          .Case([&](arith::ShLIOp) {
            return mask(binary("shl", lhs, rhs), width);
          })
          .Case([&](arith::ShRUIOp) {
            return emit(("shr." + bank + ".u").str(), vmType, {lhs, rhs});
          })
          .Case([&](arith::ShRSIOp) {
            Value shifted = emit(("shr." + bank + ".s").str(), vmType,
                                 {signExtend(lhs, width), rhs});
            return mask(shifted, width);
          })
          .Case([&](arith::DivSIOp) { return signedBinary("div"); })
          .Case([&](arith::RemSIOp) { return signedBinary("rem"); })
          .Case([&](arith::MaxSIOp) { return signedBinary("max"); })
          .Case([&](arith::MinSIOp) { return signedBinary("min"); })
          .Case([&](arith::DivUIOp) {
            return emit(("div." + bank + ".u").str(), vmType, {lhs, rhs});
          })
          .Case([&](arith::RemUIOp) {
            return emit(("rem." + bank + ".u").str(), vmType, {lhs, rhs});
          })
          .Case<arith::MaxUIOp, arith::MinUIOp>([&](Operation *minmax) {
            Value less =
                emit(("cmp.lt." + bank + ".u").str(), i32(), {lhs, rhs});
            bool isMax = isa<arith::MaxUIOp>(minmax);
            return emit(("select." + bank).str(), vmType,
                        {less, isMax ? rhs : lhs, isMax ? lhs : rhs});
          })
          .Default([](Operation *) { return Value(); });
  if (!result)
    return op->emitOpError("is not supported by the vmvx target");
  mapping.map(op->getResult(0), result);
  return success();
}

LogicalResult FunctionTranslator::translateFloatBinary(Operation *op) {
  Type originalType = op->getResult(0).getType();
  Type type = computeType(originalType);
  StringRef bank = suffix(type);
  Value lhs = widen(get(op->getOperand(0)), originalType);
  Value rhs = op->getNumOperands() > 1
                  ? widen(get(op->getOperand(1)), originalType)
                  : Value();
  auto binary = [&](StringRef name, Value a, Value b) {
    return emit((name + "." + bank).str(), type, {a, b});
  };
  Value result =
      TypeSwitch<Operation *, Value>(op)
          .Case([&](arith::AddFOp) { return binary("add", lhs, rhs); })
          .Case([&](arith::SubFOp) { return binary("sub", lhs, rhs); })
          .Case([&](arith::MulFOp) { return binary("mul", lhs, rhs); })
          .Case([&](arith::DivFOp) { return binary("div", lhs, rhs); })
          .Case([&](arith::MaximumFOp) { return binary("max", lhs, rhs); })
          .Case([&](arith::MinimumFOp) { return binary("min", lhs, rhs); })
          .Case([&](arith::NegFOp) {
            return emit(("neg." + bank).str(), type, {lhs});
          })
          .Case([&](arith::RemFOp) {
            return emit(("math2." + bank).str(), type, {lhs, rhs},
                        {builder.getNamedAttr("function",
                                              builder.getStringAttr("fmod"))});
          })
          .Case<arith::MaxNumFOp, arith::MinNumFOp>([&](Operation *minmax) {
            // A NaN operand yields the other operand.
            Value both =
                binary(isa<arith::MaxNumFOp>(minmax) ? "max" : "min", lhs, rhs);
            Value rhsIsNumber =
                emit(("cmp.eq." + bank).str(), i32(), {rhs, rhs});
            Value lhsIsNumber =
                emit(("cmp.eq." + bank).str(), i32(), {lhs, lhs});
            Value result =
                emit(("select." + bank).str(), type, {rhsIsNumber, both, lhs});
            return emit(("select." + bank).str(), type,
                        {lhsIsNumber, result, rhs});
          })
          .Default([](Operation *) { return Value(); });
  if (!result)
    return op->emitOpError("is not supported by the vmvx target");
  mapping.map(op->getResult(0), narrow(result, originalType));
  return success();
}

LogicalResult FunctionTranslator::translateCmpI(arith::CmpIOp op) {
  Type type = op.getLhs().getType();
  unsigned width = getIntWidth(type);
  StringRef bank = width == 64 ? "i64" : "i32";
  Value lhs = get(op.getLhs()), rhs = get(op.getRhs());
  auto compare = [&](StringRef name, Value a, Value b) {
    return emit(("cmp." + name + "." + bank).str(), i32(), {a, b});
  };
  auto compareSigned = [&](StringRef name, Value a, Value b) {
    return emit(("cmp." + name + "." + bank + ".s").str(), i32(),
                {signExtend(a, width), signExtend(b, width)});
  };
  auto compareUnsigned = [&](StringRef name, Value a, Value b) {
    return emit(("cmp." + name + "." + bank + ".u").str(), i32(), {a, b});
  };
  Value result;
  switch (op.getPredicate()) {
  case arith::CmpIPredicate::eq:
    result = compare("eq", lhs, rhs);
    break;
  case arith::CmpIPredicate::ne:
    result = compare("ne", lhs, rhs);
    break;
  case arith::CmpIPredicate::slt:
    result = compareSigned("lt", lhs, rhs);
    break;
  case arith::CmpIPredicate::sle:
    result = compareSigned("le", lhs, rhs);
    break;
  case arith::CmpIPredicate::sgt:
    result = compareSigned("lt", rhs, lhs);
    break;
  case arith::CmpIPredicate::sge:
    result = compareSigned("le", rhs, lhs);
    break;
  case arith::CmpIPredicate::ult:
    result = compareUnsigned("lt", lhs, rhs);
    break;
  case arith::CmpIPredicate::ule:
    result = compareUnsigned("le", lhs, rhs);
    break;
  case arith::CmpIPredicate::ugt:
    result = compareUnsigned("lt", rhs, lhs);
    break;
  case arith::CmpIPredicate::uge:
    result = compareUnsigned("le", rhs, lhs);
    break;
  }
  mapping.map(op.getResult(), result);
  return success();
}

LogicalResult FunctionTranslator::translateCmpF(arith::CmpFOp op) {
  Type operandType = op.getLhs().getType();
  StringRef bank = suffix(computeType(operandType));
  Value lhs = widen(get(op.getLhs()), operandType);
  Value rhs = widen(get(op.getRhs()), operandType);
  auto compare = [&](StringRef name, Value a, Value b) {
    return emit(("cmp." + name + "." + bank).str(), i32(), {a, b});
  };
  // Ordered predicates map onto eq/lt/le (false on NaN); each unordered
  // one is the negation of the opposite ordered one.
  auto ordered = [&](arith::CmpFPredicate predicate) -> Value {
    switch (predicate) {
    case arith::CmpFPredicate::OEQ:
      return compare("eq", lhs, rhs);
    case arith::CmpFPredicate::OLT:
      return compare("lt", lhs, rhs);
    case arith::CmpFPredicate::OLE:
      return compare("le", lhs, rhs);
    case arith::CmpFPredicate::OGT:
      return compare("lt", rhs, lhs);
    case arith::CmpFPredicate::OGE:
      return compare("le", rhs, lhs);
    case arith::CmpFPredicate::ONE:
      return emit("or.i32", i32(),
                  {compare("lt", lhs, rhs), compare("lt", rhs, lhs)});
    case arith::CmpFPredicate::ORD:
      return emit("and.i32", i32(),
                  {compare("eq", lhs, lhs), compare("eq", rhs, rhs)});
    default:
      return Value();
    }
  };
  using P = arith::CmpFPredicate;
  Value result;
  switch (op.getPredicate()) {
  case P::AlwaysFalse:
    result = constI32(0);
    break;
  case P::AlwaysTrue:
    result = constI32(1);
    break;
  case P::UEQ:
    result = logicalNot(ordered(P::ONE));
    break;
  case P::UNE:
    result = logicalNot(ordered(P::OEQ));
    break;
  case P::ULT:
    result = logicalNot(ordered(P::OGE));
    break;
  case P::ULE:
    result = logicalNot(ordered(P::OGT));
    break;
  case P::UGT:
    result = logicalNot(ordered(P::OLE));
    break;
  case P::UGE:
    result = logicalNot(ordered(P::OLT));
    break;
  case P::UNO:
    result = logicalNot(ordered(P::ORD));
    break;
  default:
    result = ordered(op.getPredicate());
  }
  mapping.map(op.getResult(), result);
  return success();
}

LogicalResult FunctionTranslator::translateCast(Operation *op) {
  Value input = op->getOperand(0);
  Type from = input.getType(), to = op->getResult(0).getType();
  Value value = get(input);
  if (auto bitcast = dyn_cast<arith::BitcastOp>(op)) {
    // f16/bf16 and i16 share their representation: the 16 bits.
    if ((isHalfFloat(from) && to.isInteger(16)) ||
        (from.isInteger(16) && isHalfFloat(to))) {
      mapping.map(bitcast.getResult(), value);
      return success();
    }
  } else {
    // Other conversions from or to f16/bf16 go through f32.
    value = widen(value, from);
    from = computeType(from);
  }
  Type originalTo = to;
  if (!isa<arith::BitcastOp>(op))
    to = computeType(to);
  Value result =
      TypeSwitch<Operation *, Value>(op)
          .Case<arith::ExtSIOp, arith::IndexCastOp>([&](Operation *) {
            return convertInteger(value, getIntWidth(from), getIntWidth(to),
                                  /*isSigned=*/true);
          })
          .Case<arith::ExtUIOp, arith::TruncIOp, arith::IndexCastUIOp>(
              [&](Operation *) {
                return convertInteger(value, getIntWidth(from), getIntWidth(to),
                                      /*isSigned=*/false);
              })
          .Case([&](arith::SIToFPOp) -> Value {
            unsigned width = getIntWidth(from);
            if (width < 64 && to.isF32())
              return emit("cast.si32.f32", to, {signExtend(value, width)});
            Value wide = convertInteger(value, width, 64, /*isSigned=*/true);
            return emit(to.isF32() ? "cast.si64.f32" : "cast.si64.f64", to,
                        {wide});
          })
          .Case([&](arith::UIToFPOp) -> Value {
            unsigned width = getIntWidth(from);
            if (width == 64)
              return emit(to.isF32() ? "cast.ui64.f32" : "cast.ui64.f64", to,
                          {value});
            Value wide = convertInteger(value, width, 64, /*isSigned=*/false);
            return emit(to.isF32() ? "cast.si64.f32" : "cast.si64.f64", to,
                        {wide});
          })
          .Case([&](arith::FPToSIOp) -> Value {
            unsigned width = getIntWidth(to);
            if (width == 64)
              return emit(from.isF32() ? "cast.f32.si64" : "cast.f64.si64",
                          i64(), {value});
            if (from.isF32())
              return mask(emit("cast.f32.si32", i32(), {value}), width);
            Value wide = emit("cast.f64.si64", i64(), {value});
            return convertInteger(wide, 64, width, /*isSigned=*/false);
          })
          .Case([&](arith::FPToUIOp) -> Value {
            unsigned width = getIntWidth(to);
            if (width == 64)
              return emit(from.isF32() ? "cast.f32.ui64" : "cast.f64.ui64",
                          i64(), {value});
            Value wide = emit(from.isF32() ? "cast.f32.si64" : "cast.f64.si64",
                              i64(), {value});
            return convertInteger(wide, 64, width, /*isSigned=*/false);
          })
          .Case<arith::ExtFOp, arith::TruncFOp>([&](Operation *) -> Value {
            if (from == to)
              return value;
            if (from.isF32() && to.isF64())
              return emit("ext.f32.f64", to, {value});
            if (from.isF64() && to.isF32())
              return emit("trunc.f64.f32", to, {value});
            return Value();
          })
          .Case([&](arith::BitcastOp) -> Value {
            if (from == to)
              return value;
            if (from.isF32() && to.isInteger(32))
              return emit("bitcast.f32.i32", i32(), {value});
            if (from.isInteger(32) && to.isF32())
              return emit("bitcast.i32.f32", to, {value});
            if (from.isF64() && to.isInteger(64))
              return emit("bitcast.f64.i64", i64(), {value});
            if (from.isInteger(64) && to.isF64())
              return emit("bitcast.i64.f64", to, {value});
            return Value();
          })
          .Default([](Operation *) { return Value(); });
  if (!result)
    return op->emitOpError("from ")
           << from << " to " << to << " is not supported by the vmvx target";
  mapping.map(op->getResult(0), narrow(result, originalTo));
  return success();
}

// Math functions the VM computes by name (math_functions.def).
static bool isVMUnaryMathFunction(StringRef name) {
  for (const char *candidate : ::strata::vm::kUnaryMathFunctionNames)
    if (name == candidate)
      return true;
  return false;
}

LogicalResult FunctionTranslator::translateMath(Operation *op) {
  Type type = op->getResult(0).getType();
  StringRef name = op->getName().stripDialect();
  auto function = [&](StringRef functionName) {
    return builder.getNamedAttr("function",
                                builder.getStringAttr(functionName));
  };
  if (isa<math::AbsIOp>(op)) {
    unsigned width = getIntWidth(type);
    Type vmType = width == 64 ? i64() : i32();
    StringRef bank = suffix(vmType);
    Value value = signExtend(get(op->getOperand(0)), width);
    Value zero = width == 64 ? constI64(0) : constI32(0);
    Value negative =
        emit(("cmp.lt." + bank + ".s").str(), i32(), {value, zero});
    Value negated = emit(("sub." + bank).str(), vmType, {zero, value});
    Value result =
        emit(("select." + bank).str(), vmType, {negative, negated, value});
    mapping.map(op->getResult(0), mask(result, width));
    return success();
  }
  if (isa<math::IsNaNOp, math::IsInfOp, math::IsFiniteOp>(op)) {
    Type originalType = op->getOperand(0).getType();
    Value value = widen(get(op->getOperand(0)), originalType);
    Type operandType = computeType(originalType);
    StringRef bank = suffix(operandType);
    Value result;
    if (isa<math::IsNaNOp>(op)) {
      result =
          logicalNot(emit(("cmp.eq." + bank).str(), i32(), {value, value}));
    } else {
      Value magnitude = emit(("abs." + bank).str(), operandType, {value});
      Value infinity =
          constFloat(operandType, std::numeric_limits<double>::infinity());
      result =
          emit((isa<math::IsInfOp>(op) ? "cmp.eq." : "cmp.lt.") + bank.str(),
               i32(), {magnitude, infinity});
    }
    mapping.map(op->getResult(0), result);
    return success();
  }
  Type originalType = type;
  if (!type.isF32() && !type.isF64() && !isHalfFloat(type))
    return op->emitOpError("on ")
           << type << " is not supported by the vmvx target";
  type = computeType(type);
  StringRef bank = suffix(type);
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(widen(get(operand), originalType));
  Value result;
  if (isa<math::SqrtOp>(op))
    result = emit(("sqrt." + bank).str(), type, operands);
  else if (isa<math::AbsFOp>(op))
    result = emit(("abs." + bank).str(), type, operands);
  else if (isa<math::FmaOp>(op))
    result = emit(("fma." + bank).str(), type, operands);
  else if (isa<math::RsqrtOp>(op))
    result = emit(
        ("div." + bank).str(), type,
        {constFloat(type, 1.0), emit(("sqrt." + bank).str(), type, operands)});
  else if (isa<math::PowFOp, math::Atan2Op, math::CopySignOp>(op))
    result = emit(("math2." + bank).str(), type, operands, {function(name)});
  else if (isVMUnaryMathFunction(name) && operands.size() == 1)
    result = emit(("math." + bank).str(), type, operands, {function(name)});
  else
    return op->emitOpError("is not supported by the vmvx target");
  mapping.map(op->getResult(0), narrow(result, originalType));
  return success();
}

} // namespace strata::vmvx
