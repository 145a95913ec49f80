//===- GeneratorOps.cpp - Trilu, EyeLike, Range, OneHot, windows ---------===//
//
// Tensors whose elements are a function of their own indices: one parallel
// linalg.generic over the result whose body compares linalg.index values.
// Scalar operands that arrive at run time (Trilu's k, Range's start and
// delta, OneHot's values) are read once with tensor.extract; result shapes
// come from shape inference (the graph declares them where they depend on
// values).
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"
#include "strata/compiler/Importers/ONNX/SymbolicShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

Value toI64(OpBuilder &b, Location loc, Value index) {
  return arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
}

// Trilu keeps x[..., i, j] where j - i >= k (upper) or j - i <= k (lower).
LogicalResult lowerTrilu(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  if (rank < 2)
    return ctx.fail("input must have rank >= 2");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  if (type->hasStaticShape() && type->getNumElements() == 0)
    return ctx.setOutput(0, createZeroElements(b, loc, *type));
  bool upper = ctx.getIntAttr("upper", 1) != 0;
  Value k = ctx.hasInput(1) ? extractFirst(b, loc, ctx.getInput(1))
                            : createScalar(b, loc, b.getI64Type(), 0);
  k = createScalarCast(b, loc, k, b.getI64Type(), false, false);
  Value zero = createScalar(b, loc, type->getElementType(), 0);
  Value result = createIndexedGeneric(
      b, loc, {ctx.getInput(0)}, {b.getMultiDimIdentityMap(rank)}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange args, ArrayRef<Value> ivs) {
        Value diff = arith::SubIOp::create(nb, nl, toI64(nb, nl, ivs[rank - 1]),
                                           toI64(nb, nl, ivs[rank - 2]));
        Value keep = arith::CmpIOp::create(nb, nl,
                                           upper ? arith::CmpIPredicate::sge
                                                 : arith::CmpIPredicate::sle,
                                           diff, k);
        return arith::SelectOp::create(nb, nl, keep, args[0], zero).getResult();
      },
      getDimSizes(b, loc, ctx.getInput(0)));
  return ctx.setOutput(0, result);
}

// EyeLike: ones on the k-th diagonal of a 2-D tensor shaped like the input.
LogicalResult lowerEyeLike(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  if (type->getRank() != 2)
    return ctx.fail("input must be 2-D");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  int64_t k = ctx.getIntAttr("k", 0);
  Type et = type->getElementType();
  Value one = createScalar(b, loc, et, 1), zero = createScalar(b, loc, et, 0);
  Value result = createIndexedGeneric(
      b, loc, {}, {}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        Value diag = arith::AddIOp::create(
            nb, nl, ivs[0], arith::ConstantIndexOp::create(nb, nl, k));
        Value onDiag = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                             ivs[1], diag);
        return arith::SelectOp::create(nb, nl, onDiag, one, zero).getResult();
      });
  return ctx.setOutput(0, result);
}

// Range's elements start + i * delta over `type` (1-D; `sizes` gives its
// length where it is dynamic).
Value createRangeElements(OpBuilder &b, Location loc, Value start, Value delta,
                          RankedTensorType type,
                          ArrayRef<OpFoldResult> sizes = {}) {
  Type et = type.getElementType();
  bool isFloat = isa<FloatType>(et);
  return createIndexedGeneric(
      b, loc, {}, {}, type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        Value i =
            createScalarCast(nb, nl, toI64(nb, nl, ivs[0]), et, false, false);
        if (isFloat)
          return arith::AddFOp::create(nb, nl, start,
                                       arith::MulFOp::create(nb, nl, i, delta))
              .getResult();
        return arith::AddIOp::create(nb, nl, start,
                                     arith::MulIOp::create(nb, nl, i, delta))
            .getResult();
      },
      sizes);
}

// The most elements a Range sized at run time may have: its byte size and
// the sizes computed from it stay far from overflowing.
constexpr int64_t kMaxRuntimeRangeLength = (int64_t(1) << 31) - 1;

