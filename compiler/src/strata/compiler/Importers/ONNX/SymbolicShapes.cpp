//===- SymbolicShapes.cpp - shape computations on dynamic dims ------------===//
#include "strata/compiler/Importers/ONNX/SymbolicShapes.h"

#include "strata/compiler/Importers/ONNX/Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

// Integer arithmetic on sizes, folded when both are known.
OpFoldResult combine(OpBuilder &b, Location loc, StringRef op, OpFoldResult x,
                     OpFoldResult y) {
  std::optional<int64_t> cx = getConstantIntValue(x),
                         cy = getConstantIntValue(y);
  if (cx && cy) {
    if (op == "Add")
      return b.getIndexAttr(*cx + *cy);
    if (op == "Sub")
      return b.getIndexAttr(*cx - *cy);
    if (op == "Mul")
      return b.getIndexAttr(*cx * *cy);
    if (*cy == 0)
      return b.getIndexAttr(0);
    if (op == "Mod") // the divisor's sign, as Python's %
      return b.getIndexAttr(((*cx % *cy) + *cy) % *cy);
    return b.getIndexAttr(*cx / *cy);
  }
  if (op == "Mul" && cx == 1)
    return y;
  if ((op == "Mul" || op == "Div") && cy == 1)
    return x;
  Value vx = getValueOrCreateConstantIndexOp(b, loc, x);
  Value vy = getValueOrCreateConstantIndexOp(b, loc, y);
  if (op == "Add")
    return arith::AddIOp::create(b, loc, vx, vy).getResult();
  if (op == "Sub")
    return arith::SubIOp::create(b, loc, vx, vy).getResult();
  if (op == "Mul")
    return arith::MulIOp::create(b, loc, vx, vy).getResult();
  if (op == "Mod") {
    Value quotient = arith::FloorDivSIOp::create(b, loc, vx, vy);
    return arith::SubIOp::create(b, loc, vx,
                                 arith::MulIOp::create(b, loc, quotient, vy))
        .getResult();
  }
  return arith::DivSIOp::create(b, loc, vx, vy).getResult();
}

// Shape and Size of a dynamically shaped value.
std::optional<SymbolicShape> foldShapeOf(NodeContext &ctx) {
  RankedTensorType type = ctx.getInputType(0);
  if (!type || type.hasStaticShape())
    return std::nullopt;
  OpBuilder &b = ctx.getBuilder();
  SmallVector<OpFoldResult> dims =
      getDimSizes(b, ctx.getLoc(), ctx.getInput(0));
  SymbolicShape shape;
  if (ctx.getNode().op_type() == "Size") {
    shape.elements.push_back(getSizeProduct(b, ctx.getLoc(), dims));
    shape.scalar = true;
    return shape;
  }
  int64_t rank = type.getRank();
  int64_t start = ctx.getIntAttr("start", 0);
  int64_t end = ctx.getIntAttr("end", rank);
  start = std::clamp<int64_t>(normalizeAxis(start, rank), 0, rank);
  end = std::clamp<int64_t>(normalizeAxis(end, rank), 0, rank);
  for (int64_t i = start; i < end; ++i)
    shape.elements.push_back(dims[i]);
  return shape;
}

// The integers of constant input `index` (rank 0 or 1), if it is one.
std::optional<SmallVector<int64_t>> getInts(NodeContext &ctx, unsigned index) {
  std::optional<DenseElementsAttr> value = ctx.getConstantInput(index);
  if (!value || !isa<IntegerType>(value->getElementType()) ||
      value->getType().getRank() > 1)
    return std::nullopt;
  SmallVector<int64_t> ints;
  for (const APInt &v : value->getValues<APInt>())
    ints.push_back(v.getSExtValue());
  return ints;
}

