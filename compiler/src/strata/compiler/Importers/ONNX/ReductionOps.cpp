//===- ReductionOps.cpp - Reduce*, Softmax, LogSoftmax, ArgMax/Min, Det ---===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

// The lowest (or highest) value of `et` as createScalar takes it: -inf or
// inf for floats, the integer range's end (unsigned: 0, or -1 for all ones).
double getExtremeValue(Type et, bool isUnsigned, bool highest) {
  if (isa<FloatType>(et))
    return highest ? INFINITY : -INFINITY;
  if (isUnsigned)
    return highest ? -1.0 : 0.0;
  double half = std::ldexp(1.0, et.getIntOrFloatBitWidth() - 1);
  return highest ? half - 1 : -half;
}

enum class Reduce {
  Sum,
  Mean,
  Max,
  Min,
  Prod,
  L1,
  L2,
  LogSum,
  LogSumExp,
  SumSquare
};

Value add(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::MulFOp::create(b, loc, x, y);
  return arith::MulIOp::create(b, loc, x, y);
}

// Axes that arrive at run time, recovered from the static result shape:
// with keepdims, the dims that become 1 (a dim already 1 reduces to
// itself, so whether it is named does not matter); without, every set of
// dims whose removal leaves the result shape (several when dims of one
// size could be either: the lowering then picks at run time).
FailureOr<SmallVector<SmallVector<int64_t>>>
getAxesFromShapes(NodeContext &ctx, RankedTensorType inputType,
                  RankedTensorType resultType) {
  ArrayRef<int64_t> in = inputType.getShape(), out = resultType.getShape();
  int64_t rank = in.size();
  SmallVector<SmallVector<int64_t>> candidates;
  if (ctx.getIntAttr("keepdims", 1) != 0) {
    if (static_cast<int64_t>(out.size()) != rank)
      return ctx.fail("result rank differs from the input's with keepdims");
    SmallVector<int64_t> axes;
    for (int64_t d = 0; d < rank; ++d) {
      if (out[d] == in[d])
        continue;
      if (out[d] != 1)
        return ctx.fail("result shape does not match a reduction");
      axes.push_back(d);
    }
    candidates.push_back(axes);
    return candidates;
  }
  int64_t removed = rank - static_cast<int64_t>(out.size());
  if (removed < 0 || rank > 16)
    return ctx.fail("result shape does not match a reduction");
  for (uint32_t mask = 0; mask < (1u << rank); ++mask) {
    if (llvm::popcount(mask) != removed)
      continue;
    SmallVector<int64_t> kept, axes;
    for (int64_t d = 0; d < rank; ++d) {
      if (mask & (1u << d))
        axes.push_back(d);
      else
        kept.push_back(in[d]);
    }
    if (ArrayRef<int64_t>(kept) == out)
      candidates.push_back(axes);
  }
  if (candidates.empty())
    return ctx.fail("result shape does not match a reduction");
  // Each candidate is a reduction of its own at run time.
  if (candidates.size() > 8)
    return ctx.fail("axes known only at run time and the result shape "
                    "leaves " +
                    Twine(candidates.size()) + " ways to reduce");
  return candidates;
}

// The rank-0 i64 bit mask of the dims named by a run-time axes tensor
// (negative axes count from the end).
Value createAxesMask(OpBuilder &b, Location loc, Value axes, int64_t rank) {
  auto axesType = cast<RankedTensorType>(axes.getType());
  Type i64 = b.getI64Type();
  Value bits = createElementwise(
      b, loc, {axes}, RankedTensorType::get(axesType.getShape(), i64),
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value axis = createScalarCast(nb, nl, a[0], i64, false, false);
        Value zero = createScalar(nb, nl, i64, 0);
        Value wrapped = arith::AddIOp::create(nb, nl, axis,
                                              createScalar(nb, nl, i64, rank));
        Value isNegative = arith::CmpIOp::create(
            nb, nl, arith::CmpIPredicate::slt, axis, zero);
        Value d = arith::SelectOp::create(nb, nl, isNegative, wrapped, axis);
        return arith::ShLIOp::create(nb, nl, createScalar(nb, nl, i64, 1), d);
      });
  SmallVector<int64_t> all;
  for (int64_t d = 0; d < axesType.getRank(); ++d)
    all.push_back(d);
  return createReduction(b, loc, bits, all, /*keepDims=*/false,
                         createScalar(b, loc, i64, 0),
                         [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                           return arith::OrIOp::create(nb, nl, a[0], a[1]);
                         });
}

