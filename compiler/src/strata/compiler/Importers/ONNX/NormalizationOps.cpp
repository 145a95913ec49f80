//===- NormalizationOps.cpp - BatchNorm, LayerNorm, InstanceNorm ----------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

// Reshapes a per-channel vector [C] to [C, 1, ...] so it broadcasts over
// dim 1 of a rank-`rank` NC... tensor.
Value channelVector(OpBuilder &b, Location loc, Value v, int64_t rank) {
  auto t = cast<RankedTensorType>(v.getType());
  SmallVector<int64_t> shape{t.getNumElements()};
  shape.append(rank - 2, 1);
  return createReshape(b, loc, v, shape);
}

// (x - mean) * rsqrt(var + eps) * scale + bias, all broadcast onto x.
Value normalize(OpBuilder &b, Location loc, RankedTensorType type, Value x,
                Value mean, Value var, Value scale, Value bias, double eps) {
  SmallVector<Value> inputs{x, mean, var};
  if (scale)
    inputs.push_back(scale);
  if (bias)
    inputs.push_back(bias);
  return createElementwise(
      b, loc, inputs, type, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Type et = a[0].getType();
        Value centered = arith::SubFOp::create(nb, nl, a[0], a[1]);
        Value v =
            arith::AddFOp::create(nb, nl, a[2], createScalar(nb, nl, et, eps));
        Value r = arith::DivFOp::create(nb, nl, centered,
                                        math::SqrtOp::create(nb, nl, v));
        unsigned next = 3;
        if (scale)
          r = arith::MulFOp::create(nb, nl, r, a[next++]);
        if (bias)
          r = arith::AddFOp::create(nb, nl, r, a[next++]);
        return r;
      });
}

LogicalResult lowerBatchNorm(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  if (ctx.getIntAttr("training_mode", 0) != 0 ||
      (ctx.getNumOutputs() > 1 && ctx.hasOutput(1)))
    return ctx.fail("training mode is not supported");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  int64_t rank = type->getRank();
  auto vec = [&](unsigned i) {
    return rank >= 2 ? channelVector(b, loc, ctx.getInput(i), rank)
                     : ctx.getInput(i);
  };
  Value y = normalize(b, loc, *type, ctx.getInput(0), vec(3), vec(4), vec(1),
                      vec(2), ctx.getFloatAttr("epsilon", 1e-5f));
  return ctx.setOutput(0, y);
}

Value meanOver(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> axes) {
  auto t = cast<RankedTensorType>(x.getType());
  Type et = t.getElementType();
  int64_t count = 1;
  for (int64_t a : axes)
    count *= t.getDimSize(a);
  Value sum = createReduction(
      b, loc, x, axes, true, createScalar(b, loc, et, 0),
      [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::AddFOp::create(nb, nl, a[0], a[1]).getResult();
      });
  auto st = cast<RankedTensorType>(sum.getType());
  return createElementwise(
      b, loc, {sum}, st, [&](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::DivFOp::create(nb, nl, a[0],
                                     createScalar(nb, nl, et, count))
            .getResult();
      });
}

// Mean and (biased) variance of x over `axes`, kept as size-1 dims.
std::pair<Value, Value> moments(OpBuilder &b, Location loc, Value x,
                                ArrayRef<int64_t> axes) {
  auto t = cast<RankedTensorType>(x.getType());
  Value mean = meanOver(b, loc, x, axes);
  Value sq = createElementwise(
      b, loc, {x, mean}, t, [](OpBuilder &nb, Location nl, ValueRange a) {
        Value d = arith::SubFOp::create(nb, nl, a[0], a[1]);
        return arith::MulFOp::create(nb, nl, d, d).getResult();
      });
  return {mean, meanOver(b, loc, sq, axes)};
}

LogicalResult lowerLayerNorm(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  int64_t rank = type->getRank();
  int64_t axis = normalizeAxis(ctx.getIntAttr("axis", -1), rank);
  double eps = ctx.getFloatAttr("epsilon", 1e-5f);
  SmallVector<int64_t> axes;
  for (int64_t i = axis; i < rank; ++i)
    axes.push_back(i);
  auto [mean, var] = moments(b, loc, ctx.getInput(0), axes);
  Value y =
      normalize(b, loc, *type, ctx.getInput(0), mean, var, ctx.getInput(1),
                ctx.hasInput(2) ? ctx.getInput(2) : Value(), eps);
  if (failed(ctx.setOutput(0, y)))
    return failure();
  if (ctx.hasOutput(1) && failed(ctx.setOutput(1, mean)))
    return failure();
  if (ctx.hasOutput(2)) {
    auto vt = cast<RankedTensorType>(var.getType());
    Value inv = createElementwise(
        b, loc, {var}, vt, [&](OpBuilder &nb, Location nl, ValueRange a) {
          Type et = a[0].getType();
          Value v = arith::AddFOp::create(nb, nl, a[0],
                                          createScalar(nb, nl, et, eps));
          return math::RsqrtOp::create(nb, nl, v).getResult();
        });
    return ctx.setOutput(2, inv);
  }
  return success();
}

LogicalResult lowerInstanceNorm(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  int64_t rank = type->getRank();
  SmallVector<int64_t> axes;
  for (int64_t i = 2; i < rank; ++i)
    axes.push_back(i);
  auto [mean, var] = moments(b, loc, ctx.getInput(0), axes);
  Value y = normalize(b, loc, *type, ctx.getInput(0), mean, var,
                      channelVector(b, loc, ctx.getInput(1), rank),
                      channelVector(b, loc, ctx.getInput(2), rank),
                      ctx.getFloatAttr("epsilon", 1e-5f));
  return ctx.setOutput(0, y);
}

} // namespace

void addNormalizationLowerings(LoweringTable &t) {
  t["BatchNormalization"] = lowerBatchNorm;
  t["LayerNormalization"] = lowerLayerNorm;
  t["InstanceNormalization"] = lowerInstanceNorm;
}

} // namespace strata::onnx_importer
