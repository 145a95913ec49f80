//===- Builders.cpp - IR building helpers shared by the lowerings ---------===//
#include "strata/compiler/Importers/ONNX/Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

using namespace mlir;

namespace strata::onnx_importer {

Value createScalar(OpBuilder &b, Location loc, Type type, double value) {
  if (auto floatType = dyn_cast<FloatType>(type))
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, value));
  // Saturate to the int64 range (e.g. the largest i64 as a double).
  int64_t integer = value >= 9.2233720368547758e18 ? INT64_MAX
                    : value <= -9.2233720368547758e18
                        ? INT64_MIN
                        : static_cast<int64_t>(value);
  return arith::ConstantOp::create(
      b, loc,
      b.getIntegerAttr(type, APInt(type.getIntOrFloatBitWidth(), integer,
                                   /*isSigned=*/true, /*implicitTrunc=*/true)));
}

Value createEmpty(OpBuilder &b, Location loc, RankedTensorType type) {
  return tensor::EmptyOp::create(b, loc, type.getShape(),
                                 type.getElementType());
}

Value createEmpty(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                  Type elementType) {
  return tensor::EmptyOp::create(b, loc, sizes, elementType);
}

OpFoldResult getDimSize(OpBuilder &b, Location loc, Value tensor, int64_t dim) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (!type.isDynamicDim(dim))
    return b.getIndexAttr(type.getDimSize(dim));
  return tensor::DimOp::create(b, loc, tensor, dim).getResult();
}

SmallVector<OpFoldResult> getDimSizes(OpBuilder &b, Location loc,
                                      Value tensor) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0, e = cast<RankedTensorType>(tensor.getType()).getRank();
       i < e; ++i)
    sizes.push_back(getDimSize(b, loc, tensor, i));
  return sizes;
}

SmallVector<OpFoldResult> getSizesLike(OpBuilder &b, Location loc,
                                       RankedTensorType type, Value like) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t i = 0; i < type.getRank(); ++i)
    sizes.push_back(type.isDynamicDim(i) ? getDimSize(b, loc, like, i)
                                         : b.getIndexAttr(type.getDimSize(i)));
  return sizes;
}

Value createZeroElements(OpBuilder &b, Location loc, RankedTensorType type) {
  return arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(type, b.getZeroAttr(type.getElementType())));
}

Value createEmpty(OpBuilder &b, Location loc, RankedTensorType type,
                  Value like) {
  // (Without `like`, a dynamic type gives an empty op the verifier
  // refuses, naming the node.)
  if (type.hasStaticShape() || !like)
    return createEmpty(b, loc, type);
  SmallVector<Value> sizes;
  auto likeType = cast<RankedTensorType>(like.getType());
  for (int64_t i = 0; i < likeType.getRank(); ++i)
    if (likeType.isDynamicDim(i) &&
        static_cast<int64_t>(sizes.size()) < type.getNumDynamicDims())
      sizes.push_back(tensor::DimOp::create(b, loc, like, i));
  // `like` of the same rank, static where `type` is not (a declared type
  // less precise than the operand's): its sizes, dim for dim.
  if (static_cast<int64_t>(sizes.size()) < type.getNumDynamicDims() &&
      likeType.getRank() == type.getRank()) {
    sizes.clear();
    for (int64_t i = 0; i < type.getRank(); ++i)
      if (type.isDynamicDim(i))
        sizes.push_back(
            likeType.isDynamicDim(i)
                ? tensor::DimOp::create(b, loc, like, i).getResult()
                : arith::ConstantIndexOp::create(b, loc, likeType.getDimSize(i))
                      .getResult());
  }
  return tensor::EmptyOp::create(b, loc, type, sizes);
}

Value createFilled(OpBuilder &b, Location loc, ArrayRef<OpFoldResult> sizes,
                   Value scalar) {
  Value empty = createEmpty(b, loc, sizes, scalar.getType());
  return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{empty})
      .getResult(0);
}

