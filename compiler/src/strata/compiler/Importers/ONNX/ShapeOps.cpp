//===- ShapeOps.cpp - Reshape, Transpose, Concat, Slice, Pad, Shape, ... --===//
//
// Shapes are static: reshape-like ops take their result shape from shape
// inference and become collapse/expand_shape. Shape computations on
// compile-time values (Shape, and reshapes/Concat/Cast of constants) are
// folded here so that later nodes see constants.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"
#include "strata/compiler/Importers/ONNX/SymbolicShapes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

// Reshape, Flatten, Squeeze, Unsqueeze: the inferred shape is the result.
// Squeeze and Unsqueeze axes (an attribute before opset 13, else input 1)
// must name dimensions of the input (Squeeze: of size 1) or of the result.
LogicalResult checkSqueezeAxes(NodeContext &ctx, RankedTensorType input,
                               RankedTensorType result) {
  bool squeeze = ctx.getNode().op_type() == "Squeeze";
  SmallVector<int64_t> axes = ctx.getIntsAttr("axes");
  if (ctx.getOpset() >= 13 && ctx.hasInput(1)) {
    std::optional<DenseElementsAttr> known = ctx.getConstantInput(1);
    if (!known || !isa<IntegerType>(known->getElementType()))
      return success(); // the result type alone says what happens
    axes.clear();
    for (const APInt &v : known->getValues<APInt>())
      axes.push_back(v.getSExtValue());
  }
  int64_t rank = squeeze ? input.getRank() : result.getRank();
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank)
      return ctx.fail("axis " + Twine(axis) + " is out of range for rank " +
                      Twine(rank));
    if (squeeze && input.getDimSize(normalizeAxis(axis, rank)) != 1)
      return ctx.fail("axis " + Twine(axis) + " has size " +
                      Twine(input.getDimSize(normalizeAxis(axis, rank))) +
                      ", not 1");
  }
  return success();
}

LogicalResult lowerReshapeLike(NodeContext &ctx) {
  if (ctx.hasDynamicInput() || ctx.findSymbolicInput(1))
    return lowerDynamicReshapeLike(ctx);
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  RankedTensorType inputType = ctx.getInputType(0);
  if (inputType.getNumElements() != type->getNumElements())
    return ctx.emitError() << "cannot reshape " << inputType << " into "
                           << *type << " (element counts differ)";
  StringRef op = ctx.getNode().op_type();
  if ((op == "Squeeze" || op == "Unsqueeze") &&
      failed(checkSqueezeAxes(ctx, inputType, *type)))
    return failure();
  if (std::optional<DenseElementsAttr> value = ctx.getConstantInput(0))
    return ctx.setConstantOutput(0, value->reshape(*type));
  return ctx.setOutput(0, createReshape(ctx.getBuilder(), ctx.getLoc(),
                                        ctx.getInput(0), type->getShape()));
}

LogicalResult lowerShape(NodeContext &ctx) {
  RankedTensorType inputType = ctx.getInputType(0);
  int64_t rank = inputType.getRank();
  int64_t start = ctx.getIntAttr("start", 0);
  int64_t end = ctx.getIntAttr("end", rank);
  start = std::clamp<int64_t>(normalizeAxis(start, rank), 0, rank);
  end = std::clamp<int64_t>(normalizeAxis(end, rank), 0, rank);
  SmallVector<int64_t> dims;
  for (int64_t i = start; i < end; ++i)
    dims.push_back(inputType.getDimSize(i));
  auto type = RankedTensorType::get({static_cast<int64_t>(dims.size())},
                                    ctx.getBuilder().getI64Type());
  return ctx.setConstantOutput(0, DenseElementsAttr::get(type, ArrayRef(dims)));
}

LogicalResult lowerSize(NodeContext &ctx) {
  auto type = RankedTensorType::get({}, ctx.getBuilder().getI64Type());
  int64_t n = ctx.getInputType(0).getNumElements();
  return ctx.setConstantOutput(0, DenseElementsAttr::get(type, ArrayRef(n)));
}

