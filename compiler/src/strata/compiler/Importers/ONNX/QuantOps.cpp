//===- QuantOps.cpp - (De)QuantizeLinear, integer and QLinear MatMul/Conv -===//
//
// Linear (de)quantization as elementwise generics in f32, as the ONNX
// reference computes it: y = saturate(round_half_even(x / scale) + zp) and
// x = (q - zp) * scale. A 1-D scale/zero point applies along `axis`
// (reshaped to broadcast there). Integer element types are signless in the
// IR; the ONNX types (uint8 vs int8) choose the saturation range and the
// conversions.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/ConvUtils.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

// A blocked scale or zero point (opset 21's block_size): x's shape but
// ceil(n / block) along `axis`, each value repeated over its block.
FailureOr<Value> repeatBlocks(NodeContext &ctx, Value v, RankedTensorType t,
                              int64_t axis, int64_t block,
                              ArrayRef<int64_t> shape) {
  int64_t rank = shape.size();
  if (t.getRank() != rank)
    return ctx.fail("a blocked scale or zero point must have x's rank");
  for (int64_t d = 0; d < rank; ++d)
    if (d == axis ? t.getDimSize(d) != (shape[d] + block - 1) / block
                  : t.getDimSize(d) != shape[d])
      return ctx.fail("a blocked scale or zero point must be x's shape with "
                      "ceil(n / block_size) along axis");
  return createIndexedGeneric(
      ctx.getBuilder(), ctx.getLoc(), {}, {},
      RankedTensorType::get(shape, t.getElementType()),
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        SmallVector<Value> at(ivs);
        at[axis] = arith::DivUIOp::create(
            nb, nl, ivs[axis], arith::ConstantIndexOp::create(nb, nl, block));
        return tensor::ExtractOp::create(nb, nl, v, at).getResult();
      });
}

// A scale or zero point of shape [] or [1] as is, a 1-D one reshaped to
// broadcast along `axis` of a rank-`rank` tensor, or a blocked one
// repeated over its blocks.
FailureOr<Value> alongAxis(NodeContext &ctx, unsigned input, int64_t rank,
                           ArrayRef<int64_t> shape) {
  Value v = ctx.getInput(input);
  RankedTensorType t = ctx.getInputType(input);
  int64_t block = ctx.getIntAttr("block_size", 0);
  if (block < 0)
    return ctx.fail("block_size must not be negative");
  if (t.getNumElements() == 1 && block == 0)
    return createReshape(ctx.getBuilder(), ctx.getLoc(), v, {});
  int64_t axis = ctx.getIntAttr("axis", 1);
  if (block > 0) {
    if (axis < -rank || axis >= rank)
      return ctx.fail("axis is out of range");
    return repeatBlocks(ctx, v, t, normalizeAxis(axis, rank), block, shape);
  }
  if (t.getRank() != 1 || axis < -rank || axis >= rank)
    return ctx.fail("scale and zero point must be scalars or 1-D along a "
                    "valid axis");
  axis = normalizeAxis(axis, rank);
  if (t.getDimSize(0) != shape[axis])
    return ctx.fail("scale and zero point do not match the axis size");
  SmallVector<int64_t> broadcastShape(rank - axis, 1);
  broadcastShape[0] = t.getDimSize(0);
  return createReshape(ctx.getBuilder(), ctx.getLoc(), v, broadcastShape);
}

// saturate(round_half_even(x / scale) + zp) into `to` (8 or 16 bits).
Value quantize(OpBuilder &b, Location loc, Value x, Value scale, Value zp,
               Type to, bool toUnsigned) {
  Type f32 = b.getF32Type();
  x = createScalarCast(b, loc, x, f32, false, false);
  scale = createScalarCast(b, loc, scale, f32, false, false);
  Value q = math::RoundEvenOp::create(b, loc,
                                      arith::DivFOp::create(b, loc, x, scale));
  if (zp)
    q = arith::AddFOp::create(
        b, loc, q, createScalarCast(b, loc, zp, f32, toUnsigned, false));
  unsigned bits = to.getIntOrFloatBitWidth();
  double lo = toUnsigned ? 0 : -std::ldexp(1.0, bits - 1);
  double hi =
      toUnsigned ? std::ldexp(1.0, bits) - 1 : std::ldexp(1.0, bits - 1) - 1;
  q = arith::MaximumFOp::create(b, loc, q, createScalar(b, loc, f32, lo));
  q = arith::MinimumFOp::create(b, loc, q, createScalar(b, loc, f32, hi));
  return createScalarCast(b, loc, q, to, false, toUnsigned);
}

