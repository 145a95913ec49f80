//===- SpectralOps.cpp - DFT, STFT ----------------------------------------===//
//
// DFT as a direct O(N^2) sum in one linalg.generic: the result dims (the
// last one, real/imaginary, included) are parallel loops and the signal
// position n a reduction; the twiddle factor's angle is computed from
// (k * n) mod N so it stays exact for long signals.
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

LogicalResult lowerDFT(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  RankedTensorType xt = ctx.getInputType(0);
  int64_t rank = xt.getRank();
  Type et = xt.getElementType();
  if (rank < 3 || !isa<FloatType>(et) ||
      (xt.getDimSize(rank - 1) != 1 && xt.getDimSize(rank - 1) != 2) ||
      type->getRank() != rank || type->getDimSize(rank - 1) != 2)
    return ctx.fail("input must be floating-point [..., signal, 1 or 2] and "
                    "the result [..., 2]");
  int64_t axis = ctx.getIntAttr("axis", 1);
  if (axis < -rank || axis >= rank)
    return ctx.fail("axis " + Twine(axis) + " is out of range");
  axis = normalizeAxis(axis, rank);
  if (axis == 0 || axis == rank - 1)
    return ctx.fail("axis must be a signal dim (not the batch or the "
                    "real/imaginary dim)");
  int64_t length = xt.getDimSize(axis);
  if (ctx.hasInput(1)) {
    std::optional<DenseElementsAttr> n = ctx.getConstantInput(1);
    if (!n || n->getNumElements() != 1 ||
        n->getValues<APInt>()[0].getSExtValue() != length)
      return ctx.fail("dft_length must be a constant equal to the signal "
                      "length");
  }
  bool inverse = ctx.getIntAttr("inverse", 0) != 0;
  bool complexInput = xt.getDimSize(rank - 1) == 2;
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  // Loops: the result dims, then n.
  int64_t loops = rank + 1;
  auto inputMap = [&](int64_t component) {
    SmallVector<AffineExpr> exprs;
    for (int64_t i = 0; i < rank - 1; ++i)
      exprs.push_back(b.getAffineDimExpr(i == axis ? rank : i));
    exprs.push_back(b.getAffineConstantExpr(component));
    return AffineMap::get(loops, 0, exprs, b.getContext());
  };
  SmallVector<Value> inputs{ctx.getInput(0)};
  SmallVector<AffineMap> maps{inputMap(0)};
  if (complexInput) {
    inputs.push_back(ctx.getInput(0));
    maps.push_back(inputMap(1));
  }
  maps.push_back(b.getMultiDimIdentityMap(loops).getMajorSubMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value init = createFilled(b, loc, *type, createScalar(b, loc, et, 0));
  double sign = inverse ? -1 : 1;
  Value sums =
      linalg::GenericOp::create(
          b, loc, TypeRange{*type}, inputs, ValueRange{init}, maps, iterators,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Type i64 = nb.getI64Type();
            auto idx = [&](int64_t d) -> Value {
              return arith::IndexCastOp::create(
                  nb, nl, i64, linalg::IndexOp::create(nb, nl, d));
            };
            auto cst = [&](double v) { return createScalar(nb, nl, et, v); };
            Value kn = arith::RemSIOp::create(
                nb, nl, arith::MulIOp::create(nb, nl, idx(axis), idx(rank)),
                createScalar(nb, nl, i64, length));
            Value angle = arith::MulFOp::create(
                nb, nl, arith::SIToFPOp::create(nb, nl, et, kn),
                cst(2 * M_PI / length));
            Value c = math::CosOp::create(nb, nl, angle);
            Value s = math::SinOp::create(nb, nl, angle);
            Value xr = a[0];
            Value xi = complexInput ? a[1] : cst(0);
            // (xr + i xi)(cos - i sign sin)
            Value re = arith::AddFOp::create(
                nb, nl, arith::MulFOp::create(nb, nl, xr, c),
                arith::MulFOp::create(nb, nl, cst(sign),
                                      arith::MulFOp::create(nb, nl, xi, s)));
            Value im = arith::SubFOp::create(
                nb, nl, arith::MulFOp::create(nb, nl, xi, c),
                arith::MulFOp::create(nb, nl, cst(sign),
                                      arith::MulFOp::create(nb, nl, xr, s)));
            Value isIm = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                               idx(rank - 1),
                                               createScalar(nb, nl, i64, 1));
            Value term = arith::SelectOp::create(nb, nl, isIm, im, re);
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{
                    arith::AddFOp::create(nb, nl, a.back(), term).getResult()});
          })
          .getResult(0);
  if (!inverse)
    return ctx.setOutput(0, sums);
  Value scaled = createElementwise(
      b, loc, {sums}, *type, [&](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::DivFOp::create(nb, nl, a[0],
                                     createScalar(nb, nl, et, length))
            .getResult();
      });
  return ctx.setOutput(0, scaled);
}