LogicalResult lowerConstant(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  Builder &b = ctx.getBuilder();
  if (const onnx::AttributeProto *attr = ctx.findAttr("value")) {
    std::string error;
    DenseElementsAttr value =
        convertTensorProto(ctx.getContext(), attr->t(), ctx.getLimits(), error);
    if (!value)
      return ctx.fail(error);
    return ctx.setConstantOutput(0, value);
  }
  if (const onnx::AttributeProto *attr = ctx.findAttr("value_float"))
    return ctx.setConstantOutput(
        0, DenseElementsAttr::get(*type, b.getF32FloatAttr(attr->f())));
  if (const onnx::AttributeProto *attr = ctx.findAttr("value_int"))
    return ctx.setConstantOutput(
        0, DenseElementsAttr::get(*type, b.getI64IntegerAttr(attr->i())));
  if (ctx.hasAttr("value_floats")) {
    SmallVector<float> v = ctx.getFloatsAttr("value_floats");
    return ctx.setConstantOutput(0, DenseElementsAttr::get(*type, ArrayRef(v)));
  }
  if (ctx.hasAttr("value_ints")) {
    SmallVector<int64_t> v = ctx.getIntsAttr("value_ints");
    return ctx.setConstantOutput(0, DenseElementsAttr::get(*type, ArrayRef(v)));
  }
  return ctx.fail("unsupported Constant attribute (sparse or string)");
}

LogicalResult lowerConstantOfShape(NodeContext &ctx) {
  Builder &b = ctx.getBuilder();
  Attribute scalar = b.getZeroAttr(b.getF32Type());
  if (const onnx::AttributeProto *attr = ctx.findAttr("value")) {
    std::string error;
    DenseElementsAttr value =
        convertTensorProto(ctx.getContext(), attr->t(), ctx.getLimits(), error);
    if (!value)
      return ctx.fail(error);
    if (value.getNumElements() != 1)
      return ctx.fail("value must hold exactly one element");
    scalar = *value.value_begin<Attribute>();
  }
  if (const SymbolicShape *shape = ctx.findSymbolicInput(0))
    return lowerSymbolicConstantOfShape(ctx, *shape, cast<TypedAttr>(scalar));
  // Shape inference cannot see through shapes the importer folded (e.g.
  // Neg of a constant in LayerNormalization's expansion): take the shape
  // from the constant input then.
  RankedTensorType computed;
  if (ctx.getConstantInput(0)) {
    FailureOr<SmallVector<int64_t>> shape = ctx.getConstantInts(0);
    if (failed(shape))
      return failure();
    if (llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
      return ctx.fail("shape has a negative dimension");
    computed = RankedTensorType::get(*shape, cast<TypedAttr>(scalar).getType());
  }
  FailureOr<RankedTensorType> type =
      computed ? ctx.getOutputTypeOr(0, computed) : ctx.getOutputType(0);
  if (failed(type))
    return failure();
  if (cast<TypedAttr>(scalar).getType() != type->getElementType())
    return ctx.fail("value type differs from the inferred output type");
  return ctx.setConstantOutput(0, DenseElementsAttr::get(*type, scalar));
}

LogicalResult lowerTranspose(NodeContext &ctx) {
  int64_t rank = ctx.getInputType(0).getRank();
  SmallVector<int64_t> perm = ctx.getIntsAttr("perm");
  if (perm.empty())
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  // A small constant (a shape computation's table) is transposed here, so
  // that what is computed from it stays known.
  if (std::optional<DenseElementsAttr> known = ctx.getConstantInput(0);
      known && known->getNumElements() <= 4096 && isPermutationVector(perm) &&
      static_cast<int64_t>(perm.size()) == rank) {
    auto sourceType = cast<RankedTensorType>(known->getType());
    SmallVector<int64_t> shape;
    for (int64_t dim : perm)
      shape.push_back(sourceType.getDimSize(dim));
    auto values = llvm::to_vector(known->getValues<Attribute>());
    SmallVector<int64_t> sourceStrides = computeStrides(sourceType.getShape());
    SmallVector<int64_t> strides = computeStrides(shape);
    SmallVector<Attribute> transposed(values.size());
    for (int64_t index = 0; index < static_cast<int64_t>(values.size());
         ++index) {
      SmallVector<int64_t> position = delinearize(index, strides);
      int64_t source = 0;
      for (auto [dim, at] : llvm::zip(perm, position))
        source += at * sourceStrides[dim];
      transposed[index] = values[source];
    }
    auto type = RankedTensorType::get(shape, sourceType.getElementType());
    return ctx.setConstantOutput(0, DenseElementsAttr::get(type, transposed));
  }
  return ctx.setOutput(0, createTranspose(ctx.getBuilder(), ctx.getLoc(),
                                          ctx.getInput(0), perm));
}

// Concatenation of 1-D compile-time values (shape computations). The
// result type is computed here: inference may not have seen through the
// folded inputs.
bool tryFoldConcat(NodeContext &ctx, LogicalResult &result) {
  SmallVector<Attribute> values;
  Type elementType;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    std::optional<DenseElementsAttr> c = ctx.getConstantInput(i);
    if (!c || c->getType().getRank() != 1 ||
        (elementType && c->getElementType() != elementType))
      return false;
    elementType = c->getElementType();
    llvm::append_range(values, c->getValues<Attribute>());
  }
  if (!elementType)
    return false;
  FailureOr<RankedTensorType> type = ctx.getOutputTypeOr(
      0, RankedTensorType::get({static_cast<int64_t>(values.size())},
                               elementType));
  if (failed(type)) {
    result = failure();
    return true;
  }
  if (type->getRank() != 1 ||
      type->getNumElements() != static_cast<int64_t>(values.size()))
    return false;
  result = ctx.setConstantOutput(0, DenseElementsAttr::get(*type, values));
  return true;
}

