//===- PoolingOps.cpp - MaxPool, AveragePool, global pooling --------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/ConvUtils.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

enum class PoolKind { Max, Average };

// A 2-D pooling (1-D pools run over a height of 1) over an NCHW tensor.
Value createPool2D(OpBuilder &b, Location loc, PoolKind kind, Value x,
                   RankedTensorType resultType, const WindowParams &p) {
  Type et = resultType.getElementType();
  Value window = createEmpty(
      b, loc, RankedTensorType::get({p.kernel[0], p.kernel[1]}, et));
  auto strides = getI64VectorAttr(b, p.strides);
  auto dilations = getI64VectorAttr(b, p.dilations);
  if (kind == PoolKind::Max) {
    Value init = createFilled(b, loc, resultType,
                              createScalar(b, loc, et, -INFINITY), x);
    return linalg::PoolingNchwMaxOp::create(
               b, loc, TypeRange{resultType}, ValueRange{x, window},
               ValueRange{init}, strides, dilations)
        .getResult(0);
  }
  Value init = createFilled(b, loc, resultType, createScalar(b, loc, et, 0), x);
  return linalg::PoolingNchwSumOp::create(b, loc, TypeRange{resultType},
                                          ValueRange{x, window},
                                          ValueRange{init}, strides, dilations)
      .getResult(0);
}

// A pooling over any number of spatial dims as one linalg.generic (loops
// n, c, out... parallel, kernel... reduction; a kernel-shaped operand gives
// the kernel loops their bounds). For max pooling with `indices`, a second
// result holds the flat index into the unpadded input (row-major, or
// column-major over the spatial dims for storage_order 1) of the first
// maximum.
SmallVector<Value> createPoolGeneric(OpBuilder &b, Location loc, PoolKind kind,
                                     Value x, RankedTensorType resultType,
                                     const WindowParams &p, bool isUnsigned,
                                     bool indices, ArrayRef<int64_t> inputShape,
                                     bool columnMajor) {
  int64_t rank = resultType.getRank(), spatial = rank - 2;
  int64_t loops = rank + spatial;
  Type et = resultType.getElementType();
  bool isFloat = isa<FloatType>(et);
  auto dim = [&](int64_t i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> xExprs{dim(0), dim(1)}, kExprs,
      outExprs{dim(0), dim(1)};
  for (int64_t i = 0; i < spatial; ++i) {
    xExprs.push_back(dim(2 + i) * p.strides[i] +
                     dim(rank + i) * p.dilations[i]);
    kExprs.push_back(dim(rank + i));
    outExprs.push_back(dim(2 + i));
  }
  auto outMap = AffineMap::get(loops, 0, outExprs, b.getContext());
  SmallVector<AffineMap> maps{AffineMap::get(loops, 0, xExprs, b.getContext()),
                              AffineMap::get(loops, 0, kExprs, b.getContext()),
                              outMap};
  Value window =
      createEmpty(b, loc, RankedTensorType::get(p.kernel, b.getI1Type()));
  double lowest =
      !isFloat ? (isUnsigned ? 0.0
                             : -std::ldexp(1.0, et.getIntOrFloatBitWidth() - 1))
               : -INFINITY;
  Value init = createFilled(
      b, loc, resultType,
      createScalar(b, loc, et, kind == PoolKind::Max ? lowest : 0.0), x);
  SmallVector<Value> inits{init};
  SmallVector<Type> types{resultType};
  if (indices) {
    auto indexType =
        RankedTensorType::get(resultType.getShape(), b.getI64Type());
    inits.push_back(createFilled(b, loc, indexType,
                                 createScalar(b, loc, b.getI64Type(), 0), x));
    types.push_back(indexType);
    maps.push_back(outMap);
  }
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.append(spatial, utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, types, ValueRange{x, window}, inits, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value v = a[0], acc = a[2];
        if (kind == PoolKind::Average) {
          Value sum = isFloat
                          ? arith::AddFOp::create(nb, nl, acc, v).getResult()
                          : arith::AddIOp::create(nb, nl, acc, v).getResult();
          linalg::YieldOp::create(nb, nl, ValueRange{sum});
          return;
        }
        if (!indices) {
          Value max =
              isFloat ? arith::MaximumFOp::create(nb, nl, acc, v).getResult()
              : isUnsigned ? arith::MaxUIOp::create(nb, nl, acc, v).getResult()
                           : arith::MaxSIOp::create(nb, nl, acc, v).getResult();
          linalg::YieldOp::create(nb, nl, ValueRange{max});
          return;
        }
        using IP = arith::CmpIPredicate;
        Value better =
            isFloat ? arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGT,
                                            v, acc)
                          .getResult()
                    : arith::CmpIOp::create(
                          nb, nl, isUnsigned ? IP::ugt : IP::sgt, v, acc)
                          .getResult();
        // The flat index of this element in the unpadded input.
        Type i64 = nb.getI64Type();
        auto idx = [&](int64_t d) -> Value {
          return arith::IndexCastOp::create(nb, nl, i64,
                                            linalg::IndexOp::create(nb, nl, d));
        };
        auto cst = [&](int64_t v) { return createScalar(nb, nl, i64, v); };
        auto mulAdd = [&](Value x, int64_t m, Value y) -> Value {
          return arith::AddIOp::create(
              nb, nl, arith::MulIOp::create(nb, nl, x, cst(m)), y);
        };
        Value flat = mulAdd(idx(0), inputShape[1], idx(1));
        SmallVector<Value> coords;
        for (int64_t i = 0; i < spatial; ++i)
          coords.push_back(arith::SubIOp::create(
              nb, nl,
              mulAdd(idx(2 + i), p.strides[i],
                     arith::MulIOp::create(nb, nl, idx(rank + i),
                                           cst(p.dilations[i]))),
              cst(p.padsBegin[i])));
        if (columnMajor) {
          Value spatialIndex = cst(0);
          for (int64_t i = spatial - 1; i >= 0; --i)
            spatialIndex = mulAdd(spatialIndex, inputShape[2 + i], coords[i]);
          int64_t size = 1;
          for (int64_t i = 0; i < spatial; ++i)
            size *= inputShape[2 + i];
          flat = mulAdd(flat, size, spatialIndex);
        } else {
          for (int64_t i = 0; i < spatial; ++i)
            flat = mulAdd(flat, inputShape[2 + i], coords[i]);
        }
        linalg::YieldOp::create(
            nb, nl,
            ValueRange{arith::SelectOp::create(nb, nl, better, v, acc),
                       arith::SelectOp::create(nb, nl, better, flat, a[3])});
      });
  return SmallVector<Value>(generic.getResults());
}

