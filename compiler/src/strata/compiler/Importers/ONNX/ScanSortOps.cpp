//===- ScanSortOps.cpp - CumSum, Hardmax, TopK, Compress, NonZero, Unique -===//
//
// Ops that relate the elements along one axis. Each is a linalg.generic
// with the output's dims plus one reduction dim `j` running along the axis
// (the element being compared or accumulated): O(n^2) along that axis, but
// plain parallel loops elsewhere that tile and fuse like any other op, with
// no sequential scan or sort the pipeline would need to know about.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"
#include "strata/compiler/Importers/ONNX/SymbolicShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

// The identity map of `rank` dims over `rank + 1` loops, and the same map
// with dim `axis` replaced by the extra loop `rank`.
AffineMap identityMap(OpBuilder &b, int64_t rank) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i)
    exprs.push_back(b.getAffineDimExpr(i));
  return AffineMap::get(rank + 1, 0, exprs, b.getContext());
}
AffineMap alongAxisMap(OpBuilder &b, int64_t rank, int64_t axis) {
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i)
    exprs.push_back(b.getAffineDimExpr(i == axis ? rank : i));
  return AffineMap::get(rank + 1, 0, exprs, b.getContext());
}

// A generic over the output's dims plus a reduction loop `j` along `axis`.
// `inputMaps` are over rank + 1 loops; `inits` are the outputs (identity
// over the output dims). The body gets the block arguments, the output
// index along the axis and j.
using PairwiseBody = llvm::function_ref<SmallVector<Value>(
    OpBuilder &, Location, ValueRange, Value i, Value j)>;
SmallVector<Value> createPairwise(OpBuilder &b, Location loc, int64_t rank,
                                  int64_t axis, ValueRange inputs,
                                  ArrayRef<AffineMap> inputMaps,
                                  ValueRange inits, PairwiseBody body) {
  SmallVector<AffineMap> maps(inputMaps);
  maps.append(inits.size(), identityMap(b, rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange(inits), inputs, inits, maps, iterators,
      [&](OpBuilder &nb, Location nl, ValueRange args) {
        Value i = linalg::IndexOp::create(nb, nl, axis);
        Value j = linalg::IndexOp::create(nb, nl, rank);
        linalg::YieldOp::create(nb, nl, body(nb, nl, args, i, j));
      });
  return SmallVector<Value>(generic.getResults());
}

Value addValues(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::AddFOp::create(b, loc, x, y);
  return arith::AddIOp::create(b, loc, x, y);
}

Value mulValues(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::MulFOp::create(b, loc, x, y);
  return arith::MulIOp::create(b, loc, x, y);
}

// Inclusive/exclusive, forward/reverse running sum (or product) along a
// static axis.
Value createCumSum(OpBuilder &b, Location loc, Value x, int64_t axis,
                   bool exclusive, bool reverse, bool product) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  Type et = type.getElementType();
  double identity = product ? 1 : 0;
  Value init =
      createFilled(b, loc, type, createScalar(b, loc, et, identity), x);
  using P = arith::CmpIPredicate;
  P pred =
      reverse ? (exclusive ? P::ugt : P::uge) : (exclusive ? P::ult : P::ule);
  return createPairwise(
      b, loc, rank, axis, {x}, {alongAxisMap(b, rank, axis)}, {init},
      [&](OpBuilder &nb, Location nl, ValueRange args, Value i,
          Value j) -> SmallVector<Value> {
        Value take = arith::CmpIOp::create(nb, nl, pred, j, i);
        Value v = arith::SelectOp::create(nb, nl, take, args[0],
                                          createScalar(nb, nl, et, identity));
        return {product ? mulValues(nb, nl, args[1], v)
                        : addValues(nb, nl, args[1], v)};
      })[0];
}

