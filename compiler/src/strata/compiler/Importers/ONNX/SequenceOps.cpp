//===- SequenceOps.cpp - ONNX sequences inside a graph --------------------===//
//
// A sequence that lives inside the graph (built by SequenceConstruct,
// SequenceEmpty or SplitToSequence, read by SequenceAt, SequenceLength or
// ConcatFromSequence) is imported as the list of its tensors, its length
// known at compile time. A position known at compile time picks or moves
// tensors of any shapes; one that arrives at run time selects among
// tensors of one type, element by element (`createSelect`), so that every
// result keeps a static type; out of range, it picks the last tensor (as
// Gather clamps its run-time indices). Sequences at the graph's boundary
// are refused where the model is loaded.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

// The most tensors a sequence holds: each is imported as values of its
// own, and selects by a run-time position chain over them.
constexpr int64_t kMaxSequenceLength = 4096;

// A position input of a sequence op: known at compile time (normalized),
// or the rank-0 tensor that holds it at run time.
struct Position {
  std::optional<int64_t> known;
  Value runtime;
};

// Input `index` as a position into a sequence of `length` tensors, in
// [-length, length] when `end` is allowed (an insertion point), else in
// [-length, length).
FailureOr<Position> getPosition(NodeContext &ctx, unsigned index,
                                int64_t length, bool end) {
  RankedTensorType type = ctx.getInputType(index);
  if (!type || type.getNumElements() != 1 ||
      !isa<IntegerType>(type.getElementType()))
    return ctx.fail("the position must be one integer");
  int64_t limit = end ? length : length - 1;
  if (std::optional<DenseElementsAttr> known = ctx.getConstantInput(index)) {
    int64_t value = known->getValues<APInt>()[0].getSExtValue();
    if (value < -length || value > limit)
      return ctx.fail("position " + Twine(value) +
                      " is out of range for a sequence of " + Twine(length));
    return Position{value < 0 ? value + length : value, Value()};
  }
  return Position{std::nullopt, ctx.getInput(index)};
}

// The rank-0 i1 tensor of whether the run-time position `position`,
// counted from the end of a sequence of `length` when negative, compares
// to `value` by `predicate`.
Value comparePosition(NodeContext &ctx, Value position, int64_t length,
                      arith::CmpIPredicate predicate, int64_t value) {
  OpBuilder &b = ctx.getBuilder();
  auto type = RankedTensorType::get({}, b.getI1Type());
  return createElementwise(
      b, ctx.getLoc(), {createReshape(b, ctx.getLoc(), position, {})}, type,
      [&](OpBuilder &nb, Location nl, ValueRange args) -> Value {
        Type i64 = nb.getI64Type();
        Value p = createScalarCast(nb, nl, args[0], i64, false, false);
        Value zero = createScalar(nb, nl, i64, 0);
        Value negative =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, p, zero);
        Value wrapped = arith::AddIOp::create(
            nb, nl, p, createScalar(nb, nl, i64, double(length)));
        p = arith::SelectOp::create(nb, nl, negative, wrapped, p);
        return arith::CmpIOp::create(nb, nl, predicate, p,
                                     createScalar(nb, nl, i64, double(value)));
      });
}

// Fails unless the tensors a run-time position chooses among share a type.
LogicalResult checkOneType(NodeContext &ctx, ArrayRef<Value> tensors) {
  for (Value tensor : tensors) {
    if (tensor.getType() == tensors.front().getType())
      continue;
    std::string types;
    llvm::raw_string_ostream os(types);
    os << tensors.front().getType() << " and " << tensor.getType();
    return ctx.fail("a position known only at run time needs tensors of one "
                    "type in the sequence, but it holds " +
                    Twine(os.str()));
  }
  return success();
}