LogicalResult lowerQuantizeLinear(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  Type to = type->getElementType();
  if (!isa<IntegerType>(to) ||
      (to.getIntOrFloatBitWidth() != 8 && to.getIntOrFloatBitWidth() != 16))
    return ctx.fail("only 8- and 16-bit integer quantization is supported");
  int64_t rank = type->getRank();
  SmallVector<Value> inputs{ctx.getInput(0)};
  FailureOr<Value> scale = alongAxis(ctx, 1, rank, type->getShape());
  if (failed(scale))
    return failure();
  inputs.push_back(*scale);
  bool hasZp = ctx.hasInput(2);
  if (hasZp) {
    FailureOr<Value> zp = alongAxis(ctx, 2, rank, type->getShape());
    if (failed(zp))
      return failure();
    inputs.push_back(*zp);
  }
  bool toUnsigned = ctx.isOutputUnsigned(0);
  Value result = createElementwise(
      ctx.getBuilder(), ctx.getLoc(), inputs, *type,
      [&](OpBuilder &b, Location loc, ValueRange a) {
        return quantize(b, loc, a[0], a[1], hasZp ? a[2] : Value(), to,
                        toUnsigned);
      });
  return ctx.setOutput(0, result);
}

LogicalResult lowerDequantizeLinear(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  SmallVector<Value> inputs{ctx.getInput(0)};
  FailureOr<Value> scale = alongAxis(ctx, 1, rank, type->getShape());
  if (failed(scale))
    return failure();
  inputs.push_back(*scale);
  bool hasZp = ctx.hasInput(2);
  if (hasZp) {
    FailureOr<Value> zp = alongAxis(ctx, 2, rank, type->getShape());
    if (failed(zp))
      return failure();
    inputs.push_back(*zp);
  }
  bool fromUnsigned = ctx.isInputUnsigned(0);
  Type et = type->getElementType();
  Value result = createElementwise(
      ctx.getBuilder(), ctx.getLoc(), inputs, *type,
      [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
        Type f32 = b.getF32Type();
        Value x = createScalarCast(b, loc, a[0], f32, fromUnsigned, false);
        if (hasZp)
          x = arith::SubFOp::create(
              b, loc, x,
              createScalarCast(b, loc, a[2], f32, fromUnsigned, false));
        Value s = createScalarCast(b, loc, a[1], f32, false, false);
        return createScalarCast(b, loc, arith::MulFOp::create(b, loc, x, s), et,
                                false, false);
      });
  return ctx.setOutput(0, result);
}

// DynamicQuantizeLinear: uint8 with the range [min(0, min x), max(0, max
// x)] mapped onto [0, 255].
LogicalResult lowerDynamicQuantizeLinear(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  FailureOr<RankedTensorType> scaleType = ctx.getOutputType(1);
  FailureOr<RankedTensorType> zpType = ctx.getOutputType(2);
  if (failed(type) || failed(scaleType) || failed(zpType))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0);
  Type f32 = b.getF32Type();
  if (xt.getElementType() != f32)
    return ctx.fail("input must be f32");
  Value x = ctx.getInput(0);
  SmallVector<int64_t> all =
      llvm::to_vector(llvm::seq<int64_t>(0, xt.getRank()));
  // The range always includes 0 so that 0 is exactly representable.
  Value lo =
      createReduction(b, loc, x, all, false, createScalar(b, loc, f32, 0),
                      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                        return arith::MinimumFOp::create(nb, nl, a[0], a[1]);
                      });
  Value hi =
      createReduction(b, loc, x, all, false, createScalar(b, loc, f32, 0),
                      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                        return arith::MaximumFOp::create(nb, nl, a[0], a[1]);
                      });
  auto scalarType = RankedTensorType::get({}, f32);
  Value scale =
      createElementwise(b, loc, {lo, hi}, scalarType,
                        [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                          return arith::DivFOp::create(
                              nb, nl, arith::SubFOp::create(nb, nl, a[1], a[0]),
                              createScalar(nb, nl, nb.getF32Type(), 255));
                        });
  Type u8 = zpType->getElementType();
  Value zp = createElementwise(
      b, loc, {lo, scale}, *zpType,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value zero = createScalar(nb, nl, f32, 0);
        Value negLo = arith::SubFOp::create(nb, nl, zero, a[0]);
        return quantize(nb, nl, negLo, a[1], Value(), u8, /*toUnsigned=*/true);
      });
  Value y = createElementwise(b, loc, {x, scale, zp}, *type,
                              [&](OpBuilder &nb, Location nl, ValueRange a) {
                                return quantize(nb, nl, a[0], a[1], a[2],
                                                type->getElementType(),
                                                /*toUnsigned=*/true);
                              });
  if (failed(ctx.setOutput(0, y)) ||
      failed(ctx.setOutput(
          1, createReshape(b, loc, scale, scaleType->getShape()))))
    return failure();
  return ctx.setOutput(2, zp);
}

