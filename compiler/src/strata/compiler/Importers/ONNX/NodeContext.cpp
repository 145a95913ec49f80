//===- NodeContext.cpp - what one node's lowering sees --------------------===//
#include "strata/compiler/Importers/ONNX/NodeContext.h"
#include "strata/compiler/Importers/ONNX/Builders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace strata::onnx_importer {

InFlightDiagnostic NodeContext::emitError() {
  return mlir::emitError(loc)
         << "node '" << node.name() << "' (" << node.op_type() << "): ";
}

LogicalResult NodeContext::fail(const llvm::Twine &reason) {
  return emitError() << reason;
}

bool NodeContext::hasInput(unsigned index) const {
  return index < static_cast<unsigned>(node.input_size()) &&
         !node.input(index).empty();
}

Value NodeContext::getInput(unsigned index) {
  if (!hasInput(index))
    return {};
  const std::string &name = node.input(index);
  auto it = state.values.find(name);
  if (it != state.values.end())
    return it->second;
  auto constant = state.constants.find(name);
  if (constant == state.constants.end())
    return {};
  Value value =
      arith::ConstantOp::create(builder, loc, constant->second).getResult();
  state.values[name] = value;
  return value;
}

bool NodeContext::isSequenceInput(unsigned index) const {
  return hasInput(index) && state.sequences.count(node.input(index));
}

FailureOr<SequenceValue> NodeContext::getSequenceInput(unsigned index) {
  if (!isSequenceInput(index))
    return fail("input " + llvm::Twine(index) + " ('" +
                (hasInput(index) ? node.input(index) : std::string()) +
                "') is not a sequence");
  return state.sequences.lookup(node.input(index));
}

void NodeContext::setSequenceOutput(unsigned index, SequenceValue value) {
  if (hasOutput(index))
    state.sequences[node.output(index)] = std::move(value);
}

RankedTensorType NodeContext::getInputType(unsigned index) {
  Value value = getInput(index);
  return value ? dyn_cast<RankedTensorType>(value.getType())
               : RankedTensorType();
}

const onnx::TypeProto *NodeContext::findType(const std::string &name) const {
  auto it = state.types.find(name);
  return it == state.types.end() ? nullptr : it->second;
}

bool NodeContext::isInputUnsigned(unsigned index) const {
  if (!hasInput(index))
    return false;
  const onnx::TypeProto *type = findType(node.input(index));
  return type && type->has_tensor_type() &&
         isUnsignedElementType(type->tensor_type().elem_type());
}

bool NodeContext::isOutputUnsigned(unsigned index) const {
  if (!hasOutput(index))
    return false;
  const onnx::TypeProto *type = findType(node.output(index));
  return type && type->has_tensor_type() &&
         isUnsignedElementType(type->tensor_type().elem_type());
}

std::optional<DenseElementsAttr> NodeContext::getConstantInput(unsigned index) {
  if (!hasInput(index))
    return std::nullopt;
  auto it = state.constants.find(node.input(index));
  if (it != state.constants.end())
    return it->second;
  // A value with no elements is known whatever it holds at run time (an
  // empty axes input, say, even when it is a graph input).
  RankedTensorType type = getInputType(index);
  if (type && type.hasStaticShape() && type.getNumElements() == 0)
    return DenseElementsAttr::get(type, ArrayRef<Attribute>{});
  return std::nullopt;
}

LogicalResult
NodeContext::checkConstantIndices(unsigned index,
                                  llvm::function_ref<int64_t(int64_t)> sizeAt) {
  std::optional<DenseElementsAttr> indices = getConstantInput(index);
  if (!indices || !isa<IntegerType>(indices->getElementType()))
    return success();
  int64_t position = 0;
  for (const APInt &value : indices->getValues<APInt>()) {
    int64_t i = value.getSExtValue(), size = sizeAt(position++);
    if (ShapedType::isDynamic(size)) // clamped at run time
      continue;
    if (i < -size || i >= size)
      return fail("index " + llvm::Twine(i) + " (input " + llvm::Twine(index) +
                  ", element " + llvm::Twine(position - 1) +
                  ") is out of range for a dimension of " + llvm::Twine(size));
  }
  return success();
}

void NodeContext::assertAtCall(Value holds, const llvm::Twine &broken) {
  cf::AssertOp::create(
      builder, loc, holds,
      (node.op_type() + " computing '" + node.output(0) + "': " + broken)
          .str());
}