// Max and average pools; with `lpPool`, an average pool's sum over |x|^p
// raised to 1/p (LpPool).
LogicalResult lowerPool(NodeContext &ctx, PoolKind kind, bool lpPool = false) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  bool withIndices = ctx.getNumOutputs() > 1 && ctx.hasOutput(1);
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0);
  int64_t spatial = xt.getRank() - 2;
  if (spatial < 1)
    return ctx.fail("input must be [N, C, spatial...]");
  Type et = xt.getElementType();
  bool isFloat = isa<FloatType>(et);
  if (!isFloat && kind == PoolKind::Average)
    return ctx.fail("only floating-point average pooling is supported");
  if (failed(checkOnlyBatchDynamic(ctx, xt)))
    return failure();
  FailureOr<WindowParams> p =
      getWindowParams(ctx, xt.getShape().drop_front(2), {});
  if (failed(p))
    return failure();
  Value x = ctx.getInput(0);
  double power = ctx.getIntAttr("p", 2);
  if (lpPool) {
    if (power <= 0)
      return ctx.fail("p must be positive");
    x = createElementwise(
        b, loc, {x}, xt, [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value magnitude = math::AbsFOp::create(nb, nl, a[0]);
          return math::PowFOp::create(nb, nl, magnitude,
                                      createScalar(nb, nl, et, power))
              .getResult();
        });
  }
  SmallVector<int64_t> inShape(xt.getShape()), outShape(type->getShape());
  // 1-D and 2-D float pools use linalg's named NCHW ops (1-D over a height
  // of 1); 3-D and more, integer max and max with indices the generic.
  bool named = spatial <= 2 && isFloat && !withIndices;
  if (named && spatial == 1) {
    inShape.insert(inShape.begin() + 2, 1);
    outShape.insert(outShape.begin() + 2, 1);
    x = createReshape(b, loc, x, inShape);
    p->kernel.insert(p->kernel.begin(), 1);
    p->strides.insert(p->strides.begin(), 1);
    p->dilations.insert(p->dilations.begin(), 1);
    p->padsBegin.insert(p->padsBegin.begin(), 0);
    p->padsEnd.insert(p->padsEnd.begin(), 0);
  }
  int64_t sp = inShape.size() - 2;
  // Extra high padding so ceil_mode windows fit (never counted).
  SmallVector<int64_t> extra(sp, 0), high(sp, 0), zeros(sp, 0);
  for (int64_t i = 0; i < sp; ++i) {
    int64_t window = (p->kernel[i] - 1) * p->dilations[i] + 1;
    int64_t needed = (outShape[2 + i] - 1) * p->strides[i] + window;
    extra[i] = std::max<int64_t>(
        0, needed - (inShape[2 + i] + p->padsBegin[i] + p->padsEnd[i]));
    high[i] = p->padsEnd[i] + extra[i];
  }
  auto outType = RankedTensorType::get(outShape, et);
  bool isUnsigned = ctx.isInputUnsigned(0);
  double lowest =
      !isFloat ? (isUnsigned ? 0.0
                             : -std::ldexp(1.0, et.getIntOrFloatBitWidth() - 1))
               : -INFINITY;
  Value padValue =
      createScalar(b, loc, et, kind == PoolKind::Max ? lowest : 0.0);
  Value padded = padSpatial(b, loc, x, p->padsBegin, high, padValue);
  auto pool = [&](Value input, RankedTensorType t) -> SmallVector<Value> {
    if (named)
      return {createPool2D(b, loc, kind, input, t, *p)};
    return createPoolGeneric(b, loc, kind, input, t, *p, isUnsigned,
                             withIndices, inShape,
                             ctx.getIntAttr("storage_order", 0) != 0);
  };
  SmallVector<Value> results = pool(padded, outType);
  Value result = results[0];
  if (lpPool) {
    result = createElementwise(
        b, loc, {result}, outType,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          return math::PowFOp::create(nb, nl, a[0],
                                      createScalar(nb, nl, et, 1.0 / power))
              .getResult();
        });
  } else if (kind == PoolKind::Average) {
    // Divide by the number of counted elements in each window: pool a
    // tensor of ones padded like the input.
    bool countPads = ctx.getIntAttr("count_include_pad", 0) != 0;
    SmallVector<int64_t> onesShape{1, 1}, countShape{1, 1};
    llvm::append_range(onesShape, ArrayRef(inShape).drop_front(2));
    llvm::append_range(countShape, ArrayRef(outShape).drop_front(2));
    auto onesType = RankedTensorType::get(onesShape, et);
    Value ones = createFilled(b, loc, onesType, createScalar(b, loc, et, 1));
    ones = padSpatial(b, loc, ones, p->padsBegin, p->padsEnd,
                      createScalar(b, loc, et, countPads ? 1 : 0));
    ones = padSpatial(b, loc, ones, zeros, extra, createScalar(b, loc, et, 0));
    Value counts = pool(ones, RankedTensorType::get(countShape, et))[0];
    result = createElementwise(
        b, loc, {result, counts}, outType,
        [](OpBuilder &nb, Location nl, ValueRange a) {
          return arith::DivFOp::create(nb, nl, a[0], a[1]).getResult();
        });
  }
  if (failed(ctx.setOutput(0, createReshape(b, loc, result, type->getShape()))))
    return failure();
  if (withIndices)
    return ctx.setOutput(1, results[1]);
  return success();
}