std::optional<SymbolicShape> foldGather(NodeContext &ctx,
                                        const SymbolicShape &data) {
  std::optional<DenseElementsAttr> indices = ctx.getConstantInput(1);
  if (data.scalar || ctx.getIntAttr("axis", 0) != 0 || !indices ||
      indices->getType().getRank() > 1 ||
      !isa<IntegerType>(indices->getElementType()))
    return std::nullopt;
  SymbolicShape shape;
  shape.scalar = indices->getType().getRank() == 0;
  int64_t size = data.elements.size();
  for (const APInt &v : indices->getValues<APInt>()) {
    int64_t i = v.getSExtValue();
    if (i < -size || i >= size)
      return std::nullopt; // the lowering reports the index
    shape.elements.push_back(data.elements[i < 0 ? i + size : i]);
  }
  return shape;
}

// The shape of a symbolic shape as a tensor.
SmallVector<int64_t> getTensorShape(const SymbolicShape &shape) {
  if (!shape.dims.empty())
    return shape.dims;
  if (shape.scalar)
    return {};
  return {static_cast<int64_t>(shape.elements.size())};
}

// `shape` given the tensor shape `dims` (rank 0 a scalar, rank 1 a list).
SymbolicShape withTensorShape(SymbolicShape shape, ArrayRef<int64_t> dims) {
  shape.scalar = dims.empty();
  shape.dims.clear();
  if (dims.size() > 1)
    shape.dims.assign(dims.begin(), dims.end());
  return shape;
}

std::optional<SymbolicShape> foldSlice(NodeContext &ctx,
                                       const SymbolicShape &data) {
  if (data.scalar)
    return std::nullopt;
  std::optional<SmallVector<int64_t>> starts, ends, axes, steps;
  if (ctx.getOpset() < 10) {
    starts = ctx.getIntsAttr("starts");
    ends = ctx.getIntsAttr("ends");
    if (ctx.hasAttr("axes"))
      axes = ctx.getIntsAttr("axes");
  } else {
    starts = getInts(ctx, 1);
    ends = getInts(ctx, 2);
    if (ctx.hasInput(3))
      axes = getInts(ctx, 3);
    if (ctx.hasInput(4))
      steps = getInts(ctx, 4);
    if ((ctx.hasInput(3) && !axes) || (ctx.hasInput(4) && !steps))
      return std::nullopt;
  }
  // Along the first dim: of a list, its elements; of a rank-2 or higher
  // shape, its rows.
  SmallVector<int64_t> dims = getTensorShape(data);
  int64_t rank = dims.size();
  if (!starts || !ends || starts->size() != 1 || ends->size() != 1 ||
      (axes &&
       (axes->size() != 1 || ((*axes)[0] != 0 && (*axes)[0] != -rank))) ||
      (steps && steps->size() != 1))
    return std::nullopt;
  int64_t size = dims[0];
  int64_t row = data.elements.size() / std::max<int64_t>(size, 1);
  int64_t step = steps ? (*steps)[0] : 1;
  if (step == 0)
    return std::nullopt;
  auto clampIndex = [&](int64_t i, bool forward) {
    if (i < 0)
      i += size;
    return forward ? std::clamp<int64_t>(i, 0, size)
                   : std::clamp<int64_t>(i, -1, size - 1);
  };
  int64_t start = clampIndex((*starts)[0], step > 0);
  int64_t end = clampIndex((*ends)[0], step > 0);
  SymbolicShape shape;
  int64_t rows = 0;
  for (int64_t i = start; step > 0 ? i < end : i > end; i += step, ++rows)
    for (int64_t j = 0; j < row; ++j)
      shape.elements.push_back(data.elements[i * row + j]);
  dims[0] = rows;
  return withTensorShape(shape, dims);
}

std::optional<SymbolicShape> foldConcat(NodeContext &ctx) {
  SymbolicShape shape;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i) {
    std::optional<SymbolicShape> part = getSymbolicInput(ctx, i);
    if (!part || part->scalar)
      return std::nullopt;
    llvm::append_range(shape.elements, part->elements);
  }
  return shape;
}

