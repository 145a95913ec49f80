//===- ScatterOps.cpp - ScatterElements, ScatterND, GatherND, MaxUnpool ---===//
//
// Scatters are written as gathers so they stay parallel linalg.generics
// over the result: each result element starts from `data` and folds in,
// in index order, every update whose index lands on it (a reduction loop
// over the updates). Sequential ONNX semantics follow: with reduction
// 'none' the last duplicate wins, otherwise updates combine with add, mul,
// max or min.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

enum class Combine { None, Add, Mul, Max, Min };

FailureOr<Combine> getCombine(NodeContext &ctx) {
  std::string reduction = ctx.getStringAttr("reduction", "none");
  if (reduction == "none")
    return Combine::None;
  if (reduction == "add")
    return Combine::Add;
  if (reduction == "mul")
    return Combine::Mul;
  if (reduction == "max")
    return Combine::Max;
  if (reduction == "min")
    return Combine::Min;
  (void)ctx.fail("unknown reduction '" + reduction + "'");
  return failure();
}

Value combine(OpBuilder &b, Location loc, Combine kind, Value acc, Value u,
              bool isUnsigned) {
  bool isFloat = isa<FloatType>(acc.getType());
  switch (kind) {
  case Combine::None:
    return u;
  case Combine::Add:
    return isFloat ? arith::AddFOp::create(b, loc, acc, u).getResult()
                   : arith::AddIOp::create(b, loc, acc, u).getResult();
  case Combine::Mul:
    return isFloat ? arith::MulFOp::create(b, loc, acc, u).getResult()
                   : arith::MulIOp::create(b, loc, acc, u).getResult();
  case Combine::Max:
    if (isFloat)
      return arith::MaximumFOp::create(b, loc, acc, u);
    return isUnsigned ? arith::MaxUIOp::create(b, loc, acc, u).getResult()
                      : arith::MaxSIOp::create(b, loc, acc, u).getResult();
  case Combine::Min:
    if (isFloat)
      return arith::MinimumFOp::create(b, loc, acc, u);
    return isUnsigned ? arith::MinUIOp::create(b, loc, acc, u).getResult()
                      : arith::MinSIOp::create(b, loc, acc, u).getResult();
  }
  llvm_unreachable("unknown combine");
}

// A generic whose loops are the result dims (parallel) followed by
// `reductionShape` (reduction; bounds given by `reductionInputs`, read
// through maps over all loops). The result starts as `data`; the body
// returns the new accumulator from (accumulator, reduction inputs, loop
// indices).
using FoldBody = llvm::function_ref<Value(OpBuilder &, Location, Value acc,
                                          ValueRange, ArrayRef<Value>)>;
Value createFold(OpBuilder &b, Location loc, Value data,
                 ValueRange reductionInputs, ArrayRef<AffineMap> maps,
                 int64_t numReductionLoops, FoldBody body) {
  auto type = cast<RankedTensorType>(data.getType());
  int64_t rank = type.getRank();
  int64_t loops = rank + numReductionLoops;
  SmallVector<AffineMap> allMaps(maps);
  allMaps.push_back(b.getMultiDimIdentityMap(loops).getMajorSubMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.append(numReductionLoops, utils::IteratorType::reduction);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, reductionInputs,
             ValueRange{createCopy(b, loc, data)}, allMaps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               SmallVector<Value> ivs;
               for (int64_t i = 0; i < loops; ++i)
                 ivs.push_back(linalg::IndexOp::create(nb, nl, i));
               Value acc = args.back();
               linalg::YieldOp::create(
                   nb, nl, body(nb, nl, acc, args.drop_back(), ivs));
             })
      .getResult(0);
}

// A loop nest over every coordinate of `sizes` threading `tensor` through
// `body` (coordinates, current tensor -> next tensor).
using LoopNestBody =
    llvm::function_ref<Value(OpBuilder &, Location, ValueRange, Value)>;
