//===- IndexingOps.cpp - Gather, GatherElements, Pad ----------------------===//
//
// Data-dependent indexing is a linalg.generic over the result whose body
// computes source coordinates from linalg.index and reads them with
// tensor.extract.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

// Gather from a small compile-time 1-D tensor (shape computations).
bool tryFoldGather(NodeContext &ctx, LogicalResult &result) {
  std::optional<DenseElementsAttr> data = ctx.getConstantInput(0);
  std::optional<DenseElementsAttr> indices = ctx.getConstantInput(1);
  if (!data || !indices || data->getType().getRank() != 1 ||
      data->getNumElements() > 64 || indices->getNumElements() > 64 ||
      !isa<IntegerType>(indices->getElementType()))
    return false;
  auto values = llvm::to_vector(data->getValues<Attribute>());
  int64_t n = values.size();
  SmallVector<Attribute> gathered;
  for (const APInt &i : indices->getValues<APInt>()) {
    int64_t index = i.getSExtValue();
    index = index < 0 ? index + n : index;
    if (index < 0 || index >= n)
      return false;
    gathered.push_back(values[index]);
  }
  auto type = RankedTensorType::get(indices->getType().getShape(),
                                    data->getElementType());
  result = ctx.setConstantOutput(0, DenseElementsAttr::get(type, gathered));
  return true;
}

LogicalResult lowerGather(NodeContext &ctx) {
  LogicalResult folded = success();
  if (tryFoldGather(ctx, folded))
    return folded;
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType dt = ctx.getInputType(0), it = ctx.getInputType(1);
  int64_t axis = normalizeAxis(ctx.getIntAttr("axis", 0), dt.getRank());
  int64_t q = it.getRank();
  Value data = ctx.getInput(0);
  // Indices are read at result dims [axis, axis + q).
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < q; ++i)
    exprs.push_back(b.getAffineDimExpr(axis + i));
  AffineMap indexMap =
      AffineMap::get(type->getRank(), 0, exprs, b.getContext());
  Value result = createIndexedGeneric(
      b, loc, {ctx.getInput(1)}, {indexMap}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange args, ArrayRef<Value> ivs) {
        SmallVector<Value> coords;
        for (int64_t i = 0; i < axis; ++i)
          coords.push_back(ivs[i]);
        coords.push_back(normalizeIndex(nb, nl, args[0], dt.getDimSize(axis)));
        for (int64_t i = axis + 1; i < dt.getRank(); ++i)
          coords.push_back(ivs[i - 1 + q]);
        return tensor::ExtractOp::create(nb, nl, data, coords).getResult();
      });
  return ctx.setOutput(0, result);
}

LogicalResult lowerGatherElements(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  RankedTensorType dt = ctx.getInputType(0);
  int64_t axis = normalizeAxis(ctx.getIntAttr("axis", 0), dt.getRank());
  Value data = ctx.getInput(0);
  Value result = createIndexedGeneric(
      b, ctx.getLoc(), {ctx.getInput(1)},
      {b.getMultiDimIdentityMap(type->getRank())}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange args, ArrayRef<Value> ivs) {
        SmallVector<Value> coords(ivs);
        coords[axis] = normalizeIndex(nb, nl, args[0], dt.getDimSize(axis));
        return tensor::ExtractOp::create(nb, nl, data, coords).getResult();
      });
  return ctx.setOutput(0, result);
}