// The reduced axes of a Reduce* node: the `axes` input (opset >= 13 for
// ReduceSum, >= 18 for the others) or attribute; all axes when empty unless
// noop_with_empty_axes.
// Several candidates when the axes arrive at run time and the shapes leave
// a choice.
FailureOr<SmallVector<SmallVector<int64_t>>>
getReduceAxes(NodeContext &ctx, RankedTensorType inputType,
              RankedTensorType resultType, bool &noop) {
  int64_t rank = inputType.getRank();
  SmallVector<int64_t> axes = ctx.getIntsAttr("axes");
  if (ctx.hasInput(1) && !ctx.getConstantInput(1)) {
    noop = false;
    if (!inputType.hasStaticShape())
      return ctx.fail("with dynamic dims the axes must be known at compile "
                      "time" +
                      ctx.getState().pinHint);
    return getAxesFromShapes(ctx, inputType, resultType);
  }
  if (ctx.hasInput(1)) {
    auto a = ctx.getConstantInts(1);
    if (failed(a))
      return failure();
    axes = *a;
  }
  noop = false;
  if (axes.empty()) {
    if (ctx.getIntAttr("noop_with_empty_axes", 0)) {
      noop = true;
      return SmallVector<SmallVector<int64_t>>{axes};
    }
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  for (int64_t &a : axes) {
    FailureOr<int64_t> axis = ctx.getAxis(a, rank);
    if (failed(axis))
      return failure();
    a = *axis;
  }
  return SmallVector<SmallVector<int64_t>>{axes};
}

LogicalResult lowerReduce(NodeContext &ctx, Reduce kind) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0);
  Type et = xt.getElementType();
  bool isFloat = isa<FloatType>(et);
  // Bools reduce as unsigned bits (max: any, min: all).
  bool isUnsigned = ctx.isInputUnsigned(0) || et.isInteger(1);
  bool noop;
  auto candidates = getReduceAxes(ctx, xt, *type, noop);
  if (failed(candidates))
    return failure();
  if (type->hasStaticShape() && type->getNumElements() == 0)
    return ctx.setOutput(0, createZeroElements(b, loc, *type));
  Value x = ctx.getInput(0);
  // Elementwise prologue.
  if (kind == Reduce::L1 || kind == Reduce::L2 || kind == Reduce::SumSquare ||
      kind == Reduce::LogSumExp) {
    x = createElementwise(
        b, loc, {x}, xt,
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          if (kind == Reduce::L1)
            return isFloat ? math::AbsFOp::create(nb, nl, a[0]).getResult()
                           : math::AbsIOp::create(nb, nl, a[0]).getResult();
          if (kind == Reduce::LogSumExp)
            return math::ExpOp::create(nb, nl, a[0]);
          return mul(nb, nl, a[0], a[0]);
        });
  }
  if (noop)
    return ctx.setOutput(0, x);
  bool keepDims = ctx.getIntAttr("keepdims", 1) != 0;
  double initValue = 0;
  if (kind == Reduce::Max)
    initValue = getExtremeValue(et, isUnsigned, /*highest=*/false);
  if (kind == Reduce::Min)
    initValue = getExtremeValue(et, isUnsigned, /*highest=*/true);
  if (kind == Reduce::Prod)
    initValue = 1;
  auto reduceOver = [&](ArrayRef<int64_t> axes) -> Value {
    Value init = createScalar(b, loc, et, initValue);
    // Over no elements each result is the initial value (a reduction
    // generic with an empty reduction loop would read nothing).
    Value r =
        xt.hasStaticShape() && xt.getNumElements() == 0
            ? createFilled(b, loc, RankedTensorType::get(type->getShape(), et),
                           init)
            : createReduction(
                  b, loc, x, axes, keepDims, init,
                  [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                    switch (kind) {
                    case Reduce::Max:
                      if (isFloat)
                        return arith::MaximumFOp::create(nb, nl, a[0], a[1]);
                      return isUnsigned
                                 ? arith::MaxUIOp::create(nb, nl, a[0], a[1])
                                       .getResult()
                                 : arith::MaxSIOp::create(nb, nl, a[0], a[1])
                                       .getResult();
                    case Reduce::Min:
                      if (isFloat)
                        return arith::MinimumFOp::create(nb, nl, a[0], a[1]);
                      return isUnsigned
                                 ? arith::MinUIOp::create(nb, nl, a[0], a[1])
                                       .getResult()
                                 : arith::MinSIOp::create(nb, nl, a[0], a[1])
                                       .getResult();
                    case Reduce::Prod:
                      return mul(nb, nl, a[0], a[1]);
                    default:
                      return add(nb, nl, a[0], a[1]);
                    }
                  });
    // The count of reduced elements, read at run time over dynamic dims.
    SmallVector<OpFoldResult> reducedSizes;
    for (int64_t axis : axes)
      reducedSizes.push_back(getDimSize(b, loc, x, axis));
    OpFoldResult count = getSizeProduct(b, loc, reducedSizes);
    if (kind == Reduce::Mean || kind == Reduce::L2 || kind == Reduce::LogSum ||
        kind == Reduce::LogSumExp) {
      r = createElementwise(
          b, loc, {r}, *type,
          [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            if (kind == Reduce::Mean) {
              Value n = createSizeScalar(nb, nl, count, et);
              if (isFloat)
                return arith::DivFOp::create(nb, nl, a[0], n);
              return arith::DivSIOp::create(nb, nl, a[0], n);
            }
            if (kind == Reduce::L2) {
              if (isFloat)
                return math::SqrtOp::create(nb, nl, a[0]);
              Value f = createScalarCast(nb, nl, a[0], nb.getF64Type(),
                                         isUnsigned, false);
              return createScalarCast(nb, nl, math::SqrtOp::create(nb, nl, f),
                                      et, false, isUnsigned);
            }
            return math::LogOp::create(nb, nl, a[0]);
          });
    }
    return r;
  };
  Value r = reduceOver(candidates->back());
  if (candidates->size() > 1) {
    // The shapes leave a choice: reduce each way, keep the one the run-time
    // axes name.
    Value mask = createAxesMask(b, loc, ctx.getInput(1), xt.getRank());
    for (ArrayRef<int64_t> axes : ArrayRef(*candidates).drop_back()) {
      int64_t axesMask = 0;
      for (int64_t d : axes)
        axesMask |= int64_t(1) << d;
      r = createElementwise(
          b, loc, {mask, reduceOver(axes), r}, *type,
          [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
            Value named = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::eq, a[0],
                createScalar(nb, nl, nb.getI64Type(), axesMask));
            return arith::SelectOp::create(nb, nl, named, a[1], a[2]);
          });
    }
  }
  return ctx.setOutput(0, r);
}

