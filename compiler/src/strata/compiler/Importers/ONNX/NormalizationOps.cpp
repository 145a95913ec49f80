//===- NormalizationOps.cpp - BatchNorm, LayerNorm, InstanceNorm, LRN, MVN ===//
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

std::pair<Value, Value> moments(OpBuilder &b, Location loc, Value x,
                                ArrayRef<int64_t> axes);

// Training mode normalizes with the batch's own mean and (biased) variance
// over all dims but the channels, and also returns the running statistics
// blended with them by `momentum` (deterministic: no random numbers).
LogicalResult lowerBatchNormTraining(NodeContext &ctx, RankedTensorType type) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  int64_t rank = type.getRank();
  if (rank < 2)
    return ctx.fail("training mode needs an [N, C, ...] input");
  SmallVector<int64_t> axes{0};
  for (int64_t i = 2; i < rank; ++i)
    axes.push_back(i);
  auto [mean, var] = moments(b, loc, ctx.getInput(0), axes);
  auto vec = [&](unsigned i) {
    return channelVector(b, loc, ctx.getInput(i), rank);
  };
  Value y = normalize(b, loc, type, ctx.getInput(0), mean, var, vec(1), vec(2),
                      ctx.getFloatAttr("epsilon", 1e-5f));
  if (failed(ctx.setOutput(0, y)))
    return failure();
  double momentum = ctx.getFloatAttr("momentum", 0.9f);
  for (unsigned i = 1; i <= 2; ++i) {
    if (!ctx.hasOutput(i))
      continue;
    FailureOr<RankedTensorType> statType = ctx.getOutputType(i);
    if (failed(statType))
      return failure();
    Value batch =
        createReshape(b, loc, i == 1 ? mean : var, statType->getShape());
    Value running = createElementwise(
        b, loc, {ctx.getInput(2 + i), batch}, *statType,
        [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          Type et = a[0].getType();
          return arith::AddFOp::create(
              nb, nl,
              arith::MulFOp::create(nb, nl, a[0],
                                    createScalar(nb, nl, et, momentum)),
              arith::MulFOp::create(nb, nl, a[1],
                                    createScalar(nb, nl, et, 1 - momentum)));
        });
    if (failed(ctx.setOutput(i, running)))
      return failure();
  }
  return success();
}

// The per-channel factors of an inference BatchNormalization, s = scale /
// sqrt(var + eps) and t = bias - mean * s, as constants of the input's
// element type when the statistics are the model's constants (as they are
// in exported models).
std::optional<std::pair<Value, Value>>
foldBatchNormFactors(NodeContext &ctx, Type elementType, double eps) {
  SmallVector<SmallVector<double>> stats;
  for (unsigned i = 1; i <= 4; ++i) {
    std::optional<SmallVector<double>> values = ctx.getConstantFloats(i);
    if (!values || (!stats.empty() && values->size() != stats[0].size()))
      return std::nullopt;
    stats.push_back(std::move(*values));
  }
  auto floatType = dyn_cast<FloatType>(elementType);
  if (!floatType)
    return std::nullopt;
  auto toElement = [&](double value) {
    APFloat converted(value);
    bool lost = false;
    converted.convert(floatType.getFloatSemantics(),
                      APFloat::rmNearestTiesToEven, &lost);
    return converted;
  };
  SmallVector<APFloat> factors, shifts;
  for (size_t c = 0; c < stats[0].size(); ++c) {
    double factor = stats[0][c] / std::sqrt(stats[3][c] + eps);
    factors.push_back(toElement(factor));
    shifts.push_back(toElement(stats[1][c] - stats[2][c] * factor));
  }
  auto type = RankedTensorType::get({int64_t(factors.size())}, elementType);
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  return std::make_pair(
      arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, factors))
          .getResult(),
      arith::ConstantOp::create(b, loc, DenseElementsAttr::get(type, shifts))
          .getResult());
}