LogicalResult lowerCumSum(NodeContext &ctx, bool product) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  int64_t rank = type->getRank();
  if (rank == 0)
    return ctx.fail("input must have rank >= 1");
  bool exclusive = ctx.getIntAttr("exclusive", 0) != 0;
  bool reverse = ctx.getIntAttr("reverse", 0) != 0;
  Value x = ctx.getInput(0);
  if (ctx.getConstantInput(1)) {
    FailureOr<SmallVector<int64_t>> axis = ctx.getConstantInts(1);
    if (failed(axis))
      return failure();
    if (axis->size() != 1 || (*axis)[0] < -rank || (*axis)[0] >= rank)
      return ctx.fail("axis must be one value in [-rank, rank)");
    return ctx.setOutput(0, createCumSum(b, loc, x,
                                         normalizeAxis((*axis)[0], rank),
                                         exclusive, reverse, product));
  }
  // A run-time axis: one sum per candidate axis, the right one selected at
  // run time (ranks are small; a constant axis gets just one).
  Value axis = createScalarCast(b, loc, extractFirst(b, loc, ctx.getInput(1)),
                                b.getI64Type(), false, false);
  Value isNeg = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, axis,
                                      createScalar(b, loc, b.getI64Type(), 0));
  axis = arith::SelectOp::create(
      b, loc, isNeg,
      arith::AddIOp::create(b, loc, axis,
                            createScalar(b, loc, b.getI64Type(), rank)),
      axis);
  Value result = createCumSum(b, loc, x, 0, exclusive, reverse, product);
  for (int64_t a = 1; a < rank; ++a) {
    Value sum = createCumSum(b, loc, x, a, exclusive, reverse, product);
    Value isA = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, axis,
                                      createScalar(b, loc, b.getI64Type(), a));
    result = arith::SelectOp::create(b, loc, isA, sum, result);
  }
  return ctx.setOutput(0, result);
}

// Whether element (x, at j) comes before element (y, at i) in TopK's
// order: larger (or smaller) first, the lower index first among equals.
Value comesBefore(OpBuilder &b, Location loc, Value x, Value j, Value y,
                  Value i, bool largest, bool isUnsigned) {
  Value better, equal;
  if (isa<FloatType>(x.getType())) {
    better = arith::CmpFOp::create(
        b, loc, largest ? arith::CmpFPredicate::OGT : arith::CmpFPredicate::OLT,
        x, y);
    equal = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, x, y);
  } else {
    using P = arith::CmpIPredicate;
    P pred = largest ? (isUnsigned ? P::ugt : P::sgt)
                     : (isUnsigned ? P::ult : P::slt);
    better = arith::CmpIOp::create(b, loc, pred, x, y);
    equal = arith::CmpIOp::create(b, loc, P::eq, x, y);
  }
  Value earlier =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, j, i);
  return arith::OrIOp::create(b, loc, better,
                              arith::AndIOp::create(b, loc, equal, earlier));
}

// The position of each element along `axis` in TopK's order (0 = first),
// as index-typed counts in an i64 tensor shaped like `x`.
Value createRanks(OpBuilder &b, Location loc, Value x, int64_t axis,
                  bool largest, bool isUnsigned) {
  auto type = cast<RankedTensorType>(x.getType());
  int64_t rank = type.getRank();
  auto rankType = RankedTensorType::get(type.getShape(), b.getI64Type());
  Value init = createFilled(b, loc, rankType,
                            createScalar(b, loc, b.getI64Type(), 0), x);
  return createPairwise(
      b, loc, rank, axis, {x, x},
      {identityMap(b, rank), alongAxisMap(b, rank, axis)}, {init},
      [&](OpBuilder &nb, Location nl, ValueRange args, Value i,
          Value j) -> SmallVector<Value> {
        Value before =
            comesBefore(nb, nl, args[1], j, args[0], i, largest, isUnsigned);
        Value one = arith::ExtUIOp::create(nb, nl, nb.getI64Type(), before);
        return {arith::AddIOp::create(nb, nl, args[2], one)};
      })[0];
}