// The node's `axis` attribute normalized to [0, rank), or a diagnostic.
static FailureOr<int64_t> getAxisAttr(NodeContext &ctx, int64_t defaultAxis,
                                      int64_t rank) {
  int64_t axis = ctx.getIntAttr("axis", defaultAxis);
  if (axis < -rank || axis >= rank) {
    (void)ctx.fail("axis " + llvm::Twine(axis) + " is out of range for rank " +
                   llvm::Twine(rank));
    return failure();
  }
  return normalizeAxis(axis, rank);
}

LogicalResult lowerSoftmax(NodeContext &ctx, bool logSoftmax) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  int64_t rank = type->getRank();
  Type et = type->getElementType();
  // Subgraph types come from non-strict inference.
  if (ctx.getInputType(0).getShape() != type->getShape())
    return ctx.fail("the result's shape differs from the input's");
  FailureOr<int64_t> axisOr =
      getAxisAttr(ctx, /*defaultAxis=*/ctx.getOpset() < 13 ? 1 : -1, rank);
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  SmallVector<int64_t> axes{axis};
  if (ctx.getOpset() < 13)
    for (int64_t i = axis + 1; i < rank; ++i)
      axes.push_back(i);
  Value x = ctx.getInput(0);
  Value max = createReduction(
      b, loc, x, axes, true, createScalar(b, loc, et, -INFINITY),
      [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::MaximumFOp::create(nb, nl, a[0], a[1]).getResult();
      });
  Value shifted = createElementwise(
      b, loc, {x, max}, *type, [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::SubFOp::create(nb, nl, a[0], a[1]).getResult();
      });
  Value exp = createElementwise(
      b, loc, {shifted}, *type, [](OpBuilder &nb, Location nl, ValueRange a) {
        return math::ExpOp::create(nb, nl, a[0]).getResult();
      });
  Value sum = createReduction(
      b, loc, exp, axes, true, createScalar(b, loc, et, 0),
      [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::AddFOp::create(nb, nl, a[0], a[1]).getResult();
      });
  Value result;
  if (logSoftmax)
    result = createElementwise(b, loc, {shifted, sum}, *type,
                               [](OpBuilder &nb, Location nl, ValueRange a) {
                                 return arith::SubFOp::create(
                                            nb, nl, a[0],
                                            math::LogOp::create(nb, nl, a[1]))
                                     .getResult();
                               });
  else
    result = createElementwise(
        b, loc, {exp, sum}, *type,
        [](OpBuilder &nb, Location nl, ValueRange a) {
          return arith::DivFOp::create(nb, nl, a[0], a[1]).getResult();
        });
  return ctx.setOutput(0, result);
}