// The same factors computed at run time (statistics that are graph
// inputs), on the channel vectors.
std::pair<Value, Value> computeBatchNormFactors(OpBuilder &b, Location loc,
                                                Value scale, Value bias,
                                                Value mean, Value var,
                                                double eps) {
  auto channelType = cast<RankedTensorType>(var.getType());
  Value s = createElementwise(
      b, loc, {scale, var}, channelType,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value v = arith::AddFOp::create(
            nb, nl, a[1], createScalar(nb, nl, a[1].getType(), eps));
        return arith::DivFOp::create(nb, nl, a[0],
                                     math::SqrtOp::create(nb, nl, v));
      });
  Value t = createElementwise(
      b, loc, {bias, mean, s}, channelType,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::SubFOp::create(nb, nl, a[0],
                                     arith::MulFOp::create(nb, nl, a[1], a[2]));
      });
  return {s, t};
}

LogicalResult lowerBatchNorm(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  if (ctx.getIntAttr("training_mode", 0) != 0)
    return lowerBatchNormTraining(ctx, *type);
  if (ctx.getNumOutputs() > 1 && ctx.hasOutput(1))
    return ctx.fail("running statistics outputs need training_mode");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  int64_t rank = type->getRank();
  auto channel = [&](Value v) {
    return rank >= 2 ? channelVector(b, loc, v, rank) : v;
  };
  auto vec = [&](unsigned i) { return channel(ctx.getInput(i)); };
  // y = x * s + t, with s = scale / sqrt(var + eps) and t = bias - mean * s
  // once per channel: a multiply-add per element instead of a square root
  // and a division (a DenseNet's unfoldable BatchNorm-ReLU pairs, 8 of 47
  // ms).
  double eps = ctx.getFloatAttr("epsilon", 1e-5f);
  Value s, t;
  if (auto folded = foldBatchNormFactors(ctx, type->getElementType(), eps)) {
    s = channel(folded->first);
    t = channel(folded->second);
  } else {
    std::tie(s, t) =
        computeBatchNormFactors(b, loc, vec(1), vec(2), vec(3), vec(4), eps);
  }
  Value y = createElementwise(
      b, loc, {ctx.getInput(0), s, t}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::AddFOp::create(
            nb, nl, arith::MulFOp::create(nb, nl, a[0], a[1]), a[2]);
      });
  return ctx.setOutput(0, y);
}