std::optional<SymbolicShape> foldArithmetic(NodeContext &ctx) {
  std::optional<SymbolicShape> x = getSymbolicInput(ctx, 0);
  std::optional<SymbolicShape> y = getSymbolicInput(ctx, 1);
  if (!x || !y)
    return std::nullopt;
  size_t nx = x->elements.size(), ny = y->elements.size();
  if (nx != ny && nx != 1 && ny != 1)
    return std::nullopt;
  SymbolicShape shape;
  shape.scalar = x->scalar && y->scalar;
  StringRef op = ctx.getNode().op_type();
  for (size_t i = 0; i < std::max(nx, ny); ++i)
    shape.elements.push_back(combine(ctx.getBuilder(), ctx.getLoc(), op,
                                     x->elements[nx == 1 ? 0 : i],
                                     y->elements[ny == 1 ? 0 : i]));
  return shape;
}

// Where of a compile-time condition between shapes.
std::optional<SymbolicShape> foldWhere(NodeContext &ctx) {
  std::optional<DenseElementsAttr> cond = ctx.getConstantInput(0);
  std::optional<SymbolicShape> x = getSymbolicInput(ctx, 1);
  std::optional<SymbolicShape> y = getSymbolicInput(ctx, 2);
  if (!cond || !cond->getElementType().isInteger(1) ||
      cond->getType().getRank() > 1 || !x || !y)
    return std::nullopt;
  auto picks = llvm::to_vector(cond->getValues<bool>());
  size_t n = std::max({picks.size(), x->elements.size(), y->elements.size()});
  for (size_t size : {picks.size(), x->elements.size(), y->elements.size()})
    if (size != n && size != 1)
      return std::nullopt;
  SymbolicShape shape;
  shape.scalar = cond->getType().getRank() == 0 && x->scalar && y->scalar;
  for (size_t i = 0; i < n; ++i) {
    bool pick = picks[picks.size() == 1 ? 0 : i];
    const SymbolicShape &from = pick ? *x : *y;
    shape.elements.push_back(from.elements[from.elements.size() == 1 ? 0 : i]);
  }
  return shape;
}

// Reshape to a constant shape (0 copies the input's dim, -1 takes the
// rest): the same elements, another tensor shape.
std::optional<SymbolicShape> foldReshape(NodeContext &ctx,
                                         const SymbolicShape &input) {
  std::optional<SmallVector<int64_t>> target = getInts(ctx, 1);
  if (!target)
    return std::nullopt;
  SmallVector<int64_t> from = getTensorShape(input);
  int64_t count = input.elements.size(), known = 1, inferred = -1;
  SmallVector<int64_t> dims(*target);
  for (auto [i, d] : llvm::enumerate(dims)) {
    if (d == 0 && ctx.getIntAttr("allowzero", 0) == 0) {
      if (i >= from.size())
        return std::nullopt;
      d = from[i];
    }
    if (d == -1) {
      if (inferred >= 0)
        return std::nullopt;
      inferred = i;
      continue;
    }
    if (d < 0)
      return std::nullopt;
    known *= d;
  }
  if (inferred >= 0) {
    if (known == 0 || count % known != 0)
      return std::nullopt;
    dims[inferred] = count / known;
    known = count;
  }
  if (known != count)
    return std::nullopt; // the lowering reports the mismatch
  return withTensorShape(input, dims);
}

// Transpose of a rank-2 shape.
std::optional<SymbolicShape> foldTranspose(NodeContext &ctx,
                                           const SymbolicShape &input) {
  SmallVector<int64_t> perm = ctx.getIntsAttr("perm");
  if (input.dims.size() != 2 ||
      !(perm.empty() || perm == SmallVector<int64_t>{1, 0}))
    return std::nullopt;
  int64_t rows = input.dims[0], cols = input.dims[1];
  SymbolicShape shape;
  shape.dims = {cols, rows};
  for (int64_t c = 0; c < cols; ++c)
    for (int64_t r = 0; r < rows; ++r)
      shape.elements.push_back(input.elements[r * cols + c]);
  return shape;
}