// Input `input` as i32 minus its zero point (input `zpInput`, optional): a
// scalar, or 1-D along `axis` of the input (per row / per channel).
FailureOr<Value> shiftedI32(NodeContext &ctx, unsigned input, unsigned zpInput,
                            int64_t axis) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType t = ctx.getInputType(input);
  if (!isa<IntegerType>(t.getElementType()))
    return ctx.fail("operands must be integers");
  Type i32 = b.getI32Type();
  auto i32Type = RankedTensorType::get(t.getShape(), i32);
  bool isUnsigned = ctx.isInputUnsigned(input);
  SmallVector<Value> inputs{ctx.getInput(input)};
  if (ctx.hasInput(zpInput)) {
    RankedTensorType zt = ctx.getInputType(zpInput);
    Value zp = ctx.getInput(zpInput);
    if (zt.getNumElements() == 1) {
      zp = createReshape(b, loc, zp, {});
    } else {
      axis = normalizeAxis(axis, t.getRank());
      if (zt.getRank() != 1 || axis < 0 || axis >= t.getRank() ||
          zt.getDimSize(0) != t.getDimSize(axis))
        return ctx.fail("zero point must be a scalar or 1-D along dim " +
                        Twine(axis));
      SmallVector<int64_t> shape(t.getRank() - axis, 1);
      shape[0] = zt.getDimSize(0);
      zp = createReshape(b, loc, zp, shape);
    }
    inputs.push_back(zp);
  }
  return createElementwise(
      b, loc, inputs, i32Type, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value v = createScalarCast(nb, nl, a[0], i32, isUnsigned, false);
        if (a.size() == 1)
          return v;
        return arith::SubIOp::create(
                   nb, nl, v,
                   createScalarCast(nb, nl, a[1], i32, isUnsigned, false))
            .getResult();
      });
}

// A per-tensor scale (shape [] or [1]) as a rank-0 tensor.
FailureOr<Value> scalarScale(NodeContext &ctx, unsigned input) {
  RankedTensorType t = ctx.getInputType(input);
  if (t.getNumElements() != 1)
    return ctx.fail("only per-tensor scales are supported");
  return createReshape(ctx.getBuilder(), ctx.getLoc(), ctx.getInput(input), {});
}

// Requantizes an i32 accumulator: quantize(acc * inScale * wScale /
// yScale, yZp) into the result type.
LogicalResult requantize(NodeContext &ctx, Value acc, Value inScale,
                         Value wScale, unsigned yScaleInput,
                         unsigned yZpInput) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  FailureOr<Value> yScale = scalarScale(ctx, yScaleInput);
  if (failed(yScale))
    return failure();
  Type scaleType = getElementTypeOrSelf(inScale.getType());
  if (!isa<FloatType>(scaleType) ||
      getElementTypeOrSelf(wScale.getType()) != scaleType ||
      getElementTypeOrSelf(yScale->getType()) != scaleType)
    return ctx.fail("the scales must share one floating-point type");
  SmallVector<Value> inputs{acc, inScale, wScale, *yScale};
  bool hasZp = ctx.hasInput(yZpInput);
  if (hasZp)
    inputs.push_back(createReshape(ctx.getBuilder(), ctx.getLoc(),
                                   ctx.getInput(yZpInput), {}));
  Type to = type->getElementType();
  bool toUnsigned = ctx.isOutputUnsigned(0);
  Value result = createElementwise(
      ctx.getBuilder(), ctx.getLoc(), inputs, *type,
      [&](OpBuilder &b, Location loc, ValueRange a) {
        Type f32 = b.getF32Type();
        Value v = createScalarCast(b, loc, a[0], f32, false, false);
        // The scales' product in their own type (f16 scales round as the
        // ONNX reference rounds them), then widened.
        Value scale = arith::DivFOp::create(
            b, loc, arith::MulFOp::create(b, loc, a[1], a[2]), a[3]);
        scale = createScalarCast(b, loc, scale, f32, false, false);
        v = arith::MulFOp::create(b, loc, v, scale);
        return quantize(b, loc, v, createScalar(b, loc, f32, 1),
                        hasZp ? a[4] : Value(), to, toUnsigned);
      });
  return ctx.setOutput(0, result);
}

// MatMulInteger: (A - a_zp) @ (B - b_zp) in i32 (a_zp per row of A or
// scalar, b_zp per column of B or scalar).
LogicalResult lowerMatMulInteger(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  FailureOr<Value> a = shiftedI32(ctx, 0, 2, -2);
  FailureOr<Value> b = shiftedI32(ctx, 1, 3, -1);
  if (failed(a) || failed(b) ||
      failed(checkMatMulOperands(ctx, cast<RankedTensorType>(a->getType()),
                                 cast<RankedTensorType>(b->getType()), *type)))
    return failure();
  return ctx.setOutput(
      0, createMatMul(ctx.getBuilder(), ctx.getLoc(), *a, *b, *type));
}

