//===- ContractionKernels.h - the cuda target's contraction kernels -*- C++
//-*-=//
//
// What TileContractions.cpp (the pass, and the block-tile kernel for
// products of many rows) and FewRowsKernel.cpp (products of a few rows)
// share: the kernel a dispatch's contraction becomes, and how either
// kernel reads an operand and applies the epilogues.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_CUDA_CONTRACTIONKERNELS_H_
#define STRATA_COMPILER_CODEGEN_CUDA_CONTRACTIONKERNELS_H_

#include "strata/compiler/Codegen/CUDA/ThreadBlocks.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace strata {

// Products of fewer rows than this run as a few-rows kernel.
inline constexpr int64_t kMinBlockTileRows = 16;

// A dispatch's contraction with the fill that starts it and the
// elementwise epilogues after it, all on the same C.
struct ContractionKernel {
  mlir::linalg::GenericOp contraction;
  // For a few-rows kernel, `m` is unused and `batch` holds every parallel
  // loop but the column loop `n` (the rows, at most kMinBlockTileRows - 1).
  ThreadBlockContractionLoops loops;
  bool fewRows = false;
  mlir::linalg::GenericOp fill;
  mlir::Value fillValue;
  llvm::SmallVector<mlir::linalg::GenericOp> epilogues;
};

// The loops of a contraction of fewer than kMinBlockTileRows rows: one
// column loop, one reduction loop, the others parallel and static (their
// product the row count). Nullopt for other ops.
std::optional<ThreadBlockContractionLoops>
getFewRowsContractionLoops(mlir::linalg::LinalgOp op);

// The element of `operand` of `kernel`'s contraction at the loop indices
// `loopIndex` (one per loop).
mlir::Value loadContractionOperand(mlir::OpBuilder &b, mlir::Location loc,
                                   mlir::OpOperand &operand,
                                   llvm::ArrayRef<mlir::Value> loopIndex);

// `value` (C's element at `loopIndex`) after `kernel`'s epilogues.
mlir::Value applyEpilogues(mlir::OpBuilder &b, mlir::Location loc,
                           const ContractionKernel &kernel, mlir::Value value,
                           llvm::ArrayRef<mlir::Value> loopIndex);

struct BuiltKernel {
  mlir::Operation *outermost = nullptr;
  int64_t blocksPerWorkgroup = 1;
};

// The shared memory a few-rows kernel sums its warps' partial results in.
mlir::MemRefType getFewRowsPartialsType(mlir::MLIRContext *context);

// Writes a few-rows kernel at the builder's point: each warp sums a part
// of the reduction for 32 columns, the parts are added in shared memory
// (`partials`, getFewRowsPartialsType), then the fill, epilogues and store.
BuiltKernel buildFewRowsKernel(mlir::OpBuilder &b,
                               const ContractionKernel &kernel,
                               mlir::Value partials);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_CUDA_CONTRACTIONKERNELS_H_