std::optional<SymbolicShape> foldSymbolicNode(NodeContext &ctx) {
  StringRef op = ctx.getNode().op_type();
  if (op == "Shape" || op == "Size")
    return foldShapeOf(ctx);
  const SymbolicShape *input = ctx.findSymbolicInput(0);
  bool anySymbolic = input;
  for (unsigned i = 1; i < ctx.getNumInputs(); ++i)
    anySymbolic = anySymbolic || ctx.findSymbolicInput(i);
  if (!anySymbolic)
    return std::nullopt;
  // Of a shape of rank 2 or more: only what reorders its elements.
  if (input && !input->dims.empty()) {
    if (op == "Reshape")
      return foldReshape(ctx, *input);
    if (op == "Transpose")
      return foldTranspose(ctx, *input);
    if (op == "Slice")
      return foldSlice(ctx, *input);
    if (op != "Identity" && op != "Cast")
      return std::nullopt;
  }
  if (op == "Identity")
    return *input;
  if (op == "Cast") {
    int64_t to = ctx.getIntAttr("to", 0);
    if (to == onnx::TensorProto::INT64 || to == onnx::TensorProto::INT32)
      return *input;
    return std::nullopt;
  }
  if (op == "Gather" && input)
    return foldGather(ctx, *input);
  if (op == "Slice" && input)
    return foldSlice(ctx, *input);
  if (op == "Concat")
    return foldConcat(ctx);
  if (op == "Unsqueeze" && input && input->scalar) {
    SymbolicShape shape = *input;
    shape.scalar = false;
    return shape;
  }
  if (op == "Squeeze" && input && !input->scalar &&
      input->elements.size() == 1) {
    SymbolicShape shape = *input;
    shape.scalar = true;
    return shape;
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" ||
      (op == "Mod" && ctx.getIntAttr("fmod", 0) == 0))
    return foldArithmetic(ctx);
  if (op == "Reshape" && input && !input->scalar)
    return foldReshape(ctx, *input);
  if (op == "Where")
    return foldWhere(ctx);
  return std::nullopt;
}

// Equal of shapes whose elements compare the same whatever the run-time
// sizes are (a size against -1, say, as torch's `expand(n, -1)` writes),
// as a compile-time bool tensor. Returns false when it does not apply.
bool tryFoldSymbolicEqual(NodeContext &ctx, LogicalResult &result) {
  if (ctx.getNode().op_type() != "Equal" ||
      (!ctx.findSymbolicInput(0) && !ctx.findSymbolicInput(1)))
    return false;
  std::optional<SymbolicShape> x = getSymbolicInput(ctx, 0);
  std::optional<SymbolicShape> y = getSymbolicInput(ctx, 1);
  if (!x || !y)
    return false;
  size_t nx = x->elements.size(), ny = y->elements.size();
  if (nx != ny && nx != 1 && ny != 1)
    return false;
  SmallVector<bool> equal;
  for (size_t i = 0; i < std::max(nx, ny); ++i) {
    OpFoldResult a = x->elements[nx == 1 ? 0 : i];
    OpFoldResult b = y->elements[ny == 1 ? 0 : i];
    std::optional<int64_t> ca = getConstantIntValue(a),
                           cb = getConstantIntValue(b);
    if (isSameSize(a, b))
      equal.push_back(true);
    else if ((ca && cb) || (ca && *ca < 0) || (cb && *cb < 0))
      equal.push_back(false); // sizes are never negative
    else
      return false;
  }
  SmallVector<int64_t> shape;
  if (!(x->scalar && y->scalar))
    shape.push_back(equal.size());
  auto type = RankedTensorType::get(shape, ctx.getBuilder().getI1Type());
  result = ctx.setConstantOutput(0, DenseElementsAttr::get(type, equal));
  return true;
}

} // namespace

std::optional<SymbolicShape> getSymbolicInput(NodeContext &ctx,
                                              unsigned index) {
  if (const SymbolicShape *shape = ctx.findSymbolicInput(index)) {
    if (!shape->dims.empty())
      return std::nullopt; // a list of sizes is 1-D
    return *shape;
  }
  std::optional<DenseElementsAttr> value = ctx.getConstantInput(index);
  if (!value || !isa<IntegerType>(value->getElementType()) ||
      value->getType().getRank() > 1 || value->getNumElements() > 64)
    return std::nullopt;
  SymbolicShape shape;
  shape.scalar = value->getType().getRank() == 0;
  for (const APInt &v : value->getValues<APInt>())
    shape.elements.push_back(ctx.getBuilder().getIndexAttr(v.getSExtValue()));
  return shape;
}

