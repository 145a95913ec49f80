//===- ElementwiseOps.cpp - arithmetic, comparison, logic, math, Cast -----===//
//
// Every op here is one linalg.generic over the (numpy-broadcast) output
// shape, whose body applies the scalar arith/math op that matches ONNX's
// semantics for the element type (signed or unsigned integers, floats).
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

// Builds the result scalar from the operand scalars; `unsignedInts` tells
// integer ops to use their unsigned form.
using ScalarFn =
    std::function<Value(OpBuilder &, Location, ValueRange, bool unsignedInts)>;

// Checks that the inputs broadcast (numpy rules) to exactly `shape`. Shape
// inference does not check every legacy form (an opset-4 Add whose inputs
// do not broadcast, say), and a generic built from such shapes is invalid IR.
LogicalResult checkBroadcast(NodeContext &ctx, ArrayRef<Value> inputs,
                             ArrayRef<int64_t> shape) {
  auto describe = [](ArrayRef<int64_t> dims) {
    std::string text = "[";
    for (auto [i, d] : llvm::enumerate(dims))
      text += (i ? "," : "") +
              (ShapedType::isDynamic(d) ? std::string("?") : std::to_string(d));
    return text + "]";
  };
  SmallVector<int64_t> broadcast;
  for (Value input : inputs)
    broadcast = broadcastShapes(
        broadcast, cast<RankedTensorType>(input.getType()).getShape());
  // Every input dim is 1 or the broadcast one (trailing alignment).
  for (Value input : inputs) {
    ArrayRef<int64_t> dims = cast<RankedTensorType>(input.getType()).getShape();
    ArrayRef<int64_t> aligned =
        ArrayRef<int64_t>(broadcast).take_back(dims.size());
    for (auto [d, e] : llvm::zip(dims, aligned))
      if (d != 1 && d != e)
        return ctx.fail(
            "inputs of shapes that do not broadcast (" + describe(dims) +
            " against " + describe(broadcast) + ")" +
            // A dynamic dim meeting a static one: the size the model was
            // built for, which a pin gives.
            (ShapedType::isDynamic(d) ? ctx.getState().pinHint : ""));
  }
  if (ArrayRef<int64_t>(broadcast) != shape)
    return ctx.fail("the result shape " + describe(shape) +
                    " is not the broadcast of the inputs (" +
                    describe(broadcast) + ")");
  return success();
}

// The result type of an elementwise node: the inferred one, except that a
// dim its inputs have only at run time stays dynamic where the graph
// declares it static (an output declared [10] over a length computed from
// data); the declaration is checked where the graph returns it.
FailureOr<RankedTensorType> getElementwiseType(NodeContext &ctx,
                                               ArrayRef<Value> inputs) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type) || type->getRank() == 0)
    return type;
  SmallVector<int64_t> shape(type->getShape());
  for (Value input : inputs) {
    ArrayRef<int64_t> dims = cast<RankedTensorType>(input.getType()).getShape();
    if (dims.size() > shape.size())
      continue;
    for (auto [d, r] : llvm::zip(
             dims, MutableArrayRef<int64_t>(shape).take_back(dims.size())))
      if (ShapedType::isDynamic(d) && r != 1)
        r = ShapedType::kDynamic;
  }
  return RankedTensorType::get(shape, type->getElementType());
}

LogicalResult lowerElementwise(NodeContext &ctx, const ScalarFn &fn) {
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i)
    if (ctx.hasInput(i))
      inputs.push_back(ctx.getInput(i));
  FailureOr<RankedTensorType> type = getElementwiseType(ctx, inputs);
  if (failed(type))
    return failure();
  if (failed(checkBroadcast(ctx, inputs, type->getShape())))
    return failure();
  bool isUnsigned = ctx.isInputUnsigned(0);
  Value result =
      createElementwise(ctx.getBuilder(), ctx.getLoc(), inputs, *type,
                        [&](OpBuilder &b, Location loc, ValueRange args) {
                          return fn(b, loc, args, isUnsigned);
                        });
  return ctx.setOutput(0, result);
}

bool isFloat(Value v) { return isa<FloatType>(v.getType()); }