LogicalResult lowerConcat(NodeContext &ctx) {
  LogicalResult folded = success();
  if (tryFoldConcat(ctx, folded))
    return folded;
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  FailureOr<int64_t> axis =
      ctx.getAxis(ctx.getIntAttr("axis", 0), type->getRank());
  if (failed(axis))
    return failure();
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    if (!ctx.hasInput(i))
      continue;
    if (ctx.getInputType(i).getRank() != type->getRank())
      return ctx.fail("input " + Twine(i) + " has rank " +
                      Twine(ctx.getInputType(i).getRank()) + ", the result " +
                      Twine(type->getRank()));
    if (ctx.getInputType(i).getDimSize(*axis) != 0)
      inputs.push_back(ctx.getInput(i));
  }
  if (inputs.size() == 1)
    return ctx.setOutput(0, inputs.front());
  if (inputs.empty())
    return ctx.setOutput(
        0, createZeroElements(ctx.getBuilder(), ctx.getLoc(), *type));
  return ctx.setOutput(0,
                       tensor::ConcatOp::create(ctx.getBuilder(), ctx.getLoc(),
                                                *type, *axis, inputs));
}

// Reverses static dimension `axis` of `input` (a generic with a reversed
// map); its other dims may be dynamic.
Value createReverse(OpBuilder &b, Location loc, Value input, int64_t axis) {
  auto type = cast<RankedTensorType>(input.getType());
  int64_t rank = type.getRank();
  SmallVector<AffineExpr> exprs;
  for (int64_t i = 0; i < rank; ++i)
    exprs.push_back(i == axis
                        ? b.getAffineConstantExpr(type.getDimSize(i) - 1) -
                              b.getAffineDimExpr(i)
                        : b.getAffineDimExpr(i));
  SmallVector<AffineMap> maps{AffineMap::get(rank, 0, exprs, b.getContext()),
                              b.getMultiDimIdentityMap(rank)};
  SmallVector<utils::IteratorType> iterators(rank,
                                             utils::IteratorType::parallel);
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, ValueRange{input},
             ValueRange{createEmpty(b, loc, type, input)}, maps, iterators,
             [](OpBuilder &nb, Location nl, ValueRange args) {
               linalg::YieldOp::create(nb, nl, args[0]);
             })
      .getResult(0);
}

// The constant integers of optional input `index` into `values` (left as
// they are when the input is absent).
LogicalResult getOptionalInts(NodeContext &ctx, unsigned index,
                              SmallVector<int64_t> &values) {
  if (!ctx.hasInput(index))
    return success();
  FailureOr<SmallVector<int64_t>> ints = ctx.getConstantInts(index);
  if (failed(ints))
    return failure();
  values = std::move(*ints);
  return success();
}

