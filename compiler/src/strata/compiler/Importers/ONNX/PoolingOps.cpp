//===- PoolingOps.cpp - MaxPool, AveragePool, global pooling --------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/ConvUtils.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

enum class PoolKind { Max, Average };

// A 2-D pooling (1-D pools run over a height of 1) over an NCHW tensor
// into `sizes` (static where attributes).
Value createPool2D(OpBuilder &b, Location loc, PoolKind kind, Value x,
                   ArrayRef<OpFoldResult> sizes, const WindowParams &p) {
  Type et = cast<RankedTensorType>(x.getType()).getElementType();
  SmallVector<int64_t> shape = getStaticShape(sizes);
  auto resultType = RankedTensorType::get(shape, et);
  Value window = createEmpty(
      b, loc, RankedTensorType::get({p.kernel[0], p.kernel[1]}, et));
  auto strides = getI64VectorAttr(b, p.strides);
  auto dilations = getI64VectorAttr(b, p.dilations);
  if (kind == PoolKind::Max) {
    Value init =
        createFilled(b, loc, sizes, createScalar(b, loc, et, -INFINITY));
    return linalg::PoolingNchwMaxOp::create(
               b, loc, TypeRange{resultType}, ValueRange{x, window},
               ValueRange{init}, strides, dilations)
        .getResult(0);
  }
  Value init = createFilled(b, loc, sizes, createScalar(b, loc, et, 0));
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

// The pools of a dynamic spatial dim: how many windows, and the high
// padding (the node's, plus what ceil_mode's last window needs).
struct DynamicWindows {
  OpFoldResult count, extra, high;
};

DynamicWindows getDynamicWindows(OpBuilder &b, Location loc, OpFoldResult size,
                                 const WindowParams &p, int64_t i,
                                 int64_t window, bool ceilMode) {
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  ArithBuilder arithmetic(b, loc);
  auto max = [&](Value l, Value r) {
    return arith::MaxSIOp::create(b, loc, l, r).getResult();
  };
  Value in = getValueOrCreateConstantIndexOp(b, loc, size);
  Value stride = index(p.strides[i]);
  Value padded = arithmetic.add(in, index(p.padsBegin[i] + p.padsEnd[i]));
  // Window starts 0, stride, ... while the window fits; with ceil_mode one
  // more where it starts inside the input or its low padding.
  Value span = max(arithmetic.sub(padded, index(window)), index(0));
  Value count;
  if (ceilMode) {
    count = arithmetic.add(arith::CeilDivSIOp::create(b, loc, span, stride),
                           index(1));
    Value lastStart = arithmetic.mul(arithmetic.sub(count, index(1)), stride);
    Value outside =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, lastStart,
                              arithmetic.add(in, index(p.padsBegin[i])));
    count = arith::SelectOp::create(b, loc, outside,
                                    arithmetic.sub(count, index(1)), count);
  } else {
    count =
        arithmetic.add(arith::DivSIOp::create(b, loc, span, stride), index(1));
  }
  Value needed = arithmetic.add(
      arithmetic.mul(arithmetic.sub(count, index(1)), stride), index(window));
  Value extra = max(arithmetic.sub(needed, padded), index(0));
  return {count, extra, arithmetic.add(extra, index(p.padsEnd[i]))};
}