// ArgMax/ArgMin over dynamic dims in two single-result passes (the extreme,
// then the first or last index holding it): a dispatch over dynamic shapes
// has no room for the one-pass form's second, internal result. `x` is
// reduced along `axis` into [dims without it] of i64.
Value createTwoPassArgExtremum(OpBuilder &b, Location loc, Value x,
                               int64_t axis, bool isMax, bool selectLast,
                               bool isUnsigned) {
  auto xt = cast<RankedTensorType>(x.getType());
  int64_t rank = xt.getRank();
  Type et = xt.getElementType();
  bool isFloat = isa<FloatType>(et);
  double lowest = getExtremeValue(et, isUnsigned, /*highest=*/false);
  double highest = getExtremeValue(et, isUnsigned, /*highest=*/true);
  Value extreme = createReduction(
      b, loc, x, {axis}, /*keepDims=*/false,
      createScalar(b, loc, et, isMax ? lowest : highest),
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        if (isFloat)
          return isMax
                     ? arith::MaximumFOp::create(nb, nl, a[0], a[1]).getResult()
                     : arith::MinimumFOp::create(nb, nl, a[0], a[1])
                           .getResult();
        if (isMax)
          return isUnsigned
                     ? arith::MaxUIOp::create(nb, nl, a[0], a[1]).getResult()
                     : arith::MaxSIOp::create(nb, nl, a[0], a[1]).getResult();
        return isUnsigned
                   ? arith::MinUIOp::create(nb, nl, a[0], a[1]).getResult()
                   : arith::MinSIOp::create(nb, nl, a[0], a[1]).getResult();
      });
  SmallVector<OpFoldResult> sizes = getDimSizes(b, loc, x);
  sizes.erase(sizes.begin() + axis);
  Type i64 = b.getI64Type();
  Value init = createFilled(
      b, loc, sizes,
      createScalar(b, loc, i64, selectLast ? -1.0 : 9.2233720368547758e18));
  SmallVector<AffineExpr> exprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t i = 0; i < rank; ++i) {
    iterators.push_back(i == axis ? utils::IteratorType::reduction
                                  : utils::IteratorType::parallel);
    if (i != axis)
      exprs.push_back(b.getAffineDimExpr(i));
  }
  AffineMap reduced = AffineMap::get(rank, 0, exprs, b.getContext());
  return linalg::GenericOp::create(
             b, loc, TypeRange{init.getType()}, ValueRange{x, extreme},
             ValueRange{init},
             ArrayRef<AffineMap>{b.getMultiDimIdentityMap(rank), reduced,
                                 reduced},
             iterators,
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               // A NaN extreme is the first (or last) NaN.
               Value holds =
                   isFloat
                       ? arith::OrIOp::create(
                             nb, nl,
                             arith::CmpFOp::create(
                                 nb, nl, arith::CmpFPredicate::OEQ, a[0], a[1]),
                             arith::CmpFOp::create(
                                 nb, nl, arith::CmpFPredicate::UNO, a[0], a[0]))
                             .getResult()
                       : arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                               a[0], a[1])
                             .getResult();
               Value index = arith::IndexCastOp::create(
                   nb, nl, nb.getI64Type(),
                   linalg::IndexOp::create(nb, nl, axis));
               Value better =
                   selectLast
                       ? arith::MaxSIOp::create(nb, nl, a[2], index).getResult()
                       : arith::MinSIOp::create(nb, nl, a[2], index)
                             .getResult();
               linalg::YieldOp::create(nb, nl,
                                       ValueRange{arith::SelectOp::create(
                                           nb, nl, holds, better, a[2])});
             })
      .getResult(0);
}