Value createFilled(OpBuilder &b, Location loc, RankedTensorType type,
                   Value scalar, Value like) {
  Value empty = createEmpty(b, loc, type, like);
  return linalg::FillOp::create(b, loc, ValueRange{scalar}, ValueRange{empty})
      .getResult(0);
}

SmallVector<int64_t> broadcastShapes(ArrayRef<int64_t> a, ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  SmallVector<int64_t> result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    result[i] = da == 1 || ShapedType::isDynamic(da) ? (db == 1 ? da : db) : da;
  }
  return result;
}

// Drops the dimensions of `input` that broadcast against `shape` (size 1
// there, larger in `shape`) and returns the value with its indexing map over
// the iteration space of `shape`.
static std::pair<Value, AffineMap>
prepareBroadcastInput(OpBuilder &b, Location loc, Value input,
                      ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = shape.size();
  int64_t offset = rank - type.getRank();
  // An input of higher rank than the result cannot broadcast to it: keep
  // it with a map the importer's indexing-map check refuses, naming the
  // node (only types contradicting each other lead here).
  if (offset < 0)
    return {input, b.getMultiDimIdentityMap(rank)};
  SmallVector<AffineExpr> exprs;
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices pending;
  SmallVector<int64_t> keptShape;
  for (int64_t i = 0; i < type.getRank(); ++i) {
    pending.push_back(i);
    if (type.getDimSize(i) == 1 && shape[offset + i] != 1)
      continue;
    exprs.push_back(b.getAffineDimExpr(offset + i));
    keptShape.push_back(type.getDimSize(i));
    groups.push_back(pending);
    pending.clear();
  }
  if (!pending.empty() && !groups.empty())
    groups.back().append(pending.begin(), pending.end());
  auto map = AffineMap::get(rank, 0, exprs, b.getContext());
  if (static_cast<int64_t>(keptShape.size()) == type.getRank())
    return {input, map};
  auto collapsedType = RankedTensorType::get(keptShape, type.getElementType());
  Value collapsed =
      tensor::CollapseShapeOp::create(b, loc, collapsedType, input, groups);
  return {collapsed, map};
}

// The dynamic sizes of `resultType`: each dynamic dim takes the size of the
// first input whose aligned dim is not 1 (dynamic there, or a static size
// an inferred type left dynamic).
static SmallVector<Value> getBroadcastSizes(OpBuilder &b, Location loc,
                                            ValueRange inputs,
                                            RankedTensorType resultType) {
  SmallVector<Value> sizes;
  int64_t rank = resultType.getRank();
  for (int64_t i = 0; i < rank; ++i) {
    if (!resultType.isDynamicDim(i))
      continue;
    OpFoldResult size = b.getIndexAttr(1);
    for (Value input : inputs) {
      auto type = cast<RankedTensorType>(input.getType());
      int64_t at = i - (rank - type.getRank());
      if (at < 0 || at >= type.getRank() || type.getDimSize(at) == 1)
        continue;
      size = getDimSize(b, loc, input, at);
      break;
    }
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, size));
  }
  return sizes;
}

Value createElementwise(OpBuilder &b, Location loc, ValueRange inputs,
                        RankedTensorType resultType, ScalarBuilder body,
                        ArrayRef<OpFoldResult> sizes) {
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (Value input : inputs) {
    auto [value, map] =
        prepareBroadcastInput(b, loc, input, resultType.getShape());
    operands.push_back(value);
    maps.push_back(map);
  }
  maps.push_back(b.getMultiDimIdentityMap(resultType.getRank()));
  SmallVector<utils::IteratorType> iterators(resultType.getRank(),
                                             utils::IteratorType::parallel);
  SmallVector<Value> dynamicSizes;
  if (sizes.empty())
    dynamicSizes = getBroadcastSizes(b, loc, inputs, resultType);
  for (int64_t i = 0; i < resultType.getRank() && !sizes.empty(); ++i)
    if (resultType.isDynamicDim(i))
      dynamicSizes.push_back(getValueOrCreateConstantIndexOp(b, loc, sizes[i]));
  Value init = tensor::EmptyOp::create(b, loc, resultType, dynamicSizes);
  auto generic = linalg::GenericOp::create(
      b, loc, TypeRange{resultType}, operands, ValueRange{init}, maps,
      iterators, [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        Value result = body(nested, nestedLoc, args.drop_back());
        linalg::YieldOp::create(nested, nestedLoc, result);
      });
  return generic.getResult(0);
}

