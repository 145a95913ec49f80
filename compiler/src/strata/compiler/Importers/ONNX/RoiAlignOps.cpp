//===- RoiAlignOps.cpp - RoiAlign -----------------------------------------===//
//
// One linalg.generic over the result [R, C, out_h, out_w] with reduction
// loops over the sampling grid of each bin (sampling_ratio per side); each
// sample is a bilinear read of the roi's image (batch_indices) as the
// reference defines it (samples beyond one pixel outside are 0, edges
// clamp), averaged or maxed over the bin.
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

LogicalResult lowerRoiAlign(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  RankedTensorType xt = ctx.getInputType(0), rt = ctx.getInputType(1);
  Type et = xt.getElementType();
  if (xt.getRank() != 4 || rt.getRank() != 2 || rt.getDimSize(1) != 4 ||
      !isa<FloatType>(et) || type->getRank() != 4)
    return ctx.fail("needs X [N, C, H, W] (floating-point) and rois [R, 4]");
  int64_t samplingRatio = ctx.getIntAttr("sampling_ratio", 0);
  if (samplingRatio <= 0)
    return ctx.fail("adaptive sampling (sampling_ratio 0) is not supported");
  std::string mode = ctx.getStringAttr("mode", "avg");
  if (mode != "avg" && mode != "max")
    return ctx.fail("unknown mode '" + mode + "'");
  bool halfPixel = ctx.getStringAttr("coordinate_transformation_mode",
                                     "half_pixel") == "half_pixel";
  double scale = ctx.getFloatAttr("spatial_scale", 1.0f);
  int64_t height = xt.getDimSize(2), width = xt.getDimSize(3);
  int64_t outH = type->getDimSize(2), outW = type->getDimSize(3);
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value x = ctx.getInput(0), rois = ctx.getInput(1), batches = ctx.getInput(2);
  // Loops: r, c, ph, pw (parallel), iy, ix (reduction over the samples).
  Value grid = createEmpty(
      b, loc,
      RankedTensorType::get({samplingRatio, samplingRatio}, b.getI1Type()));
  SmallVector<AffineMap> maps{
      AffineMap::get(6, 0, {b.getAffineDimExpr(4), b.getAffineDimExpr(5)},
                     b.getContext()),
      b.getMultiDimIdentityMap(6).getMajorSubMap(4)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.append(2, utils::IteratorType::reduction);
  double initValue = mode == "avg" ? 0.0 : -INFINITY;
  Value init = createFilled(b, loc, *type, createScalar(b, loc, et, initValue));
  Value result =
      linalg::GenericOp::create(
          b, loc, TypeRange{*type}, ValueRange{grid}, ValueRange{init}, maps,
          iterators,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Type f32 = nb.getF32Type();
            auto cf = [&](double v) { return createScalar(nb, nl, f32, v); };
            auto index = [&](int64_t d) -> Value {
              return linalg::IndexOp::create(nb, nl, d);
            };
            auto asFloat = [&](Value i) -> Value {
              return arith::SIToFPOp::create(
                  nb, nl, f32,
                  arith::IndexCastOp::create(nb, nl, nb.getI64Type(), i));
            };
            auto add = [&](Value p, Value q) -> Value {
              return arith::AddFOp::create(nb, nl, p, q);
            };
            auto sub = [&](Value p, Value q) -> Value {
              return arith::SubFOp::create(nb, nl, p, q);
            };
            auto mul = [&](Value p, Value q) -> Value {
              return arith::MulFOp::create(nb, nl, p, q);
            };
            auto div = [&](Value p, Value q) -> Value {
              return arith::DivFOp::create(nb, nl, p, q);
            };
            Value r = index(0);
            auto roi = [&](int64_t i) -> Value {
              Value v = tensor::ExtractOp::create(
                  nb, nl, rois,
                  ValueRange{r, arith::ConstantIndexOp::create(nb, nl, i)});
              v = createScalarCast(nb, nl, v, f32, false, false);
              return sub(mul(v, cf(scale)), cf(halfPixel ? 0.5 : 0));
            };
            Value x1 = roi(0), y1 = roi(1), x2 = roi(2), y2 = roi(3);
            Value roiW = sub(x2, x1), roiH = sub(y2, y1);
            if (!halfPixel) {
              roiW = arith::MaximumFOp::create(nb, nl, roiW, cf(1));
              roiH = arith::MaximumFOp::create(nb, nl, roiH, cf(1));
            }
            Value binH = div(roiH, cf(outH)), binW = div(roiW, cf(outW));
            // Sample (iy, ix) of bin (ph, pw).
            Value y = add(add(y1, mul(asFloat(index(2)), binH)),
                          div(mul(add(asFloat(index(4)), cf(0.5)), binH),
                              cf(samplingRatio)));
            Value xs = add(add(x1, mul(asFloat(index(3)), binW)),
                           div(mul(add(asFloat(index(5)), cf(0.5)), binW),
                               cf(samplingRatio)));
            using FP = arith::CmpFPredicate;
            Value outside = arith::OrIOp::create(
                nb, nl,
                arith::OrIOp::create(
                    nb, nl, arith::CmpFOp::create(nb, nl, FP::OLT, y, cf(-1)),
                    arith::CmpFOp::create(nb, nl, FP::OGT, y, cf(height))),
                arith::OrIOp::create(
                    nb, nl, arith::CmpFOp::create(nb, nl, FP::OLT, xs, cf(-1)),
                    arith::CmpFOp::create(nb, nl, FP::OGT, xs, cf(width))));
            // Low/high neighbours, clamped at the last row/column.
            auto axisTaps = [&](Value v, int64_t size) {
              v = arith::MaximumFOp::create(nb, nl, v, cf(0));
              Value low = math::FloorOp::create(nb, nl, v);
              Value atEnd =
                  arith::CmpFOp::create(nb, nl, FP::OGE, low, cf(size - 1));
              low = arith::SelectOp::create(nb, nl, atEnd, cf(size - 1), low);
              v = arith::SelectOp::create(nb, nl, atEnd, cf(size - 1), v);
              Value high =
                  arith::SelectOp::create(nb, nl, atEnd, low, add(low, cf(1)));
              Value frac = sub(v, low);
              auto toIndex = [&](Value f) -> Value {
                return arith::IndexCastOp::create(
                    nb, nl, nb.getIndexType(),
                    arith::FPToSIOp::create(nb, nl, nb.getI64Type(), f));
              };
              return std::make_tuple(toIndex(low), toIndex(high), frac);
            };
            auto [yl, yh, ly] = axisTaps(y, height);
            auto [xl, xh, lx] = axisTaps(xs, width);
            Value hy = sub(cf(1), ly), hx = sub(cf(1), lx);
            Value batch = arith::IndexCastOp::create(
                nb, nl, nb.getIndexType(),
                tensor::ExtractOp::create(nb, nl, batches, ValueRange{r}));
            batch = arith::MinSIOp::create(
                nb, nl,
                arith::MaxSIOp::create(
                    nb, nl, batch, arith::ConstantIndexOp::create(nb, nl, 0)),
                arith::ConstantIndexOp::create(nb, nl, xt.getDimSize(0) - 1));
            auto pixel = [&](Value row, Value col) -> Value {
              Value v = tensor::ExtractOp::create(
                  nb, nl, x, ValueRange{batch, index(1), row, col});
              return createScalarCast(nb, nl, v, f32, false, false);
            };
            Value terms[4] = {mul(mul(hy, hx), pixel(yl, xl)),
                              mul(mul(hy, lx), pixel(yl, xh)),
                              mul(mul(ly, hx), pixel(yh, xl)),
                              mul(mul(ly, lx), pixel(yh, xh))};
            Value acc = createScalarCast(nb, nl, a.back(), f32, false, false);
            Value next;
            if (mode == "avg") {
              Value sample =
                  add(add(terms[0], terms[1]), add(terms[2], terms[3]));
              sample = arith::SelectOp::create(nb, nl, outside, cf(0), sample);
              next = add(acc, div(sample, cf(samplingRatio * samplingRatio)));
            } else {
              // The reference's max mode: the largest weighted corner.
              Value m = terms[0];
              for (int i = 1; i < 4; ++i)
                m = arith::MaximumFOp::create(nb, nl, m, terms[i]);
              m = arith::SelectOp::create(nb, nl, outside, cf(0), m);
              next = arith::MaximumFOp::create(nb, nl, acc, m);
            }
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{createScalarCast(nb, nl, next, et, false, false)});
          })
          .getResult(0);
  return ctx.setOutput(0, result);
}

} // namespace

void addRoiAlignLowerings(LoweringTable &t) { t["RoiAlign"] = lowerRoiAlign; }

} // namespace strata::onnx_importer