LogicalResult lowerArgExtremum(NodeContext &ctx, bool isMax) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0);
  int64_t rank = xt.getRank();
  FailureOr<int64_t> axisOr = getAxisAttr(ctx, /*defaultAxis=*/0, rank);
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  bool selectLast = ctx.getIntAttr("select_last_index", 0) != 0;
  Type et = xt.getElementType();
  bool isFloat = isa<FloatType>(et);
  bool isUnsigned = ctx.isInputUnsigned(0);
  if (!xt.hasStaticShape())
    return ctx.setOutput(0, createReshape(b, loc,
                                          createTwoPassArgExtremum(
                                              b, loc, ctx.getInput(0), axis,
                                              isMax, selectLast, isUnsigned),
                                          type->getShape()));
  SmallVector<int64_t> shape;
  SmallVector<AffineExpr> exprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t i = 0; i < rank; ++i) {
    iterators.push_back(i == axis ? utils::IteratorType::reduction
                                  : utils::IteratorType::parallel);
    if (i == axis)
      continue;
    shape.push_back(xt.getDimSize(i));
    exprs.push_back(b.getAffineDimExpr(i));
  }
  auto valueType = RankedTensorType::get(shape, et);
  auto indexType = RankedTensorType::get(shape, b.getI64Type());
  // Start from element 0 (index 0), then compare the others against it.
  Value first = createEmpty(b, loc, valueType);
  {
    SmallVector<int64_t> offsets(rank, 0), sizes(xt.getShape()),
        strides(rank, 1);
    sizes[axis] = 1;
    Value slice = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(sizes, et), ctx.getInput(0), ValueRange{},
        ValueRange{}, ValueRange{}, b.getDenseI64ArrayAttr(offsets),
        b.getDenseI64ArrayAttr(sizes), b.getDenseI64ArrayAttr(strides));
    first = createReshape(b, loc, slice, shape);
  }
  Value zeroIndex =
      createFilled(b, loc, indexType, createScalar(b, loc, b.getI64Type(), 0));
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank),
                              AffineMap::get(rank, 0, exprs, b.getContext()),
                              AffineMap::get(rank, 0, exprs, b.getContext())};
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{valueType, indexType}, ValueRange{ctx.getInput(0)},
      ValueRange{first, zeroIndex}, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value index = linalg::IndexOp::create(nb, nl, axis);
        Value i64 = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), index);
        Value better;
        if (isFloat) {
          auto pred = isMax ? (selectLast ? arith::CmpFPredicate::OGE
                                          : arith::CmpFPredicate::OGT)
                            : (selectLast ? arith::CmpFPredicate::OLE
                                          : arith::CmpFPredicate::OLT);
          better = arith::CmpFOp::create(nb, nl, pred, a[0], a[1]);
        } else {
          using P = arith::CmpIPredicate;
          P pred = isMax ? (selectLast ? (isUnsigned ? P::uge : P::sge)
                                       : (isUnsigned ? P::ugt : P::sgt))
                         : (selectLast ? (isUnsigned ? P::ule : P::sle)
                                       : (isUnsigned ? P::ult : P::slt));
          better = arith::CmpIOp::create(nb, nl, pred, a[0], a[1]);
        }
        Value v = arith::SelectOp::create(nb, nl, better, a[0], a[1]);
        Value i = arith::SelectOp::create(nb, nl, better, i64, a[2]);
        linalg::YieldOp::create(nb, nl, ValueRange{v, i});
      });
  Value result = generic.getResult(1);
  return ctx.setOutput(0, createReshape(b, loc, result, type->getShape()));
}

