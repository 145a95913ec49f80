//===- DynamicBindings.cpp ------------------------------------------------===//
#include "strata/compiler/Codegen/DynamicBindings.h"
#include "strata/compiler/Utils/InPlaceUpdates.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/IR/Builders.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

using namespace mlir;

namespace strata {

void passResultsAsDestinations(func::FuncOp func) {
  // A concatenation as copies into its result, so that the result (not a
  // temporary of unknown size) is the output binding.
  {
    RewritePatternSet patterns(func.getContext());
    tensor::populateDecomposeTensorConcatPatterns(patterns);
    (void)applyPatternsGreedily(func, std::move(patterns));
  }
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  unsigned firstIndexArg = 0;
  while (firstIndexArg < func.getNumArguments() &&
         isa<TensorType>(func.getArgument(firstIndexArg).getType()))
    ++firstIndexArg;
  MLIRContext *context = func.getContext();
  OpBuilder builder(ret);
  for (OpOperand &operand : ret->getOpOperands()) {
    Type type = operand.get().getType();
    if (!isa<RankedTensorType>(type))
      continue;
    unsigned position = firstIndexArg++;
    auto writable = NamedAttribute(
        StringAttr::get(context,
                        bufferization::BufferizationDialect::kWritableAttrName),
        BoolAttr::get(context, true));
    (void)func.insertArgument(position, type,
                              DictionaryAttr::get(context, {writable}),
                              func.getLoc());
    // A result updated in loops from an empty tensor (a sequential
    // region's) starts from the argument instead: the loops then write it
    // in place. (Left to empty-tensor elimination, the loop's initial value
    // would both be read by the loop and be the destination of the copy,
    // which bufferization refuses.)
    auto empty =
        getUpdatedTensor(operand.get()).getDefiningOp<tensor::EmptyOp>();
    if (empty && empty.getType() == type && empty->hasOneUse() &&
        isa<scf::ForOp, scf::ExecuteRegionOp>(operand.get().getDefiningOp())) {
      empty.replaceAllUsesWith(func.getArgument(position));
      empty.erase();
      continue;
    }
    auto materialized = bufferization::MaterializeInDestinationOp::create(
        builder, ret.getLoc(), operand.get(), func.getArgument(position));
    operand.set(materialized.getResult());
  }
}

LogicalResult dropResultsWrittenInPlace(func::FuncOp func) {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  BitVector dropped(ret.getNumOperands());
  for (OpOperand &operand : ret->getOpOperands()) {
    auto arg = dyn_cast<BlockArgument>(operand.get());
    if (!arg || arg.getOwner() != &func.getBody().front())
      return func.emitOpError("result ")
             << operand.getOperandNumber()
             << " was not written in place into its output argument";
    dropped.set(operand.getOperandNumber());
  }
  ret->eraseOperands(dropped);
  return func.eraseResults(dropped);
}

// The strides of a row-major buffer of `sizes`: static as long as the
// sizes inside them are.
static SmallVector<OpFoldResult>
getRowMajorStrides(OpBuilder &builder, Location loc,
                   ArrayRef<OpFoldResult> sizes) {
  SmallVector<OpFoldResult> strides(sizes.size());
  OpFoldResult stride = builder.getIndexAttr(1);
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    std::optional<int64_t> constantStride = getConstantIntValue(stride);
    std::optional<int64_t> constantSize = getConstantIntValue(sizes[i]);
    if (constantStride && constantSize) {
      stride = builder.getIndexAttr(*constantStride * *constantSize);
      continue;
    }
    auto asValue = [&](OpFoldResult value) -> Value {
      if (auto v = dyn_cast<Value>(value))
        return v;
      return arith::ConstantIndexOp::create(builder, loc,
                                            *getConstantIntValue(value));
    };
    stride =
        arith::MulIOp::create(builder, loc, asValue(stride), asValue(sizes[i]))
            .getResult();
  }
  return strides;
}

FailureOr<std::vector<BindingExtent>>
bindDynamicBuffers(func::FuncOp func, unsigned bindingCount) {
  Block &entry = func.getBody().front();
  unsigned nextDim = bindingCount;
  OpBuilder builder = OpBuilder::atBlockBegin(&entry);
  std::vector<BindingExtent> extents;
  for (unsigned i = 0; i < bindingCount; ++i) {
    BlockArgument arg = entry.getArgument(i);
    auto type = dyn_cast<MemRefType>(arg.getType());
    if (!type)
      return func.emitOpError("binding ") << i << " is not a buffer";
    if (type.hasStaticShape())
      continue;
    if (!type.getLayout().isIdentity())
      return func.emitOpError("binding ")
             << i << " has a non-identity layout: " << type;
    SmallVector<OpFoldResult> sizes;
    BindingExtent extent;
    extent.binding = i;
    extent.elementBytes = (type.getElementTypeBitWidth() + 7) / 8;
    for (int64_t size : type.getShape()) {
      if (!ShapedType::isDynamic(size)) {
        sizes.push_back(builder.getIndexAttr(size));
        extent.dims.push_back(size);
        continue;
      }
      extent.dims.push_back(-1 - static_cast<int64_t>(nextDim - bindingCount));
      if (nextDim >= entry.getNumArguments() ||
          !entry.getArgument(nextDim).getType().isIndex())
        return func.emitOpError("has no index argument for a dynamic dim "
                                "of binding ")
               << i;
      sizes.push_back(entry.getArgument(nextDim++));
    }
    SmallVector<OpFoldResult> strides =
        getRowMajorStrides(builder, func.getLoc(), sizes);
    auto pointerType =
        MemRefType::get({}, type.getElementType(), MemRefLayoutAttrInterface(),
                        type.getMemorySpace());
    arg.setType(pointerType);
    auto view = memref::ReinterpretCastOp::create(builder, func.getLoc(), type,
                                                  arg, builder.getIndexAttr(0),
                                                  sizes, strides);
    arg.replaceAllUsesExcept(view.getResult(), view);
    extents.push_back(std::move(extent));
  }
  SmallVector<Type> argTypes(entry.getArgumentTypes());
  func.setFunctionType(
      FunctionType::get(func.getContext(), argTypes, func.getResultTypes()));
  return extents;
}

} // namespace strata
