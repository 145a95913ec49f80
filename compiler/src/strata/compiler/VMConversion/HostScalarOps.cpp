//===- HostScalarOps.cpp --------------------------------------------------===//
#include "strata/compiler/VMConversion/HostScalarOps.h"

#include "strata/compiler/Dialect/VM/VMDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;

namespace strata {
namespace {

bool isWide(Type type) { return type.isIndex() || type.isInteger(64); }

template <typename Op32, typename Op64>
Value binary(OpBuilder &body, Location loc, Value lhs, Value rhs) {
  if (lhs.getType().isInteger(64))
    return Op64::create(body, loc, lhs.getType(), lhs, rhs);
  return Op32::create(body, loc, lhs.getType(), lhs, rhs);
}

// `condition ? whenTrue : whenFalse` in the values' register bank.
Value select(OpBuilder &body, Location loc, Value condition, Value whenTrue,
             Value whenFalse) {
  if (whenTrue.getType().isInteger(64))
    return vm::SelectI64Op::create(body, loc, whenTrue.getType(), condition,
                                   whenTrue, whenFalse);
  return vm::SelectI32Op::create(body, loc, whenTrue.getType(), condition,
                                 whenTrue, whenFalse);
}

// A VM comparison of the operands' register bank, as an i32 0/1.
template <typename Op32, typename Op64>
Value compareIn(OpBuilder &body, Location loc, Value lhs, Value rhs) {
  if (lhs.getType().isInteger(64))
    return Op64::create(body, loc, body.getI32Type(), lhs, rhs);
  return Op32::create(body, loc, body.getI32Type(), lhs, rhs);
}

// `lhs < rhs` (or `<=` with `orEqual`), signed or not, as an i32 0/1.
Value lessThan(OpBuilder &body, Location loc, Value lhs, Value rhs,
               bool isSigned, bool orEqual) {
  if (isSigned)
    return orEqual ? compareIn<vm::CmpLeI32SOp, vm::CmpLeI64SOp>(body, loc, lhs,
                                                                 rhs)
                   : compareIn<vm::CmpLtI32SOp, vm::CmpLtI64SOp>(body, loc, lhs,
                                                                 rhs);
  return orEqual
             ? compareIn<vm::CmpLeI32UOp, vm::CmpLeI64UOp>(body, loc, lhs, rhs)
             : compareIn<vm::CmpLtI32UOp, vm::CmpLtI64UOp>(body, loc, lhs, rhs);
}

Value compare(OpBuilder &body, Location loc, arith::CmpIPredicate predicate,
              Value lhs, Value rhs) {
  using P = arith::CmpIPredicate;
  switch (predicate) {
  case P::eq:
    return compareIn<vm::CmpEqI32Op, vm::CmpEqI64Op>(body, loc, lhs, rhs);
  case P::ne:
    return compareIn<vm::CmpNeI32Op, vm::CmpNeI64Op>(body, loc, lhs, rhs);
  case P::slt:
    return lessThan(body, loc, lhs, rhs, true, false);
  case P::sle:
    return lessThan(body, loc, lhs, rhs, true, true);
  case P::sgt:
    return lessThan(body, loc, rhs, lhs, true, false);
  case P::sge:
    return lessThan(body, loc, rhs, lhs, true, true);
  case P::ult:
    return lessThan(body, loc, lhs, rhs, false, false);
  case P::ule:
    return lessThan(body, loc, lhs, rhs, false, true);
  case P::ugt:
    return lessThan(body, loc, rhs, lhs, false, false);
  case P::uge:
    return lessThan(body, loc, rhs, lhs, false, true);
  }
  return Value();
}

} // namespace

LogicalResult convertHostScalarOp(Operation *op, OpBuilder &body,
                                  IRMapping &mapping) {
  Location loc = op->getLoc();
  // Only i1, i32 and i64 (index) values: what the host program computes.
  for (Type type :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes()))
    if (!type.isInteger(1) && !type.isInteger(32) && !isWide(type))
      return op->emitOpError("computes on ")
             << type << " in the host program; only i1, i32 and i64 "
             << "arithmetic is supported there";
  auto get = [&](unsigned index) {
    return mapping.lookup(op->getOperand(index));
  };
  Value result =
      TypeSwitch<Operation *, Value>(op)
          .Case([&](arith::AddIOp) {
            return binary<vm::AddI32Op, vm::AddI64Op>(body, loc, get(0),
                                                      get(1));
          })
          .Case([&](arith::SubIOp) {
            return binary<vm::SubI32Op, vm::SubI64Op>(body, loc, get(0),
                                                      get(1));
          })
          .Case([&](arith::MulIOp) {
            return binary<vm::MulI32Op, vm::MulI64Op>(body, loc, get(0),
                                                      get(1));
          })
          .Case([&](arith::DivSIOp) {
            return binary<vm::DivI32SOp, vm::DivI64SOp>(body, loc, get(0),
                                                        get(1));
          })
          .Case([&](arith::DivUIOp) {
            return binary<vm::DivI32UOp, vm::DivI64UOp>(body, loc, get(0),
                                                        get(1));
          })
          .Case([&](arith::RemSIOp) {
            return binary<vm::RemI32SOp, vm::RemI64SOp>(body, loc, get(0),
                                                        get(1));
          })
          .Case([&](arith::RemUIOp) {
            return binary<vm::RemI32UOp, vm::RemI64UOp>(body, loc, get(0),
                                                        get(1));
          })
          .Case([&](arith::MaxSIOp) {
            return binary<vm::MaxI32SOp, vm::MaxI64SOp>(body, loc, get(0),
                                                        get(1));
          })
          .Case([&](arith::MinSIOp) {
            return binary<vm::MinI32SOp, vm::MinI64SOp>(body, loc, get(0),
                                                        get(1));
          })
          .Case<arith::MaxUIOp, arith::MinUIOp>([&](Operation *minmax) {
            Value lhs = get(0), rhs = get(1);
            Value less = lessThan(body, loc, lhs, rhs, /*isSigned=*/false,
                                  /*orEqual=*/false);
            bool isMax = isa<arith::MaxUIOp>(minmax);
            return select(body, loc, less, isMax ? rhs : lhs,
                          isMax ? lhs : rhs);
          })
          .Case([&](arith::AndIOp) {
            return binary<vm::AndI32Op, vm::AndI64Op>(body, loc, get(0),
                                                      get(1));
          })
          .Case([&](arith::OrIOp) {
            return binary<vm::OrI32Op, vm::OrI64Op>(body, loc, get(0), get(1));
          })
          .Case([&](arith::XOrIOp) {
            return binary<vm::XorI32Op, vm::XorI64Op>(body, loc, get(0),
                                                      get(1));
          })
          .Case([&](arith::ShLIOp) {
            return binary<vm::ShlI32Op, vm::ShlI64Op>(body, loc, get(0),
                                                      get(1));
          })
          .Case([&](arith::ShRUIOp) {
            return binary<vm::ShrI32UOp, vm::ShrI64UOp>(body, loc, get(0),
                                                        get(1));
          })
          .Case([&](arith::ShRSIOp) {
            return binary<vm::ShrI32SOp, vm::ShrI64SOp>(body, loc, get(0),
                                                        get(1));
          })
          .Case([&](arith::CmpIOp cmp) {
            return compare(body, loc, cmp.getPredicate(), get(0), get(1));
          })
          .Case([&](arith::SelectOp) {
            return select(body, loc, get(0), get(1), get(2));
          })
          .Case([&](arith::TruncIOp trunc) -> Value {
            Value in = get(0);
            if (!in.getType().isInteger(64))
              return in; // i32 -> i1: compared as i32 later.
            return vm::TruncI64I32Op::create(body, loc, body.getI32Type(), in);
          })
          .Case<arith::ExtSIOp, arith::ExtUIOp>([&](Operation *ext) -> Value {
            Value in = get(0);
            if (!isWide(ext->getResult(0).getType()))
              return in; // i1 -> i32: already 0/1.
            if (isa<arith::ExtSIOp>(ext) &&
                !ext->getOperand(0).getType().isInteger(1))
              return vm::ExtI32I64SOp::create(body, loc, body.getI64Type(), in);
            return vm::ExtI32I64UOp::create(body, loc, body.getI64Type(), in);
          })
          .Default([](Operation *) { return Value(); });
  if (!result)
    return op->emitOpError("is not supported in the host program yet");
  mapping.map(op->getResult(0), result);
  return success();
}

LogicalResult convertHostCheck(cf::AssertOp check, OpBuilder &body,
                               IRMapping &mapping) {
  Location loc = check.getLoc();
  Region *region = body.getBlock()->getParent();
  Block *failed = new Block();
  Block *next = new Block();
  region->push_back(failed);
  region->push_back(next);
  vm::CondBranchOp::create(body, loc, mapping.lookup(check.getArg()),
                           ValueRange{}, ValueRange{}, next, failed);
  body.setInsertionPointToStart(failed);
  Value code =
      vm::ConstI32Op::create(body, loc,
                             body.getI32IntegerAttr(3)); // INVALID_ARGUMENT
  vm::FailOp::create(body, loc, code, check.getMsg());
  body.setInsertionPointToStart(next);
  return success();
}

} // namespace strata
