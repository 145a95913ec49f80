//===- CacheTileEpilogues.h - epilogues run per cache tile ------*- C++ -*-===//
//
// An epilogue (bias, residual add, activation) that follows a contraction
// in place on its output runs as a pass of its own over the whole output
// tile: one more read and write of it, from L2 or memory once the output is
// larger than the caches (a 112x112 map of 96 channels is 4.8 MB). When
// every cache tile of the contraction completes its elements' reduction,
// the epilogue is applied to each cache tile right after it, while the
// tile's outputs are in L1.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_CACHETILEEPILOGUES_H_
#define STRATA_COMPILER_CODEGEN_CACHETILEEPILOGUES_H_

#include "strata/compiler/Codegen/ContractionStrategy.h"

#include "mlir/IR/PatternMatch.h"

namespace strata {

// The elementwise op right after `op` (only side-effect free ops between)
// that reads `op`'s output buffer and overwrites it in place, element for
// element, when `tiles` complete every output element's reduction inside
// one cache tile. On buffers; null otherwise.
mlir::linalg::GenericOp findCacheTileEpilogue(mlir::linalg::LinalgOp op,
                                              const ContractionTiles &tiles);

// At the rewriter's insertion point: `epilogue` applied to the part of its
// output that `tileOutput` (a chain of unit-stride subviews of that output)
// views, its other operands sliced to match.
mlir::LogicalResult applyEpilogueToTile(mlir::RewriterBase &rewriter,
                                        mlir::linalg::GenericOp epilogue,
                                        mlir::Value tileOutput);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_CACHETILEEPILOGUES_H_
