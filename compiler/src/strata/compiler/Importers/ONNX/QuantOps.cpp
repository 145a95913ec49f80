//===- QuantOps.cpp - QuantizeLinear, DequantizeLinear, Dynamic... --------===//
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
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

// A scale or zero point of shape [] or [1] as is, or a 1-D one reshaped to
// broadcast along `axis` of a rank-`rank` tensor.
FailureOr<Value> alongAxis(NodeContext &ctx, unsigned input, int64_t rank,
                           ArrayRef<int64_t> shape) {
  Value v = ctx.getInput(input);
  RankedTensorType t = ctx.getInputType(input);
  if (t.getNumElements() == 1)
    return createReshape(ctx.getBuilder(), ctx.getLoc(), v, {});
  int64_t axis = ctx.getIntAttr("axis", 1);
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

// saturate(round_half_even(x / scale) + zp) into `to` (8-bit here).
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
  if (!isa<IntegerType>(to) || to.getIntOrFloatBitWidth() != 8)
    return ctx.fail("only 8-bit quantization is supported");
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

} // namespace

void addQuantLowerings(LoweringTable &t) {
  t["QuantizeLinear"] = lowerQuantizeLinear;
  t["DequantizeLinear"] = lowerDequantizeLinear;
  t["DynamicQuantizeLinear"] = lowerDynamicQuantizeLinear;
}

} // namespace strata::onnx_importer