Value meanOver(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> axes) {
  auto t = cast<RankedTensorType>(x.getType());
  Type et = t.getElementType();
  SmallVector<OpFoldResult> reducedSizes;
  for (int64_t a : axes)
    reducedSizes.push_back(getDimSize(b, loc, x, a));
  OpFoldResult count = getSizeProduct(b, loc, reducedSizes);
  Value sum = createReduction(
      b, loc, x, axes, true, createScalar(b, loc, et, 0),
      [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::AddFOp::create(nb, nl, a[0], a[1]).getResult();
      });
  auto st = cast<RankedTensorType>(sum.getType());
  return createElementwise(
      b, loc, {sum}, st, [&](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::DivFOp::create(nb, nl, a[0],
                                     createSizeScalar(nb, nl, count, et))
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
  // Subgraph types come from non-strict inference.
  if (ctx.getInputType(0).getShape() != type->getShape())
    return ctx.fail("the result's shape differs from the input's");
  FailureOr<int64_t> axisOr = ctx.getAxis(ctx.getIntAttr("axis", -1), rank);
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
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

// LRN: x / (bias + alpha / size * sum of x^2 over the `size` channels
// around c)^beta. The squares are padded with zeros along C and summed by a
// generic with a reduction loop over the window.
LogicalResult lowerLRN(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  int64_t size = ctx.getIntAttr("size", 0);
  if (rank < 3 || size < 1)
    return ctx.fail("needs an [N, C, ...] input and a positive size");
  Type et = type->getElementType();
  if (!isa<FloatType>(et))
    return ctx.fail("input must be floating-point");
  double alpha = ctx.getFloatAttr("alpha", 1e-4f);
  double beta = ctx.getFloatAttr("beta", 0.75f);
  double bias = ctx.getFloatAttr("bias", 1.0f);
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value x = ctx.getInput(0);
  Value squares = createElementwise(
      b, loc, {x}, *type, [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::MulFOp::create(nb, nl, a[0], a[0]).getResult();
      });
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  low[1] = (size - 1) / 2;
  high[1] = size - 1 - low[1];
  SmallVector<int64_t> paddedShape(type->getShape());
  paddedShape[1] += size - 1;
  Value padded = tensor::PadOp::create(
      b, loc, RankedTensorType::get(paddedShape, et), squares,
      getAsIndexOpFoldResult(b.getContext(), low),
      getAsIndexOpFoldResult(b.getContext(), high),
      createScalar(b, loc, et, 0));
  // Loops: the result dims, then k over the window.
  auto dim = [&](int64_t i) { return b.getAffineDimExpr(i); };
  SmallVector<AffineExpr> inExprs, outExprs;
  for (int64_t i = 0; i < rank; ++i) {
    inExprs.push_back(i == 1 ? dim(1) + dim(rank) : dim(i));
    outExprs.push_back(dim(i));
  }
  SmallVector<AffineMap> maps{
      AffineMap::get(rank + 1, 0, inExprs, b.getContext()),
      AffineMap::get(rank + 1, 0, dim(rank)),
      AffineMap::get(rank + 1, 0, outExprs, b.getContext())};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value window =
      createEmpty(b, loc, RankedTensorType::get({size}, b.getI1Type()));
  Value sums =
      linalg::GenericOp::create(
          b, loc, TypeRange{*type}, ValueRange{padded, window},
          ValueRange{createFilled(b, loc, *type, createScalar(b, loc, et, 0))},
          maps, iterators,
          [](OpBuilder &nb, Location nl, ValueRange a) {
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{
                    arith::AddFOp::create(nb, nl, a[2], a[0]).getResult()});
          })
          .getResult(0);
  Value result = createElementwise(
      b, loc, {x, sums}, *type, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value scaled = arith::MulFOp::create(
            nb, nl, a[1], createScalar(nb, nl, et, alpha / size));
        Value base = arith::AddFOp::create(nb, nl, scaled,
                                           createScalar(nb, nl, et, bias));
        Value denominator =
            math::PowFOp::create(nb, nl, base, createScalar(nb, nl, et, beta));
        return arith::DivFOp::create(nb, nl, a[0], denominator).getResult();
      });
  return ctx.setOutput(0, result);
}

// MeanVarianceNormalization (its ONNX function): (x - E[x]) /
// (sqrt(E[x^2] - E[x]^2) + 1e-9) over `axes` (default 0, 2, 3).
LogicalResult lowerMVN(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  Type et = type->getElementType();
  if (!isa<FloatType>(et))
    return ctx.fail("input must be floating-point");
  SmallVector<int64_t> axes = ctx.hasAttr("axes")
                                  ? ctx.getIntsAttr("axes")
                                  : SmallVector<int64_t>{0, 2, 3};
  int64_t count = 1;
  for (int64_t &a : axes) {
    if (a < -rank || a >= rank)
      return ctx.fail("axis " + Twine(a) + " is out of range");
    a = normalizeAxis(a, rank);
    count *= type->getDimSize(a);
  }
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value x = ctx.getInput(0);
  auto mean = [&](Value v) {
    Value sum = createReduction(
        b, loc, v, axes, /*keepDims=*/true, createScalar(b, loc, et, 0),
        [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
          return arith::AddFOp::create(nb, nl, a[0], a[1]);
        });
    auto sumType = cast<RankedTensorType>(sum.getType());
    return createElementwise(
        b, loc, {sum}, sumType, [&](OpBuilder &nb, Location nl, ValueRange a) {
          return arith::DivFOp::create(nb, nl, a[0],
                                       createScalar(nb, nl, et, count))
              .getResult();
        });
  };
  Value squares = createElementwise(
      b, loc, {x}, *type, [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::MulFOp::create(nb, nl, a[0], a[0]).getResult();
      });
  Value m = mean(x), m2 = mean(squares);
  Value result = createElementwise(
      b, loc, {x, m, m2}, *type, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value var = arith::SubFOp::create(
            nb, nl, a[2], arith::MulFOp::create(nb, nl, a[1], a[1]));
        Value std =
            arith::AddFOp::create(nb, nl, math::SqrtOp::create(nb, nl, var),
                                  createScalar(nb, nl, et, 1e-9));
        return arith::DivFOp::create(
                   nb, nl, arith::SubFOp::create(nb, nl, a[0], a[1]), std)
            .getResult();
      });
  return ctx.setOutput(0, result);
}

} // namespace