// K given at run time where no result shape fixes it: the host reads it
// back and checks it against the axis; the results are sized with it.
// Returns the sizes of the results.
SmallVector<OpFoldResult>
getRuntimeTopKSizes(NodeContext &ctx, RankedTensorType xt, int64_t axis) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Type i64 = b.getI64Type();
  Value k = createScalarCast(b, loc, extractFirst(b, loc, ctx.getInput(1)), i64,
                             false, false);
  Value valid = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, k,
                            createScalar(b, loc, i64, 0)),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle, k,
                            createScalar(b, loc, i64, xt.getDimSize(axis))));
  ctx.assertAtCall(valid, "K is not in [0, " + Twine(xt.getDimSize(axis)) +
                              "], the size of axis " + Twine(axis));
  SmallVector<OpFoldResult> sizes;
  for (int64_t size : xt.getShape())
    sizes.push_back(b.getIndexAttr(size));
  sizes[axis] =
      arith::IndexCastOp::create(b, loc, b.getIndexType(), k).getResult();
  return sizes;
}

LogicalResult lowerTopK(NodeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0);
  int64_t rank = xt.getRank();
  int64_t axis = ctx.getIntAttr("axis", -1);
  if (rank == 0 || axis < -rank || axis >= rank)
    return ctx.fail("axis " + Twine(axis) + " is out of range");
  axis = normalizeAxis(axis, rank);
  // K may arrive at run time; the result shape (inferred or declared) fixes
  // it at compile time where there is one, else the host reads K back. Over
  // dynamic dims K is a constant and the results take the input's other
  // dims.
  std::optional<DenseElementsAttr> k = ctx.getConstantInput(1);
  SmallVector<OpFoldResult> resultSizes;
  FailureOr<RankedTensorType> valuesType, indicesType;
  if (xt.hasStaticShape() && !k && !ctx.hasInferredOutputType(0)) {
    resultSizes = getRuntimeTopKSizes(ctx, xt, axis);
    SmallVector<int64_t> shape = getStaticShape(resultSizes);
    valuesType = RankedTensorType::get(shape, xt.getElementType());
    indicesType = RankedTensorType::get(shape, b.getI64Type());
  } else {
    valuesType = ctx.getOutputType(0);
    indicesType = ctx.getOutputType(1);
    if (failed(valuesType) || failed(indicesType))
      return failure();
  }
  if (!xt.hasStaticShape()) {
    // K a constant, a size computed from the dims (torch.sort is TopK of
    // the axis' whole size) or read back from data: at most the axis'
    // size, checked at the call where only known then.
    std::optional<SymbolicShape> kElements = getSymbolicOrReadBackInput(ctx, 1);
    if (!kElements || kElements->elements.size() != 1)
      return ctx.fail("with dynamic dims K must be one integer known at "
                      "compile time, computed from the input shapes or "
                      "read from an int64 tensor" +
                      ctx.getState().pinHint);
    OpFoldResult count = kElements->elements[0];
    std::optional<int64_t> knownCount = getConstantIntValue(count);
    if (knownCount && *knownCount < 0)
      return ctx.fail("K is negative (" + Twine(*knownCount) + ")");
    // (The run-time check compares unsigned: a negative K fails it too.)
    resultSizes = getDimSizes(b, loc, ctx.getInput(0));
    if (failed(ctx.checkSizes(count, resultSizes[axis],
                              "K is negative or larger than the axis' size",
                              /*atMost=*/true)))
      return failure();
    resultSizes[axis] = count;
    SmallVector<int64_t> shape(xt.getShape());
    shape[axis] = knownCount.value_or(ShapedType::kDynamic);
    valuesType = RankedTensorType::get(shape, valuesType->getElementType());
    indicesType = RankedTensorType::get(shape, indicesType->getElementType());
  } else if (resultSizes.empty() && k && k->getNumElements() == 1 &&
             k->getValues<APInt>()[0].getSExtValue() !=
                 valuesType->getDimSize(axis)) {
    return ctx.fail("K differs from the result shape");
  }
  if (valuesType->hasStaticShape() && valuesType->getNumElements() == 0) {
    if (failed(ctx.setOutput(0, createZeroElements(b, loc, *valuesType))))
      return failure();
    return ctx.setOutput(1, createZeroElements(b, loc, *indicesType));
  }
  bool largest = ctx.getIntAttr("largest", 1) != 0;
  Value x = ctx.getInput(0);
  Value ranks = createRanks(b, loc, x, axis, largest, ctx.isInputUnsigned(0));
  // Output position r along the axis takes the element whose rank is r.
  Type et = xt.getElementType();
  Value values, indices;
  if (resultSizes.empty()) {
    values = createFilled(b, loc, *valuesType, createScalar(b, loc, et, 0));
    indices = createFilled(b, loc, *indicesType,
                           createScalar(b, loc, b.getI64Type(), 0));
  } else {
    values = createFilled(b, loc, resultSizes, createScalar(b, loc, et, 0));
    indices = createFilled(b, loc, resultSizes,
                           createScalar(b, loc, b.getI64Type(), 0));
  }
  SmallVector<Value> results = createPairwise(
      b, loc, rank, axis, {x, ranks},
      {alongAxisMap(b, rank, axis), alongAxisMap(b, rank, axis)},
      {values, indices},
      [&](OpBuilder &nb, Location nl, ValueRange args, Value r,
          Value j) -> SmallVector<Value> {
        Value hit = arith::CmpIOp::create(
            nb, nl, arith::CmpIPredicate::eq, args[1],
            arith::IndexCastOp::create(nb, nl, nb.getI64Type(), r));
        Value j64 = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), j);
        return {arith::SelectOp::create(nb, nl, hit, args[0], args[2]),
                arith::SelectOp::create(nb, nl, hit, j64, args[3])};
      });
  if (failed(ctx.setOutput(0, results[0])))
    return failure();
  return ctx.setOutput(1, results[1]);
}