Value createSelect(OpBuilder &b, Location loc, Value cond, Value whenTrue,
                   Value whenFalse) {
  return createElementwise(
      b, loc, {cond, whenTrue, whenFalse},
      cast<RankedTensorType>(whenTrue.getType()),
      [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        return arith::SelectOp::create(nb, nl, args[0], args[1], args[2]);
      });
}

Value createCopy(OpBuilder &b, Location loc, Value input) {
  return createElementwise(
      b, loc, {input}, cast<RankedTensorType>(input.getType()),
      [](OpBuilder &, Location, ValueRange args) { return args[0]; });
}

Value createBroadcast(OpBuilder &b, Location loc, Value input,
                      ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getShape() == shape)
    return input;
  return createElementwise(
      b, loc, {input}, RankedTensorType::get(shape, type.getElementType()),
      [](OpBuilder &, Location, ValueRange args) { return args[0]; });
}

Value createSizeScalar(OpBuilder &b, Location loc, OpFoldResult size,
                       Type type) {
  if (std::optional<int64_t> known = getConstantIntValue(size))
    return createScalar(b, loc, type, *known);
  Value i64 =
      arith::IndexCastOp::create(b, loc, b.getI64Type(), cast<Value>(size));
  return createScalarCast(b, loc, i64, type, /*fromUnsigned=*/true,
                          /*toUnsigned=*/false);
}

OpFoldResult getSizeProduct(OpBuilder &b, Location loc,
                            ArrayRef<OpFoldResult> sizes) {
  int64_t known = 1;
  Value unknown;
  for (OpFoldResult size : sizes) {
    if (std::optional<int64_t> c = getConstantIntValue(size)) {
      known *= *c;
      continue;
    }
    unknown = unknown
                  ? arith::MulIOp::create(b, loc, unknown, cast<Value>(size))
                        .getResult()
                  : cast<Value>(size);
  }
  if (!unknown)
    return b.getIndexAttr(known);
  if (known == 1)
    return unknown;
  return arith::MulIOp::create(b, loc, unknown,
                               arith::ConstantIndexOp::create(b, loc, known))
      .getResult();
}