// Range's length max(0, ceil((limit - start) / delta)) from scalars of any
// numeric type, as i64; -1 where delta is 0, a float operand is not finite
// or the length passes kMaxRuntimeRangeLength.
Value createRangeLength(OpBuilder &b, Location loc, Value start, Value limit,
                        Value delta) {
  Type i64 = b.getI64Type();
  Value zero = createScalar(b, loc, i64, 0);
  Value invalid = createScalar(b, loc, i64, -1);
  Value length, valid;
  if (isa<FloatType>(start.getType())) {
    Value quotient = arith::DivFOp::create(
        b, loc, arith::SubFOp::create(b, loc, limit, start), delta);
    Value ceil = math::CeilOp::create(b, loc, quotient);
    // Ordered compares fail on NaN; a non-finite delta or span fails the
    // bound (or gives a 0 or NaN quotient from operands a user would not
    // write; ONNX Runtime rejects them too).
    Value bound = createScalar(b, loc, ceil.getType(),
                               static_cast<double>(kMaxRuntimeRangeLength));
    valid =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLE, ceil, bound);
    Value zeroDelta = createScalar(b, loc, delta.getType(), 0);
    valid = arith::AndIOp::create(
        b, loc, valid,
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::ONE, delta,
                              zeroDelta));
    // (Clamped before the conversion, which is undefined out of range.)
    Value lowest = createScalar(b, loc, ceil.getType(), 0);
    ceil = arith::SelectOp::create(b, loc, valid, ceil, lowest);
    ceil = arith::MaximumFOp::create(b, loc, ceil, lowest);
    length = arith::FPToSIOp::create(b, loc, i64, ceil);
  } else {
    start = createScalarCast(b, loc, start, i64, false, false);
    limit = createScalarCast(b, loc, limit, i64, false, false);
    delta = createScalarCast(b, loc, delta, i64, false, false);
    valid =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, delta, zero);
    // A zero delta divides by one instead (the result is invalid anyway).
    Value divisor = arith::SelectOp::create(b, loc, valid, delta,
                                            createScalar(b, loc, i64, 1));
    Value span = arith::SubIOp::create(b, loc, limit, start);
    Value quotient = arith::DivSIOp::create(b, loc, span, divisor);
    Value remainder = arith::RemSIOp::create(b, loc, span, divisor);
    // Division truncates; round up where the exact quotient is positive.
    Value inexact = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne,
                                          remainder, zero);
    Value sameSign = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sge,
        arith::XOrIOp::create(b, loc, remainder, divisor), zero);
    Value roundUp = arith::AndIOp::create(b, loc, inexact, sameSign);
    length = arith::AddIOp::create(
        b, loc, quotient,
        arith::ExtUIOp::create(b, loc, i64, roundUp).getResult());
    length = arith::MaxSIOp::create(b, loc, length, zero);
    valid = arith::AndIOp::create(
        b, loc, valid,
        arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::sle, length,
            createScalar(b, loc, i64, kMaxRuntimeRangeLength)));
  }
  return arith::SelectOp::create(b, loc, valid, length, invalid);
}

// Range over operands known only at run time: a dispatch computes the
// length, the host reads it back and checks it, and sizes the result (and
// all computed from it) with it.
LogicalResult lowerRuntimeRange(NodeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Type et = ctx.getInputType(0).getElementType();
  for (unsigned i = 1; i < 3; ++i)
    if (ctx.getInputType(i).getElementType() != et)
      return ctx.fail("start, limit and delta must have one type");
  Value start = extractFirst(b, loc, ctx.getInput(0));
  Value limit = extractFirst(b, loc, ctx.getInput(1));
  Value delta = extractFirst(b, loc, ctx.getInput(2));
  Value lengthTensor = createIndexedGeneric(
      b, loc, {}, {}, RankedTensorType::get({}, b.getI64Type()),
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value>) {
        return createRangeLength(nb, nl, start, limit, delta);
      });
  Value length = tensor::ExtractOp::create(b, loc, lengthTensor, ValueRange{});
  Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, length,
                                      createScalar(b, loc, b.getI64Type(), 0));
  ctx.assertAtCall(valid, "delta is zero, an operand is not finite, or the "
                          "result would have more than " +
                              Twine(kMaxRuntimeRangeLength) + " elements");
  Value size = arith::IndexCastOp::create(b, loc, b.getIndexType(), length);
  auto type = RankedTensorType::get({ShapedType::kDynamic}, et);
  return ctx.setOutput(
      0, createRangeElements(b, loc, start, delta, type, {OpFoldResult(size)}));
}