// Slice with sizes known at run time: of dynamic dims, or with starts and
// ends computed from dynamic dims (torch's `x[:, :h]` after a pad) or
// from data (read back by the host, which sizes the result with them).
// Axes and steps are constants; each sliced dim's start and end are
// normalized (negative from the end) and clamped at run time. A negative
// step slices forwards from the lowest element it reads, then reverses.
LogicalResult lowerDynamicSlice(NodeContext &ctx) {
  RankedTensorType inputType = ctx.getInputType(0);
  int64_t rank = inputType.getRank();
  SmallVector<int64_t> axes, steps;
  if (failed(getOptionalInts(ctx, 3, axes)) ||
      failed(getOptionalInts(ctx, 4, steps)))
    return failure();
  std::optional<SymbolicShape> starts = getSymbolicOrReadBackInput(ctx, 1);
  std::optional<SymbolicShape> ends = getSymbolicOrReadBackInput(ctx, 2);
  if (!starts || !ends)
    return ctx.fail("with dynamic dims the starts and ends must be known at "
                    "compile time, computed from the input shapes or int32/"
                    "int64 tensors" +
                    ctx.getState().pinHint);
  size_t count = starts->elements.size();
  if (axes.empty())
    for (size_t i = 0; i < count; ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(count, 1);
  if (ends->elements.size() != count || axes.size() != count ||
      steps.size() != count)
    return ctx.fail("starts, ends, axes and steps differ in length");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value x = ctx.getInput(0);
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0)),
      sizes = getDimSizes(b, loc, x), strides(rank, b.getIndexAttr(1));
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  // `bound` normalized against `dim` and clamped into [0, dim].
  auto normalize = [&](OpFoldResult bound, Value dim) -> Value {
    Value v = getValueOrCreateConstantIndexOp(b, loc, bound);
    Value negative =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, v, index(0));
    v = arith::SelectOp::create(b, loc, negative,
                                arith::AddIOp::create(b, loc, v, dim), v);
    v = arith::MaxSIOp::create(b, loc, v, index(0));
    return arith::MinSIOp::create(b, loc, v, dim);
  };
  // Axes sliced backwards: sliced forwards from their lowest element, then
  // read in reverse.
  SmallVector<bool> reversed(rank, false);
  for (size_t i = 0; i < count; ++i) {
    FailureOr<int64_t> axis = ctx.getAxis(axes[i], rank);
    if (failed(axis))
      return failure();
    if (steps[i] == 0)
      return ctx.fail("a step is 0");
    OpFoldResult startBound = starts->elements[i], endBound = ends->elements[i];
    if (steps[i] < 0) {
      // start in [0, dim-1], end in [-1, dim-1] (ends before any start,
      // -INT64_MAX as exporters write `x[::-1]`, are -1).
      Value dim = getValueOrCreateConstantIndexOp(b, loc, sizes[*axis]);
      auto normalizeBackwards = [&](OpFoldResult bound, int64_t lowest) {
        Value v = getValueOrCreateConstantIndexOp(b, loc, bound);
        Value negative = arith::CmpIOp::create(
            b, loc, arith::CmpIPredicate::slt, v, index(0));
        v = arith::SelectOp::create(b, loc, negative,
                                    arith::AddIOp::create(b, loc, v, dim), v);
        v = arith::MaxSIOp::create(b, loc, v, index(lowest));
        return arith::MinSIOp::create(
            b, loc, v, arith::SubIOp::create(b, loc, dim, index(1)));
      };
      std::optional<int64_t> knownEnd = getConstantIntValue(endBound);
      Value start = normalizeBackwards(startBound, 0);
      Value end = knownEnd && *knownEnd <= -(int64_t(1) << 62)
                      ? index(-1)
                      : normalizeBackwards(endBound, -1);
      int64_t stride = -steps[i];
      Value span = arith::MaxSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, start, end), index(0));
      Value size = arith::CeilDivSIOp::create(b, loc, span, index(stride));
      // The lowest element read: start - (size - 1) * stride, or 0 when
      // nothing is.
      Value lowest = arith::SubIOp::create(
          b, loc, start,
          arith::MulIOp::create(b, loc,
                                arith::SubIOp::create(b, loc, size, index(1)),
                                index(stride)));
      Value empty = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                          size, index(0));
      offsets[*axis] = getAsOpFoldResult(
          arith::SelectOp::create(b, loc, empty, index(0), lowest).getResult());
      sizes[*axis] = getAsOpFoldResult(size);
      strides[*axis] = b.getIndexAttr(stride);
      reversed[*axis] = true;
      continue;
    }
    // Ends past any size (INT64_MAX, as exporters write `x[a:]`) are the
    // dim's end; not normalized, they would overflow.
    std::optional<int64_t> knownEnd = getConstantIntValue(endBound);
    Value dim = getValueOrCreateConstantIndexOp(b, loc, sizes[*axis]);
    Value start = normalize(startBound, dim);
    Value end = knownEnd && *knownEnd >= (int64_t(1) << 62)
                    ? dim
                    : normalize(endBound, dim);
    Value span = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, end, start), index(0));
    Value size = arith::CeilDivSIOp::create(b, loc, span, index(steps[i]));
    offsets[*axis] = getAsOpFoldResult(start);
    sizes[*axis] = getAsOpFoldResult(size);
    strides[*axis] = b.getIndexAttr(steps[i]);
  }
  SmallVector<int64_t> shape = getStaticShape(sizes);
  auto resultType = RankedTensorType::get(shape, inputType.getElementType());
  Value slice = tensor::ExtractSliceOp::create(b, loc, resultType, x, offsets,
                                               sizes, strides);
  if (llvm::none_of(reversed, [](bool r) { return r; }))
    return ctx.setOutput(0, slice);
  Value flipped = createIndexedGeneric(
      b, loc, {}, {}, resultType,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        SmallVector<Value> coords(ivs);
        for (int64_t d = 0; d < rank; ++d) {
          if (!reversed[d])
            continue;
          Value last = arith::SubIOp::create(
              nb, nl, getValueOrCreateConstantIndexOp(nb, nl, sizes[d]),
              arith::ConstantIndexOp::create(nb, nl, 1));
          coords[d] = arith::SubIOp::create(nb, nl, last, ivs[d]);
        }
        return tensor::ExtractOp::create(nb, nl, slice, coords).getResult();
      },
      sizes);
  return ctx.setOutput(0, flipped);
}

