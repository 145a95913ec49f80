//===- ResizeOps.cpp - Resize, GridSample ---------------------------------===//
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
// GridSample reuses the tap machinery with the source coordinates read from
// its grid instead of computed from the output index.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"
#include "strata/compiler/Importers/ONNX/SymbolicShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

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

// The sizes of one resized dim inside the generic's body: the input's as
// f64 and i64, the output's as f64 (constants, or read at run time).
struct DimSizes {
  Value in, inIndex, out;
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

  // The source coordinate of output index `i` along a dim of `size.in`
  // input elements with `scale` (f64); roiStart/roiEnd for
  // tf_crop_and_resize.
  Value sourceCoord(Value i, const DimSizes &size, Value scale, Value roiStart,
                    Value roiEnd) {
    Value x = arith::SIToFPOp::create(
        b, loc, b.getF64Type(),
        arith::IndexCastOp::create(b, loc, b.getI64Type(), i));
    // The reference uses the fractional output length scale * inSize.
    Value outLength = mul(scale, size.in);
    Value lastIn = sub(size.in, f64(1));
    Value isOne = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                        outLength, f64(1));
    const std::string &m = attrs.coordMode;
    if (m == "align_corners") {
      Value r = div(mul(x, lastIn), sub(outLength, f64(1)));
      return arith::SelectOp::create(b, loc, isOne, f64(0), r);
    }
    if (m == "asymmetric")
      return div(x, scale);
    if (m == "tf_half_pixel_for_nn")
      return div(add(x, f64(0.5)), scale);
    if (m == "tf_crop_and_resize") {
      Value extent = mul(sub(roiEnd, roiStart), lastIn);
      Value one = div(extent, f64(2));
      Value many = div(mul(x, extent), sub(outLength, f64(1)));
      Value r = arith::SelectOp::create(b, loc, isOne, one, many);
      return add(r, mul(roiStart, lastIn));
    }
    Value r = sub(div(add(x, f64(0.5)), scale), f64(0.5));
    if (m == "half_pixel_symmetric") {
      // Centred: shifted by (inSize / 2) (1 - outSize / (scale inSize)).
      Value adjustment = div(size.out, outLength);
      return add(r, mul(mul(size.in, f64(0.5)), sub(f64(1), adjustment)));
    }
    if (m == "pytorch_half_pixel")
      return arith::SelectOp::create(b, loc, isOne, f64(-0.5), r);
    return r; // half_pixel
  }

  Value clampIndex(Value i64, const DimSizes &size) {
    Value c = arith::MaxSIOp::create(b, loc, i64,
                                     createScalar(b, loc, b.getI64Type(), 0));
    c = arith::MinSIOp::create(b, loc, c, offset(size.inIndex, -1));
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

  SmallVector<Tap> taps(Value x, const DimSizes &size) {
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
      return {{clampIndex(i, size), Value()}};
    }
    if (attrs.mode == "linear")
      return {{clampIndex(i0, size), sub(f64(1), ratio)},
              {clampIndex(offset(i0, 1), size), ratio}};
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
            arith::CmpIOp::create(b, loc, P::slt, i, size.inIndex));
        w = arith::SelectOp::create(b, loc, inside, w, f64(0));
        total = add(total, w);
      }
      result.push_back({clampIndex(i, size), w});
    }
    if (attrs.excludeOutside)
      for (Tap &tap : result)
        tap.weight = div(tap.weight, total);
    return result;
  }
};