LogicalResult lowerPad(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0);
  int64_t rank = xt.getRank();
  SmallVector<int64_t> pads;
  Value padValue;
  if (ctx.getOpset() < 11) {
    pads = ctx.getIntsAttr("pads");
    padValue = createScalar(b, loc, xt.getElementType(),
                            ctx.getFloatAttr("value", 0.0f));
  } else {
    auto p = ctx.getConstantInts(1);
    if (failed(p))
      return failure();
    pads = *p;
    if (ctx.hasInput(2))
      padValue = tensor::ExtractOp::create(
          b, loc, ctx.getInput(2),
          SmallVector<Value>(ctx.getInputType(2).getRank(),
                             arith::ConstantIndexOp::create(b, loc, 0)));
    else
      padValue = createScalar(b, loc, xt.getElementType(), 0);
  }
  SmallVector<int64_t> axes;
  if (ctx.hasInput(3)) {
    auto a = ctx.getConstantInts(3);
    if (failed(a))
      return failure();
    axes = *a;
  } else {
    for (int64_t i = 0; i < rank; ++i)
      axes.push_back(i);
  }
  if (pads.size() != 2 * axes.size())
    return ctx.fail("pads has the wrong length");
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = normalizeAxis(axes[i], rank);
    low[axis] = pads[i];
    high[axis] = pads[axes.size() + i];
  }
  std::string mode = ctx.getStringAttr("mode", "constant");
  if (mode == "constant" &&
      llvm::all_of(low, [](int64_t v) { return v >= 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v >= 0; })) {
    return ctx.setOutput(
        0, tensor::PadOp::create(b, loc, *type, ctx.getInput(0),
                                 getAsIndexOpFoldResult(b.getContext(), low),
                                 getAsIndexOpFoldResult(b.getContext(), high),
                                 padValue));
  }
  // General form: each result element reads a clamped/reflected source
  // coordinate (edge, reflect) or the pad value (constant, which also
  // handles negative pads, i.e. cropping).
  Value data = ctx.getInput(0);
  Value result = createIndexedGeneric(
      b, loc, {}, {}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        SmallVector<Value> coords;
        Value inBounds = createScalar(nb, nl, nb.getI1Type(), 1);
        for (int64_t d = 0; d < rank; ++d) {
          int64_t dim = xt.getDimSize(d);
          Value i = arith::SubIOp::create(
              nb, nl, ivs[d], arith::ConstantIndexOp::create(nb, nl, low[d]));
          Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
          Value last = arith::ConstantIndexOp::create(nb, nl, dim - 1);
          if (mode == "edge") {
            i = arith::MinSIOp::create(
                nb, nl, arith::MaxSIOp::create(nb, nl, i, zero), last);
          } else if (mode == "reflect") {
            // Reflect about 0 and dim-1 (period 2*(dim-1)).
            Value period = arith::ConstantIndexOp::create(
                nb, nl, std::max<int64_t>(1, 2 * (dim - 1)));
            Value m = arith::RemSIOp::create(nb, nl, i, period);
            Value neg = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                              m, zero);
            m = arith::SelectOp::create(
                nb, nl, neg, arith::AddIOp::create(nb, nl, m, period), m);
            Value over = arith::CmpIOp::create(
                nb, nl, arith::CmpIPredicate::sgt, m, last);
            i = arith::SelectOp::create(
                nb, nl, over, arith::SubIOp::create(nb, nl, period, m), m);
          } else {
            Value ge = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge,
                                             i, zero);
            Value le = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sle,
                                             i, last);
            inBounds = arith::AndIOp::create(
                nb, nl, inBounds, arith::AndIOp::create(nb, nl, ge, le));
            i = arith::MinSIOp::create(
                nb, nl, arith::MaxSIOp::create(nb, nl, i, zero), last);
          }
          coords.push_back(i);
        }
        Value v = tensor::ExtractOp::create(nb, nl, data, coords);
        if (mode == "edge" || mode == "reflect")
          return v;
        return arith::SelectOp::create(nb, nl, inBounds, v, padValue)
            .getResult();
      });
  return ctx.setOutput(0, result);
}

} // namespace

void addIndexingLowerings(LoweringTable &t) {
  t["Gather"] = lowerGather;
  t["GatherElements"] = lowerGatherElements;
  t["Pad"] = lowerPad;
}

} // namespace strata::onnx_importer