LogicalResult lowerSlice(NodeContext &ctx) {
  RankedTensorType inputType = ctx.getInputType(0);
  int64_t rank = inputType.getRank();
  SmallVector<int64_t> starts, ends, axes, steps;
  if (ctx.getOpset() >= 10 &&
      (ctx.findSymbolicInput(1) || ctx.findSymbolicInput(2)))
    return lowerDynamicSlice(ctx);
  if (ctx.getOpset() < 10) {
    starts = ctx.getIntsAttr("starts");
    ends = ctx.getIntsAttr("ends");
    axes = ctx.getIntsAttr("axes");
  } else {
    for (unsigned i = 1; i <= 4; ++i) {
      if (!ctx.hasInput(i) || ctx.getConstantInput(i))
        continue;
      // Starts and ends of a dynamic input, or of a result whose size
      // nothing declares, size the result: the host reads them back.
      // Otherwise the device reads them where it slices.
      bool constantAxesAndSteps =
          (!ctx.hasInput(3) || ctx.getConstantInput(3)) &&
          (!ctx.hasInput(4) || ctx.getConstantInput(4));
      bool staticResult = false;
      if (ctx.hasInferredOutputType(0)) {
        FailureOr<RankedTensorType> type = ctx.getOutputType(0);
        if (failed(type))
          return failure();
        staticResult = type->hasStaticShape();
      }
      if (constantAxesAndSteps &&
          (!inputType.hasStaticShape() || !staticResult))
        return lowerDynamicSlice(ctx);
      if (!inputType.hasStaticShape())
        return ctx.fail("with dynamic dims the axes and steps must be known "
                        "at compile time" +
                        ctx.getState().pinHint);
      return lowerRuntimeSlice(ctx);
    }
    auto s = ctx.getConstantInts(1), e = ctx.getConstantInts(2);
    if (failed(s) || failed(e))
      return failure();
    starts = *s;
    ends = *e;
    if (failed(getOptionalInts(ctx, 3, axes)) ||
        failed(getOptionalInts(ctx, 4, steps)))
      return failure();
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(i);
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return ctx.fail("starts, ends, axes and steps differ in length");
  SmallVector<int64_t> offsets(rank, 0), sizes(inputType.getShape()),
      strides(rank, 1);
  SmallVector<int64_t> reversed;
  for (size_t i = 0; i < axes.size(); ++i) {
    FailureOr<int64_t> axisOr = ctx.getAxis(axes[i], rank);
    if (failed(axisOr))
      return failure();
    int64_t axis = *axisOr;
    int64_t dim = inputType.getDimSize(axis);
    int64_t step = steps[i];
    if (step == 0)
      return ctx.fail("slice step 0");
    if (ShapedType::isDynamic(dim)) {
      // All of a dynamic dim (`x[:, ...]`) stays as it is.
      if (starts[i] == 0 && step == 1 && ends[i] >= (int64_t(1) << 62))
        continue;
      return lowerDynamicSlice(ctx);
    }
    int64_t start = starts[i] < 0 ? starts[i] + dim : starts[i];
    int64_t end = ends[i] < 0 ? ends[i] + dim : ends[i];
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
    }
    int64_t count =
        step > 0 ? std::max<int64_t>(0, (end - start + step - 1) / step)
                 : std::max<int64_t>(0, (start - end - step - 1) / -step);
    sizes[axis] = count;
    strides[axis] = std::abs(step);
    offsets[axis] = step > 0 ? start : start + (count - 1) * step;
    if (step < 0 && count > 1)
      reversed.push_back(axis);
    if (count == 0)
      offsets[axis] = 0;
  }
  FailureOr<RankedTensorType> type = ctx.getOutputTypeOr(
      0, RankedTensorType::get(sizes, inputType.getElementType()));
  if (failed(type))
    return failure();
  if (failed(verifyCompatibleShape(sizes, type->getShape())))
    return ctx.emitError() << "slice computes a shape different from the "
                              "inferred "
                           << *type;
  OpBuilder &b = ctx.getBuilder();
  // Slices of small compile-time values are shape computations (a pads
  // table reversed row by row): fold them.
  if (std::optional<DenseElementsAttr> c = ctx.getConstantInput(0);
      c && c->getNumElements() <= 4096) {
    auto values = llvm::to_vector(c->getValues<Attribute>());
    SmallVector<int64_t> sourceStrides = computeStrides(inputType.getShape());
    SmallVector<int64_t> outputStrides = computeStrides(sizes);
    SmallVector<Attribute> sliced(type->getNumElements());
    for (int64_t index = 0; index < type->getNumElements(); ++index) {
      SmallVector<int64_t> position = delinearize(index, outputStrides);
      int64_t source = 0;
      for (int64_t dim = 0; dim < rank; ++dim) {
        int64_t at = llvm::is_contained(reversed, dim)
                         ? sizes[dim] - 1 - position[dim]
                         : position[dim];
        source += (offsets[dim] + at * strides[dim]) * sourceStrides[dim];
      }
      sliced[index] = values[source];
    }
    return ctx.setConstantOutput(0, DenseElementsAttr::get(*type, sliced));
  }
  if (type->hasStaticShape() && type->getNumElements() == 0)
    return ctx.setOutput(0, createZeroElements(b, ctx.getLoc(), *type));
  // Dynamic dims are taken whole.
  SmallVector<OpFoldResult> mixedSizes =
      getDimSizes(b, ctx.getLoc(), ctx.getInput(0));
  for (int64_t dim = 0; dim < rank; ++dim)
    if (!ShapedType::isDynamic(sizes[dim]))
      mixedSizes[dim] = b.getIndexAttr(sizes[dim]);
  Value result = tensor::ExtractSliceOp::create(
      b, ctx.getLoc(), ctx.getInput(0),
      getAsIndexOpFoldResult(b.getContext(), offsets), mixedSizes,
      getAsIndexOpFoldResult(b.getContext(), strides));
  for (int64_t axis : reversed)
    result = createReverse(b, ctx.getLoc(), result, axis);
  return ctx.setOutput(0, result);
}