// With dynamic dims, the result's sizes: from a sizes input known here or
// computed from input shapes (as torch writes `interpolate(x, size=...)`),
// or from constant scales (a dynamic dim by a whole factor or divisor,
// whose floor needs no floating point on the host).
FailureOr<SmallVector<OpFoldResult>> getDynamicResizeSizes(NodeContext &ctx) {
  RankedTensorType xt = ctx.getInputType(0);
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  int64_t rank = xt.getRank();
  if (!ctx.getIntsAttr("axes").empty())
    return ctx.fail("with dynamic dims, resizing named axes is not "
                    "supported yet" +
                    ctx.getState().pinHint);
  bool hasSizes = ctx.hasInput(3) && ctx.getInputType(3).getNumElements() != 0;
  if (hasSizes) {
    std::optional<SymbolicShape> sizes = getSymbolicInput(ctx, 3);
    if (!sizes || sizes->elements.size() != static_cast<size_t>(rank))
      return ctx.fail("with dynamic dims the sizes must be known at compile "
                      "time or computed from the input shapes" +
                      ctx.getState().pinHint);
    return SmallVector<OpFoldResult>(sizes->elements);
  }
  std::optional<DenseElementsAttr> scales =
      ctx.hasInput(2) ? ctx.getConstantInput(2) : std::nullopt;
  if (!scales || scales->getNumElements() != rank)
    return ctx.fail("with dynamic dims the scales must be constants" +
                    ctx.getState().pinHint);
  SmallVector<OpFoldResult> result;
  for (auto [d, v] : llvm::enumerate(scales->getValues<APFloat>())) {
    double scale = v.convertToDouble();
    if (!xt.isDynamicDim(d)) {
      result.push_back(b.getIndexAttr(static_cast<int64_t>(
          std::floor(scale * static_cast<double>(xt.getDimSize(d))))));
      continue;
    }
    Value in = tensor::DimOp::create(b, loc, ctx.getInput(0), d);
    double factor = std::round(scale), divisor = std::round(1.0 / scale);
    if (scale >= 1 && factor == scale) {
      result.push_back(
          arith::MulIOp::create(b, loc, in,
                                arith::ConstantIndexOp::create(
                                    b, loc, static_cast<int64_t>(factor)))
              .getResult());
    } else if (scale < 1 && divisor * scale == 1.0) {
      result.push_back(
          arith::DivUIOp::create(b, loc, in,
                                 arith::ConstantIndexOp::create(
                                     b, loc, static_cast<int64_t>(divisor)))
              .getResult());
    } else {
      return ctx.fail("scale " + std::to_string(scale) + " of dynamic dim " +
                      Twine(d) + " is not a whole factor or divisor" +
                      ctx.getState().pinHint);
    }
  }
  return result;
}