Value createLoopNest(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                     Value tensor, LoopNestBody body) {
  SmallVector<Value> lbs, ubs, steps;
  for (OpFoldResult size : sizes) {
    lbs.push_back(arith::ConstantIndexOp::create(b, loc, 0));
    ubs.push_back(getValueOrCreateConstantIndexOp(b, loc, size));
    steps.push_back(arith::ConstantIndexOp::create(b, loc, 1));
  }
  scf::LoopNest nest =
      scf::buildLoopNest(b, loc, lbs, ubs, steps, ValueRange{tensor},
                         [&](OpBuilder &nb, Location nl, ValueRange ivs,
                             ValueRange args) -> scf::ValueVector {
                           return {body(nb, nl, ivs, args[0])};
                         });
  return nest.results.front();
}

// A scatter over dynamic shapes as one sequential region (a dispatch of one
// workgroup): `data` copied into the result, then for each coordinate of
// `updateSizes` the update there folded into the result element `target`
// names. An executable cannot accumulate into a copy of an argument of
// run-time size; this also reads each update once.
using ScatterTarget =
    llvm::function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;
Value createSequentialScatter(OpBuilder &b, Location loc, Value data,
                              Value updates, ArrayRef<OpFoldResult> updateSizes,
                              ScatterTarget target, Combine kind,
                              bool isUnsigned) {
  auto type = cast<RankedTensorType>(data.getType());
  auto region = scf::ExecuteRegionOp::create(b, loc, TypeRange{type});
  region.setNoInline(true);
  OpBuilder::InsertionGuard guard(b);
  b.createBlock(&region.getRegion());
  Value copied = createLoopNest(
      b, loc, getDimSizes(b, loc, data), createEmpty(b, loc, type, data),
      [&](OpBuilder &nb, Location nl, ValueRange ivs, Value result) {
        Value element = tensor::ExtractOp::create(nb, nl, data, ivs);
        return tensor::InsertOp::create(nb, nl, element, result, ivs)
            .getResult();
      });
  Value folded = createLoopNest(
      b, loc, updateSizes, copied,
      [&](OpBuilder &nb, Location nl, ValueRange ivs, Value result) {
        SmallVector<Value> coords = target(nb, nl, ivs);
        Value update = tensor::ExtractOp::create(nb, nl, updates, ivs);
        Value old = tensor::ExtractOp::create(nb, nl, result, coords);
        Value next = combine(nb, nl, kind, old, update, isUnsigned);
        return tensor::InsertOp::create(nb, nl, next, result, coords)
            .getResult();
      });
  scf::YieldOp::create(b, loc, folded);
  return region.getResult(0);
}

// ScatterElements over dynamic dims: indices and updates of one shape, no
// larger than the data's off the axis (checked at the call, naming the
// node).
LogicalResult lowerDynamicScatterElements(NodeContext &ctx, int64_t axis,
                                          Combine kind) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value data = ctx.getInput(0), indices = ctx.getInput(1),
        updates = ctx.getInput(2);
  SmallVector<OpFoldResult> dataSizes = getDimSizes(b, loc, data);
  SmallVector<OpFoldResult> indexSizes = getDimSizes(b, loc, indices);
  SmallVector<OpFoldResult> updateSizes = getDimSizes(b, loc, updates);
  for (int64_t d = 0, e = indexSizes.size(); d < e; ++d) {
    if (failed(ctx.checkSizes(updateSizes[d], indexSizes[d],
                              "dim " + Twine(d) +
                                  " of updates and indices differ")))
      return failure();
    // A position past the data would be written out of bounds.
    if (d != axis &&
        failed(ctx.checkSizes(indexSizes[d], dataSizes[d],
                              "dim " + Twine(d) +
                                  " of indices is larger than the data's",
                              /*atMost=*/true)))
      return failure();
  }
  if (failed(ctx.checkIndexedDimNotEmpty(axis, dataSizes[axis], indexSizes)))
    return failure();
  Value result = createSequentialScatter(
      b, loc, data, updates, indexSizes,
      [&](OpBuilder &nb, Location nl, ValueRange ivs) {
        SmallVector<Value> coords(ivs);
        Value raw = tensor::ExtractOp::create(nb, nl, indices, ivs);
        coords[axis] = normalizeIndex(nb, nl, raw, dataSizes[axis]);
        return coords;
      },
      kind, ctx.isInputUnsigned(0));
  return ctx.setOutput(0, result);
}