LogicalResult NodeContext::checkSizes(OpFoldResult a, OpFoldResult b,
                                      const llvm::Twine &broken, bool atMost) {
  if (isSameSize(a, b))
    return success();
  std::optional<int64_t> ca = getConstantIntValue(a),
                         cb = getConstantIntValue(b);
  if (ca && cb) {
    if (atMost ? *ca <= *cb : *ca == *cb)
      return success();
    return fail(broken + " (" + llvm::Twine(*ca) + " and " + llvm::Twine(*cb) +
                ")");
  }
  Value holds = arith::CmpIOp::create(
      builder, loc,
      atMost ? arith::CmpIPredicate::ule : arith::CmpIPredicate::eq,
      getValueOrCreateConstantIndexOp(builder, loc, a),
      getValueOrCreateConstantIndexOp(builder, loc, b));
  assertAtCall(holds, broken);
  return success();
}

LogicalResult
NodeContext::checkIndexedDimNotEmpty(int64_t dim, OpFoldResult dimSize,
                                     ArrayRef<OpFoldResult> indexSizes) {
  std::optional<int64_t> size = getConstantIntValue(dimSize);
  if (size && *size > 0)
    return success();
  SmallVector<Value> dynamicIndexSizes;
  for (OpFoldResult indexSize : indexSizes) {
    std::optional<int64_t> known = getConstantIntValue(indexSize);
    if (known && *known == 0)
      return success();
    if (!known)
      dynamicIndexSizes.push_back(cast<Value>(indexSize));
  }
  std::string broken = ("dim " + llvm::Twine(dim) +
                        " of the data is empty but the indices are not")
                           .str();
  if (size && dynamicIndexSizes.empty())
    return fail(broken);
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value holds = arith::CmpIOp::create(
      builder, loc, arith::CmpIPredicate::ne,
      getValueOrCreateConstantIndexOp(builder, loc, dimSize), zero);
  for (Value indexSize : dynamicIndexSizes)
    holds = arith::OrIOp::create(builder, loc, holds,
                                 arith::CmpIOp::create(builder, loc,
                                                       arith::CmpIPredicate::eq,
                                                       indexSize, zero));
  assertAtCall(holds, broken);
  return success();
}

std::optional<SmallVector<double>>
NodeContext::getConstantFloats(unsigned index) {
  std::optional<DenseElementsAttr> attr = getConstantInput(index);
  if (!attr || !isa<FloatType>(attr->getElementType()))
    return std::nullopt;
  SmallVector<double> values;
  values.reserve(attr->getNumElements());
  for (APFloat value : attr->getValues<APFloat>()) {
    bool lost = false;
    value.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    values.push_back(value.convertToDouble());
  }
  return values;
}

FailureOr<SmallVector<int64_t>> NodeContext::getConstantInts(unsigned index) {
  std::optional<DenseElementsAttr> attr = getConstantInput(index);
  if (!attr || !isa<IntegerType>(attr->getElementType()))
    return fail("input " + llvm::Twine(index) + " ('" +
                (hasInput(index) ? node.input(index) : std::string()) +
                "') must be a compile-time integer constant");
  SmallVector<int64_t> values;
  for (const APInt &v : attr->getValues<APInt>())
    values.push_back(v.getSExtValue());
  return values;
}

bool NodeContext::hasOutput(unsigned index) const {
  return index < static_cast<unsigned>(node.output_size()) &&
         !node.output(index).empty();
}

FailureOr<RankedTensorType> NodeContext::getOutputType(unsigned index) {
  if (!hasOutput(index))
    return fail("output " + llvm::Twine(index) + " is absent");
  const std::string &name = node.output(index);
  const onnx::TypeProto *type = findType(name);
  if (!type)
    return fail("shape inference found no type for output '" + name + "'");
  std::string error;
  RankedTensorType result = convertTensorType(getContext(), *type, getLimits(),
                                              error, hasDynamicInput());
  if (!result)
    return fail("output '" + name + "': " + error);
  return result;
}

bool NodeContext::hasDynamicInput() const {
  for (unsigned i = 0; i < getNumInputs(); ++i) {
    if (findSymbolicInput(i))
      return true;
    // (Constants, not materialized here, are static.)
    Value value = hasInput(i) ? state.values.lookup(node.input(i)) : Value();
    auto type = value ? dyn_cast<RankedTensorType>(value.getType())
                      : RankedTensorType();
    if (type && !type.hasStaticShape())
      return true;
  }
  return false;
}

bool NodeContext::hasInferredOutputType(unsigned index) const {
  if (!hasOutput(index))
    return false;
  // A partly inferred shape (symbolic dims where inference could not see
  // through a folded shape computation) leaves the lowering's own shape.
  return isStaticTensorType(findType(node.output(index)));
}

FailureOr<RankedTensorType>
NodeContext::getOutputTypeOr(unsigned index, RankedTensorType computed) {
  if (hasInferredOutputType(index))
    return getOutputType(index);
  if (failed(checkSize(computed)))
    return failure();
  return computed;
}