LogicalResult lowerResize(NodeContext &ctx) {
  // The result's sizes: its static type, or computed with dynamic dims.
  SmallVector<OpFoldResult> outSizes;
  FailureOr<RankedTensorType> type = failure();
  // (Also when inference left the result's shape open: sizes a folded
  // shape computation gives.)
  if (ctx.hasDynamicInput() || !ctx.hasInferredOutputType(0)) {
    FailureOr<SmallVector<OpFoldResult>> sizes = getDynamicResizeSizes(ctx);
    if (failed(sizes))
      return failure();
    outSizes = std::move(*sizes);
    SmallVector<int64_t> shape = getStaticShape(outSizes);
    type = RankedTensorType::get(shape, ctx.getInputType(0).getElementType());
  } else {
    type = ctx.getOutputType(0);
    if (failed(type))
      return failure();
    for (int64_t size : type->getShape())
      outSizes.push_back(ctx.getBuilder().getIndexAttr(size));
  }
  if (ctx.getOpset() < 11)
    return ctx.fail("Resize before opset 11 is not supported");
  if (ctx.getIntAttr("antialias", 0) != 0)
    return ctx.fail("antialias is not supported");
  std::string policy = ctx.getStringAttr("keep_aspect_ratio_policy", "stretch");
  if (policy != "stretch" && policy != "not_larger" && policy != "not_smaller")
    return ctx.fail("unknown keep_aspect_ratio_policy '" + policy + "'");
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
  if (!llvm::is_contained({"half_pixel", "half_pixel_symmetric",
                           "pytorch_half_pixel", "align_corners", "asymmetric",
                           "tf_half_pixel_for_nn", "tf_crop_and_resize"},
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
  // With dynamic sizes, each dim scales by out / in at run time.
  bool dynamicSizes = !type->hasStaticShape() || !xt.hasStaticShape();
  if (dynamicSizes && (policy != "stretch" || cropMode))
    return ctx.fail("with dynamic dims, keep_aspect_ratio_policy and "
                    "tf_crop_and_resize are not supported yet" +
                    ctx.getState().pinHint);
  if (!hasSizes && !hasScales)
    return ctx.fail("one of scales and sizes must be given");
  // The dims scales, sizes and roi name (opset 18's `axes`; all by
  // default): position[d] is dim d's place in them, -1 when not named.
  SmallVector<int64_t> axes = ctx.getIntsAttr("axes");
  if (axes.empty())
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  SmallVector<int64_t> position(rank, -1);
  for (auto [k, axis] : llvm::enumerate(axes)) {
    FailureOr<int64_t> d = ctx.getAxis(axis, rank);
    if (failed(d))
      return failure();
    if (position[*d] >= 0)
      return ctx.fail("axes names a dim twice");
    position[*d] = k;
    axis = *d;
  }
  int64_t named = axes.size();
  if ((hasSizes ? ctx.getInputType(3) : ctx.getInputType(2)).getNumElements() !=
      named)
    return ctx.fail("scales/sizes must have one value per resized dim");
  // Sizes give out / in per dim, or with an aspect policy one scale for all
  // (the smallest or largest sizes[k] / in), known here when they are.
  SmallVector<std::optional<double>> staticScales(rank);
  bool runtimePolicyScale = false;
  if (hasSizes && policy != "stretch") {
    if (std::optional<DenseElementsAttr> c = ctx.getConstantInput(3)) {
      double scale = policy == "not_larger" ? INFINITY : 0.0;
      for (auto [k, v] : llvm::enumerate(c->getValues<APInt>())) {
        double ratio = static_cast<double>(v.getSExtValue()) /
                       static_cast<double>(xt.getDimSize(axes[k]));
        scale = policy == "not_larger" ? std::min(scale, ratio)
                                       : std::max(scale, ratio);
      }
      for (int64_t d : axes)
        staticScales[d] = scale;
    } else {
      runtimePolicyScale = true;
    }
  } else if (hasSizes) {
    for (int64_t d : axes)
      if (!xt.isDynamicDim(d) && !type->isDynamicDim(d))
        staticScales[d] = static_cast<double>(type->getDimSize(d)) /
                          static_cast<double>(xt.getDimSize(d));
  } else if (std::optional<DenseElementsAttr> c = ctx.getConstantInput(2)) {
    for (auto [k, v] : llvm::enumerate(c->getValues<APFloat>()))
      staticScales[axes[k]] = v.convertToDouble();
  }
  for (int64_t d = 0; d < rank; ++d)
    if (position[d] < 0)
      staticScales[d] = 1.0;
  if (cropMode &&
      (!ctx.hasInput(1) || ctx.getInputType(1).getNumElements() != 2 * named))
    return ctx.fail("tf_crop_and_resize needs an roi of 2 values per resized "
                    "dim");

  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  if (type->hasStaticShape() && type->getNumElements() == 0)
    return ctx.setOutput(0, createZeroElements(b, loc, *type));
  SmallVector<OpFoldResult> inSizes = getDimSizes(b, loc, ctx.getInput(0));
  SmallVector<bool> resized(rank);
  for (int64_t d = 0; d < rank; ++d) {
    bool sameSize = isSameSize(inSizes[d], outSizes[d]);
    bool dynamic = xt.isDynamicDim(d) || type->isDynamicDim(d);
    resized[d] = position[d] >= 0 && !(sameSize && xt.getDimSize(d) == 1) &&
                 (!sameSize || cropMode || runtimePolicyScale ||
                  (staticScales[d] && *staticScales[d] != 1.0));
    // A dynamic dim "resized" to its own size keeps its elements (scale
    // 1 maps each output index to itself in every mode but crop).
    if (dynamic && sameSize)
      resized[d] = false;
  }
  Value sizes = runtimePolicyScale ? ctx.getInput(3) : Value();
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
        Value policyScale;
        if (runtimePolicyScale) {
          for (int64_t k = 0; k < named; ++k) {
            Value ratio =
                rb.div(readF64(sizes, k), rb.f64(xt.getDimSize(axes[k])));
            policyScale =
                !policyScale ? ratio
                : policy == "not_larger"
                    ? arith::MinimumFOp::create(nb, nl, policyScale, ratio)
                          .getResult()
                    : arith::MaximumFOp::create(nb, nl, policyScale, ratio)
                          .getResult();
          }
        }
        for (int64_t d = 0; d < rank; ++d) {
          if (!resized[d]) {
            perDim[d] = {{ivs[d], Value()}};
            continue;
          }
          DimSizes size{createSizeScalar(nb, nl, inSizes[d], nb.getF64Type()),
                        createSizeScalar(nb, nl, inSizes[d], nb.getI64Type()),
                        createSizeScalar(nb, nl, outSizes[d], nb.getF64Type())};
          int64_t k = position[d];
          Value scale = staticScales[d] ? rb.f64(*staticScales[d])
                        : policyScale   ? policyScale
                        : scales        ? readF64(scales, k)
                                        : rb.div(size.out, size.in);
          Value roiStart = cropMode ? readF64(roi, k) : Value();
          Value roiEnd = cropMode ? readF64(roi, named + k) : Value();
          Value coord = rb.sourceCoord(ivs[d], size, scale, roiStart, roiEnd);
          if (cropMode) {
            using P = arith::CmpFPredicate;
            Value lo = arith::CmpFOp::create(nb, nl, P::OLT, coord, rb.f64(0));
            Value hi = arith::CmpFOp::create(nb, nl, P::OGT, coord,
                                             rb.sub(size.in, rb.f64(1)));
            outside = arith::OrIOp::create(
                nb, nl, outside, arith::OrIOp::create(nb, nl, lo, hi));
          }
          perDim[d] = rb.taps(coord, size);
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
      },
      outSizes);
  return ctx.setOutput(0, result);
}

// The reference's reflection of a coordinate into [lo, hi] (repeatedly
// mirrored at both ends); lo itself where the range is empty. The bounds
// are values: they come from the image's size, known only at run time
// over dynamic dims.
Value reflect(ResizeBuilder &rb, Value x, Value lo, Value hi) {
  OpBuilder &b = rb.b;
  Location loc = rb.loc;
  Value range = rb.sub(hi, lo);
  auto fold = [&](Value distance, bool fromLow) {
    // n = floor(d / range), r = d - n * range; even n: near end + r.
    Value n = math::FloorOp::create(b, loc, rb.div(distance, range));
    Value r = rb.sub(distance, rb.mul(n, range));
    Value odd = arith::TruncIOp::create(
        b, loc, b.getI1Type(),
        arith::FPToSIOp::create(b, loc, b.getI64Type(), n));
    Value nearSide = fromLow ? rb.add(lo, r) : rb.sub(hi, r);
    Value farSide = fromLow ? rb.sub(hi, r) : rb.add(lo, r);
    return arith::SelectOp::create(b, loc, odd, farSide, nearSide).getResult();
  };
  Value below = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, lo);
  Value above = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, hi);
  Value fromLow = fold(rb.sub(lo, x), true);
  Value fromHigh = fold(rb.sub(x, hi), false);
  Value r = arith::SelectOp::create(b, loc, above, fromHigh, x);
  r = arith::SelectOp::create(b, loc, below, fromLow, r);
  Value empty = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, range,
                                      rb.f64(0));
  return arith::SelectOp::create(b, loc, empty, lo, r);
}