// Range: start + i * delta for i in [0, n); n comes from the inferred (or
// declared) result shape where there is one, as the count depends on the
// operand values, else from the operands at run time.
LogicalResult lowerRange(NodeContext &ctx) {
  if (ctx.hasDynamicInput())
    return lowerSymbolicRange(ctx);
  RankedTensorType startType = ctx.getInputType(0);
  Type et = startType.getElementType();
  // Compile-time operands fix the count even where inference gave none.
  RankedTensorType computed;
  auto s = ctx.getConstantInput(0), l = ctx.getConstantInput(1),
       d = ctx.getConstantInput(2);
  if (s && l && d) {
    auto asDouble = [](DenseElementsAttr a) {
      if (isa<FloatType>(a.getElementType()))
        return a.getValues<APFloat>()[0].convertToDouble();
      return static_cast<double>(a.getValues<APInt>()[0].getSExtValue());
    };
    double count = std::ceil((asDouble(*l) - asDouble(*s)) / asDouble(*d));
    computed = RankedTensorType::get(
        {std::max<int64_t>(0, static_cast<int64_t>(count))}, et);
  }
  if (!computed && !ctx.hasInferredOutputType(0))
    return lowerRuntimeRange(ctx);
  FailureOr<RankedTensorType> type =
      computed ? ctx.getOutputTypeOr(0, computed) : ctx.getOutputType(0);
  if (failed(type))
    return failure();
  if (type->getRank() != 1)
    return ctx.fail("result must be 1-D");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  if (type->getNumElements() == 0)
    return ctx.setOutput(0, createZeroElements(b, loc, *type));
  // Integer ranges of compile-time operands (axes lists) fold, so the
  // shape computations they feed do too.
  if (s && l && d && isa<IntegerType>(et) && type->getNumElements() <= 1024) {
    APInt start = s->getValues<APInt>()[0], delta = d->getValues<APInt>()[0];
    SmallVector<APInt> values;
    for (int64_t i = 0; i < type->getNumElements(); ++i)
      values.push_back(start + delta * APInt(et.getIntOrFloatBitWidth(), i));
    return ctx.setConstantOutput(0, DenseElementsAttr::get(*type, values));
  }
  Value start = extractFirst(b, loc, ctx.getInput(0));
  Value delta = extractFirst(b, loc, ctx.getInput(2));
  return ctx.setOutput(0, createRangeElements(b, loc, start, delta, *type));
}

// OneHot: result[..., j, ...] (j at `axis`) is values[1] where
// indices[...] (negative from the end of depth) equals j, else values[0].
LogicalResult lowerOneHot(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  int64_t rank = type->getRank();
  int64_t axis = ctx.getIntAttr("axis", -1);
  if (axis < -rank || axis >= rank)
    return ctx.fail("axis " + Twine(axis) + " is out of range");
  axis = normalizeAxis(axis, rank);
  int64_t depth = type->getDimSize(axis);
  // Indices of dims known only at run time: the result takes their dims,
  // the depth (a constant) inserted at the axis.
  SmallVector<OpFoldResult> sizes;
  if (!ctx.getInputType(0).hasStaticShape()) {
    std::optional<DenseElementsAttr> depthValue = ctx.getConstantInput(1);
    if (ShapedType::isDynamic(depth) && depthValue &&
        depthValue->getNumElements() == 1)
      depth = isa<FloatType>(depthValue->getElementType())
                  ? int64_t((*depthValue->getValues<APFloat>().begin())
                                .convertToDouble())
                  : (*depthValue->getValues<APInt>().begin()).getSExtValue();
    if (ShapedType::isDynamic(depth) || depth < 0)
      return ctx.fail("with dynamic dims the depth must be a non-negative "
                      "constant");
    sizes = getDimSizes(b, loc, ctx.getInput(0));
    sizes.insert(sizes.begin() + axis, b.getIndexAttr(depth));
    *type =
        RankedTensorType::get(getStaticShape(sizes), type->getElementType());
  }
  Value values = ctx.getInput(2);
  Value off = tensor::ExtractOp::create(
      b, loc, values, ValueRange{arith::ConstantIndexOp::create(b, loc, 0)});
  Value on = tensor::ExtractOp::create(
      b, loc, values, ValueRange{arith::ConstantIndexOp::create(b, loc, 1)});
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i)
    if (i != axis)
      exprs.push_back(b.getAffineDimExpr(i));
  AffineMap indexMap = AffineMap::get(rank, 0, exprs, b.getContext());
  bool unsignedIndices = ctx.isInputUnsigned(0);
  Value result = createIndexedGeneric(
      b, loc, {ctx.getInput(0)}, {indexMap}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange args, ArrayRef<Value> ivs) {
        // Indices may be floats (truncated) or integers of any width.
        Value index = createScalarCast(nb, nl, args[0], nb.getI64Type(),
                                       unsignedIndices, false);
        Value zero = createScalar(nb, nl, nb.getI64Type(), 0);
        Value isNeg = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                            index, zero);
        Value wrapped = arith::AddIOp::create(
            nb, nl, index, createScalar(nb, nl, nb.getI64Type(), depth));
        index = arith::SelectOp::create(nb, nl, isNeg, wrapped, index);
        Value hit = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                          index, toI64(nb, nl, ivs[axis]));
        return arith::SelectOp::create(nb, nl, hit, on, off).getResult();
      },
      sizes);
  return ctx.setOutput(0, result);
}