std::optional<SymbolicShape> getSymbolicOrReadBackInput(NodeContext &ctx,
                                                        unsigned index) {
  if (std::optional<SymbolicShape> shape = getSymbolicInput(ctx, index))
    return shape;
  if (!ctx.hasInput(index) || ctx.isSequenceInput(index))
    return std::nullopt;
  RankedTensorType type = ctx.getInputType(index);
  // The host reads i32 and i64 elements (ONNX's pads and slice bounds).
  if (!type.getElementType().isInteger(32) &&
      !type.getElementType().isInteger(64))
    return std::nullopt;
  if (type.getRank() > 1 || !type.hasStaticShape() ||
      type.getNumElements() > 64)
    return std::nullopt;
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value input = ctx.getInput(index);
  SymbolicShape shape;
  shape.scalar = type.getRank() == 0;
  for (int64_t i = 0; i < type.getNumElements(); ++i) {
    SmallVector<Value> at;
    if (!shape.scalar)
      at.push_back(arith::ConstantIndexOp::create(b, loc, i));
    Value element = tensor::ExtractOp::create(b, loc, input, at);
    shape.elements.push_back(
        arith::IndexCastOp::create(b, loc, b.getIndexType(), element)
            .getResult());
  }
  return shape;
}

bool tryFoldSymbolicShape(NodeContext &ctx, LogicalResult &result) {
  if (tryFoldSymbolicEqual(ctx, result))
    return true;
  std::optional<SymbolicShape> shape = foldSymbolicNode(ctx);
  if (!shape)
    return false;
  result = ctx.setSymbolicOutput(0, std::move(*shape));
  return true;
}

