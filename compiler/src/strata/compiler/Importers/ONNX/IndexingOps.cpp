//===- IndexingOps.cpp - Gather, GatherElements, Pad ----------------------===//
//
// Data-dependent indexing is a linalg.generic over the result whose body
// computes source coordinates from linalg.index and reads them with
// tensor.extract.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"
#include "strata/compiler/Importers/ONNX/SymbolicShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
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
  int64_t axis = ctx.getIntAttr("axis", 0);
  if (!data || !indices || data->getType().getRank() != 1 ||
      (axis != 0 && axis != -1) || data->getNumElements() > 64 ||
      indices->getNumElements() > 64 ||
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
  FailureOr<int64_t> axisOr =
      ctx.getAxis(ctx.getIntAttr("axis", 0), dt.getRank());
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  // Subgraph types come from non-strict inference: check what the loop
  // below indexes by.
  if (type->getRank() != dt.getRank() - 1 + it.getRank())
    return ctx.fail("the result has rank " + Twine(type->getRank()) +
                    ", not the data's rank - 1 + the indices' rank");
  if (!dt.isDynamicDim(axis) &&
      failed(ctx.checkConstantIndices(
          1, [&](int64_t) { return dt.getDimSize(axis); })))
    return failure();
  int64_t q = it.getRank();
  Value data = ctx.getInput(0);
  // The result's sizes: data dims before the axis, the indices' dims, data
  // dims after it.
  SmallVector<OpFoldResult> dataSizes = getDimSizes(b, loc, data);
  SmallVector<OpFoldResult> indexSizes = getDimSizes(b, loc, ctx.getInput(1));
  if (failed(ctx.checkIndexedDimNotEmpty(axis, dataSizes[axis], indexSizes)))
    return failure();
  SmallVector<OpFoldResult> sizes(ArrayRef(dataSizes).take_front(axis));
  llvm::append_range(sizes, indexSizes);
  llvm::append_range(sizes, ArrayRef(dataSizes).drop_front(axis + 1));
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
        coords.push_back(normalizeIndex(nb, nl, args[0], dataSizes[axis]));
        for (int64_t i = axis + 1; i < dt.getRank(); ++i)
          coords.push_back(ivs[i - 1 + q]);
        return tensor::ExtractOp::create(nb, nl, data, coords).getResult();
      },
      sizes);
  return ctx.setOutput(0, result);
}

// GatherElements: result[p] = data[p with the axis coordinate replaced by
// indices[p]]. The result has the indices' shape, no larger than the
// data's off the axis (a position past the data would read out of bounds:
// checked at the call where only known then). Any dim may be known only at
// run time; indices wrap from the end and clamp into the axis.
LogicalResult lowerGatherElements(NodeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType dt = ctx.getInputType(0);
  int64_t rank = dt.getRank();
  FailureOr<int64_t> axisOr = ctx.getAxis(ctx.getIntAttr("axis", 0), rank);
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  if (ctx.getInputType(1).getRank() != rank)
    return ctx.fail("the indices must have the data's rank");
  if (failed(ctx.checkConstantIndices(
          1, [&](int64_t) { return dt.getDimSize(axis); })))
    return failure();
  Value data = ctx.getInput(0), indices = ctx.getInput(1);
  SmallVector<OpFoldResult> dataSizes = getDimSizes(b, loc, data);
  SmallVector<OpFoldResult> sizes = getDimSizes(b, loc, indices);
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis &&
        failed(ctx.checkSizes(sizes[d], dataSizes[d],
                              "dim " + Twine(d) +
                                  " of indices is larger than the data's",
                              /*atMost=*/true)))
      return failure();
  if (failed(ctx.checkIndexedDimNotEmpty(axis, dataSizes[axis], sizes)))
    return failure();
  auto type = RankedTensorType::get(getStaticShape(sizes), dt.getElementType());
  Value result = createIndexedGeneric(
      b, loc, {indices}, {b.getMultiDimIdentityMap(rank)}, type,
      [&](OpBuilder &nb, Location nl, ValueRange args, ArrayRef<Value> ivs) {
        SmallVector<Value> coords(ivs);
        coords[axis] = normalizeIndex(nb, nl, args[0], dataSizes[axis]);
        return tensor::ExtractOp::create(nb, nl, data, coords).getResult();
      },
      sizes);
  return ctx.setOutput(0, result);
}