// GridSample (2-D): each output pixel samples X at the grid's normalized
// (x, y) with nearest, bilinear or bicubic taps; coordinates outside the
// image are padded with zeros, the border or its reflection.
LogicalResult lowerGridSample(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  RankedTensorType xt = ctx.getInputType(0), gt = ctx.getInputType(1);
  if (xt.getRank() != 4 || gt.getRank() != 4 || gt.getDimSize(3) != 2)
    return ctx.fail("only 2-D GridSample (X [N, C, H, W], grid [N, H, W, "
                    "2]) is supported");
  Type et = xt.getElementType();
  if (!isa<FloatType>(et))
    return ctx.fail("input must be floating-point");
  std::string mode = ctx.getStringAttr("mode", "bilinear");
  if (mode == "linear")
    mode = "bilinear";
  if (mode == "cubic")
    mode = "bicubic";
  std::string padding = ctx.getStringAttr("padding_mode", "zeros");
  bool alignCorners = ctx.getIntAttr("align_corners", 0) != 0;
  if (mode != "bilinear" && mode != "nearest" && mode != "bicubic")
    return ctx.fail("unknown mode '" + mode + "'");
  if (padding != "zeros" && padding != "border" && padding != "reflection")
    return ctx.fail("unknown padding_mode '" + padding + "'");
  ResizeAttrs attrs;
  attrs.mode = mode;
  attrs.cubicA = -0.75;
  attrs.excludeOutside = false;
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value x = ctx.getInput(0), grid = ctx.getInput(1);
  // The image's height and width (values where known only at run time);
  // the result is [N, C] of X and [H_out, W_out] of the grid, whose batch
  // must be X's.
  SmallVector<OpFoldResult> xSizes = getDimSizes(b, loc, x),
                            gridSizes = getDimSizes(b, loc, grid);
  if (failed(ctx.checkSizes(gridSizes[0], xSizes[0],
                            "the grid's batch differs from X's")))
    return failure();
  SmallVector<OpFoldResult> resultSizes = {xSizes[0], xSizes[1], gridSizes[1],
                                           gridSizes[2]};
  *type = RankedTensorType::get(getStaticShape(resultSizes),
                                type->getElementType());
  Value result = createIndexedGeneric(
      b, loc, {}, {}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        ResizeBuilder rb{nb, nl, attrs};
        Type i64 = nb.getI64Type();
        Value sizes[2], floatSizes[2];
        for (int d = 0; d < 2; ++d) {
          sizes[d] = arith::IndexCastOp::create(
              nb, nl, i64,
              getValueOrCreateConstantIndexOp(nb, nl, xSizes[2 + d]));
          floatSizes[d] =
              arith::SIToFPOp::create(nb, nl, nb.getF64Type(), sizes[d]);
        }
        // The bounds reflection folds into: pixel centres with
        // align_corners, else the edges.
        auto low = [&] { return rb.f64(alignCorners ? 0 : -0.5); };
        auto high = [&](int d) {
          return rb.sub(floatSizes[d], rb.f64(alignCorners ? 1 : 0.5));
        };
        // Per dim (0: y/height from grid[..., 1], 1: x/width from [..., 0]):
        // the taps as (float position, weight).
        SmallVector<SmallVector<std::pair<Value, Value>>> taps(2);
        for (int d = 0; d < 2; ++d) {
          Value size = floatSizes[d];
          Value last = rb.sub(size, rb.f64(1));
          Value g = tensor::ExtractOp::create(
              nb, nl, grid,
              ValueRange{ivs[0], ivs[2], ivs[3],
                         arith::ConstantIndexOp::create(nb, nl, 1 - d)});
          g = createScalarCast(nb, nl, g, nb.getF64Type(), false, false);
          Value c = alignCorners
                        ? rb.mul(rb.div(rb.add(g, rb.f64(1)), rb.f64(2)), last)
                        : rb.div(rb.sub(rb.mul(rb.add(g, rb.f64(1)), size),
                                        rb.f64(1)),
                                 rb.f64(2));
          if (mode != "bicubic") {
            if (padding == "border" || padding == "reflection") {
              if (padding == "reflection")
                c = reflect(rb, c, low(), high(d));
              c = arith::MaximumFOp::create(nb, nl, c, rb.f64(0));
              c = arith::MinimumFOp::create(nb, nl, c, last);
            }
          }
          if (mode == "nearest") {
            taps[d].push_back({math::RoundEvenOp::create(nb, nl, c), Value()});
            continue;
          }
          Value c0 = math::FloorOp::create(nb, nl, c);
          Value r = rb.sub(c, c0);
          if (mode == "bilinear") {
            taps[d].push_back({c0, rb.sub(rb.f64(1), r)});
            taps[d].push_back({rb.add(c0, rb.f64(1)), r});
            continue;
          }
          SmallVector<Value> distances{rb.add(rb.f64(1), r), r,
                                       rb.sub(rb.f64(1), r),
                                       rb.sub(rb.f64(2), r)};
          for (int k = 0; k < 4; ++k)
            taps[d].push_back(
                {rb.add(c0, rb.f64(k - 1)), rb.cubicWeight(distances[k])});
        }
        // A tap's pixel: zero outside (zeros) or at the clamped/reflected
        // position.
        auto pixel = [&](Value py, Value px) -> Value {
          Value inside = createScalar(nb, nl, nb.getI1Type(), 1);
          SmallVector<Value> coords{ivs[0], ivs[1]};
          Value pos[2] = {py, px};
          for (int d = 0; d < 2; ++d) {
            Value p = pos[d];
            if (padding == "reflection")
              p = reflect(rb, p, low(), high(d));
            Value i = arith::FPToSIOp::create(nb, nl, i64, p);
            if (padding == "zeros") {
              using P = arith::CmpIPredicate;
              inside = arith::AndIOp::create(
                  nb, nl, inside,
                  arith::AndIOp::create(
                      nb, nl,
                      arith::CmpIOp::create(nb, nl, P::sge, i,
                                            createScalar(nb, nl, i64, 0)),
                      arith::CmpIOp::create(nb, nl, P::slt, i, sizes[d])));
            }
            coords.push_back(
                rb.clampIndex(i, DimSizes{Value(), sizes[d], Value()}));
          }
          Value v = tensor::ExtractOp::create(nb, nl, x, coords);
          v = createScalarCast(nb, nl, v, nb.getF64Type(), false, false);
          if (padding != "zeros")
            return v;
          return arith::SelectOp::create(nb, nl, inside, v, rb.f64(0))
              .getResult();
        };
        Value acc;
        for (auto &[py, wy] : taps[0])
          for (auto &[px, wx] : taps[1]) {
            Value v = pixel(py, px);
            if (wy)
              v = rb.mul(v, rb.mul(wy, wx));
            acc = acc ? rb.add(acc, v) : v;
          }
        return createScalarCast(nb, nl, acc, et, false, false);
      },
      resultSizes);
  return ctx.setOutput(0, result);
}

} // namespace