// Hann, Hamming and Blackman windows: a0 - a1 cos(2 pi n / N') +
// a2 cos(4 pi n / N') with N' = size (periodic) or size - 1 (symmetric).
// The size may arrive at run time; the result shape fixes it.
LogicalResult lowerWindow(NodeContext &ctx, double a0, double a1, double a2) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  if (type->getRank() != 1)
    return ctx.fail("result must be 1-D");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  int64_t size = type->getDimSize(0);
  if (size == 0)
    return ctx.setOutput(0, createZeroElements(b, loc, *type));
  bool periodic = ctx.getIntAttr("periodic", 1) != 0;
  double denominator = periodic ? size : size - 1;
  Type et = type->getElementType();
  Value result = createIndexedGeneric(
      b, loc, {}, {}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        Type f64 = nb.getF64Type();
        auto cst = [&](double v) { return createScalar(nb, nl, f64, v); };
        Value n = arith::SIToFPOp::create(nb, nl, f64, toI64(nb, nl, ivs[0]));
        Value angle = arith::MulFOp::create(
            nb, nl, n, cst(denominator > 0 ? 2 * M_PI / denominator : 0));
        Value w = arith::SubFOp::create(
            nb, nl, cst(a0),
            arith::MulFOp::create(nb, nl, cst(a1),
                                  math::CosOp::create(nb, nl, angle)));
        if (a2 != 0) {
          Value twice = arith::MulFOp::create(nb, nl, angle, cst(2));
          w = arith::AddFOp::create(
              nb, nl, w,
              arith::MulFOp::create(nb, nl, cst(a2),
                                    math::CosOp::create(nb, nl, twice)));
        }
        return createScalarCast(nb, nl, w, et, false, false);
      });
  return ctx.setOutput(0, result);
}

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters.
// The bin edges are mel-spaced between the edge frequencies (num_mel_bins +
// 2 points) and rounded down to spectrogram bins; entry (j, i) rises from
// edge i to edge i + 1 and falls to edge i + 2 (1 at the centre when the
// rise is empty). The sizes come from the result shape; dft_length,
// sample_rate and the edges are read at run time. Computed in f64.
LogicalResult lowerMelWeightMatrix(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  if (type->getRank() != 2)
    return ctx.fail("result must be 2-D");
  for (unsigned i = 0; i < 5; ++i) {
    RankedTensorType t = ctx.getInputType(i);
    if (!t || t.getNumElements() != 1)
      return ctx.fail("input " + Twine(i) + " must be a scalar");
  }
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  if (type->getNumElements() == 0)
    return ctx.setOutput(0, createZeroElements(b, loc, *type));
  int64_t numMelBins = type->getDimSize(1);
  Type et = type->getElementType();
  SmallVector<Value> scalars;
  for (unsigned i = 1; i < 5; ++i)
    scalars.push_back(ctx.getInput(i));
  SmallVector<bool> unsignedInputs;
  for (unsigned i = 1; i < 5; ++i)
    unsignedInputs.push_back(ctx.isInputUnsigned(i));
  Value result = createIndexedGeneric(
      b, loc, {}, {}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        Type f64 = nb.getF64Type();
        auto cst = [&](double v) { return createScalar(nb, nl, f64, v); };
        auto read = [&](unsigned i) {
          return createScalarCast(nb, nl, extractFirst(nb, nl, scalars[i]), f64,
                                  unsignedInputs[i], false);
        };
        Value dftLength = read(0), sampleRate = read(1), lower = read(2),
              upper = read(3);
        // mel(f) = 2595 log10(1 + f / 700); its inverse.
        auto toMel = [&](Value hz) {
          Value ratio = arith::AddFOp::create(
              nb, nl, cst(1), arith::DivFOp::create(nb, nl, hz, cst(700)));
          return arith::MulFOp::create(nb, nl, cst(2595 / std::log(10.0)),
                                       math::LogOp::create(nb, nl, ratio));
        };
        Value lowMel = toMel(lower);
        Value step = arith::DivFOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, toMel(upper), lowMel),
            cst(numMelBins + 2));
        // Edge k as a spectrogram bin: floor((dft_length + 1) * hz / rate).
        auto edge = [&](Value k) {
          Value mel = arith::AddFOp::create(
              nb, nl, arith::MulFOp::create(nb, nl, k, step), lowMel);
          Value hz = arith::MulFOp::create(
              nb, nl, cst(700),
              arith::SubFOp::create(
                  nb, nl,
                  math::ExpOp::create(
                      nb, nl,
                      arith::MulFOp::create(nb, nl, mel,
                                            cst(std::log(10.0) / 2595))),
                  cst(1)));
          Value scaled = arith::MulFOp::create(
              nb, nl, arith::AddFOp::create(nb, nl, dftLength, cst(1)), hz);
          return math::FloorOp::create(
              nb, nl, arith::DivFOp::create(nb, nl, scaled, sampleRate));
        };
        Value i = arith::SIToFPOp::create(nb, nl, f64, toI64(nb, nl, ivs[1]));
        Value j = arith::SIToFPOp::create(nb, nl, f64, toI64(nb, nl, ivs[0]));
        Value left = edge(i);
        Value center = edge(arith::AddFOp::create(nb, nl, i, cst(1)));
        Value right = edge(arith::AddFOp::create(nb, nl, i, cst(2)));
        auto cmp = [&](arith::CmpFPredicate p, Value x, Value y) {
          return arith::CmpFOp::create(nb, nl, p, x, y).getResult();
        };
        auto andOf = [&](Value x, Value y) {
          return arith::AndIOp::create(nb, nl, x, y).getResult();
        };
        auto select = [&](Value c, Value x, Value y) {
          return arith::SelectOp::create(nb, nl, c, x, y).getResult();
        };
        Value rise = arith::SubFOp::create(nb, nl, center, left);
        Value fall = arith::SubFOp::create(nb, nl, right, center);
        // Rising side, [left, center]; an empty rise is 1 at the centre.
        Value onRise = andOf(cmp(arith::CmpFPredicate::OGE, j, left),
                             cmp(arith::CmpFPredicate::OLE, j, center));
        Value riseValue =
            select(cmp(arith::CmpFPredicate::OEQ, rise, cst(0)), cst(1),
                   arith::DivFOp::create(
                       nb, nl, arith::SubFOp::create(nb, nl, j, left), rise));
        Value value = select(onRise, riseValue, cst(0));
        // Falling side, [center, right), written after the rise.
        Value onFall = andOf(cmp(arith::CmpFPredicate::OGT, fall, cst(0)),
                             andOf(cmp(arith::CmpFPredicate::OGE, j, center),
                                   cmp(arith::CmpFPredicate::OLT, j, right)));
        Value fallValue = arith::DivFOp::create(
            nb, nl, arith::SubFOp::create(nb, nl, right, j), fall);
        value = select(onFall, fallValue, value);
        return createScalarCast(nb, nl, value, et, false, false);
      });
  return ctx.setOutput(0, result);
}

} // namespace

void addGeneratorLowerings(LoweringTable &t) {
  t["HannWindow"] = [](NodeContext &ctx) {
    return lowerWindow(ctx, 0.5, 0.5, 0);
  };
  t["HammingWindow"] = [](NodeContext &ctx) {
    return lowerWindow(ctx, 25.0 / 46, 1 - 25.0 / 46, 0);
  };
  t["BlackmanWindow"] = [](NodeContext &ctx) {
    return lowerWindow(ctx, 0.42, 0.5, 0.08);
  };
  t["Trilu"] = lowerTrilu;
  t["EyeLike"] = lowerEyeLike;
  t["Range"] = lowerRange;
  t["OneHot"] = lowerOneHot;
  t["MelWeightMatrix"] = lowerMelWeightMatrix;
}

} // namespace strata::onnx_importer
