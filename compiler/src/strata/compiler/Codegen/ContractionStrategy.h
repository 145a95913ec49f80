//===- ContractionStrategy.h - register-tiled contraction kernels -*- C++ -*-=//
//
// The kernel strategy for contractions (matmul, batch matmul, convolution as
// a product over im2col or pixels): tile for the caches, then into register
// tiles of `rows x vector` accumulators that stay in vector registers across
// the reduction loop, each step one broadcast per row and full-width FMAs.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_CONTRACTIONSTRATEGY_H_
#define STRATA_COMPILER_CODEGEN_CONTRACTIONSTRATEGY_H_

#include <algorithm>
#include <optional>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace strata {

// Tile sizes per loop of the contraction (0: not tiled at that level).
struct ContractionTiles {
  // Cache tiles, and the order of their loops (outermost first).
  llvm::SmallVector<int64_t> cache;
  llvm::SmallVector<unsigned> cacheLoopOrder;
  // Register tiles inside a cache tile: the row and vector loops tile the
  // accumulator block; the reduction loop steps by one.
  llvm::SmallVector<int64_t> registers;
  unsigned rowLoop = 0, vectorLoop = 0, reductionLoop = 0;
  // A broadcast kernel instead of a contraction (a depthwise or direct
  // convolution: B's lanes are read at a reduction loop's offset, A is one
  // scalar per step): register tiles are one row of lanes, accumulated over
  // every reduction loop.
  bool broadcast = false;
};

// Parallel loops other than the row and vector loops of which a register
// tile spans several iterations (a direct convolution's output-channel
// blocks): their accumulators stay in registers beside the rows'.
inline llvm::SmallVector<unsigned>
getRegisterBlockLoops(const ContractionTiles &tiles) {
  llvm::SmallVector<unsigned> loops;
  for (auto [loop, tile] : llvm::enumerate(tiles.registers))
    if (tile > 1 && loop != tiles.rowLoop && loop != tiles.vectorLoop)
      loops.push_back(loop);
  return loops;
}

// The order of a register tile's loops, outermost first, over all
// `numLoops` loops of the op (those of register tile 0 make no loop): rows,
// output-channel blocks, the vector loop, the reduction loop, then the
// others in loop order (a broadcast kernel's other reductions: taps,
// channels).
llvm::SmallVector<unsigned> getRegisterLoopOrder(const ContractionTiles &tiles,
                                                 unsigned numLoops);

// `tile`, or `range` when that is static and smaller.
inline int64_t clampTile(int64_t tile, int64_t range) {
  if (mlir::ShapedType::isDynamic(range))
    return tile;
  return std::min(tile, range);
}

// Whether `op`'s body is exactly `acc + a * b` of its two inputs (anything
// else, such as an activation fused onto an input, would be recomputed per
// multiply-add and keeps the vector contraction from forming).
bool isPlainMultiplyAdd(mlir::linalg::LinalgOp op);

// Whether `op` is one register tile of `tiles`: every loop but the vector
// loop (and the row and block loops, when the tiles have them) has one
// iteration.
bool isRegisterTileShape(mlir::linalg::LinalgOp op,
                         const ContractionTiles &tiles);

// The tiles for `op` on a machine with `vectorBits`-wide vector registers,
// or nullopt when `op` is not a multiply-add this strategy handles (its
// element types, or no loop that walks the output and an input
// contiguously).
std::optional<ContractionTiles>
chooseContractionTiles(mlir::linalg::LinalgOp op, unsigned vectorBits);

// On buffers: tiles every contraction of `func` the strategy handles and
// vectorizes its full register tiles (partial tiles stay loops). Vector
// contractions are lowered to FMAs; transfers remain for the vector-to-LLVM
// conversions.
mlir::LogicalResult tileAndVectorizeContractions(mlir::func::FuncOp func,
                                                 unsigned vectorBits,
                                                 bool lowerVectors = true);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_CONTRACTIONSTRATEGY_H_
