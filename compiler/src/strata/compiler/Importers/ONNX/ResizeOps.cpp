//===- ResizeOps.cpp - Resize (nearest, linear, cubic) --------------------===//
//
// One parallel linalg.generic over the result. Per resized dim the body maps
// the output index to a source coordinate (coordinate_transformation_mode),
// picks the taps of the interpolation (1 nearest, 2 linear, 4 cubic; edge
// indices clamped, which is what the reference's edge padding gives) and
// sums the tensor product of the taps read with tensor.extract.
// Coordinates and weights are computed in f64 as the ONNX reference does,
// so ties in nearest rounding and floor() fall on the same side.
//
// Scales may arrive at run time (they are read in the body); the result
// shape always comes from shape inference or the graph's declared type.
// Dims whose size does not change are taken as not resized (scale 1)
// unless the scales are known at compile time.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

struct ResizeAttrs {
  std::string mode, coordMode, nearestMode;
  double cubicA, extrapolation;
  bool excludeOutside;
};

// One tap of a 1-D interpolation: a clamped source index and its weight
// (null weight: 1, for nearest).
struct Tap {
  Value index;
  Value weight;
};

struct ResizeBuilder {
  OpBuilder &b;
  Location loc;
  const ResizeAttrs &attrs;

  Value f64(double v) { return createScalar(b, loc, b.getF64Type(), v); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }

  // The source coordinate of output index `i` along a dim of `inSize`
  // input elements with `scale` (f64); roiStart/roiEnd for
  // tf_crop_and_resize.
  Value sourceCoord(Value i, int64_t inSize, Value scale, Value roiStart,
                    Value roiEnd) {
    Value x = arith::SIToFPOp::create(
        b, loc, b.getF64Type(),
        arith::IndexCastOp::create(b, loc, b.getI64Type(), i));
    // The reference uses the fractional output length scale * inSize.
    Value outLength = mul(scale, f64(inSize));
    Value isOne = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                        outLength, f64(1));
    const std::string &m = attrs.coordMode;
    if (m == "align_corners") {
      Value r = div(mul(x, f64(inSize - 1)), sub(outLength, f64(1)));
      return arith::SelectOp::create(b, loc, isOne, f64(0), r);
    }
    if (m == "asymmetric")
      return div(x, scale);
    if (m == "tf_half_pixel_for_nn")
      return div(add(x, f64(0.5)), scale);
    if (m == "tf_crop_and_resize") {
      Value extent = mul(sub(roiEnd, roiStart), f64(inSize - 1));
      Value one = div(extent, f64(2));
      Value many = div(mul(x, extent), sub(outLength, f64(1)));
      Value r = arith::SelectOp::create(b, loc, isOne, one, many);
      return add(r, mul(roiStart, f64(inSize - 1)));
    }
    Value r = sub(div(add(x, f64(0.5)), scale), f64(0.5));
    if (m == "pytorch_half_pixel")
      return arith::SelectOp::create(b, loc, isOne, f64(-0.5), r);
    return r; // half_pixel
  }

  Value clampIndex(Value i64, int64_t inSize) {
    Value c = arith::MaxSIOp::create(b, loc, i64,
                                     createScalar(b, loc, b.getI64Type(), 0));
    c = arith::MinSIOp::create(
        b, loc, c, createScalar(b, loc, b.getI64Type(), inSize - 1));
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), c);
  }
  Value offset(Value i64, int64_t k) {
    return arith::AddIOp::create(b, loc, i64,
                                 createScalar(b, loc, b.getI64Type(), k));
  }

  // Cubic convolution weight of a tap at distance t in [0, 2).
  Value cubicWeight(Value t) {
    double a = attrs.cubicA;
    // |t| <= 1: ((A + 2) t - (A + 3)) t^2 + 1
    Value near =
        add(mul(sub(mul(f64(a + 2), t), f64(a + 3)), mul(t, t)), f64(1));
    // 1 < |t| < 2: ((A t - 5A) t + 8A) t - 4A
    Value far =
        sub(mul(add(mul(sub(mul(f64(a), t), f64(5 * a)), t), f64(8 * a)), t),
            f64(4 * a));
    Value isNear =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, t, f64(1));
    return arith::SelectOp::create(b, loc, isNear, near, far);
  }

  SmallVector<Tap> taps(Value x, int64_t inSize) {
    Value x0 = math::FloorOp::create(b, loc, x);
    Value ratio = sub(x, x0);
    Value i0 = arith::FPToSIOp::create(b, loc, b.getI64Type(), x0);
    if (attrs.mode == "nearest") {
      using P = arith::CmpFPredicate;
      Value up;
      const std::string &n = attrs.nearestMode;
      if (n == "floor")
        up = createScalar(b, loc, b.getI1Type(), 0);
      else
        up = arith::CmpFOp::create(b, loc,
                                   n == "ceil"                ? P::OGT
                                   : n == "round_prefer_ceil" ? P::OGE
                                                              : P::OGT,
                                   ratio, f64(n == "ceil" ? 0 : 0.5));
      Value i = offset(i0, 0);
      i = arith::SelectOp::create(b, loc, up, offset(i0, 1), i);
      return {{clampIndex(i, inSize), Value()}};
    }
    if (attrs.mode == "linear")
      return {{clampIndex(i0, inSize), sub(f64(1), ratio)},
              {clampIndex(offset(i0, 1), inSize), ratio}};
    // Cubic: taps at x0-1 .. x0+2, at distances 1+r, r, 1-r, 2-r.
    SmallVector<Tap> result;
    SmallVector<Value> distances{add(f64(1), ratio), ratio, sub(f64(1), ratio),
                                 sub(f64(2), ratio)};
    Value total = f64(0);
    for (int64_t k = 0; k < 4; ++k) {
      Value i = offset(i0, k - 1);
      Value w = cubicWeight(distances[k]);
      if (attrs.excludeOutside) {
        using P = arith::CmpIPredicate;
        Value inside = arith::AndIOp::create(
            b, loc,
            arith::CmpIOp::create(b, loc, P::sge, i,
                                  createScalar(b, loc, b.getI64Type(), 0)),
            arith::CmpIOp::create(
                b, loc, P::slt, i,
                createScalar(b, loc, b.getI64Type(), inSize)));
        w = arith::SelectOp::create(b, loc, inside, w, f64(0));
        total = add(total, w);
      }
      result.push_back({clampIndex(i, inSize), w});
    }
    if (attrs.excludeOutside)
      for (Tap &tap : result)
        tap.weight = div(tap.weight, total);
    return result;
  }
};