namespace {

// Where a dynamic size comes from: dim `dim` of tensor `value` that the ops
// after it only pass through (an argument's dim, say), or the index
// `value` itself (dim < 0).
struct SizeOrigin {
  Value value;
  int64_t dim = -1;
  bool operator==(const SizeOrigin &other) const {
    return value == other.value && dim == other.dim;
  }
};

SizeOrigin traceSize(Value size);

SizeOrigin traceDim(Value tensor, int64_t dim) {
  // Bounded: import-time chains are short, and a cycle cannot occur.
  for (int step = 0; step < 256; ++step) {
    // A static size (a cast may hide it: a dynamic dim of the cast's
    // result) ends the trace here.
    if (!cast<RankedTensorType>(tensor.getType()).isDynamicDim(dim))
      return {tensor, dim};
    Operation *def = tensor.getDefiningOp();
    // (An empty with too few sizes is refused by the verifier later.)
    if (auto empty = dyn_cast_or_null<tensor::EmptyOp>(def))
      return static_cast<int64_t>(empty.getDynamicSizes().size()) ==
                     empty.getType().getNumDynamicDims()
                 ? traceSize(empty.getDynamicSize(dim))
                 : SizeOrigin{tensor, dim};
    if (auto expand = dyn_cast_or_null<tensor::ExpandShapeOp>(def)) {
      OpFoldResult size = expand.getMixedOutputShape()[dim];
      if (auto value = dyn_cast<Value>(size))
        return traceSize(value);
      return {tensor, dim};
    }
    Value next;
    int64_t nextDim = dim;
    if (auto dps = dyn_cast_or_null<DestinationStyleOpInterface>(def)) {
      next = dps.getTiedOpOperand(cast<OpResult>(tensor))->get();
    } else if (auto castOp = dyn_cast_or_null<tensor::CastOp>(def)) {
      next = castOp.getSource();
    } else if (auto collapse = dyn_cast_or_null<tensor::CollapseShapeOp>(def)) {
      ReassociationIndices group = collapse.getReassociationIndices()[dim];
      if (group.size() == 1) {
        next = collapse.getSrc();
        nextDim = group[0];
      }
    } else if (auto pad = dyn_cast_or_null<tensor::PadOp>(def)) {
      if (isZeroInteger(pad.getMixedLowPad()[dim]) &&
          isZeroInteger(pad.getMixedHighPad()[dim]))
        next = pad.getSource();
    } else if (auto concat = dyn_cast_or_null<tensor::ConcatOp>(def)) {
      if (static_cast<int64_t>(concat.getDim()) != dim)
        next = concat.getInputs().front();
    }
    if (!next || !cast<RankedTensorType>(next.getType()).isDynamicDim(nextDim))
      return {tensor, dim};
    tensor = next;
    dim = nextDim;
  }
  return {tensor, dim};
}

SizeOrigin traceSize(Value size) {
  auto dim = size.getDefiningOp<tensor::DimOp>();
  std::optional<int64_t> index = dim ? dim.getConstantIndex() : std::nullopt;
  if (!index ||
      !cast<RankedTensorType>(dim.getSource().getType()).isDynamicDim(*index))
    return {size, -1};
  return traceDim(dim.getSource(), *index);
}

} // namespace

bool isSameSize(OpFoldResult a, OpFoldResult b) {
  if (isEqualConstantIntOrValue(a, b))
    return true;
  auto va = dyn_cast<Value>(a), vb = dyn_cast<Value>(b);
  return va && vb && traceSize(va) == traceSize(vb);
}

SmallVector<int64_t> getStaticShape(ArrayRef<OpFoldResult> sizes) {
  SmallVector<int64_t> shape;
  for (OpFoldResult size : sizes)
    shape.push_back(getConstantIntValue(size).value_or(ShapedType::kDynamic));
  return shape;
}

Value createDynamicReshape(OpBuilder &b, Location loc, Value input,
                           ArrayRef<OpFoldResult> sizes) {
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> shape = getStaticShape(sizes);
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  if (type.hasStaticShape() && resultType.hasStaticShape())
    return createReshape(b, loc, input, shape);
  SmallVector<OpFoldResult> inputSizes = getDimSizes(b, loc, input);
  int64_t n = type.getRank(), m = resultType.getRank();
  // Dims kept one to one (the batch of a flatten), then the rest of the
  // input collapsed into one dim and expanded into the rest of the result.
  int64_t kept = 0;
  while (kept < n && kept < m && isSameSize(inputSizes[kept], sizes[kept]))
    ++kept;
  if (kept == n && kept == m)
    return input;
  kept = std::min({kept, n - 1, m - 1});
  if (kept < 0) // rank 0 on one side: only static shapes get here
    return createReshape(b, loc, input, shape);
  SmallVector<ReassociationIndices> inGroups, outGroups;
  for (int64_t i = 0; i < kept; ++i) {
    inGroups.push_back({i});
    outGroups.push_back({i});
  }
  inGroups.push_back(llvm::to_vector(llvm::seq<int64_t>(kept, n)));
  outGroups.push_back(llvm::to_vector(llvm::seq<int64_t>(kept, m)));
  Value collapsed = input;
  if (kept + 1 < n)
    collapsed = tensor::CollapseShapeOp::create(b, loc, input, inGroups);
  if (kept + 1 == m) {
    // One result dim past the kept ones: at most a refinement of its type.
    if (collapsed.getType() == resultType)
      return collapsed;
    return tensor::CastOp::create(b, loc, resultType, collapsed);
  }
  SmallVector<OpFoldResult> outputShape(sizes);
  for (int64_t i = 0; i < kept; ++i)
    outputShape[i] = inputSizes[i];
  return tensor::ExpandShapeOp::create(b, loc, resultType, collapsed, outGroups,
                                       outputShape);
}