// The type statistics are computed in: f32 for narrower floats when
// stash_type is 1 (FLOAT), else the input's.
Type getStashType(NodeContext &ctx, Type elementType) {
  if (ctx.getIntAttr("stash_type", 1) == 1 &&
      elementType.getIntOrFloatBitWidth() < 32)
    return Float32Type::get(ctx.getContext());
  return elementType;
}

// RMSNormalization: x / sqrt(mean(x^2 over [axis, rank)) + epsilon) * scale.
LogicalResult lowerRMSNorm(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0);
  if (!isa<FloatType>(xt.getElementType()) ||
      xt.getElementType() != type->getElementType() ||
      xt.getShape() != type->getShape())
    return ctx.fail("the input and the result must be floats of one shape");
  int64_t rank = xt.getRank();
  FailureOr<int64_t> axis = ctx.getAxis(ctx.getIntAttr("axis", -1), rank);
  if (failed(axis))
    return failure();
  SmallVector<int64_t> axes;
  for (int64_t i = *axis; i < rank; ++i)
    axes.push_back(i);
  double eps = ctx.getFloatAttr("epsilon", 1e-5f);
  Type et = xt.getElementType();
  Type st = getStashType(ctx, et);
  Value x = createCast(b, loc, ctx.getInput(0), st, false, false);
  auto stashed = RankedTensorType::get(xt.getShape(), st);
  Value squares = createElementwise(
      b, loc, {x}, stashed, [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::MulFOp::create(nb, nl, a[0], a[0]).getResult();
      });
  Value meanSquare = meanOver(b, loc, squares, axes);
  Value normalized = createElementwise(
      b, loc, {x, meanSquare}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value v =
            arith::AddFOp::create(nb, nl, a[1], createScalar(nb, nl, st, eps));
        Value r = arith::DivFOp::create(nb, nl, a[0],
                                        math::SqrtOp::create(nb, nl, v));
        return createScalarCast(nb, nl, r, et, false, false);
      });
  if (ctx.getInputType(1).getElementType() != et)
    return ctx.fail("scale must have the input's element type");
  Value y = createElementwise(
      b, loc, {normalized, ctx.getInput(1)}, *type,
      [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::MulFOp::create(nb, nl, a[0], a[1]).getResult();
      });
  return ctx.setOutput(0, y);
}

