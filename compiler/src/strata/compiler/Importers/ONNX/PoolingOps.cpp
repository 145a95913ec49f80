//===- PoolingOps.cpp - MaxPool, AveragePool, global pooling --------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/ConvUtils.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

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
    Value init =
        createFilled(b, loc, resultType, createScalar(b, loc, et, -INFINITY));
    return linalg::PoolingNchwMaxOp::create(
               b, loc, TypeRange{resultType}, ValueRange{x, window},
               ValueRange{init}, strides, dilations)
        .getResult(0);
  }
  Value init = createFilled(b, loc, resultType, createScalar(b, loc, et, 0));
  return linalg::PoolingNchwSumOp::create(b, loc, TypeRange{resultType},
                                          ValueRange{x, window},
                                          ValueRange{init}, strides, dilations)
      .getResult(0);
}

LogicalResult lowerPool(NodeContext &ctx, PoolKind kind) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  if (ctx.getNumOutputs() > 1 && ctx.hasOutput(1))
    return ctx.fail("the Indices output of MaxPool is not supported");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0);
  int64_t spatial = xt.getRank() - 2;
  if (spatial < 1 || spatial > 2)
    return ctx.fail("only 1-D and 2-D pooling is supported");
  if (!isa<FloatType>(xt.getElementType()))
    return ctx.fail("only floating-point pooling is supported");
  FailureOr<WindowParams> p =
      getWindowParams(ctx, xt.getShape().drop_front(2), {});
  if (failed(p))
    return failure();
  Value x = ctx.getInput(0);
  SmallVector<int64_t> inShape(xt.getShape()), outShape(type->getShape());
  if (spatial == 1) {
    inShape.insert(inShape.begin() + 2, 1);
    outShape.insert(outShape.begin() + 2, 1);
    x = createReshape(b, loc, x, inShape);
    p->kernel.insert(p->kernel.begin(), 1);
    p->strides.insert(p->strides.begin(), 1);
    p->dilations.insert(p->dilations.begin(), 1);
    p->padsBegin.insert(p->padsBegin.begin(), 0);
    p->padsEnd.insert(p->padsEnd.begin(), 0);
  }
  // Extra high padding so ceil_mode windows fit (never counted).
  SmallVector<int64_t> extra(2, 0);
  for (int i = 0; i < 2; ++i) {
    int64_t window = (p->kernel[i] - 1) * p->dilations[i] + 1;
    int64_t needed = (outShape[2 + i] - 1) * p->strides[i] + window;
    extra[i] = std::max<int64_t>(
        0, needed - (inShape[2 + i] + p->padsBegin[i] + p->padsEnd[i]));
  }
  Type et = xt.getElementType();
  auto outType = RankedTensorType::get(outShape, et);
  SmallVector<int64_t> high{p->padsEnd[0] + extra[0], p->padsEnd[1] + extra[1]};
  Value padValue =
      createScalar(b, loc, et, kind == PoolKind::Max ? -INFINITY : 0.0);
  Value padded = padSpatial(b, loc, x, p->padsBegin, high, padValue);
  Value result = createPool2D(b, loc, kind, padded, outType, *p);
  if (kind == PoolKind::Average) {
    // Divide by the number of counted elements in each window: pool a
    // tensor of ones padded like the input.
    bool countPads = ctx.getIntAttr("count_include_pad", 0) != 0;
    auto onesType = RankedTensorType::get({1, 1, inShape[2], inShape[3]}, et);
    Value ones = createFilled(b, loc, onesType, createScalar(b, loc, et, 1));
    ones = padSpatial(b, loc, ones, p->padsBegin, p->padsEnd,
                      createScalar(b, loc, et, countPads ? 1 : 0));
    ones = padSpatial(b, loc, ones, {0, 0}, extra, createScalar(b, loc, et, 0));
    auto countType =
        RankedTensorType::get({1, 1, outShape[2], outShape[3]}, et);
    Value counts = createPool2D(b, loc, kind, ones, countType, *p);
    result = createElementwise(
        b, loc, {result, counts}, outType,
        [](OpBuilder &nb, Location nl, ValueRange a) {
          return arith::DivFOp::create(nb, nl, a[0], a[1]).getResult();
        });
  }
  return ctx.setOutput(0, createReshape(b, loc, result, type->getShape()));
}

LogicalResult lowerGlobalPool(NodeContext &ctx, PoolKind kind) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0);
  Type et = xt.getElementType();
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
  t["GlobalMaxPool"] = [](NodeContext &ctx) {
    return lowerGlobalPool(ctx, PoolKind::Max);
  };
  t["GlobalAveragePool"] = [](NodeContext &ctx) {
    return lowerGlobalPool(ctx, PoolKind::Average);
  };
}

} // namespace strata::onnx_importer