// The two small int64 constant inputs of a binary node, broadcast to the
// larger one's `shape` (sizes equal, or one a scalar), or nullopt.
struct SmallIntOperands {
  SmallVector<int64_t> lhs, rhs;
  ArrayRef<int64_t> shape;
};
std::optional<SmallIntOperands> getSmallIntOperands(NodeContext &ctx) {
  std::optional<DenseElementsAttr> a = ctx.getConstantInput(0);
  std::optional<DenseElementsAttr> b = ctx.getConstantInput(1);
  if (!a || !b || !a->getElementType().isInteger(64) ||
      !b->getElementType().isInteger(64))
    return std::nullopt;
  int64_t na = a->getNumElements(), nb = b->getNumElements();
  if (na > 64 || nb > 64 || (na != nb && na != 1 && nb != 1))
    return std::nullopt;
  auto va = llvm::to_vector(a->getValues<int64_t>());
  auto vb = llvm::to_vector(b->getValues<int64_t>());
  SmallIntOperands operands;
  for (int64_t i = 0; i < std::max(na, nb); ++i) {
    operands.lhs.push_back(va[na == 1 ? 0 : i]);
    operands.rhs.push_back(vb[nb == 1 ? 0 : i]);
  }
  operands.shape =
      cast<RankedTensorType>(na >= nb ? a->getType() : b->getType()).getShape();
  return operands;
}

// Folds integer arithmetic on small compile-time values (shape
// computations such as Shape -> Gather -> Add -> Div -> Slice), so that
// later nodes see constants. Returns false when it does not apply.
bool tryFoldIntBinary(NodeContext &ctx, LogicalResult &result,
                      llvm::function_ref<int64_t(int64_t, int64_t)> fn) {
  std::optional<SmallIntOperands> operands = getSmallIntOperands(ctx);
  if (!operands)
    return false;
  SmallVector<int64_t> values;
  for (auto [x, y] : llvm::zip(operands->lhs, operands->rhs))
    values.push_back(fn(x, y));
  FailureOr<RankedTensorType> type = ctx.getOutputTypeOr(
      0, RankedTensorType::get(operands->shape,
                               ctx.getBuilder().getIntegerType(64)));
  if (failed(type) ||
      type->getNumElements() != static_cast<int64_t>(values.size()))
    return false;
  result =
      ctx.setConstantOutput(0, DenseElementsAttr::get(*type, ArrayRef(values)));
  return true;
}

// Equal of two small int64 constants (a shape compared with -1, as torch
// exports `expand(n, -1)`): folded to a known i1 tensor.
bool tryFoldIntEqual(NodeContext &ctx, LogicalResult &result) {
  std::optional<SmallIntOperands> operands = getSmallIntOperands(ctx);
  if (!operands)
    return false;
  SmallVector<bool> values;
  for (auto [x, y] : llvm::zip(operands->lhs, operands->rhs))
    values.push_back(x == y);
  FailureOr<RankedTensorType> type = ctx.getOutputTypeOr(
      0, RankedTensorType::get(operands->shape, ctx.getBuilder().getI1Type()));
  if (failed(type) ||
      type->getNumElements() != static_cast<int64_t>(values.size()) ||
      !type->getElementType().isInteger(1))
    return false;
  result = ctx.setConstantOutput(0, DenseElementsAttr::get(*type, values));
  return true;
}

// Logic on small bool constants (the conditions of expanded functions,
// e.g. Attention's grouped-query test: Not(Equal(heads, kv_heads))); one
// operand for Not. Returns false when it does not apply.
bool tryFoldBoolLogic(NodeContext &ctx, LogicalResult &result,
                      llvm::function_ref<bool(bool, bool)> fn) {
  unsigned arity = ctx.getNumInputs();
  SmallVector<SmallVector<bool>> operands;
  SmallVector<int64_t> shape;
  int64_t count = 1;
  for (unsigned i = 0; i < arity; ++i) {
    std::optional<DenseElementsAttr> c = ctx.getConstantInput(i);
    if (!c || !c->getElementType().isInteger(1) || c->getNumElements() > 64)
      return false;
    operands.push_back(llvm::to_vector(c->getValues<bool>()));
    if (c->getNumElements() >= count) {
      count = c->getNumElements();
      shape = llvm::to_vector(cast<RankedTensorType>(c->getType()).getShape());
    }
  }
  if (llvm::any_of(operands, [&](const SmallVector<bool> &v) {
        return static_cast<int64_t>(v.size()) != count && v.size() != 1;
      }))
    return false;
  SmallVector<bool> values;
  for (int64_t i = 0; i < count; ++i) {
    bool x = operands[0][operands[0].size() == 1 ? 0 : i];
    bool y = arity > 1 ? operands[1][operands[1].size() == 1 ? 0 : i] : false;
    values.push_back(fn(x, y));
  }
  FailureOr<RankedTensorType> type = ctx.getOutputTypeOr(
      0, RankedTensorType::get(shape, ctx.getBuilder().getI1Type()));
  if (failed(type) || type->getNumElements() != count ||
      !type->getElementType().isInteger(1))
    return false;
  result = ctx.setConstantOutput(0, DenseElementsAttr::get(*type, values));
  return true;
}