LogicalResult lowerSequenceEmpty(NodeContext &ctx) {
  int64_t dtype = ctx.getIntAttr("dtype", onnx::TensorProto::FLOAT);
  Type elementType = convertElementType(ctx.getContext(), dtype);
  if (!elementType)
    return ctx.fail("unsupported dtype " + Twine(dtype));
  ctx.setSequenceOutput(0, SequenceValue{{}, elementType});
  return success();
}

LogicalResult lowerSequenceConstruct(NodeContext &ctx) {
  SequenceValue sequence;
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i)
    sequence.elements.push_back(ctx.getInput(i));
  if (sequence.elements.empty())
    return ctx.fail("SequenceConstruct needs at least one tensor");
  if (int64_t(sequence.elements.size()) > kMaxSequenceLength)
    return ctx.fail("a sequence holds at most " + Twine(kMaxSequenceLength) +
                    " tensors");
  sequence.elementType =
      cast<RankedTensorType>(sequence.elements.front().getType())
          .getElementType();
  ctx.setSequenceOutput(0, std::move(sequence));
  return success();
}

LogicalResult lowerSequenceLength(NodeContext &ctx) {
  FailureOr<SequenceValue> sequence = ctx.getSequenceInput(0);
  if (failed(sequence))
    return failure();
  auto type = RankedTensorType::get({}, ctx.getBuilder().getI64Type());
  return ctx.setConstantOutput(
      0, DenseElementsAttr::get(type,
                                APInt(64, int64_t(sequence->elements.size()))));
}

LogicalResult lowerSequenceAt(NodeContext &ctx) {
  FailureOr<SequenceValue> sequence = ctx.getSequenceInput(0);
  if (failed(sequence))
    return failure();
  ArrayRef<Value> elements = sequence->elements;
  if (elements.empty())
    return ctx.fail("SequenceAt of an empty sequence");
  FailureOr<Position> position =
      getPosition(ctx, 1, elements.size(), /*end=*/false);
  if (failed(position))
    return failure();
  if (position->known)
    return ctx.setOutput(0, elements[*position->known]);
  if (failed(checkOneType(ctx, elements)))
    return failure();
  Value result = elements.back();
  for (int64_t i = int64_t(elements.size()) - 2; i >= 0; --i)
    result =
        createSelect(ctx.getBuilder(), ctx.getLoc(),
                     comparePosition(ctx, position->runtime, elements.size(),
                                     arith::CmpIPredicate::eq, i),
                     elements[i], result);
  return ctx.setOutput(0, result);
}

LogicalResult lowerSequenceInsert(NodeContext &ctx) {
  FailureOr<SequenceValue> sequence = ctx.getSequenceInput(0);
  if (failed(sequence))
    return failure();
  Value inserted = ctx.getInput(1);
  auto insertedType = cast<RankedTensorType>(inserted.getType());
  if (sequence->elements.empty())
    sequence->elementType = insertedType.getElementType();
  if (insertedType.getElementType() != sequence->elementType)
    return ctx.fail("the tensor's element type differs from the sequence's");
  SmallVector<Value> elements = sequence->elements;
  int64_t length = elements.size();
  if (length >= kMaxSequenceLength)
    return ctx.fail("a sequence holds at most " + Twine(kMaxSequenceLength) +
                    " tensors");
  Position position{length, Value()};
  if (ctx.hasInput(2)) {
    FailureOr<Position> given = getPosition(ctx, 2, length, /*end=*/true);
    if (failed(given))
      return failure();
    position = *given;
  }
  if (position.known) {
    elements.insert(elements.begin() + *position.known, inserted);
    ctx.setSequenceOutput(0, SequenceValue{elements, sequence->elementType});
    return success();
  }
  SmallVector<Value> all = elements;
  all.push_back(inserted);
  if (failed(checkOneType(ctx, all)))
    return failure();
  // Element i is the inserted tensor where the position is i, the old
  // element i before it, the old element i - 1 after it.
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  SmallVector<Value> result;
  for (int64_t i = 0; i <= length; ++i) {
    Value other;
    if (i == length)
      other = elements[i - 1];
    else if (i == 0)
      other = elements[0];
    else
      other = createSelect(b, loc,
                           comparePosition(ctx, position.runtime, length,
                                           arith::CmpIPredicate::sgt, i),
                           elements[i], elements[i - 1]);
    result.push_back(createSelect(b, loc,
                                  comparePosition(ctx, position.runtime, length,
                                                  arith::CmpIPredicate::eq, i),
                                  inserted, other));
  }
  ctx.setSequenceOutput(0, SequenceValue{result, sequence->elementType});
  return success();
}