LogicalResult lowerPad(NodeContext &ctx) {
  RankedTensorType xt = ctx.getInputType(0);
  int64_t rank = xt.getRank();
  // A static input padded by amounts known at run time has a result shape
  // inference cannot give: the pads size it (below).
  FailureOr<RankedTensorType> type =
      ctx.hasInferredOutputType(0) || ctx.hasDynamicInput()
          ? ctx.getOutputType(0)
          : RankedTensorType::get(
                SmallVector<int64_t>(rank, ShapedType::kDynamic),
                xt.getElementType());
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  SmallVector<int64_t> pads;
  SmallVector<OpFoldResult> symbolicPads;
  Value padValue, runtimePads;
  if (ctx.getOpset() < 11) {
    pads = ctx.getIntsAttr("pads");
    padValue = createScalar(b, loc, xt.getElementType(),
                            ctx.getFloatAttr("value", 0.0f));
  } else {
    // Pads known only at run time are read in the general form's body
    // when the result shape is static all the same; computed from dynamic
    // dims, or sizing a result of run-time shape, they are sizes the host
    // holds (read back from the device where computed there).
    if (ctx.hasInput(1) && !ctx.getConstantInput(1)) {
      bool sizesResult = !xt.hasStaticShape() || !type->hasStaticShape();
      if (std::optional<SymbolicShape> shape =
              sizesResult ? getSymbolicOrReadBackInput(ctx, 1)
                          : getSymbolicInput(ctx, 1))
        symbolicPads = shape->elements;
      else
        runtimePads = ctx.getInput(1);
      pads.assign(ctx.getInputType(1).getNumElements(), 0);
    } else {
      auto p = ctx.getConstantInts(1);
      if (failed(p))
        return failure();
      pads = *p;
    }
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
  if (pads.size() != 2 * axes.size() ||
      (!symbolicPads.empty() && symbolicPads.size() != pads.size()))
    return ctx.fail("pads has the wrong length");
  if (runtimePads && (!xt.hasStaticShape() || !type->hasStaticShape()))
    return ctx.fail("with dynamic dims the pads must be known at compile "
                    "time, computed from the input shapes or an int32/int64 "
                    "tensor" +
                    ctx.getState().pinHint);
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  // Where each dim's low pad is in `pads` (-1: not padded).
  SmallVector<int64_t> position(rank, -1);
  for (size_t i = 0; i < axes.size(); ++i) {
    FailureOr<int64_t> axis = ctx.getAxis(axes[i], rank);
    if (failed(axis))
      return failure();
    low[*axis] = pads[i];
    high[*axis] = pads[axes.size() + i];
    position[*axis] = i;
  }
  std::string mode = ctx.getStringAttr("mode", "constant");
  if (mode != "constant" && mode != "edge" && mode != "reflect" &&
      mode != "wrap")
    return ctx.fail("unknown mode '" + mode + "'");
  if (mode == "constant" && !runtimePads && symbolicPads.empty() &&
      llvm::all_of(low, [](int64_t v) { return v >= 0; }) &&
      llvm::all_of(high, [](int64_t v) { return v >= 0; })) {
    return ctx.setOutput(
        0, tensor::PadOp::create(b, loc, *type, ctx.getInput(0),
                                 getAsIndexOpFoldResult(b.getContext(), low),
                                 getAsIndexOpFoldResult(b.getContext(), high),
                                 padValue));
  }
  // A dim nothing pads is read in place at any size (a dynamic batch).
  auto isPadded = [&](int64_t d) {
    return ((runtimePads || !symbolicPads.empty()) && position[d] >= 0) ||
           low[d] != 0 || high[d] != 0;
  };
  // Each dim's size and pads as sizes (attributes where known): the result
  // dim is in + low + high, none where that is negative.
  SmallVector<OpFoldResult> inSizes = getDimSizes(b, loc, ctx.getInput(0));
  // Reflect and wrap read a padded dim's own elements: it must have one
  // (checked at the call where its size is known only then).
  if (mode == "reflect" || mode == "wrap")
    for (int64_t d = 0; d < rank; ++d)
      if (isPadded(d) &&
          failed(ctx.checkSizes(b.getIndexAttr(1), inSizes[d],
                                "dim " + Twine(d) + " is empty but mode '" +
                                    mode + "' pads it",
                                /*atMost=*/true)))
        return failure();
  SmallVector<OpFoldResult> lowSizes, resultSizes;
  for (int64_t d = 0; d < rank; ++d) {
    OpFoldResult lowD = b.getIndexAttr(low[d]), highD = b.getIndexAttr(high[d]);
    if (!symbolicPads.empty() && position[d] >= 0) {
      lowD = symbolicPads[position[d]];
      highD = symbolicPads[axes.size() + position[d]];
    }
    lowSizes.push_back(lowD);
    if (!type->isDynamicDim(d)) {
      resultSizes.push_back(b.getIndexAttr(type->getDimSize(d)));
      continue;
    }
    std::optional<int64_t> in = getConstantIntValue(inSizes[d]),
                           lo = getConstantIntValue(lowD),
                           hi = getConstantIntValue(highD);
    if (in && lo && hi) {
      resultSizes.push_back(
          b.getIndexAttr(std::max<int64_t>(0, *in + *lo + *hi)));
      continue;
    }
    Value size = arith::AddIOp::create(
        b, loc, getValueOrCreateConstantIndexOp(b, loc, inSizes[d]),
        arith::AddIOp::create(b, loc,
                              getValueOrCreateConstantIndexOp(b, loc, lowD),
                              getValueOrCreateConstantIndexOp(b, loc, highD)));
    resultSizes.push_back(
        arith::MaxSIOp::create(b, loc, size,
                               arith::ConstantIndexOp::create(b, loc, 0))
            .getResult());
  }
  // General form: each result element reads a clamped/reflected source
  // coordinate (edge, reflect) or the pad value (constant, which also
  // handles negative pads, i.e. cropping).
  // The result is as static as its sizes (inference may not have seen
  // through pads computed from shapes).
  SmallVector<int64_t> resultShape = getStaticShape(resultSizes);
  *type = RankedTensorType::get(resultShape, type->getElementType());
  Value data = ctx.getInput(0);
  auto indexValue = [](OpBuilder &nb, Location nl, OpFoldResult size) {
    if (std::optional<int64_t> known = getConstantIntValue(size))
      return arith::ConstantIndexOp::create(nb, nl, *known).getResult();
    return cast<Value>(size);
  };
  Value result = createIndexedGeneric(
      b, loc, {}, {}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        SmallVector<Value> coords;
        Value inBounds = createScalar(nb, nl, nb.getI1Type(), 1);
        for (int64_t d = 0; d < rank; ++d) {
          if (!isPadded(d)) {
            coords.push_back(ivs[d]);
            continue;
          }
          int64_t dim = xt.getDimSize(d);
          // The dim's size (index), known at run time where it is dynamic.
          Value size =
              ShapedType::isDynamic(dim)
                  ? indexValue(nb, nl, inSizes[d])
                  : arith::ConstantIndexOp::create(nb, nl, dim).getResult();
          Value lowD = runtimePads && position[d] >= 0
                           ? arith::IndexCastOp::create(
                                 nb, nl, nb.getIndexType(),
                                 tensor::ExtractOp::create(
                                     nb, nl, runtimePads,
                                     ValueRange{arith::ConstantIndexOp::create(
                                         nb, nl, position[d])}))
                                 .getResult()
                           : indexValue(nb, nl, lowSizes[d]);
          Value i = arith::SubIOp::create(nb, nl, ivs[d], lowD);
          Value zero = arith::ConstantIndexOp::create(nb, nl, 0);
          Value last =
              ShapedType::isDynamic(dim)
                  ? arith::SubIOp::create(
                        nb, nl, indexValue(nb, nl, inSizes[d]),
                        arith::ConstantIndexOp::create(nb, nl, 1))
                        .getResult()
                  : arith::ConstantIndexOp::create(nb, nl, dim - 1).getResult();
          if (mode == "edge") {
            i = arith::MinSIOp::create(
                nb, nl, arith::MaxSIOp::create(nb, nl, i, zero), last);
          } else if (mode == "wrap") {
            // Periodic: ((i mod dim) + dim) mod dim.
            i = arith::RemSIOp::create(
                nb, nl,
                arith::AddIOp::create(
                    nb, nl, arith::RemSIOp::create(nb, nl, i, size), size),
                size);
          } else if (mode == "reflect") {
            // Reflect about 0 and dim-1 (period 2*(dim-1), 1 for one
            // element).
            Value one = arith::ConstantIndexOp::create(nb, nl, 1);
            Value period = arith::MaxSIOp::create(
                nb, nl, one,
                arith::MulIOp::create(
                    nb, nl, arith::ConstantIndexOp::create(nb, nl, 2),
                    arith::SubIOp::create(nb, nl, size, one)));
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
        if (mode == "edge" || mode == "reflect" || mode == "wrap")
          return v;
        return arith::SelectOp::create(nb, nl, inBounds, v, padValue)
            .getResult();
      },
      resultSizes);
  return ctx.setOutput(0, result);
}

} // namespace

// The result shape is static (inferred or declared); only where each result
// dim starts in the input and its step come from the run-time operands, so
// the result is a generic whose body computes, per dim, the start and step
// of the slice entry naming that dim (defaults 0 and 1) and reads
// input[start + i * step]. `ends` only determines the (known) result size.
LogicalResult lowerRuntimeSlice(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0);
  int64_t rank = xt.getRank();
  if (type->getRank() != rank)
    return ctx.fail("result rank differs from the input's");
  int64_t count = ctx.getInputType(1).getNumElements();
  for (unsigned i = 2; i <= 4; ++i)
    if (ctx.hasInput(i) && ctx.getInputType(i).getNumElements() != count)
      return ctx.fail("starts, ends, axes and steps differ in length");
  if (type->getNumElements() == 0)
    return ctx.setOutput(0, createZeroElements(b, loc, *type));
  Value starts = ctx.getInput(1);
  Value axes = ctx.hasInput(3) ? ctx.getInput(3) : Value();
  Value steps = ctx.hasInput(4) ? ctx.getInput(4) : Value();
  Value x = ctx.getInput(0);
  // Dims no entry names are read in place, at any size (a dynamic batch);
  // a dim that is sliced needs its size (the body clamps into it).
  SmallVector<bool> sliced(rank, true);
  if (!axes) {
    for (int64_t d = count; d < rank; ++d)
      sliced[d] = false;
  } else if (std::optional<DenseElementsAttr> known = ctx.getConstantInput(3)) {
    sliced.assign(rank, false);
    for (const APInt &axis : known->getValues<APInt>()) {
      int64_t a = axis.getSExtValue();
      if (a >= -rank && a < rank)
        sliced[a < 0 ? a + rank : a] = true;
    }
  }
  SmallVector<OpFoldResult> sizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (xt.isDynamicDim(d) && sliced[d])
      return ctx.fail("starts known only at run time slice dim " + Twine(d) +
                      ", which is dynamic" + ctx.getState().pinHint);
    sizes.push_back(
        type->isDynamicDim(d)
            ? OpFoldResult(tensor::DimOp::create(b, loc, x, d).getResult())
            : OpFoldResult(b.getIndexAttr(type->getDimSize(d))));
  }
  Value result = createIndexedGeneric(
      b, loc, {}, {}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        Type i64 = nb.getI64Type();
        auto cst = [&](int64_t v) { return createScalar(nb, nl, i64, v); };
        auto read = [&](Value tensor, int64_t j) {
          Value v = tensor::ExtractOp::create(
              nb, nl, tensor,
              ValueRange{arith::ConstantIndexOp::create(nb, nl, j)});
          return createScalarCast(nb, nl, v, i64, false, false);
        };
        using P = arith::CmpIPredicate;
        auto select = [&](Value c, Value t, Value f) {
          return arith::SelectOp::create(nb, nl, c, t, f).getResult();
        };
        auto clamp = [&](Value v, int64_t lo, int64_t hi) {
          return arith::MinSIOp::create(
              nb, nl, arith::MaxSIOp::create(nb, nl, v, cst(lo)), cst(hi));
        };
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d) {
          if (!sliced[d]) {
            coords.push_back(ivs[d]);
            continue;
          }
          int64_t dim = xt.getDimSize(d);
          Value start = cst(0), step = cst(1);
          for (int64_t j = 0; j < count; ++j) {
            Value isDim;
            if (axes) {
              Value a = read(axes, j);
              a = select(arith::CmpIOp::create(nb, nl, P::slt, a, cst(0)),
                         arith::AddIOp::create(nb, nl, a, cst(rank)), a);
              isDim = arith::CmpIOp::create(nb, nl, P::eq, a, cst(d));
            } else if (j == d) {
              isDim = createScalar(nb, nl, nb.getI1Type(), 1);
            } else {
              continue;
            }
            Value st = steps ? read(steps, j) : cst(1);
            Value s = read(starts, j);
            s = select(arith::CmpIOp::create(nb, nl, P::slt, s, cst(0)),
                       arith::AddIOp::create(nb, nl, s, cst(dim)), s);
            s = select(arith::CmpIOp::create(nb, nl, P::sgt, st, cst(0)),
                       clamp(s, 0, dim), clamp(s, 0, dim - 1));
            start = select(isDim, s, start);
            step = select(isDim, st, step);
          }
          Value i = arith::IndexCastOp::create(nb, nl, i64, ivs[d]);
          Value src = arith::AddIOp::create(
              nb, nl, start, arith::MulIOp::create(nb, nl, i, step));
          // In range whenever the operands agree with the result shape.
          coords.push_back(arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                                      clamp(src, 0, dim - 1)));
        }
        return tensor::ExtractOp::create(nb, nl, x, coords).getResult();
      },
      sizes);
  return ctx.setOutput(0, result);
}