template <typename IntOp> OpLowering logic(bool (*fold)(bool, bool)) {
  return [fold](NodeContext &ctx) {
    LogicalResult folded = success();
    if (tryFoldBoolLogic(ctx, folded, fold))
      return folded;
    return lowerElementwise(
        ctx, [](OpBuilder &b, Location loc, ValueRange a, bool) -> Value {
          return IntOp::create(b, loc, a[0], a[1]);
        });
  };
}

// Where of small constants (the other half of that pattern).
bool tryFoldWhere(NodeContext &ctx, LogicalResult &result) {
  SmallVector<DenseElementsAttr> inputs;
  int64_t count = 1;
  for (unsigned i = 0; i < 3; ++i) {
    std::optional<DenseElementsAttr> c = ctx.getConstantInput(i);
    if (!c || c->getNumElements() > 64)
      return false;
    inputs.push_back(*c);
    count = std::max(count, c->getNumElements());
  }
  if (llvm::any_of(inputs,
                   [&](DenseElementsAttr c) {
                     return c.getNumElements() != count &&
                            c.getNumElements() != 1;
                   }) ||
      !inputs[0].getElementType().isInteger(1) ||
      inputs[1].getElementType() != inputs[2].getElementType())
    return false;
  auto cond = llvm::to_vector(inputs[0].getValues<bool>());
  auto x = llvm::to_vector(inputs[1].getValues<Attribute>());
  auto y = llvm::to_vector(inputs[2].getValues<Attribute>());
  auto at = [&](auto &values, int64_t i) -> auto & {
    return values[values.size() == 1 ? 0 : i];
  };
  SmallVector<Attribute> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(at(cond, i) ? at(x, i) : at(y, i));
  DenseElementsAttr widest = *llvm::find_if(
      inputs, [&](DenseElementsAttr c) { return c.getNumElements() == count; });
  FailureOr<RankedTensorType> type = ctx.getOutputTypeOr(
      0,
      RankedTensorType::get(cast<RankedTensorType>(widest.getType()).getShape(),
                            inputs[1].getElementType()));
  if (failed(type) || type->getNumElements() != count)
    return false;
  result = ctx.setConstantOutput(0, DenseElementsAttr::get(*type, values));
  return true;
}

template <typename FloatOp, typename IntOp> OpLowering binary() {
  return [](NodeContext &ctx) {
    return lowerElementwise(
        ctx, [](OpBuilder &b, Location loc, ValueRange a, bool) -> Value {
          if (isFloat(a[0]))
            return FloatOp::create(b, loc, a[0], a[1]);
          return IntOp::create(b, loc, a[0], a[1]);
        });
  };
}

template <typename FloatOp, typename SignedOp, typename UnsignedOp>
OpLowering signedBinary() {
  return [](NodeContext &ctx) {
    return lowerElementwise(
        ctx, [](OpBuilder &b, Location loc, ValueRange a, bool isUnsigned) {
          Value acc = a[0];
          for (Value v : a.drop_front()) {
            if (isFloat(acc))
              acc = FloatOp::create(b, loc, acc, v);
            else if (isUnsigned)
              acc = UnsignedOp::create(b, loc, acc, v);
            else
              acc = SignedOp::create(b, loc, acc, v);
          }
          return acc;
        });
  };
}

template <typename FloatOp> OpLowering unaryFloat() {
  return [](NodeContext &ctx) {
    return lowerElementwise(
        ctx, [](OpBuilder &b, Location loc, ValueRange a, bool) -> Value {
          return FloatOp::create(b, loc, a[0]);
        });
  };
}