LogicalResult lowerSequenceErase(NodeContext &ctx) {
  FailureOr<SequenceValue> sequence = ctx.getSequenceInput(0);
  if (failed(sequence))
    return failure();
  SmallVector<Value> elements = sequence->elements;
  int64_t length = elements.size();
  if (length == 0)
    return ctx.fail("SequenceErase of an empty sequence");
  Position position{length - 1, Value()};
  if (ctx.hasInput(1)) {
    FailureOr<Position> given = getPosition(ctx, 1, length, /*end=*/false);
    if (failed(given))
      return failure();
    position = *given;
  }
  if (position.known) {
    elements.erase(elements.begin() + *position.known);
    ctx.setSequenceOutput(0, SequenceValue{elements, sequence->elementType});
    return success();
  }
  if (failed(checkOneType(ctx, elements)))
    return failure();
  // Element i is the old element i before the position, i + 1 from it on.
  SmallVector<Value> result;
  for (int64_t i = 0; i + 1 < length; ++i)
    result.push_back(createSelect(ctx.getBuilder(), ctx.getLoc(),
                                  comparePosition(ctx, position.runtime, length,
                                                  arith::CmpIPredicate::sgt, i),
                                  elements[i], elements[i + 1]));
  ctx.setSequenceOutput(0, SequenceValue{result, sequence->elementType});
  return success();
}

// The tensors concatenated along `axis`, or stacked along a new `axis`
// (new_axis = 1).
LogicalResult lowerConcatFromSequence(NodeContext &ctx) {
  FailureOr<SequenceValue> sequence = ctx.getSequenceInput(0);
  if (failed(sequence))
    return failure();
  ArrayRef<Value> elements = sequence->elements;
  if (elements.empty())
    return ctx.fail("ConcatFromSequence of an empty sequence");
  auto first = cast<RankedTensorType>(elements.front().getType());
  bool newAxis = ctx.getIntAttr("new_axis", 0) != 0;
  int64_t rank = first.getRank() + (newAxis ? 1 : 0);
  if (!ctx.hasAttr("axis"))
    return ctx.fail("ConcatFromSequence needs an axis");
  FailureOr<int64_t> axis = ctx.getAxis(ctx.getIntAttr("axis", 0), rank);
  if (failed(axis))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  SmallVector<Value> parts;
  int64_t total = 0;
  for (Value element : elements) {
    auto type = cast<RankedTensorType>(element.getType());
    if (type.getRank() != first.getRank() ||
        type.getElementType() != first.getElementType())
      return ctx.fail("the sequence's tensors differ in rank or type");
    for (int64_t d = 0; d < type.getRank(); ++d)
      if ((newAxis || d != *axis) && type.getDimSize(d) != first.getDimSize(d))
        return ctx.fail("the sequence's tensors differ in dimension " +
                        Twine(d));
    if (newAxis) {
      SmallVector<int64_t> shape(type.getShape());
      shape.insert(shape.begin() + *axis, 1);
      parts.push_back(createReshape(b, loc, element, shape));
      ++total;
    } else {
      parts.push_back(element);
      total += type.getDimSize(*axis);
    }
  }
  SmallVector<int64_t> shape(
      cast<RankedTensorType>(parts.front().getType()).getShape());
  shape[*axis] = total;
  auto resultType = RankedTensorType::get(shape, first.getElementType());
  if (failed(ctx.getOutputTypeOr(0, resultType)))
    return failure();
  Value result =
      parts.size() == 1
          ? parts.front()
          : tensor::ConcatOp::create(b, loc, *axis, parts).getResult();
  return ctx.setOutput(0, result);
}