// ReverseSequence: along time_axis, the first seq_lens[b] elements of each
// batch entry b are reversed; the rest stay.
static LogicalResult lowerReverseSequence(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  int64_t rank = type->getRank();
  int64_t batchAxis = ctx.getIntAttr("batch_axis", 1);
  int64_t timeAxis = ctx.getIntAttr("time_axis", 0);
  if (rank < 2 || batchAxis < 0 || batchAxis > 1 || timeAxis < 0 ||
      timeAxis > 1 || batchAxis == timeAxis)
    return ctx.fail("batch_axis and time_axis must be 0 and 1 (either way)");
  OpBuilder &b = ctx.getBuilder();
  Value x = ctx.getInput(0), lens = ctx.getInput(1);
  int64_t steps = type->getDimSize(timeAxis);
  Value result = createIndexedGeneric(
      b, ctx.getLoc(), {}, {}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        Value len = arith::IndexCastOp::create(
            nb, nl, nb.getIndexType(),
            tensor::ExtractOp::create(nb, nl, lens,
                                      ValueRange{ivs[batchAxis]}));
        len = arith::MinSIOp::create(
            nb, nl, len, arith::ConstantIndexOp::create(nb, nl, steps));
        Value t = ivs[timeAxis];
        Value reversed =
            arith::SubIOp::create(nb, nl, arith::SubIOp::create(nb, nl, len, t),
                                  arith::ConstantIndexOp::create(nb, nl, 1));
        Value inPrefix =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, t, len);
        SmallVector<Value> coords(ivs);
        coords[timeAxis] =
            arith::SelectOp::create(nb, nl, inPrefix, reversed, t);
        return tensor::ExtractOp::create(nb, nl, x, coords).getResult();
      });
  return ctx.setOutput(0, result);
}

