//===- ThreadBlocks.h - how the cuda target's kernels use thread blocks ---===//
//
// What the cuda target's passes agree on: the block every kernel is
// launched with, and the attributes by which one pass tells the next how a
// kernel already uses its threads and blocks.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_CUDA_THREADBLOCKS_H_
#define STRATA_COMPILER_CODEGEN_CUDA_THREADBLOCKS_H_

#include <cstdint>

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace strata {

// Threads per block of every export.
inline constexpr int64_t kCudaThreadsPerBlock = 256;

// On an entry function (i64): the thread blocks launched per workgroup
// along x (cuda_executable_format.h's blocks_per_workgroup); absent means
// one. The workgroup id is then blockIdx.x divided by it.
inline constexpr const char kBlocksPerWorkgroupAttr[] =
    "strata.cuda.blocks_per_workgroup";

// On an op of a kernel (unit): code written for the whole block, every
// thread running it with its own thread id and the barriers inside it.
// DistributeToThreads leaves it as it is.
inline constexpr const char kBlockCooperativeAttr[] =
    "strata.cuda.block_cooperative";

// The loops of C[.., m, n] += A[.., m, k] * B[.., k, n] (maps in any
// order; batch loops are the other parallel ones).
struct ThreadBlockContractionLoops {
  unsigned m = 0, n = 0, k = 0;
  llvm::SmallVector<unsigned> batch;
};

// The loops of `op` when it is a contraction the cuda target writes as a
// thread-block kernel (TileContractions.cpp): f32 multiply-adds (inputs
// may be extended to f32), one loop of each kind, at least a few rows.
// Its workgroups then take whole row tiles of that kernel
// (WorkgroupTiling.cpp). Other contractions run one thread per element.
std::optional<ThreadBlockContractionLoops>
getThreadBlockContractionLoops(mlir::linalg::LinalgOp op);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_CUDA_THREADBLOCKS_H_