// padSpatial with high pads that may be known only at run time.
Value padSpatialMixed(OpBuilder &b, Location loc, Value input,
                      ArrayRef<int64_t> low, ArrayRef<OpFoldResult> high,
                      Value value) {
  if (llvm::all_of(high,
                   [](OpFoldResult h) { return isConstantIntValue(h, 0); }))
    return padSpatial(b, loc, input, low, SmallVector<int64_t>(low.size(), 0),
                      value);
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<OpFoldResult> lowAll(2, b.getIndexAttr(0)),
      highAll(2, b.getIndexAttr(0));
  SmallVector<int64_t> shape(type.getShape());
  for (size_t i = 0; i < low.size(); ++i) {
    lowAll.push_back(b.getIndexAttr(low[i]));
    highAll.push_back(high[i]);
    std::optional<int64_t> h = getConstantIntValue(high[i]);
    if (!ShapedType::isDynamic(shape[2 + i]))
      shape[2 + i] = h ? shape[2 + i] + low[i] + *h : ShapedType::kDynamic;
  }
  return tensor::PadOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), input,
      lowAll, highAll, value);
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
  // Dynamic spatial dims only through linalg's named pools.
  bool named = spatial <= 2 && isFloat && !withIndices;
  if (failed(named ? checkWindowedDynamic(ctx, xt)
                   : checkOnlyBatchDynamic(ctx, xt)))
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
  // The output's spatial sizes, and the extra high padding so that ceil_mode
  // windows fit (never counted): from the output type when static, else
  // computed at run time.
  SmallVector<OpFoldResult> outSizes = {getDimSize(b, loc, x, 0),
                                        b.getIndexAttr(inShape[1])};
  SmallVector<OpFoldResult> extra, high;
  SmallVector<int64_t> zeros(sp, 0);
  bool ceilMode = ctx.getIntAttr("ceil_mode", 0) != 0;
  for (int64_t i = 0; i < sp; ++i) {
    int64_t window = (p->kernel[i] - 1) * p->dilations[i] + 1;
    int64_t padding = p->padsBegin[i] + p->padsEnd[i];
    if (!ShapedType::isDynamic(inShape[2 + i])) {
      int64_t needed = (outShape[2 + i] - 1) * p->strides[i] + window;
      int64_t more = std::max<int64_t>(0, needed - (inShape[2 + i] + padding));
      outSizes.push_back(b.getIndexAttr(outShape[2 + i]));
      extra.push_back(b.getIndexAttr(more));
      high.push_back(b.getIndexAttr(p->padsEnd[i] + more));
      continue;
    }
    DynamicWindows windows = getDynamicWindows(
        b, loc, getDimSize(b, loc, x, 2 + i), *p, i, window, ceilMode);
    outSizes.push_back(windows.count);
    extra.push_back(windows.extra);
    high.push_back(windows.high);
  }
  SmallVector<int64_t> outStatic = getStaticShape(outSizes);
  auto outType = RankedTensorType::get(outStatic, et);
  bool isUnsigned = ctx.isInputUnsigned(0);
  double lowest =
      !isFloat ? (isUnsigned ? 0.0
                             : -std::ldexp(1.0, et.getIntOrFloatBitWidth() - 1))
               : -INFINITY;
  Value padValue =
      createScalar(b, loc, et, kind == PoolKind::Max ? lowest : 0.0);
  Value padded = padSpatialMixed(b, loc, x, p->padsBegin, high, padValue);
  auto pool = [&](Value input,
                  ArrayRef<OpFoldResult> sizes) -> SmallVector<Value> {
    if (named)
      return {createPool2D(b, loc, kind, input, sizes, *p)};
    SmallVector<int64_t> shape = getStaticShape(sizes);
    return createPoolGeneric(
        b, loc, kind, input, RankedTensorType::get(shape, et), *p, isUnsigned,
        withIndices, inShape, ctx.getIntAttr("storage_order", 0) != 0);
  };
  SmallVector<Value> results = pool(padded, outSizes);
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
    SmallVector<OpFoldResult> onesSizes = {b.getIndexAttr(1),
                                           b.getIndexAttr(1)},
                              countSizes(onesSizes);
    for (int64_t i = 0; i < sp; ++i) {
      onesSizes.push_back(getDimSize(b, loc, x, 2 + i));
      countSizes.push_back(outSizes[2 + i]);
    }
    Value ones = createFilled(b, loc, onesSizes, createScalar(b, loc, et, 1));
    ones = padSpatial(b, loc, ones, p->padsBegin, p->padsEnd,
                      createScalar(b, loc, et, countPads ? 1 : 0));
    ones = padSpatialMixed(b, loc, ones, zeros, extra,
                           createScalar(b, loc, et, 0));
    Value counts = pool(ones, countSizes)[0];
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
  if (xt.getRank() > 1 && xt.isDynamicDim(1))
    return checkWindowedDynamic(ctx, xt);
  SmallVector<int64_t> axes;
  SmallVector<OpFoldResult> spatialSizes;
  for (int64_t i = 2; i < xt.getRank(); ++i) {
    axes.push_back(i);
    spatialSizes.push_back(getDimSize(b, loc, ctx.getInput(0), i));
  }
  OpFoldResult count = getSizeProduct(b, loc, spatialSizes);
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
          Value n = createSizeScalar(nb, nl, count, et);
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