// ScatterElements (and opset-9/10 Scatter): for each index position p,
// result[p with axis replaced by indices[p]] (op)= updates[p].
LogicalResult lowerScatterElements(NodeContext &ctx) {
  FailureOr<Combine> kind = getCombine(ctx);
  if (failed(kind))
    return failure();
  RankedTensorType dt = ctx.getInputType(0), it = ctx.getInputType(1);
  int64_t rank = dt.getRank();
  if (it.getRank() != rank || ctx.getInputType(2).getRank() != rank)
    return ctx.fail("indices and updates must have the data's rank");
  int64_t axis = ctx.getIntAttr("axis", 0);
  if (axis < -rank || axis >= rank)
    return ctx.fail("axis " + Twine(axis) + " is out of range");
  axis = normalizeAxis(axis, rank);
  if (!dt.hasStaticShape() || !it.hasStaticShape() ||
      !ctx.getInputType(2).hasStaticShape())
    return lowerDynamicScatterElements(ctx, axis, *kind);
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  if (ctx.getInputType(2).getShape() != it.getShape())
    return ctx.fail("indices and updates must have one shape");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  if (it.getNumElements() == 0)
    return ctx.setOutput(0, ctx.getInput(0));
  for (int64_t d = 0; d < rank; ++d)
    if (it.getDimSize(d) > type->getDimSize(d) && d != axis)
      return ctx.fail("indices are larger than the data");
  Value indices = ctx.getInput(1), updates = ctx.getInput(2);
  int64_t dim = type->getDimSize(axis);
  if (failed(ctx.checkConstantIndices(1, [&](int64_t) { return dim; })))
    return failure();
  bool isUnsigned = ctx.isInputUnsigned(0);
  // One reduction loop k over the indices' axis; a [K] operand gives its
  // bound.
  Value counter = createEmpty(
      b, loc, RankedTensorType::get({it.getDimSize(axis)}, b.getI1Type()));
  AffineMap counterMap = AffineMap::get(rank + 1, 0, b.getAffineDimExpr(rank));
  Value result = createFold(
      b, loc, ctx.getInput(0), {counter}, {counterMap}, 1,
      [&](OpBuilder &nb, Location nl, Value acc, ValueRange,
          ArrayRef<Value> ivs) -> Value {
        // The update at (q with axis -> k) exists when q is inside the
        // indices' shape elsewhere.
        Value inside = createScalar(nb, nl, nb.getI1Type(), 1);
        SmallVector<Value> coords;
        for (int64_t d = 0; d < rank; ++d) {
          if (d == axis) {
            coords.push_back(ivs[rank]);
            continue;
          }
          Value size = arith::ConstantIndexOp::create(nb, nl, it.getDimSize(d));
          inside = arith::AndIOp::create(
              nb, nl, inside,
              arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult, ivs[d],
                                    size));
          Value last =
              arith::ConstantIndexOp::create(nb, nl, it.getDimSize(d) - 1);
          coords.push_back(arith::MinUIOp::create(nb, nl, ivs[d], last));
        }
        Value index = normalizeIndex(
            nb, nl, tensor::ExtractOp::create(nb, nl, indices, coords), dim);
        Value hit = arith::AndIOp::create(
            nb, nl, inside,
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, index,
                                  ivs[axis]));
        Value u = tensor::ExtractOp::create(nb, nl, updates, coords);
        return arith::SelectOp::create(
                   nb, nl, hit, combine(nb, nl, *kind, acc, u, isUnsigned), acc)
            .getResult();
      });
  return ctx.setOutput(0, result);
}