// GroupNormalization: the channels of X [N, C, ...] in num_groups groups,
// each normalized over its channels and all spatial positions; then scale
// and bias, per channel (opset 21) or per group (opset 18).
LogicalResult lowerGroupNorm(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0);
  int64_t rank = xt.getRank();
  if (rank < 2 || !isa<FloatType>(xt.getElementType()) ||
      xt.getElementType() != type->getElementType() ||
      xt.getShape() != type->getShape())
    return ctx.fail("X must be a float tensor [N, C, ...] of the result's "
                    "type");
  int64_t groups = ctx.getIntAttr("num_groups", 0);
  int64_t channels = xt.getDimSize(1);
  if (groups <= 0 || channels % groups != 0)
    return ctx.fail("num_groups " + Twine(groups) +
                    " must be positive and divide the " + Twine(channels) +
                    " channels");
  bool perChannel = ctx.getOpset() >= 21;
  int64_t paramSize = perChannel ? channels : groups;
  for (unsigned i = 1; i <= 2; ++i)
    if (ctx.getInputType(i).getNumElements() != paramSize ||
        ctx.getInputType(i).getElementType() != xt.getElementType())
      return ctx.fail(Twine(i == 1 ? "scale" : "bias") + " must have " +
                      Twine(paramSize) + " values of X's type (one per " +
                      (perChannel ? "channel" : "group") + ")");
  Type et = xt.getElementType();
  Type st = getStashType(ctx, et);
  int64_t perGroup = xt.getNumElements() / xt.getDimSize(0) / groups;
  Value grouped = createReshape(
      b, loc, createCast(b, loc, ctx.getInput(0), st, false, false),
      {xt.getDimSize(0), groups, perGroup});
  auto [mean, var] = moments(b, loc, grouped, {2});
  auto groupedType = cast<RankedTensorType>(grouped.getType());
  Value normalized = normalize(b, loc, groupedType, grouped, mean, var, Value(),
                               Value(), ctx.getFloatAttr("epsilon", 1e-5f));
  normalized =
      createCast(b, loc, createReshape(b, loc, normalized, xt.getShape()), et,
                 false, false);
  auto perChannelParam = [&](Value v) {
    if (!perChannel) {
      v = createBroadcast(b, loc, createReshape(b, loc, v, {groups, 1}),
                          {groups, channels / groups});
      v = createReshape(b, loc, v, {channels});
    }
    return channelVector(b, loc, createReshape(b, loc, v, {channels}), rank);
  };
  Value y = createElementwise(
      b, loc,
      {normalized, perChannelParam(ctx.getInput(1)),
       perChannelParam(ctx.getInput(2))},
      *type, [](OpBuilder &nb, Location nl, ValueRange a) {
        Value scaled = arith::MulFOp::create(nb, nl, a[0], a[1]);
        return arith::AddFOp::create(nb, nl, scaled, a[2]).getResult();
      });
  return ctx.setOutput(0, y);
}

// LpNormalization: x / ||x||_p along `axis` (p 1 or 2); 0 where the norm
// is 0.
LogicalResult lowerLpNorm(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  RankedTensorType xt = ctx.getInputType(0);
  if (!isa<FloatType>(xt.getElementType()) || xt != *type)
    return ctx.fail("the input and the result must be floats of one type");
  FailureOr<int64_t> axis =
      ctx.getAxis(ctx.getIntAttr("axis", -1), xt.getRank());
  if (failed(axis))
    return failure();
  int64_t p = ctx.getIntAttr("p", 2);
  if (p != 1 && p != 2)
    return ctx.fail("p must be 1 or 2");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Type et = xt.getElementType();
  Value x = ctx.getInput(0);
  Value magnitudes = createElementwise(
      b, loc, {x}, xt, [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        if (p == 1)
          return math::AbsFOp::create(nb, nl, a[0]);
        return arith::MulFOp::create(nb, nl, a[0], a[0]);
      });
  Value sums = createReduction(
      b, loc, magnitudes, {*axis}, true, createScalar(b, loc, et, 0),
      [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::AddFOp::create(nb, nl, a[0], a[1]).getResult();
      });
  Value y = createElementwise(
      b, loc, {x, sums}, xt, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value norm = p == 1 ? a[1] : math::SqrtOp::create(nb, nl, a[1]);
        Value zero = createScalar(nb, nl, et, 0);
        Value isZero = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                             norm, zero);
        return arith::SelectOp::create(
                   nb, nl, isZero, zero,
                   arith::DivFOp::create(nb, nl, a[0], norm))
            .getResult();
      });
  return ctx.setOutput(0, y);
}

void addNormalizationLowerings(LoweringTable &t) {
  t["LRN"] = lowerLRN;
  t["MeanVarianceNormalization"] = lowerMVN;
  t["BatchNormalization"] = lowerBatchNorm;
  t["LayerNormalization"] = lowerLayerNorm;
  t["InstanceNormalization"] = lowerInstanceNorm;
  t["RMSNormalization"] = lowerRMSNorm;
  t["GroupNormalization"] = lowerGroupNorm;
  t["LpNormalization"] = lowerLpNorm;
}

} // namespace strata::onnx_importer