LogicalResult lowerResize(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  if (ctx.getOpset() < 11)
    return ctx.fail("Resize before opset 11 is not supported");
  for (const char *name : {"antialias", "axes", "keep_aspect_ratio_policy"})
    if (ctx.hasAttr(name))
      return ctx.fail(std::string("attribute '") + name + "' is not supported");
  ResizeAttrs attrs;
  attrs.mode = ctx.getStringAttr("mode", "nearest");
  attrs.coordMode =
      ctx.getStringAttr("coordinate_transformation_mode", "half_pixel");
  attrs.nearestMode = ctx.getStringAttr("nearest_mode", "round_prefer_floor");
  attrs.cubicA = ctx.getFloatAttr("cubic_coeff_a", -0.75f);
  attrs.extrapolation = ctx.getFloatAttr("extrapolation_value", 0.0f);
  attrs.excludeOutside = ctx.getIntAttr("exclude_outside", 0) != 0;
  if (attrs.mode != "nearest" && attrs.mode != "linear" &&
      attrs.mode != "cubic")
    return ctx.fail("unknown mode '" + attrs.mode + "'");
  if (!llvm::is_contained({"half_pixel", "pytorch_half_pixel", "align_corners",
                           "asymmetric", "tf_half_pixel_for_nn",
                           "tf_crop_and_resize"},
                          attrs.coordMode))
    return ctx.fail("unknown coordinate_transformation_mode '" +
                    attrs.coordMode + "'");
  if (!llvm::is_contained(
          {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"},
          attrs.nearestMode))
    return ctx.fail("unknown nearest_mode '" + attrs.nearestMode + "'");
  RankedTensorType xt = ctx.getInputType(0);
  int64_t rank = xt.getRank();
  Type et = xt.getElementType();
  if (attrs.mode != "nearest" && !isa<FloatType>(et))
    return ctx.fail("linear and cubic modes need a floating-point input");
  bool cropMode = attrs.coordMode == "tf_crop_and_resize";

  // Where the scale of each dim comes from: sizes (out / in), constant
  // scales, or scales read at run time.
  bool hasSizes = ctx.hasInput(3) && ctx.getInputType(3).getNumElements() > 0;
  bool hasScales = ctx.hasInput(2) && ctx.getInputType(2).getNumElements() > 0;
  if (!hasSizes && !hasScales)
    return ctx.fail("one of scales and sizes must be given");
  if ((hasSizes ? ctx.getInputType(3) : ctx.getInputType(2)).getNumElements() !=
      rank)
    return ctx.fail("scales/sizes must have one value per input dim");
  SmallVector<std::optional<double>> staticScales(rank);
  if (hasSizes) {
    for (int64_t d = 0; d < rank; ++d)
      staticScales[d] = static_cast<double>(type->getDimSize(d)) /
                        static_cast<double>(xt.getDimSize(d));
  } else if (std::optional<DenseElementsAttr> c = ctx.getConstantInput(2)) {
    int64_t d = 0;
    for (const APFloat &v : c->getValues<APFloat>())
      staticScales[d++] = v.convertToDouble();
  }
  if (cropMode && !ctx.hasInput(1))
    return ctx.fail("tf_crop_and_resize needs roi");

  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  if (type->getNumElements() == 0)
    return ctx.setOutput(0, createZeroElements(b, loc, *type));
  SmallVector<bool> resized(rank);
  for (int64_t d = 0; d < rank; ++d) {
    bool sameSize = xt.getDimSize(d) == type->getDimSize(d);
    resized[d] =
        !(sameSize && xt.getDimSize(d) == 1) &&
        (!sameSize || cropMode || (staticScales[d] && *staticScales[d] != 1.0));
  }
  Value x = ctx.getInput(0);
  Value scales = hasScales && !hasSizes ? ctx.getInput(2) : Value();
  Value roi = cropMode ? ctx.getInput(1) : Value();
  Value result = createIndexedGeneric(
      b, loc, {}, {}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        ResizeBuilder rb{nb, nl, attrs};
        auto readF64 = [&](Value tensor, int64_t i) -> Value {
          Value v = tensor::ExtractOp::create(
              nb, nl, tensor,
              ValueRange{arith::ConstantIndexOp::create(nb, nl, i)});
          return createScalarCast(nb, nl, v, nb.getF64Type(), false, false);
        };
        SmallVector<SmallVector<Tap>> perDim(rank);
        Value outside = createScalar(nb, nl, nb.getI1Type(), 0);
        for (int64_t d = 0; d < rank; ++d) {
          if (!resized[d]) {
            perDim[d] = {{ivs[d], Value()}};
            continue;
          }
          int64_t inSize = xt.getDimSize(d);
          Value scale =
              staticScales[d] ? rb.f64(*staticScales[d]) : readF64(scales, d);
          Value roiStart = cropMode ? readF64(roi, d) : Value();
          Value roiEnd = cropMode ? readF64(roi, rank + d) : Value();
          Value coord = rb.sourceCoord(ivs[d], inSize, scale, roiStart, roiEnd);
          if (cropMode) {
            using P = arith::CmpFPredicate;
            Value lo = arith::CmpFOp::create(nb, nl, P::OLT, coord, rb.f64(0));
            Value hi = arith::CmpFOp::create(nb, nl, P::OGT, coord,
                                             rb.f64(inSize - 1));
            outside = arith::OrIOp::create(
                nb, nl, outside, arith::OrIOp::create(nb, nl, lo, hi));
          }
          perDim[d] = rb.taps(coord, inSize);
        }
        // Sum over the tensor product of the taps.
        Value acc;
        SmallVector<Value> coords(rank);
        std::function<void(int64_t, Value)> visit = [&](int64_t d,
                                                        Value weight) {
          if (d == rank) {
            Value v = tensor::ExtractOp::create(nb, nl, x, coords);
            if (attrs.mode == "nearest") {
              acc = v;
              return;
            }
            Value term =
                rb.mul(weight, createScalarCast(nb, nl, v, nb.getF64Type(),
                                                false, false));
            acc = acc ? rb.add(acc, term) : term;
            return;
          }
          for (const Tap &tap : perDim[d]) {
            coords[d] = tap.index;
            Value w = weight;
            if (tap.weight)
              w = w ? rb.mul(w, tap.weight) : tap.weight;
            visit(d + 1, w);
          }
        };
        visit(0, rb.f64(1));
        Value value = attrs.mode == "nearest"
                          ? acc
                          : createScalarCast(nb, nl, acc, et, false, false);
        if (cropMode)
          value = arith::SelectOp::create(
              nb, nl, outside, createScalar(nb, nl, et, attrs.extrapolation),
              value);
        return value;
      });
  return ctx.setOutput(0, result);
}

} // namespace

void addResizeLowerings(LoweringTable &t) { t["Resize"] = lowerResize; }

} // namespace strata::onnx_importer
