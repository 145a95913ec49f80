//===- TileAndDistribute.h - executables over a workgroup grid -*- C++ -*-===//
#ifndef STRATA_COMPILER_CODEGEN_TILEANDDISTRIBUTE_H_
#define STRATA_COMPILER_CODEGEN_TILEANDDISTRIBUTE_H_

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/PatternMatch.h"
#include "strata/compiler/Codegen/WorkgroupTiling.h"

namespace strata {

// On tensors: tiles the root op of `func` (what it returns) into
// `tiling.count` tiles of one scf.forall, fusing its producers into the
// tile. Fails, leaving `func` untouched, when some computation would stay
// outside the loop (it would then run in every workgroup).
mlir::LogicalResult tileToWorkgroups(mlir::func::FuncOp func,
                                     const WorkgroupTiling &tiling);

// Rewrites a static constant tensor.pad (a pad root's tile, a pad fused
// into its consumer's tile) as fills of its padding and its source inserted
// into the interior, each written once: short padded rows whole, otherwise
// one slab per padded dimension and side. Outranks upstream's
// decomposition (a fill of the whole result).
void populateDecomposeStaticPadPatterns(mlir::RewritePatternSet &patterns);

// On buffers: appends `workgroup_id` and `workgroup_count` index arguments
// to `func`. When `func` was tiled by tileToWorkgroups, each workgroup runs
// the iteration of the top-level scf.forall matching its id (the loop has
// one iteration per workgroup), or with `chunked` (a grid sized at run
// time) a contiguous range of about 1 / count of its iterations; otherwise
// workgroup 0 runs everything.
mlir::LogicalResult distributeToWorkgroups(mlir::func::FuncOp func, bool tiled,
                                           bool chunked = false);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_TILEANDDISTRIBUTE_H_