LogicalResult lowerGlobalPool(NodeContext &ctx, PoolKind kind) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0);
  Type et = xt.getElementType();
  if (failed(checkOnlyBatchDynamic(ctx, xt)))
    return failure();
  SmallVector<int64_t> axes;
  int64_t count = 1;
  for (int64_t i = 2; i < xt.getRank(); ++i) {
    axes.push_back(i);
    count *= xt.getDimSize(i);
  }
  Value init = createScalar(b, loc, et, kind == PoolKind::Max ? -INFINITY : 0);
  Value r =
      createReduction(b, loc, ctx.getInput(0), axes, /*keepDims=*/true, init,
                      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                        if (kind == PoolKind::Max)
                          return arith::MaximumFOp::create(nb, nl, a[0], a[1]);
                        return arith::AddFOp::create(nb, nl, a[0], a[1]);
                      });
  if (kind == PoolKind::Average)
    r = createElementwise(
        b, loc, {r}, *type, [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value n = createScalar(nb, nl, et, count);
          return arith::DivFOp::create(nb, nl, a[0], n).getResult();
        });
  return ctx.setOutput(0, r);
}

} // namespace

void addPoolingLowerings(LoweringTable &t) {
  t["MaxPool"] = [](NodeContext &ctx) { return lowerPool(ctx, PoolKind::Max); };
  t["AveragePool"] = [](NodeContext &ctx) {
    return lowerPool(ctx, PoolKind::Average);
  };
  t["LpPool"] = [](NodeContext &ctx) {
    return lowerPool(ctx, PoolKind::Average, /*lpPool=*/true);
  };
  t["GlobalMaxPool"] = [](NodeContext &ctx) {
    return lowerGlobalPool(ctx, PoolKind::Max);
  };
  t["GlobalAveragePool"] = [](NodeContext &ctx) {
    return lowerGlobalPool(ctx, PoolKind::Average);
  };
}

} // namespace strata::onnx_importer