Value createReshape(OpBuilder &b, Location loc, Value input,
                    ArrayRef<int64_t> shape) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getShape() == shape)
    return input;
  if (!type.hasStaticShape() || ShapedType::isDynamicShape(shape)) {
    SmallVector<OpFoldResult> sizes =
        getAsIndexOpFoldResult(b.getContext(), shape);
    SmallVector<OpFoldResult> inputSizes = getDimSizes(b, loc, input);
    SmallVector<OpFoldResult> dynamicSizes;
    for (OpFoldResult size : inputSizes)
      if (!getConstantIntValue(size))
        dynamicSizes.push_back(size);
    // Otherwise one dynamic dim takes what the static ones leave.
    if (static_cast<int64_t>(dynamicSizes.size()) !=
        llvm::count(shape, ShapedType::kDynamic)) {
      int64_t known = 1;
      for (int64_t d : shape)
        known *= ShapedType::isDynamic(d) ? 1 : d;
      Value total = getValueOrCreateConstantIndexOp(
          b, loc, inputSizes.empty() ? b.getIndexAttr(1) : inputSizes[0]);
      for (OpFoldResult size : ArrayRef(inputSizes).drop_front())
        total = arith::MulIOp::create(
            b, loc, total, getValueOrCreateConstantIndexOp(b, loc, size));
      Value rest = arith::DivUIOp::create(
          b, loc, total, arith::ConstantIndexOp::create(b, loc, known));
      dynamicSizes.assign(llvm::count(shape, ShapedType::kDynamic), rest);
    }
    auto next = dynamicSizes.begin();
    for (OpFoldResult &size : sizes)
      if (ShapedType::isDynamic(*getConstantIntValue(size)))
        size = *next++;
    return createDynamicReshape(b, loc, input, sizes);
  }
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  Value flat = input;
  if (type.getRank() != 1) {
    SmallVector<ReassociationIndices> groups;
    if (type.getRank() > 0)
      groups.push_back(llvm::to_vector(llvm::seq<int64_t>(0, type.getRank())));
    auto flatType = RankedTensorType::get(
        type.getRank() > 0 ? SmallVector<int64_t>{type.getNumElements()}
                           : SmallVector<int64_t>{},
        type.getElementType());
    if (flatType != type)
      flat = tensor::CollapseShapeOp::create(b, loc, flatType, input, groups);
  }
  auto flatType = cast<RankedTensorType>(flat.getType());
  if (flatType == resultType)
    return flat;
  if (resultType.getRank() == 0 || flatType.getRank() == 0) {
    // Between rank 0 and rank-0-like shapes (all ones).
    if (resultType.getRank() == 0)
      return tensor::CollapseShapeOp::create(b, loc, resultType, flat,
                                             ArrayRef<ReassociationIndices>{});
    return tensor::ExpandShapeOp::create(b, loc, resultType, flat,
                                         ArrayRef<ReassociationIndices>{});
  }
  if (resultType.getRank() == 1)
    return flat;
  SmallVector<ReassociationIndices> groups{
      llvm::to_vector(llvm::seq<int64_t>(0, resultType.getRank()))};
  return tensor::ExpandShapeOp::create(b, loc, resultType, flat, groups);
}