OpLowering compare(arith::CmpFPredicate floatPred,
                   arith::CmpIPredicate signedPred,
                   arith::CmpIPredicate unsignedPred) {
  return [=](NodeContext &ctx) {
    return lowerElementwise(
        ctx,
        [=](OpBuilder &b, Location loc, ValueRange a,
            bool isUnsigned) -> Value {
          if (isFloat(a[0]))
            return arith::CmpFOp::create(b, loc, floatPred, a[0], a[1]);
          return arith::CmpIOp::create(
              b, loc, isUnsigned ? unsignedPred : signedPred, a[0], a[1]);
        });
  };
}

Value createPow(OpBuilder &b, Location loc, Value base, Value exponent,
                bool isUnsigned) {
  Type type = base.getType();
  if (isFloat(base)) {
    Value e = createScalarCast(b, loc, exponent, type, false, false);
    return math::PowFOp::create(b, loc, base, e);
  }
  if (!isFloat(exponent)) {
    Value e = createScalarCast(b, loc, exponent, type, isUnsigned, isUnsigned);
    return math::IPowIOp::create(b, loc, base, e);
  }
  Value fb =
      createScalarCast(b, loc, base, exponent.getType(), isUnsigned, false);
  Value r = math::PowFOp::create(b, loc, fb, exponent);
  return createScalarCast(b, loc, r, type, false, isUnsigned);
}

// Python-style integer modulo: the result takes the divisor's sign.
Value createIntMod(OpBuilder &b, Location loc, Value x, Value y,
                   bool isUnsigned) {
  if (isUnsigned)
    return arith::RemUIOp::create(b, loc, x, y);
  Value rem = arith::RemSIOp::create(b, loc, x, y);
  Value zero = createScalar(b, loc, x.getType(), 0);
  Value remNonZero =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, rem, zero);
  Value remNeg =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, rem, zero);
  Value yNeg =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, y, zero);
  Value signsDiffer = arith::XOrIOp::create(b, loc, remNeg, yNeg);
  Value fix = arith::AndIOp::create(b, loc, remNonZero, signsDiffer);
  Value adjusted = arith::AddIOp::create(b, loc, rem, y);
  return arith::SelectOp::create(b, loc, fix, adjusted, rem);
}

LogicalResult lowerMod(NodeContext &ctx) {
  bool fmod = ctx.getIntAttr("fmod", 0) != 0;
  // Shape computations (a window's padding: (size - n % w) % w) fold.
  LogicalResult folded = success();
  if (tryFoldIntBinary(
          ctx, folded,
          fmod
          ? [](int64_t x, int64_t y) -> int64_t { return y == 0 ? 0 : x % y; }
          : [](int64_t x, int64_t y) -> int64_t {
              if (y == 0)
                return 0;
              int64_t r = x % y;
              return r != 0 && (r < 0) != (y < 0) ? r + y : r;
            }))
    return folded;
  return lowerElementwise(
      ctx,
      [=](OpBuilder &b, Location loc, ValueRange a, bool isUnsigned) -> Value {
        if (isFloat(a[0])) {
          Value rem = arith::RemFOp::create(b, loc, a[0], a[1]);
          if (fmod)
            return rem;
          // Floored modulo for floats (fmod=0 is only defined for ints in
          // the spec, but keep numpy's meaning).
          Value zero = createScalar(b, loc, rem.getType(), 0);
          Value remNonZero = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::UNE, rem, zero);
          Value remNeg = arith::CmpFOp::create(
              b, loc, arith::CmpFPredicate::OLT, rem, zero);
          Value yNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT,
                                             a[1], zero);
          Value differ = arith::XOrIOp::create(b, loc, remNeg, yNeg);
          Value fix = arith::AndIOp::create(b, loc, remNonZero, differ);
          Value adjusted = arith::AddFOp::create(b, loc, rem, a[1]);
          return arith::SelectOp::create(b, loc, fix, adjusted, rem);
        }
        if (fmod) {
          if (isUnsigned)
            return arith::RemUIOp::create(b, loc, a[0], a[1]);
          return arith::RemSIOp::create(b, loc, a[0], a[1]);
        }
        return createIntMod(b, loc, a[0], a[1], isUnsigned);
      });
}