// Hardmax: 1 at the first maximum along the axis, 0 elsewhere.
LogicalResult lowerHardmax(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  int64_t rank = type->getRank();
  int64_t axis = ctx.getIntAttr("axis", -1);
  if (rank == 0 || axis < -rank || axis >= rank)
    return ctx.fail("axis " + Twine(axis) + " is out of range");
  if (ctx.getOpset() < 13)
    return ctx.fail("opset < 13 Hardmax (coerced to 2-D) is not supported");
  axis = normalizeAxis(axis, rank);
  // An element is the first maximum when no element comes before it in
  // descending order: its rank is 0.
  Value ranks = createRanks(b, loc, ctx.getInput(0), axis, /*largest=*/true,
                            /*isUnsigned=*/false);
  Type et = type->getElementType();
  Value result = createElementwise(
      b, loc, {ranks}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        Value first =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, a[0],
                                  createScalar(nb, nl, nb.getI64Type(), 0));
        return arith::SelectOp::create(nb, nl, first,
                                       createScalar(nb, nl, et, 1),
                                       createScalar(nb, nl, et, 0));
      });
  return ctx.setOutput(0, result);
}

// For each output position k in [0, count): the position i of the (k+1)-th
// set element of the 1-D i1 `mask` (0 when there is none). Set elements are
// numbered by an exclusive running count, then each k finds its i.
Value createSelectedPositions(OpBuilder &b, Location loc, Value mask,
                              int64_t count) {
  Type i64 = b.getI64Type();
  Value ones = createCast(b, loc, mask, i64, /*fromUnsigned=*/true, false);
  Value before = createCumSum(b, loc, ones, 0, /*exclusive=*/true, false,
                              /*product=*/false);
  auto resultType = RankedTensorType::get({count}, i64);
  Value init = createFilled(b, loc, resultType, createScalar(b, loc, i64, 0));
  AffineMap alongMask = AffineMap::get(2, 0, b.getAffineDimExpr(1));
  return createPairwise(
      b, loc, 1, 0, {mask, before}, {alongMask, alongMask}, {init},
      [&](OpBuilder &nb, Location nl, ValueRange args, Value k,
          Value i) -> SmallVector<Value> {
        Value isK = arith::CmpIOp::create(
            nb, nl, arith::CmpIPredicate::eq, args[1],
            arith::IndexCastOp::create(nb, nl, nb.getI64Type(), k));
        Value hit = arith::AndIOp::create(nb, nl, args[0], isK);
        Value i64Index = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), i);
        return {arith::SelectOp::create(nb, nl, hit, i64Index, args[2])};
      })[0];
}