Value createTranspose(OpBuilder &b, Location loc, Value input,
                      ArrayRef<int64_t> perm) {
  auto type = cast<RankedTensorType>(input.getType());
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return input;
  SmallVector<OpFoldResult> sizes = getDimSizes(b, loc, input), permuted;
  for (int64_t p : perm)
    permuted.push_back(sizes[p]);
  Value init = createEmpty(b, loc, permuted, type.getElementType());
  return linalg::TransposeOp::create(b, loc, input, init, perm).getResult()[0];
}

Value createScalarCast(OpBuilder &b, Location loc, Value value, Type to,
                       bool fromUnsigned, bool toUnsigned) {
  Type from = value.getType();
  if (from == to)
    return value;
  auto fromFloat = dyn_cast<FloatType>(from);
  auto toFloat = dyn_cast<FloatType>(to);
  if (to.isInteger(1)) {
    if (fromFloat)
      return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UNE, value,
                                   createScalar(b, loc, from, 0.0));
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, value,
                                 createScalar(b, loc, from, 0.0));
  }
  if (fromFloat && toFloat) {
    if (fromFloat.getWidth() < toFloat.getWidth())
      return arith::ExtFOp::create(b, loc, to, value);
    return arith::TruncFOp::create(b, loc, to, value);
  }
  if (fromFloat) {
    if (toUnsigned)
      return arith::FPToUIOp::create(b, loc, to, value);
    return arith::FPToSIOp::create(b, loc, to, value);
  }
  bool unsignedSource = fromUnsigned || from.isInteger(1);
  if (toFloat) {
    if (unsignedSource)
      return arith::UIToFPOp::create(b, loc, to, value);
    return arith::SIToFPOp::create(b, loc, to, value);
  }
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  unsigned toWidth = to.getIntOrFloatBitWidth();
  if (fromWidth > toWidth)
    return arith::TruncIOp::create(b, loc, to, value);
  if (unsignedSource)
    return arith::ExtUIOp::create(b, loc, to, value);
  return arith::ExtSIOp::create(b, loc, to, value);
}

Value createCast(OpBuilder &b, Location loc, Value input, Type to,
                 bool fromUnsigned, bool toUnsigned) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getElementType() == to)
    return input;
  return createElementwise(
      b, loc, {input}, RankedTensorType::get(type.getShape(), to),
      [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        return createScalarCast(nested, nestedLoc, args[0], to, fromUnsigned,
                                toUnsigned);
      });
}

Value createReduction(OpBuilder &b, Location loc, Value input,
                      ArrayRef<int64_t> axes, bool keepDims, Value init,
                      ScalarBuilder combine) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  SmallVector<bool> reduced(rank, false);
  for (int64_t axis : axes)
    reduced[normalizeAxis(axis, rank)] = true;
  SmallVector<OpFoldResult> resultSizes;
  SmallVector<AffineExpr> resultExprs;
  SmallVector<utils::IteratorType> iterators;
  for (int64_t i = 0; i < rank; ++i) {
    iterators.push_back(reduced[i] ? utils::IteratorType::reduction
                                   : utils::IteratorType::parallel);
    if (reduced[i])
      continue;
    resultSizes.push_back(getDimSize(b, loc, input, i));
    resultExprs.push_back(b.getAffineDimExpr(i));
  }
  Value filled = createFilled(b, loc, resultSizes, init);
  Type resultType = filled.getType();
  SmallVector<AffineMap> maps{
      b.getMultiDimIdentityMap(rank),
      AffineMap::get(rank, 0, resultExprs, b.getContext())};
  Value result =
      linalg::GenericOp::create(
          b, loc, TypeRange{resultType}, ValueRange{input}, ValueRange{filled},
          maps, iterators,
          [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
            Value combined = combine(nested, nestedLoc, args);
            linalg::YieldOp::create(nested, nestedLoc, combined);
          })
          .getResult(0);
  if (!keepDims)
    return result;
  SmallVector<int64_t> keptShape;
  for (int64_t i = 0; i < rank; ++i)
    keptShape.push_back(reduced[i] ? 1 : type.getDimSize(i));
  return createReshape(b, loc, result, keptShape);
}

