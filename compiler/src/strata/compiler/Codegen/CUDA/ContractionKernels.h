//===- ContractionKernels.h - the cuda target's contraction kernels -*- C++
//-*-=//
//
// What TileContractions.cpp (the pass), BlockTileKernel.cpp (products of
// many rows) and FewRowsKernel.cpp (products of a few rows) share: the
// kernel a dispatch's contraction becomes, how the kernels read an operand,
// apply the epilogues and split columns over blocks (ContractionKernels.cpp).
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

// The alignment of the kernels' shared memory: 4-wide f32 vectors.
inline constexpr int64_t kSharedAlignment = 16;

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

// This thread's index in its block.
mlir::Value getThreadIndex(mlir::OpBuilder &b, mlir::Location loc);

// The extent of each loop of `op` (memref.dim where dynamic).
llvm::SmallVector<mlir::Value> getLoopSizes(mlir::OpBuilder &b,
                                            mlir::Location loc,
                                            mlir::linalg::GenericOp op);

// How a workgroup's `columns` (ShapedType::kDynamic when unknown) are
// shared by its blocks in tiles of `tile`: the block count (one tile each
// where the count is known, else one block walking every tile) and this
// block's index among them.
struct ColumnBlocks {
  int64_t count = 1;
  mlir::Value index;
};
ColumnBlocks getColumnBlocks(mlir::OpBuilder &b, mlir::Location loc,
                             int64_t columns, int64_t tile);

// Stores `value` (the sum for C's element at `loopIndex`) through
// `kernel`'s epilogues into C.
void storeThroughEpilogues(mlir::OpBuilder &b, mlir::Location loc,
                           const ContractionKernel &kernel, mlir::Value value,
                           llvm::ArrayRef<mlir::Value> loopIndex);

// The index arithmetic and operand reads both kernel builders write, all
// at one location.
class KernelArithmetic {
protected:
  KernelArithmetic(mlir::OpBuilder &b, mlir::Location loc) : b(b), loc(loc) {}

  mlir::Value index(int64_t value);
  mlir::Value add(mlir::Value x, mlir::Value y);
  mlir::Value mul(mlir::Value x, int64_t y);
  // x < bound, unsigned.
  mlir::Value less(mlir::Value x, mlir::Value bound);
  // `x` kept inside [0, bound), bound > 0: a lane past the edge reads a
  // valid element, whose result is then discarded.
  mlir::Value clamp(mlir::Value x, mlir::Value bound);
  // loadContractionOperand, extended to f32.
  mlir::Value loadAsF32(mlir::OpOperand &operand,
                        llvm::ArrayRef<mlir::Value> loopIndex);

  mlir::OpBuilder &b;
  mlir::Location loc;
};

struct BuiltKernel {
  mlir::Operation *outermost = nullptr;
  int64_t blocksPerWorkgroup = 1;
};

// The shared memory of a block-tile kernel: A's and B's staged slices,
// then C's tile on its way out.
llvm::SmallVector<mlir::MemRefType>
getBlockTileSharedTypes(mlir::MLIRContext *context);

// Writes a block-tile kernel at the builder's point, with the shared
// memory of getBlockTileSharedTypes.
BuiltKernel buildBlockTileKernel(mlir::OpBuilder &b,
                                 const ContractionKernel &kernel,
                                 mlir::Value aShared, mlir::Value bShared,
                                 mlir::Value cShared);

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