LogicalResult lowerExpand(NodeContext &ctx) {
  if (ctx.hasDynamicInput())
    return lowerDynamicExpand(ctx);
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  return ctx.setOutput(0, createBroadcast(ctx.getBuilder(), ctx.getLoc(),
                                          ctx.getInput(0), type->getShape()));
}

// Tile of a dynamically shaped input by constant repeats: each result dim
// is the input's times its repeat, each element read at the index modulo
// the input's dim.
LogicalResult lowerDynamicTile(NodeContext &ctx) {
  RankedTensorType inputType = ctx.getInputType(0);
  int64_t rank = inputType.getRank();
  std::optional<DenseElementsAttr> repeatsAttr = ctx.getConstantInput(1);
  if (!repeatsAttr || repeatsAttr->getNumElements() != rank)
    return ctx.fail("with dynamic dims the repeats must be constants, one "
                    "per dim" +
                    ctx.getState().pinHint);
  SmallVector<int64_t> repeats;
  for (const APInt &v : repeatsAttr->getValues<APInt>())
    repeats.push_back(v.getSExtValue());
  if (llvm::any_of(repeats, [](int64_t r) { return r < 0; }))
    return ctx.fail("repeats must not be negative");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value x = ctx.getInput(0);
  SmallVector<OpFoldResult> inSizes = getDimSizes(b, loc, x), sizes;
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (std::optional<int64_t> known = getConstantIntValue(inSizes[d])) {
      sizes.push_back(b.getIndexAttr(*known * repeats[d]));
      shape.push_back(*known * repeats[d]);
      continue;
    }
    sizes.push_back(arith::MulIOp::create(
                        b, loc, cast<Value>(inSizes[d]),
                        arith::ConstantIndexOp::create(b, loc, repeats[d]))
                        .getResult());
    shape.push_back(ShapedType::kDynamic);
  }
  auto type = RankedTensorType::get(shape, inputType.getElementType());
  Value result = createIndexedGeneric(
      b, loc, {}, {}, type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        SmallVector<Value> coords(ivs);
        for (int64_t d = 0; d < rank; ++d)
          if (repeats[d] > 1)
            coords[d] = arith::RemUIOp::create(
                nb, nl, ivs[d],
                getValueOrCreateConstantIndexOp(nb, nl, inSizes[d]));
        return tensor::ExtractOp::create(nb, nl, x, coords).getResult();
      },
      sizes);
  return ctx.setOutput(0, result);
}