Value normalizeIndex(OpBuilder &b, Location loc, Value index, int64_t dim) {
  return normalizeIndex(b, loc, index, b.getIndexAttr(dim));
}

Value normalizeIndex(OpBuilder &b, Location loc, Value index,
                     OpFoldResult dim) {
  Value i = arith::IndexCastOp::create(b, loc, b.getIndexType(), index);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value size = getValueOrCreateConstantIndexOp(b, loc, dim);
  Value isNeg =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, i, zero);
  Value wrapped = arith::AddIOp::create(b, loc, i, size);
  i = arith::SelectOp::create(b, loc, isNeg, wrapped, i);
  Value max = arith::SubIOp::create(b, loc, size,
                                    arith::ConstantIndexOp::create(b, loc, 1));
  i = arith::MaxSIOp::create(b, loc, i, zero);
  return arith::MinSIOp::create(b, loc, i, max);
}

Value createIndexedGeneric(OpBuilder &b, Location loc, ValueRange inputs,
                           ArrayRef<AffineMap> inputMaps,
                           RankedTensorType resultType, IndexedBody body,
                           ArrayRef<OpFoldResult> sizes) {
  int64_t rank = resultType.getRank();
  SmallVector<Value> dynamicSizes;
  for (int64_t i = 0; i < rank && !sizes.empty(); ++i)
    if (resultType.isDynamicDim(i))
      dynamicSizes.push_back(getValueOrCreateConstantIndexOp(b, loc, sizes[i]));
  SmallVector<AffineMap> maps(inputMaps);
  maps.push_back(b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, inputs,
             ValueRange{
                 tensor::EmptyOp::create(b, loc, resultType, dynamicSizes)},
             maps, iterators,
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               SmallVector<Value> ivs;
               for (int64_t i = 0; i < rank; ++i)
                 ivs.push_back(linalg::IndexOp::create(nb, nl, i));
               linalg::YieldOp::create(nb, nl,
                                       body(nb, nl, args.drop_back(), ivs));
             })
      .getResult(0);
}

Value extractFirst(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<Value> zeros(type.getRank(),
                           arith::ConstantIndexOp::create(b, loc, 0));
  return tensor::ExtractOp::create(b, loc, tensor, zeros);
}

Value createIndexedSum(OpBuilder &b, Location loc, RankedTensorType resultType,
                       int64_t size, IndexedTerm term) {
  int64_t rank = resultType.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t d = 0; d < rank; ++d)
    exprs.push_back(b.getAffineDimExpr(d));
  AffineMap outMap = AffineMap::get(rank + 1, 0, exprs, b.getContext());
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  // The reduction loop needs an operand of its extent to be well formed.
  Value extent = createEmpty(
      b, loc, RankedTensorType::get({size}, resultType.getElementType()));
  AffineMap extentMap =
      AffineMap::get(rank + 1, 0, {b.getAffineDimExpr(rank)}, b.getContext());
  Value init = createFilled(
      b, loc, resultType, createScalar(b, loc, resultType.getElementType(), 0));
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{extent},
             ValueRange{init}, ArrayRef<AffineMap>{extentMap, outMap},
             iterators,
             [&](OpBuilder &nb, Location nl, ValueRange a) {
               SmallVector<Value> ivs;
               for (int64_t d = 0; d < rank; ++d)
                 ivs.push_back(linalg::IndexOp::create(nb, nl, d));
               Value k = linalg::IndexOp::create(nb, nl, rank);
               Value sum =
                   arith::AddFOp::create(nb, nl, a[1], term(nb, nl, ivs, k));
               linalg::YieldOp::create(nb, nl, sum);
             })
      .getResult(0);
}

} // namespace strata::onnx_importer