// CenterCropPad: each dim `axes` names (all by default) cropped around its
// centre (the window starting at floor((in - out) / 2)) or zero-padded
// around it (floor((out - in) / 2) before). The sizes are the result's,
// which inference takes from the `shape` input.
LogicalResult lowerCenterCropPad(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  RankedTensorType xt = ctx.getInputType(0);
  int64_t rank = xt.getRank();
  if (type->getRank() != rank || type->getElementType() != xt.getElementType())
    return ctx.fail("the result must have the input's rank and type");
  SmallVector<int64_t> axes = ctx.getIntsAttr("axes");
  SmallVector<bool> named(rank, axes.empty());
  for (int64_t axis : axes) {
    FailureOr<int64_t> d = ctx.getAxis(axis, rank);
    if (failed(d))
      return failure();
    named[*d] = true;
  }
  if (ctx.getInputType(1).getNumElements() !=
      (axes.empty() ? rank : static_cast<int64_t>(axes.size())))
    return ctx.fail("shape must have one value per named axis");
  // Source index = result index + shift (negative: padding before).
  SmallVector<int64_t> shift(rank, 0);
  for (int64_t d = 0; d < rank; ++d) {
    int64_t in = xt.getDimSize(d), out = type->getDimSize(d);
    if (!named[d] && in != out)
      return ctx.fail("dim " + Twine(d) +
                      " is not named in axes but changes "
                      "size");
    shift[d] = in >= out ? (in - out) / 2 : -((out - in) / 2);
  }
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  if (type->getNumElements() == 0)
    return ctx.setOutput(0, createZeroElements(b, loc, *type));
  if (xt.getNumElements() == 0)
    return ctx.setOutput(
        0, createFilled(b, loc, *type,
                        createScalar(b, loc, xt.getElementType(), 0)));
  Value x = ctx.getInput(0);
  Value y = createIndexedGeneric(
      b, loc, {}, {}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        Type i64 = nb.getI64Type();
        Value inside = createScalar(nb, nl, nb.getI1Type(), 1);
        SmallVector<Value> at;
        for (int64_t d = 0; d < rank; ++d) {
          Value source = arith::AddIOp::create(
              nb, nl, arith::IndexCastOp::create(nb, nl, i64, ivs[d]),
              createScalar(nb, nl, i64, shift[d]));
          Value ok = arith::AndIOp::create(
              nb, nl,
              arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, source,
                                    createScalar(nb, nl, i64, 0)),
              arith::CmpIOp::create(
                  nb, nl, arith::CmpIPredicate::slt, source,
                  createScalar(nb, nl, i64, xt.getDimSize(d))));
          inside = arith::AndIOp::create(nb, nl, inside, ok);
          at.push_back(arith::IndexCastOp::create(
              nb, nl, nb.getIndexType(),
              arith::SelectOp::create(nb, nl, ok, source,
                                      createScalar(nb, nl, i64, 0))));
        }
        Value v = tensor::ExtractOp::create(nb, nl, x, at);
        return arith::SelectOp::create(
                   nb, nl, inside, v,
                   createScalar(nb, nl, xt.getElementType(), 0))
            .getResult();
      });
  return ctx.setOutput(0, y);
}

void addIndexingLowerings(LoweringTable &t) {
  t["ReverseSequence"] = lowerReverseSequence;
  t["Gather"] = lowerGather;
  t["GatherElements"] = lowerGatherElements;
  t["Pad"] = lowerPad;
  t["CenterCropPad"] = lowerCenterCropPad;
}

} // namespace strata::onnx_importer