LogicalResult lowerCast(NodeContext &ctx, unsigned targetInput) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  bool fromUnsigned = ctx.isInputUnsigned(0);
  bool toUnsigned = ctx.isOutputUnsigned(0);
  // An integer shape computation stays known through a cast between
  // integer types (torch exports `int(x.size(1) / g)` as Div, Cast, Cast).
  if (std::optional<DenseElementsAttr> known = ctx.getConstantInput(0);
      known && known->getNumElements() <= 1024 &&
      isa<IntegerType>(known->getElementType()) &&
      isa<IntegerType>(type->getElementType())) {
    unsigned width = type->getElementType().getIntOrFloatBitWidth();
    // As the run-time cast (createScalarCast): to bool is "not zero", and
    // a bool extends as 0 or 1.
    bool zeroExtend = fromUnsigned || known->getElementType().isInteger(1);
    SmallVector<APInt> values;
    for (const APInt &v : known->getValues<APInt>()) {
      if (width == 1)
        values.push_back(APInt(1, v.isZero() ? 0 : 1));
      else
        values.push_back(zeroExtend ? v.zextOrTrunc(width)
                                    : v.sextOrTrunc(width));
    }
    return ctx.setConstantOutput(
        0, DenseElementsAttr::get(
               RankedTensorType::get(
                   cast<RankedTensorType>(known->getType()).getShape(),
                   type->getElementType()),
               values));
  }
  (void)targetInput;
  return ctx.setOutput(0, createCast(ctx.getBuilder(), ctx.getLoc(),
                                     ctx.getInput(0), type->getElementType(),
                                     fromUnsigned, toUnsigned));
}

Value createSign(OpBuilder &b, Location loc, Value x) {
  Type type = x.getType();
  Value zero = createScalar(b, loc, type, 0);
  Value one = createScalar(b, loc, type, 1);
  Value minusOne = createScalar(b, loc, type, -1);
  Value pos, neg;
  if (isFloat(x)) {
    pos = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, zero);
    neg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
  } else {
    pos = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x, zero);
    neg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, x, zero);
  }
  Value r = arith::SelectOp::create(b, loc, neg, minusOne, zero);
  return arith::SelectOp::create(b, loc, pos, one, r);
}

// Tries the integer folder before the general lowering.
OpLowering withIntFold(OpLowering lowering, int64_t (*fn)(int64_t, int64_t)) {
  return [lowering, fn](NodeContext &ctx) {
    LogicalResult result = success();
    if (tryFoldIntBinary(ctx, result, fn))
      return result;
    return lowering(ctx);
  };
}

} // namespace