// `split` absent: pieces of one along `axis` (squeezed unless keepdims);
// a scalar: pieces of that length (the last shorter); a 1-D tensor: the
// lengths of the pieces.
LogicalResult lowerSplitToSequence(NodeContext &ctx) {
  RankedTensorType type = ctx.getInputType(0);
  FailureOr<int64_t> axis =
      ctx.getAxis(ctx.getIntAttr("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  int64_t size = type.getDimSize(*axis);
  SmallVector<int64_t> lengths;
  bool squeeze = false;
  if (!ctx.hasInput(1)) {
    lengths.assign(size, 1);
    squeeze = ctx.getIntAttr("keepdims", 1) == 0;
  } else {
    FailureOr<SmallVector<int64_t>> split = ctx.getConstantInts(1);
    if (failed(split))
      return failure();
    if (ctx.getInputType(1).getRank() == 0) {
      int64_t piece = split->front();
      if (piece <= 0)
        return ctx.fail("split " + Twine(piece) + " must be positive");
      for (int64_t offset = 0; offset < size; offset += piece)
        lengths.push_back(std::min(piece, size - offset));
    } else {
      lengths = *split;
      int64_t sum = 0;
      for (int64_t length : lengths) {
        if (length < 0)
          return ctx.fail("split lengths must not be negative");
        sum += length;
      }
      if (sum != size)
        return ctx.fail("split lengths add up to " + Twine(sum) +
                        ", not the axis' " + Twine(size));
    }
  }
  if (int64_t(lengths.size()) > kMaxSequenceLength)
    return ctx.fail("splitting into " + Twine(lengths.size()) +
                    " tensors; a sequence holds at most " +
                    Twine(kMaxSequenceLength));
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  SequenceValue sequence{{}, type.getElementType()};
  int64_t offset = 0;
  for (int64_t length : lengths) {
    SmallVector<int64_t> offsets(type.getRank(), 0), sizes(type.getShape()),
        strides(type.getRank(), 1);
    offsets[*axis] = offset;
    sizes[*axis] = length;
    Value piece = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(sizes, type.getElementType()),
        ctx.getInput(0), ValueRange{}, ValueRange{}, ValueRange{},
        b.getDenseI64ArrayAttr(offsets), b.getDenseI64ArrayAttr(sizes),
        b.getDenseI64ArrayAttr(strides));
    if (squeeze) {
      sizes.erase(sizes.begin() + *axis);
      piece = createReshape(b, loc, piece, sizes);
    }
    sequence.elements.push_back(piece);
    offset += length;
  }
  ctx.setSequenceOutput(0, std::move(sequence));
  return success();
}

} // namespace

bool takesSequenceInput(StringRef opType, unsigned index) {
  return index == 0 &&
         llvm::is_contained({"SequenceAt", "SequenceLength", "SequenceInsert",
                             "SequenceErase", "ConcatFromSequence"},
                            opType);
}

void addSequenceLowerings(LoweringTable &t) {
  t["SequenceEmpty"] = lowerSequenceEmpty;
  t["SequenceConstruct"] = lowerSequenceConstruct;
  t["SequenceLength"] = lowerSequenceLength;
  t["SequenceAt"] = lowerSequenceAt;
  t["SequenceInsert"] = lowerSequenceInsert;
  t["SequenceErase"] = lowerSequenceErase;
  t["ConcatFromSequence"] = lowerConcatFromSequence;
  t["SplitToSequence"] = lowerSplitToSequence;
}

} // namespace strata::onnx_importer