// STFT: out[b, f, k] = sum over n < len of signal[b, f * step + n] *
// window[n] * exp(-2 pi i k n / len). The frame step (and the frame length
// when there is no window) may arrive at run time: they are read in the
// body, and n runs to the largest length the result's bin count allows,
// masked by the actual one.
LogicalResult lowerSTFT(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  RankedTensorType st = ctx.getInputType(0);
  Type et = st.getElementType();
  if (st.getRank() != 3 || !isa<FloatType>(et) ||
      (st.getDimSize(2) != 1 && st.getDimSize(2) != 2) ||
      type->getRank() != 4 || type->getDimSize(3) != 2)
    return ctx.fail("signal must be floating-point [batch, length, 1 or 2] "
                    "and the result [batch, frames, bins, 2]");
  bool onesided = ctx.getIntAttr("onesided", 1) != 0;
  bool complexInput = st.getDimSize(2) == 2;
  int64_t bins = type->getDimSize(2);
  bool hasWindow = ctx.hasInput(2);
  int64_t maxLength = hasWindow ? ctx.getInputType(2).getNumElements()
                                : (onesided ? 2 * (bins - 1) + 1 : bins);
  if (!hasWindow && !ctx.hasInput(3))
    return ctx.fail("needs a window or a frame_length");
  if (maxLength < 1)
    return ctx.fail("frame length must be positive");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value signal = ctx.getInput(0), step = ctx.getInput(1);
  Value window = hasWindow ? ctx.getInput(2) : Value();
  Value frameLength = ctx.hasInput(3) ? ctx.getInput(3) : Value();
  int64_t signalLength = st.getDimSize(1);
  // Loops: b, f, k, c (parallel), n (reduction; bounded by a [maxLength]
  // operand).
  Value counter =
      createEmpty(b, loc, RankedTensorType::get({maxLength}, b.getI1Type()));
  SmallVector<AffineMap> maps{AffineMap::get(5, 0, b.getAffineDimExpr(4)),
                              b.getMultiDimIdentityMap(5).getMajorSubMap(4)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value init = createFilled(b, loc, *type, createScalar(b, loc, et, 0));
  Value result =
      linalg::GenericOp::create(
          b, loc, TypeRange{*type}, ValueRange{counter}, ValueRange{init}, maps,
          iterators,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Type i64 = nb.getI64Type();
            auto idx = [&](int64_t d) -> Value {
              return arith::IndexCastOp::create(
                  nb, nl, i64, linalg::IndexOp::create(nb, nl, d));
            };
            auto ci = [&](int64_t v) { return createScalar(nb, nl, i64, v); };
            auto cf = [&](double v) { return createScalar(nb, nl, et, v); };
            Value n = idx(4);
            Value length = frameLength
                               ? createScalarCast(
                                     nb, nl, extractFirst(nb, nl, frameLength),
                                     i64, false, false)
                               : ci(maxLength);
            Value stepValue = createScalarCast(
                nb, nl, extractFirst(nb, nl, step), i64, false, false);
            Value pos = arith::AddIOp::create(
                nb, nl, arith::MulIOp::create(nb, nl, idx(1), stepValue), n);
            using P = arith::CmpIPredicate;
            Value valid = arith::AndIOp::create(
                nb, nl, arith::CmpIOp::create(nb, nl, P::slt, n, length),
                arith::CmpIOp::create(nb, nl, P::slt, pos, ci(signalLength)));
            Value clamped = arith::IndexCastOp::create(
                nb, nl, nb.getIndexType(),
                arith::MinSIOp::create(nb, nl, pos, ci(signalLength - 1)));
            auto read = [&](int64_t component) -> Value {
              return tensor::ExtractOp::create(
                  nb, nl, signal,
                  ValueRange{
                      linalg::IndexOp::create(nb, nl, 0), clamped,
                      arith::ConstantIndexOp::create(nb, nl, component)});
            };
            Value xr = read(0);
            Value xi = complexInput ? read(1) : cf(0);
            if (window) {
              Value w = tensor::ExtractOp::create(
                  nb, nl, window,
                  ValueRange{linalg::IndexOp::create(nb, nl, 4)});
              xr = arith::MulFOp::create(nb, nl, xr, w);
              xi = arith::MulFOp::create(nb, nl, xi, w);
            }
            // angle = 2 pi ((k * n) mod len) / len
            Value kn = arith::RemSIOp::create(
                nb, nl, arith::MulIOp::create(nb, nl, idx(2), n), length);
            Value angle = arith::DivFOp::create(
                nb, nl,
                arith::MulFOp::create(nb, nl,
                                      arith::SIToFPOp::create(nb, nl, et, kn),
                                      cf(2 * M_PI)),
                arith::SIToFPOp::create(nb, nl, et, length));
            Value c = math::CosOp::create(nb, nl, angle);
            Value s = math::SinOp::create(nb, nl, angle);
            Value re = arith::AddFOp::create(
                nb, nl, arith::MulFOp::create(nb, nl, xr, c),
                arith::MulFOp::create(nb, nl, xi, s));
            Value im = arith::SubFOp::create(
                nb, nl, arith::MulFOp::create(nb, nl, xi, c),
                arith::MulFOp::create(nb, nl, xr, s));
            Value isIm = arith::CmpIOp::create(nb, nl, P::eq, idx(3), ci(1));
            Value term = arith::SelectOp::create(nb, nl, isIm, im, re);
            term = arith::SelectOp::create(nb, nl, valid, term, cf(0));
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{
                    arith::AddFOp::create(nb, nl, a.back(), term).getResult()});
          })
          .getResult(0);
  return ctx.setOutput(0, result);
}

} // namespace

void addSpectralLowerings(LoweringTable &t) {
  t["DFT"] = lowerDFT;
  t["STFT"] = lowerSTFT;
}

} // namespace strata::onnx_importer