// AffineGrid: for each output position, theta [N, r, r + 1] applied to its
// normalized coordinates (x fastest, in [-1, 1]: pixel centres with
// align_corners, else edges) and 1. The grid's sizes are the result's.
LogicalResult lowerAffineGrid(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  RankedTensorType tt = ctx.getInputType(0);
  int64_t rank = type->getRank();
  int64_t spatial = rank - 2;
  Type et = tt.getElementType();
  if ((spatial != 2 && spatial != 3) || !isa<FloatType>(et) ||
      tt.getRank() != 3 || tt.getDimSize(1) != spatial ||
      tt.getDimSize(2) != spatial + 1 ||
      type->getDimSize(0) != tt.getDimSize(0) ||
      type->getDimSize(rank - 1) != spatial || type->getElementType() != et)
    return ctx.fail("theta must be [N, 2, 3] (or [N, 3, 4]) and the grid "
                    "[N, H, W, 2] (or [N, D, H, W, 3]) of its type");
  bool alignCorners = ctx.getIntAttr("align_corners", 0) != 0;
  Value theta = ctx.getInput(0);
  Value grid = createIndexedGeneric(
      ctx.getBuilder(), ctx.getLoc(), {}, {}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        Type f64 = nb.getF64Type();
        auto f = [&](double v) { return createScalar(nb, nl, f64, v); };
        // Coordinate k (0 = x) of this position: dim rank - 2 - k.
        SmallVector<Value> coords;
        for (int64_t k = 0; k < spatial; ++k) {
          int64_t d = rank - 2 - k;
          int64_t size = type->getDimSize(d);
          Value i = arith::SIToFPOp::create(
              nb, nl, f64,
              arith::IndexCastOp::create(nb, nl, nb.getI64Type(), ivs[d]));
          Value c;
          if (alignCorners)
            c = size <= 1
                    ? f(0)
                    : arith::SubFOp::create(
                          nb, nl,
                          arith::MulFOp::create(nb, nl, i, f(2.0 / (size - 1))),
                          f(1));
          else
            c = arith::SubFOp::create(
                nb, nl,
                arith::DivFOp::create(
                    nb, nl,
                    arith::AddFOp::create(
                        nb, nl, arith::MulFOp::create(nb, nl, i, f(2)), f(1)),
                    f(size)),
                f(1));
          coords.push_back(c);
        }
        coords.push_back(f(1));
        Value row = ivs[rank - 1];
        Value acc = f(0);
        for (int64_t k = 0; k <= spatial; ++k) {
          Value t = tensor::ExtractOp::create(
              nb, nl, theta,
              ValueRange{ivs[0], row,
                         arith::ConstantIndexOp::create(nb, nl, k)});
          t = createScalarCast(nb, nl, t, f64, false, false);
          acc = arith::AddFOp::create(
              nb, nl, acc, arith::MulFOp::create(nb, nl, t, coords[k]));
        }
        return createScalarCast(nb, nl, acc, et, false, false);
      });
  return ctx.setOutput(0, grid);
}

void addResizeLowerings(LoweringTable &t) {
  t["Resize"] = lowerResize;
  t["GridSample"] = lowerGridSample;
  t["AffineGrid"] = lowerAffineGrid;
}

} // namespace strata::onnx_importer