void addElementwiseLowerings(LoweringTable &t) {
  t["Add"] = withIntFold(binary<arith::AddFOp, arith::AddIOp>(),
                         [](int64_t x, int64_t y) { return x + y; });
  t["Sub"] = withIntFold(binary<arith::SubFOp, arith::SubIOp>(),
                         [](int64_t x, int64_t y) { return x - y; });
  t["Mul"] = withIntFold(binary<arith::MulFOp, arith::MulIOp>(),
                         [](int64_t x, int64_t y) { return x * y; });
  t["Div"] = withIntFold(
      signedBinary<arith::DivFOp, arith::DivSIOp, arith::DivUIOp>(),
      [](int64_t x, int64_t y) { return y == 0 ? int64_t(0) : x / y; });
  t["Max"] = signedBinary<arith::MaximumFOp, arith::MaxSIOp, arith::MaxUIOp>();
  t["Min"] = signedBinary<arith::MinimumFOp, arith::MinSIOp, arith::MinUIOp>();
  t["Sum"] = signedBinary<arith::AddFOp, arith::AddIOp, arith::AddIOp>();
  t["Mean"] = [](NodeContext &ctx) {
    return lowerElementwise(
        ctx, [](OpBuilder &b, Location loc, ValueRange a, bool) -> Value {
          Value acc = a[0];
          for (Value v : a.drop_front())
            acc = arith::AddFOp::create(b, loc, acc, v);
          Value n = createScalar(b, loc, acc.getType(), a.size());
          return arith::DivFOp::create(b, loc, acc, n);
        });
  };
  t["Pow"] = [](NodeContext &ctx) {
    return lowerElementwise(
        ctx, [](OpBuilder &b, Location loc, ValueRange a, bool isUnsigned) {
          return createPow(b, loc, a[0], a[1], isUnsigned);
        });
  };
  t["Mod"] = lowerMod;
  t["BitShift"] = [](NodeContext &ctx) {
    bool left = ctx.getStringAttr("direction", "") == "LEFT";
    return lowerElementwise(
        ctx, [=](OpBuilder &b, Location loc, ValueRange a, bool) -> Value {
          if (left)
            return arith::ShLIOp::create(b, loc, a[0], a[1]);
          return arith::ShRUIOp::create(b, loc, a[0], a[1]);
        });
  };
  t["And"] = logic<arith::AndIOp>([](bool x, bool y) { return x && y; });
  t["Or"] = logic<arith::OrIOp>([](bool x, bool y) { return x || y; });
  t["Xor"] = logic<arith::XOrIOp>([](bool x, bool y) { return x != y; });
  t["BitwiseAnd"] = t["And"];
  t["BitwiseOr"] = t["Or"];
  t["BitwiseXor"] = t["Xor"];
  t["Not"] = [](NodeContext &ctx) {
    LogicalResult folded = success();
    if (tryFoldBoolLogic(ctx, folded, [](bool x, bool) { return !x; }))
      return folded;
    return lowerElementwise(
        ctx, [](OpBuilder &b, Location loc, ValueRange a, bool) -> Value {
          Value ones = createScalar(b, loc, a[0].getType(), -1);
          return arith::XOrIOp::create(b, loc, a[0], ones);
        });
  };
  t["BitwiseNot"] = t["Not"];
  // BitCast: the same bits read as another type of the width (bool is a
  // byte).
  t["BitCast"] = [](NodeContext &ctx) -> LogicalResult {
    FailureOr<RankedTensorType> type = ctx.getOutputType(0);
    if (failed(type))
      return failure();
    Type from = ctx.getInputType(0).getElementType();
    Type to = type->getElementType();
    auto width = [](Type t) {
      return t.isInteger(1) ? 8u : t.getIntOrFloatBitWidth();
    };
    if (!from.isIntOrFloat() || !to.isIntOrFloat() || width(from) != width(to))
      return ctx.fail("BitCast needs element types of one bit width");
    Value y = createElementwise(
        ctx.getBuilder(), ctx.getLoc(), {ctx.getInput(0)}, *type,
        [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
          if (from == to)
            return a[0];
          if (from.isInteger(1))
            return arith::BitcastOp::create(
                b, loc, to,
                arith::ExtUIOp::create(b, loc, b.getI8Type(), a[0]));
          Value bits = a[0];
          if (isa<FloatType>(from))
            bits = arith::BitcastOp::create(
                b, loc, b.getIntegerType(width(from)), bits);
          if (to.isInteger(1))
            return arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::ne, bits,
                createScalar(b, loc, bits.getType(), 0));
          return arith::BitcastOp::create(b, loc, to, bits);
        });
    return ctx.setOutput(0, y);
  };
  t["Equal"] = [](NodeContext &ctx) {
    LogicalResult folded = success();
    if (tryFoldIntEqual(ctx, folded))
      return folded;
    return compare(arith::CmpFPredicate::OEQ, arith::CmpIPredicate::eq,
                   arith::CmpIPredicate::eq)(ctx);
  };
  t["Less"] = compare(arith::CmpFPredicate::OLT, arith::CmpIPredicate::slt,
                      arith::CmpIPredicate::ult);
  t["LessOrEqual"] =
      compare(arith::CmpFPredicate::OLE, arith::CmpIPredicate::sle,
              arith::CmpIPredicate::ule);
  t["Greater"] = compare(arith::CmpFPredicate::OGT, arith::CmpIPredicate::sgt,
                         arith::CmpIPredicate::ugt);
  t["GreaterOrEqual"] =
      compare(arith::CmpFPredicate::OGE, arith::CmpIPredicate::sge,
              arith::CmpIPredicate::uge);
  t["Where"] = [](NodeContext &ctx) {
    LogicalResult folded = success();
    if (tryFoldWhere(ctx, folded))
      return folded;
    return lowerElementwise(
        ctx, [](OpBuilder &b, Location loc, ValueRange a, bool) -> Value {
          return arith::SelectOp::create(b, loc, a[0], a[1], a[2]);
        });
  };
  t["Cast"] = [](NodeContext &ctx) { return lowerCast(ctx, 0); };
  t["CastLike"] = [](NodeContext &ctx) { return lowerCast(ctx, 1); };
  t["Identity"] = [](NodeContext &ctx) {
    // A known value stays known (a loop body's condition passed through).
    if (std::optional<DenseElementsAttr> known = ctx.getConstantInput(0))
      return ctx.setConstantOutput(0, *known);
    return ctx.setOutput(0, ctx.getInput(0));
  };

  t["Abs"] = [](NodeContext &ctx) {
    return lowerElementwise(
        ctx,
        [](OpBuilder &b, Location loc, ValueRange a, bool isUnsigned) -> Value {
          if (isFloat(a[0]))
            return math::AbsFOp::create(b, loc, a[0]);
          if (isUnsigned)
            return a[0];
          return math::AbsIOp::create(b, loc, a[0]);
        });
  };
  t["Neg"] = [](NodeContext &ctx) {
    // Shape computations negate small integer constants (e.g. the axis in
    // LayerNormalization's expansion): fold them so later nodes see them.
    if (std::optional<DenseElementsAttr> c = ctx.getConstantInput(0);
        c && c->getElementType().isInteger(64) && c->getNumElements() <= 64) {
      SmallVector<int64_t> values;
      for (int64_t v : c->getValues<int64_t>())
        values.push_back(-v);
      FailureOr<RankedTensorType> type =
          ctx.getOutputTypeOr(0, cast<RankedTensorType>(c->getType()));
      if (failed(type))
        return failure();
      return ctx.setConstantOutput(
          0, DenseElementsAttr::get(*type, ArrayRef(values)));
    }
    return lowerElementwise(
        ctx, [](OpBuilder &b, Location loc, ValueRange a, bool) -> Value {
          if (isFloat(a[0]))
            return arith::NegFOp::create(b, loc, a[0]);
          Value zero = createScalar(b, loc, a[0].getType(), 0);
          return arith::SubIOp::create(b, loc, zero, a[0]);
        });
  };
  t["Reciprocal"] = [](NodeContext &ctx) {
    return lowerElementwise(
        ctx, [](OpBuilder &b, Location loc, ValueRange a, bool) -> Value {
          Value one = createScalar(b, loc, a[0].getType(), 1);
          return arith::DivFOp::create(b, loc, one, a[0]);
        });
  };
  t["Sign"] = [](NodeContext &ctx) {
    return lowerElementwise(ctx, [](OpBuilder &b, Location loc, ValueRange a,
                                    bool) { return createSign(b, loc, a[0]); });
  };
  t["IsNaN"] = [](NodeContext &ctx) {
    return lowerElementwise(
        ctx, [](OpBuilder &b, Location loc, ValueRange a, bool) -> Value {
          return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNO, a[0],
                                       a[0]);
        });
  };
  t["IsInf"] = [](NodeContext &ctx) {
    bool positive = ctx.getIntAttr("detect_positive", 1) != 0;
    bool negative = ctx.getIntAttr("detect_negative", 1) != 0;
    return lowerElementwise(
        ctx, [=](OpBuilder &b, Location loc, ValueRange a, bool) -> Value {
          Type type = a[0].getType();
          Value inf = createScalar(b, loc, type, INFINITY);
          Value ninf = createScalar(b, loc, type, -INFINITY);
          Value isPos = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                              a[0], inf);
          Value isNeg = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                              a[0], ninf);
          Value no = createScalar(b, loc, b.getI1Type(), 0);
          Value p = positive ? isPos : no;
          Value n = negative ? isNeg : no;
          return arith::OrIOp::create(b, loc, p, n);
        });
  };
  t["Sqrt"] = unaryFloat<math::SqrtOp>();
  t["Exp"] = unaryFloat<math::ExpOp>();
  t["Log"] = unaryFloat<math::LogOp>();
  t["Floor"] = unaryFloat<math::FloorOp>();
  t["Ceil"] = unaryFloat<math::CeilOp>();
  t["Round"] = unaryFloat<math::RoundEvenOp>();
  t["Sin"] = unaryFloat<math::SinOp>();
  t["Cos"] = unaryFloat<math::CosOp>();
  t["Tan"] = unaryFloat<math::TanOp>();
  t["Asin"] = unaryFloat<math::AsinOp>();
  t["Acos"] = unaryFloat<math::AcosOp>();
  t["Atan"] = unaryFloat<math::AtanOp>();
  t["Sinh"] = unaryFloat<math::SinhOp>();
  t["Cosh"] = unaryFloat<math::CoshOp>();
  t["Asinh"] = unaryFloat<math::AsinhOp>();
  t["Acosh"] = unaryFloat<math::AcoshOp>();
  t["Atanh"] = unaryFloat<math::AtanhOp>();
  t["Erf"] = unaryFloat<math::ErfOp>();
  t["Tanh"] = unaryFloat<math::TanhOp>();
}

} // namespace strata::onnx_importer