FailureOr<int64_t> NodeContext::getAxis(int64_t axis, int64_t rank,
                                        const llvm::Twine &what) {
  if (axis < -rank || axis >= rank)
    return fail(what + " " + llvm::Twine(axis) + " is out of range for rank " +
                llvm::Twine(rank));
  return axis < 0 ? axis + rank : axis;
}

LogicalResult NodeContext::checkSize(Type type) {
  auto shaped = dyn_cast<RankedTensorType>(type);
  if (!shaped || !shaped.hasStaticShape())
    return success();
  std::string error =
      checkTensorSize(shaped.getShape(), shaped.getElementType(), getLimits());
  if (error.empty())
    return success();
  return fail(error);
}

LogicalResult NodeContext::setOutput(unsigned index, Value value) {
  if (!hasOutput(index))
    return success();
  const std::string &name = node.output(index);
  if (failed(checkSize(value.getType())))
    return failure();
  if (hasInferredOutputType(index)) {
    FailureOr<RankedTensorType> expected = getOutputType(index);
    if (failed(expected))
      return failure();
    // A size the lowering computes at run time may be one inference knows.
    auto type = dyn_cast<RankedTensorType>(value.getType());
    bool compatible = type && !type.hasStaticShape() &&
                      type.getElementType() == expected->getElementType() &&
                      succeeded(verifyCompatibleShape(type, *expected));
    if (value.getType() != *expected && !compatible)
      return emitError() << "output '" << name << "' was lowered to "
                         << value.getType() << " but ONNX infers " << *expected;
  }
  state.values[name] = value;
  return success();
}

LogicalResult NodeContext::setConstantOutput(unsigned index,
                                             DenseElementsAttr value) {
  if (!hasOutput(index))
    return success();
  state.constants[node.output(index)] = value;
  return setOutput(index,
                   arith::ConstantOp::create(builder, loc, value).getResult());
}

const SymbolicShape *NodeContext::findSymbolicInput(unsigned index) const {
  if (!hasInput(index))
    return nullptr;
  auto it = state.symbolicShapes.find(node.input(index));
  return it == state.symbolicShapes.end() ? nullptr : &it->second;
}

LogicalResult NodeContext::setSymbolicOutput(unsigned index,
                                             SymbolicShape shape) {
  if (!hasOutput(index))
    return success();
  SmallVector<int64_t> known;
  SmallVector<Value> elements;
  for (OpFoldResult element : shape.elements) {
    std::optional<int64_t> constant = getConstantIntValue(element);
    if (constant)
      known.push_back(*constant);
    elements.push_back(
        constant ? arith::ConstantIntOp::create(builder, loc, *constant, 64)
                       .getResult()
                 : arith::IndexCastOp::create(
                       builder, loc, builder.getI64Type(), cast<Value>(element))
                       .getResult());
  }
  SmallVector<int64_t> dims = shape.dims;
  if (dims.empty() && !shape.scalar)
    dims.push_back(elements.size());
  auto type = RankedTensorType::get(dims, builder.getI64Type());
  if (known.size() == elements.size()) {
    for (Value element : elements)
      element.getDefiningOp()->erase();
    return setConstantOutput(index,
                             DenseElementsAttr::get(type, ArrayRef(known)));
  }
  state.symbolicShapes[node.output(index)] = std::move(shape);
  Value tensor = tensor::FromElementsOp::create(builder, loc, type, elements);
  state.values[node.output(index)] = tensor;
  return success();
}

const onnx::AttributeProto *NodeContext::findAttr(StringRef name) const {
  for (const auto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

int64_t NodeContext::getIntAttr(StringRef name, int64_t defaultValue) const {
  const onnx::AttributeProto *attr = findAttr(name);
  return attr ? attr->i() : defaultValue;
}

float NodeContext::getFloatAttr(StringRef name, float defaultValue) const {
  const onnx::AttributeProto *attr = findAttr(name);
  return attr ? attr->f() : defaultValue;
}

std::string NodeContext::getStringAttr(StringRef name,
                                       StringRef defaultValue) const {
  const onnx::AttributeProto *attr = findAttr(name);
  return attr ? attr->s() : defaultValue.str();
}

SmallVector<int64_t> NodeContext::getIntsAttr(StringRef name) const {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr)
    return {};
  return SmallVector<int64_t>(attr->ints().begin(), attr->ints().end());
}

SmallVector<float> NodeContext::getFloatsAttr(StringRef name) const {
  const onnx::AttributeProto *attr = findAttr(name);
  if (!attr)
    return {};
  return SmallVector<float>(attr->floats().begin(), attr->floats().end());
}

} // namespace strata::onnx_importer
