//===- LowerContractionsToMicrokernels.cpp - f32 matmuls to vmvx calls ----===//
//
// On buffers: every linalg.generic that is an f32 multiply-accumulate
// contraction with one reduction dimension and at most one M and one N
// dimension (matmul, matvec, vecmat, any transposition, batches) becomes a
// call of the runtime's `vmvx.matmul.f32` microkernel per batch element,
// with offsets and strides taken from the operands' strided metadata. What
// does not match stays a loop nest.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace strata {
#define GEN_PASS_DEF_VMVXLOWERCONTRACTIONSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

constexpr StringLiteral kMatmulF32 = "vmvx.matmul.f32";

// out = out + lhs * rhs on f32, nothing else in the body.
bool hasF32MultiplyAccumulateBody(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1)
    return false;
  for (OpOperand &operand : op->getOpOperands())
    if (!getElementTypeOrSelf(operand.get().getType()).isF32())
      return false;
  Block &body = op.getRegion().front();
  if (body.getOperations().size() != 3)
    return false;
  auto mul = dyn_cast<arith::MulFOp>(&body.front());
  auto add =
      dyn_cast_if_present<arith::AddFOp>(mul ? mul->getNextNode() : nullptr);
  auto yield = dyn_cast<linalg::YieldOp>(body.getTerminator());
  if (!mul || !add || !yield || yield.getValues().size() != 1 ||
      yield.getValues()[0] != add.getResult())
    return false;
  Value a = body.getArgument(0), b = body.getArgument(1),
        acc = body.getArgument(2);
  bool mulOk = (mul.getLhs() == a && mul.getRhs() == b) ||
               (mul.getLhs() == b && mul.getRhs() == a);
  bool addOk = (add.getLhs() == acc && add.getRhs() == mul.getResult()) ||
               (add.getRhs() == acc && add.getLhs() == mul.getResult());
  return mulOk && addOk;
}

func::FuncOp getOrCreateMatmulDeclaration(ModuleOp module) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(kMatmulF32))
    return existing;
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  Type buffer = MemRefType::get({}, builder.getF32Type());
  Type index = builder.getIndexType();
  SmallVector<Type> inputs;
  for (int operand = 0; operand < 3; ++operand)
    inputs.append({buffer, index, index, index});
  inputs.append({index, index, index});
  auto declaration = func::FuncOp::create(builder, module.getLoc(), kMatmulF32,
                                          builder.getFunctionType(inputs, {}));
  declaration.setPrivate();
  return declaration;
}

// One operand's strided metadata and its stride along each loop dimension
// (zero where the operand does not vary with the loop).
struct OperandLayout {
  Value base;
  Value offset;
  SmallVector<Value> loopStrides;
};

OperandLayout getOperandLayout(OpBuilder &builder, Location loc,
                               linalg::GenericOp op, OpOperand &operand,
                               Value zero) {
  auto metadata =
      memref::ExtractStridedMetadataOp::create(builder, loc, operand.get());
  OperandLayout layout;
  layout.base = metadata.getBaseBuffer();
  layout.offset = metadata.getOffset();
  layout.loopStrides.assign(op.getNumLoops(), zero);
  AffineMap map = op.getMatchingIndexingMap(&operand);
  for (unsigned result = 0; result < map.getNumResults(); ++result)
    layout.loopStrides[map.getDimPosition(result)] =
        metadata.getStrides()[result];
  return layout;
}

LogicalResult lowerContraction(linalg::GenericOp op, ModuleOp module) {
  if (!op.hasPureBufferSemantics() || !hasF32MultiplyAccumulateBody(op) ||
      !linalg::isaContractionOpInterface(op))
    return failure();
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation())
      return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims) || dims->k.size() != 1 || dims->m.size() > 1 ||
      dims->n.size() > 1)
    return failure();

  OpBuilder builder(op);
  Location loc = op.getLoc();
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value one = arith::ConstantIndexOp::create(builder, loc, 1);
  SmallVector<Value> loopSizes;
  for (Range range :
       cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(builder, loc))
    loopSizes.push_back(
        getValueOrCreateConstantIndexOp(builder, loc, range.size));

  SmallVector<OperandLayout> layouts;
  for (OpOperand &operand : op->getOpOperands())
    layouts.push_back(getOperandLayout(builder, loc, op, operand, zero));

  // Batch dimensions become loops that move every operand's offset.
  SmallVector<Value> offsets;
  for (OperandLayout &layout : layouts)
    offsets.push_back(layout.offset);
  for (unsigned batch : dims->batch) {
    auto loop = scf::ForOp::create(builder, loc, zero, loopSizes[batch], one);
    builder.setInsertionPointToStart(loop.getBody());
    Value iv = loop.getInductionVar();
    for (size_t i = 0; i < offsets.size(); ++i) {
      Value step = arith::MulIOp::create(builder, loc, iv,
                                         layouts[i].loopStrides[batch]);
      offsets[i] = arith::AddIOp::create(builder, loc, offsets[i], step);
    }
  }

  auto strideAlong = [&](const OperandLayout &layout,
                         ArrayRef<unsigned> dim) -> Value {
    return dim.empty() ? zero : layout.loopStrides[dim[0]];
  };
  auto sizeOf = [&](ArrayRef<unsigned> dim) -> Value {
    return dim.empty() ? one : loopSizes[dim[0]];
  };
  const OperandLayout &lhs = layouts[0], &rhs = layouts[1], &out = layouts[2];
  SmallVector<Value> operands = {lhs.base,
                                 offsets[0],
                                 strideAlong(lhs, dims->m),
                                 strideAlong(lhs, dims->k),
                                 rhs.base,
                                 offsets[1],
                                 strideAlong(rhs, dims->k),
                                 strideAlong(rhs, dims->n),
                                 out.base,
                                 offsets[2],
                                 strideAlong(out, dims->m),
                                 strideAlong(out, dims->n),
                                 sizeOf(dims->m),
                                 sizeOf(dims->n),
                                 sizeOf(dims->k)};
  func::CallOp::create(builder, loc, getOrCreateMatmulDeclaration(module),
                       operands);
  op.erase();
  return success();
}

struct VMVXLowerContractionsPass
    : public impl::VMVXLowerContractionsPassBase<VMVXLowerContractionsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<linalg::GenericOp> candidates;
    module.walk([&](linalg::GenericOp op) { candidates.push_back(op); });
    for (linalg::GenericOp op : candidates)
      (void)lowerContraction(op, module);
  }
};

} // namespace
} // namespace strata