// ScatterND: indices [..., k] name data slices data[i_0, ..., i_{k-1}, :];
// updates [..., data.shape[k:]] are folded into them. Any dim may be known
// only at run time (a mask written by slice assignment over a padded
// image's size); the update positions flatten into one dim.
LogicalResult lowerScatterND(NodeContext &ctx) {
  FailureOr<Combine> kind = getCombine(ctx);
  if (failed(kind))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value data = ctx.getInput(0);
  auto type = cast<RankedTensorType>(data.getType());
  int64_t rank = type.getRank();
  RankedTensorType it = ctx.getInputType(1), ut = ctx.getInputType(2);
  if (it.getRank() < 1)
    return ctx.fail("indices must have rank >= 1");
  int64_t k = it.getDimSize(it.getRank() - 1);
  if (ShapedType::isDynamic(k))
    return ctx.fail("the last dim of indices must be known at compile time");
  if (k < 1 || k > rank)
    return ctx.fail("the last dim of indices must be in [1, data rank]");
  int64_t positionRank = it.getRank() - 1;
  if (ut.getRank() != positionRank + rank - k)
    return ctx.fail("updates must have rank " + Twine(positionRank + rank - k) +
                    " (indices' rank - 1 + "
                    "data's rank - " +
                    Twine(k) + ")");
  if (failed(ctx.checkConstantIndices(
          1, [&](int64_t position) { return type.getDimSize(position % k); })))
    return failure();
  SmallVector<OpFoldResult> dataSizes = getDimSizes(b, loc, data);
  SmallVector<OpFoldResult> indexSizes = getDimSizes(b, loc, ctx.getInput(1));
  SmallVector<OpFoldResult> updateSizes = getDimSizes(b, loc, ctx.getInput(2));
  for (int64_t d = 0; d < positionRank; ++d)
    if (failed(ctx.checkSizes(updateSizes[d], indexSizes[d],
                              "dim " + Twine(d) +
                                  " of updates and indices differ")))
      return failure();
  for (int64_t d = k; d < rank; ++d)
    if (failed(ctx.checkSizes(updateSizes[positionRank + d - k], dataSizes[d],
                              "dim " + Twine(positionRank + d - k) +
                                  " of updates and dim " + Twine(d) +
                                  " of data differ")))
      return failure();
  if (llvm::is_contained(it.getShape(), 0))
    return ctx.setOutput(0, data);
  for (int64_t j = 0; j < k; ++j)
    if (failed(ctx.checkIndexedDimNotEmpty(
            j, dataSizes[j], ArrayRef(indexSizes).take_front(positionRank))))
      return failure();
  // Flatten the update positions: indices [P, k], updates [P, rest...].
  OpFoldResult positions =
      getSizeProduct(b, loc, ArrayRef(indexSizes).take_front(positionRank));
  Value indices = createDynamicReshape(b, loc, ctx.getInput(1),
                                       {positions, b.getIndexAttr(k)});
  SmallVector<OpFoldResult> flatUpdateSizes{positions};
  llvm::append_range(flatUpdateSizes, ArrayRef(dataSizes).drop_front(k));
  Value updates =
      createDynamicReshape(b, loc, ctx.getInput(2), flatUpdateSizes);
  // updates[p, q_k, ...]: p is the reduction loop `rank`.
  SmallVector<AffineExpr> exprs{b.getAffineDimExpr(rank)};
  for (int64_t d = k; d < rank; ++d)
    exprs.push_back(b.getAffineDimExpr(d));
  AffineMap updateMap = AffineMap::get(rank + 1, 0, exprs, b.getContext());
  bool isUnsigned = ctx.isInputUnsigned(0);
  auto body = [&](OpBuilder &nb, Location nl, Value acc, ValueRange args,
                  ArrayRef<Value> ivs) -> Value {
    Value hit = createScalar(nb, nl, nb.getI1Type(), 1);
    for (int64_t j = 0; j < k; ++j) {
      Value raw = tensor::ExtractOp::create(
          nb, nl, indices,
          ValueRange{ivs[rank], arith::ConstantIndexOp::create(nb, nl, j)});
      Value index = normalizeIndex(nb, nl, raw, dataSizes[j]);
      hit = arith::AndIOp::create(
          nb, nl, hit,
          arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, index,
                                ivs[j]));
    }
    return arith::SelectOp::create(
               nb, nl, hit, combine(nb, nl, *kind, acc, args[0], isUnsigned),
               acc)
        .getResult();
  };
  if (type.hasStaticShape())
    return ctx.setOutput(
        0, createFold(b, loc, data, {updates}, {updateMap}, 1, body));
  SmallVector<OpFoldResult> updateLoops{positions};
  llvm::append_range(updateLoops, ArrayRef(dataSizes).drop_front(k));
  Value result = createSequentialScatter(
      b, loc, data, updates, updateLoops,
      [&](OpBuilder &nb, Location nl, ValueRange ivs) {
        SmallVector<Value> coords;
        for (int64_t j = 0; j < k; ++j) {
          Value raw = tensor::ExtractOp::create(
              nb, nl, indices,
              ValueRange{ivs[0], arith::ConstantIndexOp::create(nb, nl, j)});
          coords.push_back(normalizeIndex(nb, nl, raw, dataSizes[j]));
        }
        llvm::append_range(coords, ivs.drop_front());
        return coords;
      },
      *kind, isUnsigned);
  return ctx.setOutput(0, result);
}