// Compress: the slices along `axis` (of the flattened input without one)
// whose condition is true; the result size is the inferred or declared one.
LogicalResult lowerCompress(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0), ct = ctx.getInputType(1);
  Value x = ctx.getInput(0);
  int64_t axis = 0;
  if (ctx.hasAttr("axis")) {
    axis = ctx.getIntAttr("axis", 0);
    if (axis < -xt.getRank() || axis >= xt.getRank())
      return ctx.fail("axis " + Twine(axis) + " is out of range");
    axis = normalizeAxis(axis, xt.getRank());
  } else {
    x = createReshape(b, loc, x, {xt.getNumElements()});
  }
  auto flatType = cast<RankedTensorType>(x.getType());
  if (ct.getRank() != 1 || !ct.getElementType().isInteger(1))
    return ctx.fail("condition must be a 1-D bool tensor");
  if (type->getRank() != flatType.getRank())
    return ctx.fail("result rank differs from the input's");
  if (type->getNumElements() == 0)
    return ctx.setOutput(0, createZeroElements(b, loc, *type));
  // Entries past the axis size are ignored (as if false).
  Value cond = ctx.getInput(1);
  int64_t length = std::min(ct.getDimSize(0), flatType.getDimSize(axis));
  if (length != ct.getDimSize(0))
    cond = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({length}, b.getI1Type()), cond,
        ValueRange{}, ValueRange{}, ValueRange{}, b.getDenseI64ArrayAttr({0}),
        b.getDenseI64ArrayAttr({length}), b.getDenseI64ArrayAttr({1}));
  Value positions =
      createSelectedPositions(b, loc, cond, type->getDimSize(axis));
  AffineMap positionMap =
      AffineMap::get(type->getRank(), 0, b.getAffineDimExpr(axis));
  Value result = createIndexedGeneric(
      b, loc, {positions}, {positionMap}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange args, ArrayRef<Value> ivs) {
        SmallVector<Value> coords(ivs);
        coords[axis] =
            arith::IndexCastOp::create(nb, nl, nb.getIndexType(), args[0]);
        return tensor::ExtractOp::create(nb, nl, x, coords).getResult();
      });
  return ctx.setOutput(0, result);
}

// NonZero: [rank, count] coordinates of the non-zero elements in row-major
// order; the count is the inferred or declared one.
LogicalResult lowerNonZero(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0);
  int64_t rank = xt.getRank();
  if (type->getRank() != 2 || type->getDimSize(0) != std::max<int64_t>(rank, 1))
    return ctx.fail("result must be [rank, count]");
  if (type->getNumElements() == 0)
    return ctx.setOutput(0, createZeroElements(b, loc, *type));
  Value flat = createReshape(b, loc, ctx.getInput(0), {xt.getNumElements()});
  bool isUnsigned = ctx.isInputUnsigned(0);
  Value mask = createCast(b, loc, flat, b.getI1Type(), isUnsigned, false);
  Value positions = createSelectedPositions(b, loc, mask, type->getDimSize(1));
  SmallVector<int64_t> strides(rank, 1);
  for (int64_t d = rank - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * xt.getDimSize(d + 1);
  AffineMap positionMap = AffineMap::get(2, 0, b.getAffineDimExpr(1));
  Value result = createIndexedGeneric(
      b, loc, {positions}, {positionMap}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange args, ArrayRef<Value> ivs) {
        // Coordinate d of the flat position: (p / stride_d) % dim_d.
        Type i64 = nb.getI64Type();
        Value coord = createScalar(nb, nl, i64, 0);
        for (int64_t d = 0; d < rank; ++d) {
          Value c = arith::RemSIOp::create(
              nb, nl,
              arith::DivSIOp::create(nb, nl, args[0],
                                     createScalar(nb, nl, i64, strides[d])),
              createScalar(nb, nl, i64, xt.getDimSize(d)));
          Value isD =
              arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, ivs[0],
                                    arith::ConstantIndexOp::create(nb, nl, d));
          coord = arith::SelectOp::create(nb, nl, isD, c, coord);
        }
        return coord;
      });
  return ctx.setOutput(0, result);
}