namespace {

// The result sizes of a Reshape: 0 copies the input's dim (unless
// allowzero), -1 takes what the others leave. Where the dynamic dims on both
// sides cancel, -1 is static.
FailureOr<SmallVector<OpFoldResult>> getReshapeSizes(NodeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  std::optional<SymbolicShape> target = getSymbolicInput(ctx, 1);
  if (!target || target->scalar)
    return ctx.fail("the shape input must be known at compile time or "
                    "computed from the input shapes (Shape, Gather, Concat, "
                    "...)");
  SmallVector<OpFoldResult> inputSizes = getDimSizes(b, loc, ctx.getInput(0));
  bool allowZero = ctx.getIntAttr("allowzero", 0) != 0;
  SmallVector<OpFoldResult> sizes;
  int64_t inferred = -1;
  for (auto [i, element] : llvm::enumerate(target->elements)) {
    std::optional<int64_t> c = getConstantIntValue(element);
    if (c == 0 && !allowZero) {
      if (i >= inputSizes.size())
        return ctx.fail("shape element " + Twine(i) +
                        " copies a dim the input does not have");
      sizes.push_back(inputSizes[i]);
      continue;
    }
    if (c == -1) {
      if (inferred >= 0)
        return ctx.fail("the shape has more than one -1");
      inferred = i;
    } else if (c && *c < 0) {
      return ctx.fail("shape element " + Twine(i) + " is " + Twine(*c));
    }
    sizes.push_back(element);
  }
  if (inferred < 0)
    return sizes;
  // Cancel what appears on both sides; what is left divides.
  SmallVector<OpFoldResult> numerator(inputSizes), denominator;
  for (auto [i, size] : llvm::enumerate(sizes)) {
    if (static_cast<int64_t>(i) == inferred)
      continue;
    auto same = llvm::find_if(numerator, [&](OpFoldResult x) {
      return !getConstantIntValue(size) && isSameSize(x, size);
    });
    if (same != numerator.end())
      numerator.erase(same);
    else
      denominator.push_back(size);
  }
  OpFoldResult num = getSizeProduct(b, loc, numerator);
  OpFoldResult den = getSizeProduct(b, loc, denominator);
  std::optional<int64_t> cn = getConstantIntValue(num),
                         cd = getConstantIntValue(den);
  if (cn && cd && (*cd == 0 || *cn % *cd != 0))
    return ctx.fail("cannot infer the -1 of the shape: " + Twine(*cn) +
                    " elements do not divide by " + Twine(*cd));
  sizes[inferred] = combine(b, loc, "Div", num, den);
  return sizes;
}

// Squeeze and Unsqueeze: the input's dims with the size-1 dims named by the
// axes removed or inserted. A dynamic dim Squeeze names must be 1 at the
// call (a host assert): `input` becomes the input with that dim cast to 1.
FailureOr<SmallVector<OpFoldResult>> getSqueezeSizes(NodeContext &ctx,
                                                     Value &input) {
  OpBuilder &b = ctx.getBuilder();
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> axes = ctx.getIntsAttr("axes");
  if (ctx.getOpset() >= 13 && ctx.hasInput(1)) {
    std::optional<SmallVector<int64_t>> known = getInts(ctx, 1);
    if (!known)
      return ctx.fail("the axes must be known at compile time");
    axes = *known;
  }
  SmallVector<OpFoldResult> inputSizes = getDimSizes(b, ctx.getLoc(), input);
  bool squeeze = ctx.getNode().op_type() == "Squeeze";
  int64_t rank = squeeze ? type.getRank() : type.getRank() + axes.size();
  llvm::SmallDenseSet<int64_t> named;
  for (int64_t axis : axes) {
    FailureOr<int64_t> normalized = ctx.getAxis(axis, rank);
    if (failed(normalized))
      return failure();
    named.insert(*normalized);
  }
  SmallVector<OpFoldResult> sizes;
  if (!squeeze) {
    auto next = inputSizes.begin();
    for (int64_t i = 0; i < rank; ++i)
      sizes.push_back(named.contains(i) ? b.getIndexAttr(1) : *next++);
    return sizes;
  }
  SmallVector<int64_t> castShape(type.getShape());
  for (int64_t i = 0; i < rank; ++i) {
    bool drop = axes.empty() ? type.getDimSize(i) == 1 : named.contains(i);
    if (drop && type.isDynamicDim(i)) {
      if (failed(ctx.checkSizes(inputSizes[i], b.getIndexAttr(1),
                                "squeezed axis " + Twine(i) + " is not 1")))
        return failure();
      castShape[i] = 1;
    } else if (drop && type.getDimSize(i) != 1) {
      return ctx.fail("axis " + Twine(i) + " has size " +
                      Twine(type.getDimSize(i)) + ", not 1");
    }
    if (!drop)
      sizes.push_back(inputSizes[i]);
  }
  if (castShape != type.getShape())
    input =
        tensor::CastOp::create(b, ctx.getLoc(), type.clone(castShape), input);
  return sizes;
}

} // namespace

LogicalResult lowerDynamicReshapeLike(NodeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value input = ctx.getInput(0);
  auto type = cast<RankedTensorType>(input.getType());
  StringRef op = ctx.getNode().op_type();
  FailureOr<SmallVector<OpFoldResult>> sizes;
  if (op == "Reshape") {
    sizes = getReshapeSizes(ctx);
  } else if (op == "Flatten") {
    int64_t rank = type.getRank();
    int64_t axis = ctx.getIntAttr("axis", 1);
    if (axis < -rank || axis > rank)
      return ctx.fail("axis " + Twine(axis) + " is out of range for rank " +
                      Twine(rank));
    axis = axis < 0 ? axis + rank : axis;
    SmallVector<OpFoldResult> dims = getDimSizes(b, loc, input);
    auto split = ArrayRef<OpFoldResult>(dims);
    sizes = SmallVector<OpFoldResult>{
        getSizeProduct(b, loc, split.take_front(axis)),
        getSizeProduct(b, loc, split.drop_front(axis))};
  } else {
    sizes = getSqueezeSizes(ctx, input);
  }
  if (failed(sizes))
    return failure();
  return ctx.setOutput(0, createDynamicReshape(b, loc, input, *sizes));
}