LogicalResult lowerTile(NodeContext &ctx) {
  if (!ctx.getInputType(0).hasStaticShape())
    return lowerDynamicTile(ctx);
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  // Tile = broadcast to [r0, d0, r1, d1, ...] then reshape.
  RankedTensorType inputType = ctx.getInputType(0);
  SmallVector<int64_t> interleaved;
  for (int64_t i = 0; i < inputType.getRank(); ++i) {
    interleaved.push_back(type->getDimSize(i) /
                          std::max<int64_t>(1, inputType.getDimSize(i)));
    interleaved.push_back(inputType.getDimSize(i));
  }
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  SmallVector<int64_t> withOnes;
  for (int64_t d : inputType.getShape()) {
    withOnes.push_back(1);
    withOnes.push_back(d);
  }
  Value x = createReshape(b, loc, ctx.getInput(0), withOnes);
  Value tiled = createBroadcast(b, loc, x, interleaved);
  return ctx.setOutput(0, createReshape(b, loc, tiled, type->getShape()));
}

LogicalResult lowerSplit(NodeContext &ctx) {
  RankedTensorType inputType = ctx.getInputType(0);
  FailureOr<int64_t> axisOr =
      ctx.getAxis(ctx.getIntAttr("axis", 0), inputType.getRank());
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  OpBuilder &b = ctx.getBuilder();
  if (inputType.isDynamicDim(axis))
    return ctx.fail("axis " + Twine(axis) +
                    " is dynamic; splitting it is not supported yet" +
                    ctx.getState().pinHint);
  // The other dims, dynamic ones included, are the input's.
  SmallVector<OpFoldResult> sizes =
      getDimSizes(b, ctx.getLoc(), ctx.getInput(0));
  int64_t offset = 0;
  for (unsigned i = 0; i < ctx.getNumOutputs(); ++i) {
    FailureOr<RankedTensorType> type = ctx.getOutputType(i);
    if (failed(type))
      return failure();
    if (type->getRank() != inputType.getRank())
      return ctx.fail("output " + Twine(i) + " has rank " +
                      Twine(type->getRank()) + ", the input " +
                      Twine(inputType.getRank()));
    SmallVector<int64_t> offsets(inputType.getRank(), 0);
    offsets[axis] = offset;
    SmallVector<int64_t> strides(inputType.getRank(), 1);
    if (type->hasStaticShape() && type->getNumElements() == 0) {
      if (failed(ctx.setOutput(i, createZeroElements(b, ctx.getLoc(), *type))))
        return failure();
      continue;
    }
    if (type->isDynamicDim(axis))
      return ctx.fail("output " + Twine(i) +
                      " has a dynamic size along the "
                      "axis");
    sizes[axis] = b.getIndexAttr(type->getDimSize(axis));
    Value part = tensor::ExtractSliceOp::create(
        b, ctx.getLoc(), ctx.getInput(0),
        getAsIndexOpFoldResult(b.getContext(), offsets), sizes,
        getAsIndexOpFoldResult(b.getContext(), strides));
    offset += type->getDimSize(axis);
    if (failed(ctx.setOutput(i, part)))
      return failure();
  }
  return success();
}