// GatherND: result[b..., i..., rest...] = data[b..., indices[b..., i..., :],
// rest...] with `batch_dims` leading dims shared by data and indices. Any
// dim but the indices' last may be known only at run time.
LogicalResult lowerGatherND(NodeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType dt = ctx.getInputType(0), it = ctx.getInputType(1);
  int64_t batchDims = ctx.getIntAttr("batch_dims", 0);
  int64_t q = it.getRank();
  if (q < 1)
    return ctx.fail("indices must have rank >= 1");
  int64_t k = it.getDimSize(q - 1);
  if (ShapedType::isDynamic(k))
    return ctx.fail("the last dim of indices must be known at compile time");
  if (batchDims < 0 || batchDims >= q || batchDims + k > dt.getRank())
    return ctx.fail("batch_dims and the last dim of indices do not fit the "
                    "data");
  if (failed(ctx.checkConstantIndices(1, [&](int64_t position) {
        return dt.getDimSize(batchDims + position % k);
      })))
    return failure();
  Value data = ctx.getInput(0), indices = ctx.getInput(1);
  SmallVector<OpFoldResult> dataSizes = getDimSizes(b, loc, data);
  SmallVector<OpFoldResult> sizes = getDimSizes(b, loc, indices);
  for (int64_t d = 0; d < batchDims; ++d)
    if (failed(ctx.checkSizes(sizes[d], dataSizes[d],
                              "batch dim " + Twine(d) +
                                  " of data and indices differ")))
      return failure();
  sizes.pop_back();
  for (int64_t j = 0; j < k; ++j)
    if (failed(ctx.checkIndexedDimNotEmpty(batchDims + j,
                                           dataSizes[batchDims + j], sizes)))
      return failure();
  llvm::append_range(sizes, ArrayRef(dataSizes).drop_front(batchDims + k));
  auto type = RankedTensorType::get(getStaticShape(sizes), dt.getElementType());
  if (type.hasStaticShape() && type.getNumElements() == 0)
    return ctx.setOutput(0, createZeroElements(b, loc, type));
  Value result = createIndexedGeneric(
      b, loc, {}, {}, type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        SmallVector<Value> coords(ivs.begin(), ivs.begin() + batchDims);
        SmallVector<Value> indexCoords(ivs.begin(), ivs.begin() + q - 1);
        indexCoords.push_back(Value());
        for (int64_t j = 0; j < k; ++j) {
          indexCoords.back() = arith::ConstantIndexOp::create(nb, nl, j);
          Value raw = tensor::ExtractOp::create(nb, nl, indices, indexCoords);
          coords.push_back(
              normalizeIndex(nb, nl, raw, dataSizes[batchDims + j]));
        }
        coords.append(ivs.begin() + q - 1, ivs.end());
        return tensor::ExtractOp::create(nb, nl, data, coords).getResult();
      },
      sizes);
  return ctx.setOutput(0, result);
}