// Det of [..., n, n] for n <= 4 by the Leibniz formula (at most 24
// products per matrix, no pivoting to get wrong); larger n is refused.
LogicalResult lowerDet(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  RankedTensorType xt = ctx.getInputType(0);
  int64_t rank = xt.getRank();
  if (rank < 2 || xt.getDimSize(rank - 1) != xt.getDimSize(rank - 2))
    return ctx.fail("input must be [..., n, n]");
  int64_t n = xt.getDimSize(rank - 1);
  if (n > 4)
    return ctx.fail("determinants of matrices larger than 4x4 are not "
                    "supported");
  Type et = xt.getElementType();
  if (!isa<FloatType>(et))
    return ctx.fail("input must be floating-point");
  OpBuilder &b = ctx.getBuilder();
  Value x = ctx.getInput(0);
  SmallVector<int64_t> perm = llvm::to_vector(llvm::seq<int64_t>(0, n));
  Value result = createIndexedGeneric(
      b, ctx.getLoc(), {}, {}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        auto at = [&](int64_t i, int64_t j) -> Value {
          SmallVector<Value> coords(ivs);
          coords.push_back(arith::ConstantIndexOp::create(nb, nl, i));
          coords.push_back(arith::ConstantIndexOp::create(nb, nl, j));
          return tensor::ExtractOp::create(nb, nl, x, coords);
        };
        Value det = createScalar(nb, nl, et, n == 0 ? 1 : 0);
        SmallVector<int64_t> p(perm);
        do {
          // The sign of the permutation: the parity of its inversions.
          int inversions = 0;
          for (int64_t i = 0; i < n; ++i)
            for (int64_t j = i + 1; j < n; ++j)
              inversions += p[i] > p[j];
          Value term = at(0, p[0]);
          for (int64_t i = 1; i < n; ++i)
            term = arith::MulFOp::create(nb, nl, term, at(i, p[i]));
          det = inversions % 2
                    ? arith::SubFOp::create(nb, nl, det, term).getResult()
                    : arith::AddFOp::create(nb, nl, det, term).getResult();
        } while (n > 0 && std::next_permutation(p.begin(), p.end()));
        return det;
      });
  return ctx.setOutput(0, result);
}

} // namespace

void addReductionLowerings(LoweringTable &t) {
  t["Det"] = lowerDet;
  auto reg = [&](const char *name, Reduce kind) {
    t[name] = [kind](NodeContext &ctx) { return lowerReduce(ctx, kind); };
  };
  reg("ReduceSum", Reduce::Sum);
  reg("ReduceMean", Reduce::Mean);
  reg("ReduceMax", Reduce::Max);
  reg("ReduceMin", Reduce::Min);
  reg("ReduceProd", Reduce::Prod);
  reg("ReduceL1", Reduce::L1);
  reg("ReduceL2", Reduce::L2);
  reg("ReduceLogSum", Reduce::LogSum);
  reg("ReduceLogSumExp", Reduce::LogSumExp);
  reg("ReduceSumSquare", Reduce::SumSquare);
  t["Softmax"] = [](NodeContext &ctx) { return lowerSoftmax(ctx, false); };
  t["LogSoftmax"] = [](NodeContext &ctx) { return lowerSoftmax(ctx, true); };
  t["ArgMax"] = [](NodeContext &ctx) { return lowerArgExtremum(ctx, true); };
  t["ArgMin"] = [](NodeContext &ctx) { return lowerArgExtremum(ctx, false); };
}

} // namespace strata::onnx_importer