// DepthToSpace and SpaceToDepth over a dynamic batch and image: the same
// reshapes, sized at run time (a height or width that is not a multiple of
// the block fails the host's reshape check); the channels stay static.
LogicalResult lowerDynamicDepthSpace(NodeContext &ctx, bool toSpace,
                                     int64_t bs) {
  RankedTensorType xt = ctx.getInputType(0);
  if (xt.isDynamicDim(1))
    return ctx.fail("dim 1 (the channels) of input '" + ctx.getNode().input(0) +
                    "' is dynamic" + ctx.getState().pinHint);
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value x = ctx.getInput(0);
  SmallVector<OpFoldResult> dims = getDimSizes(b, loc, x);
  OpFoldResult n = dims[0], h = dims[2], w = dims[3];
  int64_t c = xt.getDimSize(1);
  auto index = [&](int64_t v) { return b.getIndexAttr(v); };
  auto scaled = [&](OpFoldResult size, int64_t factor,
                    bool divide) -> OpFoldResult {
    if (std::optional<int64_t> known = getConstantIntValue(size))
      return index(divide ? *known / factor : *known * factor);
    Value f = arith::ConstantIndexOp::create(b, loc, factor);
    if (divide)
      return arith::DivUIOp::create(b, loc, cast<Value>(size), f).getResult();
    return arith::MulIOp::create(b, loc, cast<Value>(size), f).getResult();
  };
  SmallVector<OpFoldResult> split, result;
  SmallVector<int64_t> perm;
  if (toSpace) {
    if (c % (bs * bs) != 0)
      return ctx.fail("channels must be a multiple of blocksize^2");
    std::string mode = ctx.getStringAttr("mode", "DCR");
    if (mode != "DCR" && mode != "CRD")
      return ctx.fail("unknown mode '" + mode + "'");
    split = mode == "DCR"
                ? SmallVector<OpFoldResult>{n,         index(bs),
                                            index(bs), index(c / (bs * bs)),
                                            h,         w}
                : SmallVector<OpFoldResult>{
                      n, index(c / (bs * bs)), index(bs), index(bs), h, w};
    perm = mode == "DCR" ? SmallVector<int64_t>{0, 3, 4, 1, 5, 2}
                         : SmallVector<int64_t>{0, 1, 4, 2, 5, 3};
    result = {n, index(c / (bs * bs)), scaled(h, bs, false),
              scaled(w, bs, false)};
  } else {
    OpFoldResult hb = scaled(h, bs, true), wb = scaled(w, bs, true);
    split = {n, index(c), hb, index(bs), wb, index(bs)};
    perm = {0, 3, 5, 1, 2, 4};
    result = {n, index(c * bs * bs), hb, wb};
  }
  x = createDynamicReshape(b, loc, x, split);
  x = createTranspose(b, loc, x, perm);
  return ctx.setOutput(0, createDynamicReshape(b, loc, x, result));
}

// DepthToSpace and SpaceToDepth are a reshape, a transpose and a reshape.
LogicalResult lowerDepthSpace(NodeContext &ctx, bool toSpace) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  RankedTensorType xt = ctx.getInputType(0);
  if (xt.getRank() != 4)
    return ctx.fail("input must be 4-D (NCHW)");
  int64_t bs = ctx.getIntAttr("blocksize", 0);
  if (bs <= 0)
    return ctx.fail("blocksize must be positive");
  if (!xt.hasStaticShape())
    return lowerDynamicDepthSpace(ctx, toSpace, bs);
  int64_t n = xt.getDimSize(0), c = xt.getDimSize(1), h = xt.getDimSize(2),
          w = xt.getDimSize(3);
  SmallVector<int64_t> split, perm;
  if (toSpace) {
    if (c % (bs * bs) != 0)
      return ctx.fail("channels must be a multiple of blocksize^2");
    std::string mode = ctx.getStringAttr("mode", "DCR");
    if (mode == "DCR") {
      split = {n, bs, bs, c / (bs * bs), h, w};
      perm = {0, 3, 4, 1, 5, 2};
    } else if (mode == "CRD") {
      split = {n, c / (bs * bs), bs, bs, h, w};
      perm = {0, 1, 4, 2, 5, 3};
    } else {
      return ctx.fail("unknown mode '" + mode + "'");
    }
  } else {
    if (h % bs != 0 || w % bs != 0)
      return ctx.fail("height and width must be multiples of blocksize");
    split = {n, c, h / bs, bs, w / bs, bs};
    perm = {0, 3, 5, 1, 2, 4};
  }
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value x = createReshape(b, loc, ctx.getInput(0), split);
  x = createTranspose(b, loc, x, perm);
  return ctx.setOutput(0, createReshape(b, loc, x, type->getShape()));
}

} // namespace

void addShapeLowerings(LoweringTable &t) {
  t["Reshape"] = lowerReshapeLike;
  t["Flatten"] = lowerReshapeLike;
  t["Squeeze"] = lowerReshapeLike;
  t["Unsqueeze"] = lowerReshapeLike;
  t["Shape"] = lowerShape;
  t["Size"] = lowerSize;
  t["Constant"] = lowerConstant;
  t["ConstantOfShape"] = lowerConstantOfShape;
  t["Transpose"] = lowerTranspose;
  t["Concat"] = lowerConcat;
  t["Slice"] = lowerSlice;
  t["Expand"] = lowerExpand;
  t["Tile"] = lowerTile;
  t["Split"] = lowerSplit;
  t["DepthToSpace"] = [](NodeContext &ctx) {
    return lowerDepthSpace(ctx, /*toSpace=*/true);
  };
  t["SpaceToDepth"] = [](NodeContext &ctx) {
    return lowerDepthSpace(ctx, /*toSpace=*/false);
  };
}

} // namespace strata::onnx_importer
