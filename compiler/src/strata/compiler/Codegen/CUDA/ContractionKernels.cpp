//===- ContractionKernels.cpp - what the contraction kernels share --------===//

#include "strata/compiler/Codegen/CUDA/ContractionKernels.h"
#include "strata/hal/drivers/cuda/cuda_executable_format.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace strata {

Value applyEpilogues(OpBuilder &b, Location loc,
                     const ContractionKernel &kernel, Value value,
                     ArrayRef<Value> loopIndex) {
  linalg::GenericOp contraction = kernel.contraction;
  Value c = contraction.getDpsInitOperand(0)->get();
  AffineMap cMap =
      contraction.getMatchingIndexingMap(contraction.getDpsInitOperand(0));
  // An epilogue's loops are C's dimensions.
  SmallVector<Value> cIndex;
  for (AffineExpr expr : cMap.getResults())
    cIndex.push_back(loopIndex[cast<AffineDimExpr>(expr).getPosition()]);
  for (linalg::GenericOp epilogue : kernel.epilogues) {
    Block &body = epilogue.getRegion().front();
    IRMapping mapping;
    for (OpOperand &operand : epilogue->getOpOperands()) {
      BlockArgument arg = epilogue.getMatchingBlockArgument(&operand);
      Value source = operand.get();
      if (source == c) {
        mapping.map(arg, value);
        continue;
      }
      if (!isa<ShapedType>(source.getType())) {
        mapping.map(arg, source);
        continue;
      }
      AffineMap map = epilogue.getMatchingIndexingMap(&operand);
      SmallVector<Value> indices;
      for (AffineExpr expr : map.getResults())
        indices.push_back(affine::makeComposedAffineApply(
                              b, loc, AffineMap::get(map.getNumDims(), 0, expr),
                              getAsOpFoldResult(cIndex))
                              ->getResult(0));
      mapping.map(arg, memref::LoadOp::create(b, loc, source, indices));
    }
    for (Operation &op : body.without_terminator()) {
      if (auto loopIndexOp = dyn_cast<linalg::IndexOp>(op)) {
        mapping.map(loopIndexOp.getResult(), cIndex[loopIndexOp.getDim()]);
        continue;
      }
      b.clone(op, mapping);
    }
    value = mapping.lookup(body.getTerminator()->getOperand(0));
  }
  return value;
}

void storeThroughEpilogues(OpBuilder &b, Location loc,
                           const ContractionKernel &kernel, Value value,
                           ArrayRef<Value> loopIndex) {
  value = applyEpilogues(b, loc, kernel, value, loopIndex);
  linalg::GenericOp contraction = kernel.contraction;
  OpOperand *c = contraction.getDpsInitOperand(0);
  AffineMap map = contraction.getMatchingIndexingMap(c);
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults())
    indices.push_back(loopIndex[cast<AffineDimExpr>(expr).getPosition()]);
  memref::StoreOp::create(b, loc, value, c->get(), indices);
}

Value loadContractionOperand(OpBuilder &b, Location loc, OpOperand &operand,
                             ArrayRef<Value> loopIndex) {
  auto op = cast<linalg::LinalgOp>(operand.getOwner());
  AffineMap map = op.getMatchingIndexingMap(&operand);
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults())
    indices.push_back(loopIndex[cast<AffineDimExpr>(expr).getPosition()]);
  return memref::LoadOp::create(b, loc, operand.get(), indices);
}

Value getThreadIndex(OpBuilder &b, Location loc) {
  return arith::IndexCastUIOp::create(
      b, loc, b.getIndexType(),
      NVVM::ThreadIdXOp::create(b, loc, b.getI32Type()));
}

SmallVector<Value> getLoopSizes(OpBuilder &b, Location loc,
                                linalg::GenericOp op) {
  SmallVector<Value> sizes;
  for (Range range :
       cast<linalg::LinalgOp>(op.getOperation()).createLoopRanges(b, loc))
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
  return sizes;
}

ColumnBlocks getColumnBlocks(OpBuilder &b, Location loc, int64_t columns,
                             int64_t tile) {
  ColumnBlocks blocks;
  if (!ShapedType::isDynamic(columns))
    blocks.count = std::clamp<int64_t>(llvm::divideCeil(columns, tile), 1,
                                       STRATA_CUDA_MAX_BLOCKS_PER_WORKGROUP);
  if (blocks.count == 1) {
    blocks.index = arith::ConstantIndexOp::create(b, loc, 0);
    return blocks;
  }
  Value blockId = arith::IndexCastUIOp::create(
      b, loc, b.getIndexType(),
      NVVM::BlockIdXOp::create(b, loc, b.getI32Type()));
  blocks.index = arith::RemUIOp::create(
      b, loc, blockId, arith::ConstantIndexOp::create(b, loc, blocks.count));
  return blocks;
}

Value KernelArithmetic::index(int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value KernelArithmetic::add(Value x, Value y) {
  return b.createOrFold<arith::AddIOp>(loc, x, y);
}

Value KernelArithmetic::mul(Value x, int64_t y) {
  return b.createOrFold<arith::MulIOp>(loc, x, index(y));
}

Value KernelArithmetic::less(Value x, Value bound) {
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, x, bound);
}

Value KernelArithmetic::clamp(Value x, Value bound) {
  return arith::MinUIOp::create(b, loc, x,
                                arith::SubIOp::create(b, loc, bound, index(1)));
}

Value KernelArithmetic::loadAsF32(OpOperand &operand,
                                  ArrayRef<Value> loopIndex) {
  Value value = loadContractionOperand(b, loc, operand, loopIndex);
  if (value.getType() != b.getF32Type())
    value = arith::ExtFOp::create(b, loc, b.getF32Type(), value);
  return value;
}

} // namespace strata
