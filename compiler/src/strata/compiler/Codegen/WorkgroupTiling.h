//===- WorkgroupTiling.h - how a dispatch splits into workgroups -*- C++
//-*-===//
//
// How a dispatch splits into workgroups. ConfigureExecutables chooses it
// once and records it in the executable's lowering config
// (LoweringConfig.h); codegen tiles the executable into exactly that many
// workgroups.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_WORKGROUPTILING_H_
#define STRATA_COMPILER_CODEGEN_WORKGROUPTILING_H_

#include <cstdint>
#include <optional>

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Block.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace strata {

// Workgroups split loop `loop` of the root op into `count` tiles of
// `tileSize` iterations (the last one may be partial). A dynamic count
// (ShapedType::kDynamic: an executable over dynamic shapes) is chosen by
// each dispatch at run time, each workgroup then running a contiguous range
// of the tiles.
struct WorkgroupTiling {
  unsigned loop = 0;
  int64_t tileSize = 0;
  int64_t count = 1;
  // Over dynamic shapes: the work of one iteration of the root's loops, in
  // its contraction's iterations (the multiply-adds of a convolution under
  // an elementwise epilogue root, per output element), so that the grid
  // computed at run time weighs the work and not the root's extents alone.
  int64_t workPerIteration = 1;
};

// Marks a dispatch region, then its executable's entry function, that runs
// as one workgroup whatever its work would split into: decided at dispatch
// formation (MergeSmallDispatchRegions: a small split region merged into
// the one-workgroup region reading it), honoured by ConfigureExecutables.
inline constexpr llvm::StringLiteral kSingleWorkgroupAttr =
    "strata.single_workgroup";

// What the workgroups run on, which shapes the grid.
enum class WorkgroupGrid {
  // A few CPU cores: up to 64 workgroups, wide tiles that reuse what they
  // load from the caches, balanced over 2 and 4 workers.
  cpuCores,
  // A GPU's thread blocks: up to 4096 workgroups, as narrow as the kernels
  // allow, so every multiprocessor gets several blocks.
  gpuBlocks,
};

// The tile of the cuda target's block-tile kernel for contractions
// (Codegen/CUDA/BlockTileKernel.cpp), which spreads a workgroup's columns
// over several blocks: a GPU contraction's workgroups take this many rows.
inline constexpr int64_t kGpuContractionRowTile = 64;

// Whether `pad` pads by a constant with static amounts, its dynamic
// dimensions (a batch) not at all: a broadcast kernel reads such a pad's
// source in place (FusePadsIntoConsumers).
bool isConstantPadOfStaticAmounts(mlir::tensor::PadOp pad);

// Whether `pad` pads by a constant with static amounts to a static shape,
// which a workgroup loop can write directly (fills plus an interior).
bool isStaticConstantPad(mlir::tensor::PadOp pad);

// The pad `terminator` returns when it pads a linalg op's only result by
// a constant: the dispatch then tiles that op and writes its tiles into the
// interior of the padded result (TileAndDistribute.h). Null otherwise.
mlir::tensor::PadOp findPaddedDispatchResult(mlir::Operation *terminator);

// The linalg op producing the only value `terminator` returns (through a
// `findPaddedDispatchResult` pad), or null.
mlir::linalg::LinalgOp findDispatchRoot(mlir::Operation *terminator);

// How to split `root` over workgroups, or nullopt when one workgroup fits
// (little work, or no parallel loop worth splitting). The amount of work is
// that of every linalg op in `root`'s block (a matmul under an elementwise
// root counts). A contraction splits along whole cache tiles of its kernel
// for `vectorBits`-wide vectors.
std::optional<WorkgroupTiling>
chooseWorkgroupTiling(mlir::linalg::LinalgOp root, unsigned vectorBits,
                      WorkgroupGrid grid = WorkgroupGrid::cpuCores);

// The op computing the only value `terminator` returns, when the dispatch
// can split it over workgroups: a linalg op or a tensor.pad. Null otherwise.
mlir::TilingInterface findTileableDispatchRoot(mlir::Operation *terminator);

// How to split the dispatch returning through `terminator`: the linalg
// root's tiling, or a tensor.pad split along an unpadded dimension.
std::optional<WorkgroupTiling>
chooseDispatchWorkgroupTiling(mlir::Operation *terminator, unsigned vectorBits,
                              WorkgroupGrid grid = WorkgroupGrid::cpuCores);

// How to split a dispatch over dynamic shapes: its root's loop and tile
// size (a dynamic count), or nullopt to run it in one workgroup.
std::optional<WorkgroupTiling>
chooseDynamicWorkgroupTiling(mlir::Operation *terminator, unsigned vectorBits);

// The grid a dispatch over dynamic shapes takes at run time: no more
// workgroups than its tiles, than this many, or than give each workgroup
// getDynamicMinIterationsPerWorkgroup() iterations of its root op.
int64_t getDynamicMinIterationsPerWorkgroup();
int64_t getDynamicMaxWorkgroups();

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_WORKGROUPTILING_H_