// MaxUnpool: zeros, with each X value written at its flat index (from
// MaxPool's Indices) into the result; the result shape is the inferred one
// (output_shape or the pooling arithmetic).
LogicalResult lowerMaxUnpool(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0), it = ctx.getInputType(1);
  if (xt.getShape() != it.getShape())
    return ctx.fail("X and I must have one shape");
  int64_t rank = type->getRank();
  Type et = type->getElementType();
  int64_t count = xt.getNumElements();
  if (count == 0 || type->getNumElements() == 0)
    return ctx.setOutput(
        0, createFilled(b, loc, *type, createScalar(b, loc, et, 0)));
  // Indices count in the default unpooled shape ((in - 1) * stride +
  // kernel - pads); a larger output_shape keeps those coordinates (the
  // extra rows and columns stay 0).
  SmallVector<int64_t> kernel = ctx.getIntsAttr("kernel_shape");
  SmallVector<int64_t> strides = ctx.getIntsAttr("strides");
  SmallVector<int64_t> pads = ctx.getIntsAttr("pads");
  int64_t spatial = rank - 2;
  if (rank < 3 || xt.getRank() != rank ||
      static_cast<int64_t>(kernel.size()) != spatial ||
      (!strides.empty() && static_cast<int64_t>(strides.size()) != spatial) ||
      (!pads.empty() && static_cast<int64_t>(pads.size()) != 2 * spatial))
    return ctx.fail("needs [N, C, spatial...] operands and one kernel_shape, "
                    "strides and pads value per spatial dim");
  SmallVector<int64_t> unpooled(type->getShape().take_front(2));
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t s = strides.empty() ? 1 : strides[i];
    int64_t padding = pads.empty() ? 0 : pads[i] + pads[spatial + i];
    unpooled.push_back((xt.getDimSize(2 + i) - 1) * s + kernel[i] - padding);
  }
  Value x = createReshape(b, loc, ctx.getInput(0), {count});
  Value indices = createReshape(b, loc, ctx.getInput(1), {count});
  AffineMap alongInput = AffineMap::get(rank + 1, 0, b.getAffineDimExpr(rank));
  Value zeros = createFilled(b, loc, *type, createScalar(b, loc, et, 0));
  Value result = createFold(
      b, loc, zeros, {x, indices}, {alongInput, alongInput}, 1,
      [&](OpBuilder &nb, Location nl, Value acc, ValueRange args,
          ArrayRef<Value> ivs) -> Value {
        // The row-major flat index of this element in the unpooled shape.
        Type i64 = nb.getI64Type();
        Value flat = createScalar(nb, nl, i64, 0);
        Value inside = createScalar(nb, nl, nb.getI1Type(), 1);
        for (int64_t d = 0; d < rank; ++d) {
          Value i = arith::IndexCastOp::create(nb, nl, i64, ivs[d]);
          flat = arith::AddIOp::create(
              nb, nl,
              arith::MulIOp::create(nb, nl, flat,
                                    createScalar(nb, nl, i64, unpooled[d])),
              i);
          inside = arith::AndIOp::create(
              nb, nl, inside,
              arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, i,
                                    createScalar(nb, nl, i64, unpooled[d])));
        }
        Value index = createScalarCast(nb, nl, args[1], i64, false, false);
        Value hit = arith::AndIOp::create(
            nb, nl, inside,
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, index,
                                  flat));
        return arith::SelectOp::create(nb, nl, hit, args[0], acc).getResult();
      });
  return ctx.setOutput(0, result);
}

} // namespace

void addScatterLowerings(LoweringTable &t) {
  t["MaxUnpool"] = lowerMaxUnpool;
  t["ScatterElements"] = lowerScatterElements;
  t["Scatter"] = lowerScatterElements;
  t["ScatterND"] = lowerScatterND;
  t["GatherND"] = lowerGatherND;
}

} // namespace strata::onnx_importer