// Unique: the distinct slices along `axis` (elements of the flattened
// input without one), sorted or in order of first occurrence, with the
// first index of each, the inverse map and the counts. The input is viewed
// as [n, P] (n slices of P elements); all steps are pairwise generics over
// the slices: where two slices first differ, whether a slice is the first
// of its value, each slice's position among the unique ones, then the
// selection. The number of unique slices is the inferred/declared one.
LogicalResult lowerUnique(NodeContext &ctx) {
  FailureOr<RankedTensorType> yType = ctx.getOutputType(0);
  if (failed(yType))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0);
  Type et = xt.getElementType();
  bool isFloat = isa<FloatType>(et);
  bool isUnsigned = ctx.isInputUnsigned(0);
  bool sorted = ctx.getIntAttr("sorted", 1) != 0;
  Value x = ctx.getInput(0);
  int64_t axis = -1;
  if (ctx.hasAttr("axis")) {
    axis = ctx.getIntAttr("axis", 0);
    if (axis < -xt.getRank() || axis >= xt.getRank())
      return ctx.fail("axis " + Twine(axis) + " is out of range");
    axis = normalizeAxis(axis, xt.getRank());
  } else {
    x = createReshape(b, loc, x, {xt.getNumElements()});
  }
  auto source = cast<RankedTensorType>(x.getType());
  int64_t sourceAxis = axis < 0 ? 0 : axis;
  int64_t n = source.getDimSize(sourceAxis);
  int64_t k = yType->getDimSize(sourceAxis);
  if (n == 0 || k == 0)
    return ctx.fail("empty inputs are not supported");
  // [n, P]: the slices as rows.
  SmallVector<int64_t> perm{sourceAxis};
  for (int64_t d = 0; d < source.getRank(); ++d)
    if (d != sourceAxis)
      perm.push_back(d);
  int64_t p = source.getNumElements() / n;
  Value rows = createReshape(b, loc, createTranspose(b, loc, x, perm), {n, p});
  Type i64 = b.getI64Type();
  auto i64Type = [&](ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, i64);
  };
  auto filled = [&](RankedTensorType t, double v) {
    return createFilled(b, loc, t, createScalar(b, loc, t.getElementType(), v));
  };
  auto map = [&](int64_t loops, ArrayRef<int64_t> dims) {
    SmallVector<AffineExpr> exprs;
    for (int64_t d : dims)
      exprs.push_back(b.getAffineDimExpr(d));
    return AffineMap::get(loops, 0, exprs, b.getContext());
  };
  // firstDiff[i, j]: the first element where rows i and j differ (p: none).
  Value firstDiff = createPairwise(
      b, loc, 2, 0, {rows, rows}, {map(3, {0, 2}), map(3, {1, 2})},
      {filled(i64Type({n, n}), p)},
      [&](OpBuilder &nb, Location nl, ValueRange a, Value,
          Value e) -> SmallVector<Value> {
        Value differ =
            isFloat ? arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::UNE,
                                            a[0], a[1])
                          .getResult()
                    : arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ne,
                                            a[0], a[1])
                          .getResult();
        Value e64 = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), e);
        Value m = arith::MinSIOp::create(nb, nl, a[2], e64);
        return {arith::SelectOp::create(nb, nl, differ, m, a[2])};
      })[0];
  // cmp[i, j]: 0 equal, 1 row i < row j, 2 row i > row j.
  Value cmp = createIndexedGeneric(
      b, loc, {firstDiff}, {b.getMultiDimIdentityMap(2)}, i64Type({n, n}),
      [&](OpBuilder &nb, Location nl, ValueRange a, ArrayRef<Value> ivs) {
        Value equal = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                            a[0], createScalar(nb, nl, i64, p));
        Value at = arith::IndexCastOp::create(
            nb, nl, nb.getIndexType(),
            arith::MinSIOp::create(nb, nl, a[0],
                                   createScalar(nb, nl, i64, p - 1)));
        Value vi =
            tensor::ExtractOp::create(nb, nl, rows, ValueRange{ivs[0], at});
        Value vj =
            tensor::ExtractOp::create(nb, nl, rows, ValueRange{ivs[1], at});
        using IP = arith::CmpIPredicate;
        Value less =
            isFloat ? arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OLT,
                                            vi, vj)
                          .getResult()
                    : arith::CmpIOp::create(
                          nb, nl, isUnsigned ? IP::ult : IP::slt, vi, vj)
                          .getResult();
        Value order =
            arith::SelectOp::create(nb, nl, less, createScalar(nb, nl, i64, 1),
                                    createScalar(nb, nl, i64, 2));
        return arith::SelectOp::create(nb, nl, equal,
                                       createScalar(nb, nl, i64, 0), order)
            .getResult();
      });
  // firstOf[i]: the first row equal to row i (i itself when it is first).
  Value firstOf = createPairwise(
      b, loc, 1, 0, {cmp}, {map(2, {0, 1})}, {filled(i64Type({n}), n)},
      [&](OpBuilder &nb, Location nl, ValueRange a, Value,
          Value j) -> SmallVector<Value> {
        Value equal = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                            a[0], createScalar(nb, nl, i64, 0));
        Value j64 = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), j);
        return {arith::SelectOp::create(
            nb, nl, equal, arith::MinSIOp::create(nb, nl, a[1], j64), a[1])};
      })[0];
  // position[i]: where row i's value goes among the unique ones: the number
  // of first rows before it (sorted: smaller; else: earlier first).
  Value position = createPairwise(
      b, loc, 1, 0, {firstOf, cmp, firstOf},
      {map(2, {1}), map(2, {1, 0}), map(2, {0})}, {filled(i64Type({n}), 0)},
      [&](OpBuilder &nb, Location nl, ValueRange a, Value,
          Value j) -> SmallVector<Value> {
        Value j64 = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), j);
        Value jFirst =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, a[0], j64);
        Value before =
            sorted ? arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq,
                                           a[1], createScalar(nb, nl, i64, 1))
                         .getResult()
                   : arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                           j64, a[2])
                         .getResult();
        Value counted = arith::ExtUIOp::create(
            nb, nl, nb.getI64Type(),
            arith::AndIOp::create(nb, nl, jFirst, before));
        return {arith::AddIOp::create(nb, nl, a[3], counted)};
      })[0];
  // For each unique value r: its first row and how many rows have it.
  SmallVector<Value> perUnique = createPairwise(
      b, loc, 1, 0, {firstOf, position}, {map(2, {1}), map(2, {1})},
      {filled(i64Type({k}), 0), filled(i64Type({k}), 0)},
      [&](OpBuilder &nb, Location nl, ValueRange a, Value r,
          Value j) -> SmallVector<Value> {
        Value j64 = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), j);
        Value r64 = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), r);
        Value isR =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, a[1], r64);
        Value first = arith::AndIOp::create(
            nb, nl, isR,
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, a[0], j64));
        return {arith::SelectOp::create(nb, nl, first, j64, a[2]),
                arith::AddIOp::create(
                    nb, nl, a[3],
                    arith::ExtUIOp::create(nb, nl, nb.getI64Type(), isR))};
      });
  Value firstRows = perUnique[0];
  AffineMap rowMap =
      AffineMap::get(yType->getRank(), 0, b.getAffineDimExpr(sourceAxis));
  Value y = createIndexedGeneric(
      b, loc, {firstRows}, {rowMap}, *yType,
      [&](OpBuilder &nb, Location nl, ValueRange a, ArrayRef<Value> ivs) {
        SmallVector<Value> coords(ivs);
        coords[sourceAxis] =
            arith::IndexCastOp::create(nb, nl, nb.getIndexType(), a[0]);
        return tensor::ExtractOp::create(nb, nl, x, coords).getResult();
      });
  Value results[4] = {y, firstRows, position, perUnique[1]};
  for (unsigned i = 0; i < 4; ++i)
    if (ctx.hasOutput(i) && failed(ctx.setOutput(i, results[i])))
      return failure();
  return success();
}

} // namespace

void addScanSortLowerings(LoweringTable &t) {
  t["Unique"] = lowerUnique;
  t["Compress"] = lowerCompress;
  t["NonZero"] = lowerNonZero;
  t["CumSum"] = [](NodeContext &ctx) { return lowerCumSum(ctx, false); };
  t["CumProd"] = [](NodeContext &ctx) { return lowerCumSum(ctx, true); };
  t["TopK"] = lowerTopK;
  t["Hardmax"] = lowerHardmax;
}

} // namespace strata::onnx_importer