LogicalResult lowerSymbolicConstantOfShape(NodeContext &ctx,
                                           const SymbolicShape &shape,
                                           TypedAttr value) {
  OpBuilder &b = ctx.getBuilder();
  Value scalar = arith::ConstantOp::create(b, ctx.getLoc(), value);
  return ctx.setOutput(0,
                       createFilled(b, ctx.getLoc(), shape.elements, scalar));
}

LogicalResult lowerSymbolicRange(NodeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  std::optional<SymbolicShape> start = getSymbolicInput(ctx, 0),
                               limit = getSymbolicInput(ctx, 1),
                               delta = getSymbolicInput(ctx, 2);
  std::optional<int64_t> step = delta && delta->elements.size() == 1
                                    ? getConstantIntValue(delta->elements[0])
                                    : std::nullopt;
  if (!start || !limit || start->elements.size() != 1 ||
      limit->elements.size() != 1 || !step || *step == 0)
    return ctx.fail("with a limit computed from dynamic dims, the start and "
                    "limit must be integers and the delta a non-zero "
                    "constant");
  // max(0, ceil((limit - start) / delta)), delta of either sign.
  auto index = [&](OpFoldResult v) {
    return getValueOrCreateConstantIndexOp(b, loc, v);
  };
  Value span = arith::SubIOp::create(b, loc, index(limit->elements[0]),
                                     index(start->elements[0]));
  Value rounding =
      arith::ConstantIndexOp::create(b, loc, *step > 0 ? *step - 1 : *step + 1);
  Value count = arith::DivSIOp::create(
      b, loc, arith::AddIOp::create(b, loc, span, rounding),
      arith::ConstantIndexOp::create(b, loc, *step));
  count = arith::MaxSIOp::create(b, loc, count,
                                 arith::ConstantIndexOp::create(b, loc, 0));
  Type et = ctx.getInputType(0).getElementType();
  Value first = index(start->elements[0]);
  auto type = RankedTensorType::get({ShapedType::kDynamic}, et);
  Value result = createIndexedGeneric(
      b, loc, {}, {}, type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        Value i = arith::AddIOp::create(
            nb, nl, first,
            arith::MulIOp::create(
                nb, nl, ivs[0], arith::ConstantIndexOp::create(nb, nl, *step)));
        return arith::IndexCastOp::create(nb, nl, et, i).getResult();
      },
      {OpFoldResult(count)});
  return ctx.setOutput(0, result);
}

LogicalResult lowerDynamicExpand(NodeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  std::optional<SymbolicShape> shape = getSymbolicInput(ctx, 1);
  if (!shape || shape->scalar)
    return ctx.fail("the shape must be known at compile time or computed "
                    "from the input shapes");
  Value input = ctx.getInput(0);
  SmallVector<OpFoldResult> inputSizes = getDimSizes(b, loc, input);
  size_t rank = std::max(inputSizes.size(), shape->elements.size());
  // Numpy broadcasting of the two shapes: a 1 on either side takes the
  // other; dynamic sizes on both sides are taken equal.
  SmallVector<OpFoldResult> sizes;
  for (size_t i = 0; i < rank; ++i) {
    size_t fromIn = rank - inputSizes.size(),
           fromShape = rank - shape->elements.size();
    OpFoldResult in = i < fromIn ? b.getIndexAttr(1) : inputSizes[i - fromIn];
    OpFoldResult to =
        i < fromShape ? b.getIndexAttr(1) : shape->elements[i - fromShape];
    std::optional<int64_t> cin = getConstantIntValue(in),
                           cto = getConstantIntValue(to);
    sizes.push_back(cto == 1 ? in : (cin == 1 ? to : in));
  }
  auto type = RankedTensorType::get(
      getStaticShape(sizes),
      cast<RankedTensorType>(input.getType()).getElementType());
  return ctx.setOutput(
      0, createElementwise(
             b, loc, {input}, type,
             [](OpBuilder &, Location, ValueRange args) { return args[0]; },
             sizes));
}

} // namespace strata::onnx_importer