LogicalResult lowerQLinearMatMul(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  FailureOr<Value> a = shiftedI32(ctx, 0, 2, -2);
  FailureOr<Value> b = shiftedI32(ctx, 3, 5, -1);
  FailureOr<Value> aScale = scalarScale(ctx, 1);
  FailureOr<Value> bScale = scalarScale(ctx, 4);
  if (failed(a) || failed(b) || failed(aScale) || failed(bScale))
    return failure();
  auto accType =
      RankedTensorType::get(type->getShape(), ctx.getBuilder().getI32Type());
  if (failed(checkMatMulOperands(ctx, cast<RankedTensorType>(a->getType()),
                                 cast<RankedTensorType>(b->getType()),
                                 accType)))
    return failure();
  Value acc = createMatMul(ctx.getBuilder(), ctx.getLoc(), *a, *b, accType);
  return requantize(ctx, acc, *aScale, *bScale, 6, 7);
}

// The i32 convolution of ConvInteger/QLinearConv: inputs x, w at `xIndex`,
// `wIndex` with zero points at `xZp`, `wZp` (w's per output channel).
FailureOr<Value> convI32(NodeContext &ctx, unsigned xIndex, unsigned xZp,
                         unsigned wIndex, unsigned wZp,
                         ArrayRef<int64_t> resultShape) {
  RankedTensorType xt = ctx.getInputType(xIndex), wt = ctx.getInputType(wIndex);
  if (xt.getRank() < 3 || wt.getRank() != xt.getRank())
    return ctx.fail("input and weight must be [N, C, spatial...] of one rank");
  FailureOr<Value> x = shiftedI32(ctx, xIndex, xZp, 1);
  FailureOr<Value> w = shiftedI32(ctx, wIndex, wZp, 0);
  if (failed(x) || failed(w))
    return failure();
  FailureOr<WindowParams> p = getWindowParams(ctx, xt.getShape().drop_front(2),
                                              wt.getShape().drop_front(2));
  if (failed(p))
    return failure();
  int64_t group = ctx.getIntAttr("group", 1);
  if (group < 1 || xt.getDimSize(1) != wt.getDimSize(1) * group ||
      wt.getDimSize(0) % group != 0)
    return ctx.fail("weight channels do not match the input and group");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  // Zero after the shift: the padding stands for the zero point.
  Value padded = padSpatial(b, loc, *x, p->padsBegin, p->padsEnd,
                            createScalar(b, loc, b.getI32Type(), 0));
  return createConvGeneric(b, loc, padded, *w,
                           RankedTensorType::get(resultShape, b.getI32Type()),
                           *p, group);
}

LogicalResult lowerConvInteger(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  FailureOr<Value> acc = convI32(ctx, 0, 2, 1, 3, type->getShape());
  if (failed(acc))
    return failure();
  return ctx.setOutput(0, *acc);
}

LogicalResult lowerQLinearConv(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  FailureOr<Value> acc = convI32(ctx, 0, 2, 3, 5, type->getShape());
  FailureOr<Value> xScale = scalarScale(ctx, 1);
  FailureOr<Value> wScale = scalarScale(ctx, 4);
  if (failed(acc) || failed(xScale) || failed(wScale))
    return failure();
  Value sum = *acc;
  if (ctx.hasInput(8)) {
    // The i32 bias, one value per output channel.
    SmallVector<int64_t> biasShape{type->getDimSize(1)};
    biasShape.append(type->getRank() - 2, 1);
    OpBuilder &b = ctx.getBuilder();
    Value bias = createReshape(b, ctx.getLoc(), ctx.getInput(8), biasShape);
    sum = createElementwise(
        b, ctx.getLoc(), {sum, bias}, cast<RankedTensorType>(sum.getType()),
        [](OpBuilder &nb, Location nl, ValueRange a) {
          return arith::AddIOp::create(nb, nl, a[0], a[1]).getResult();
        });
  }
  return requantize(ctx, sum, *xScale, *wScale, 6, 7);
}

} // namespace

void addQuantLowerings(LoweringTable &t) {
  t["MatMulInteger"] = lowerMatMulInteger;
  t["QLinearMatMul"] = lowerQLinearMatMul;
  t["ConvInteger"] = lowerConvInteger;
  t["QLinearConv"] = lowerQLinearConv;
  t["QuantizeLinear"] = lowerQuantizeLinear;
  t["DequantizeLinear"] = lowerDequantizeLinear;
  t["DynamicQuantizeLinear"] = lowerDynamicQuantizeLinear;
}

} // namespace strata::onnx_importer
