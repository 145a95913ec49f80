//===- AccumulatorFills.h - fills folded into register accumulators -*- C++
//-*-//
//
// A contraction's output is usually filled (with zero) just before the
// contraction accumulates into it: a whole pass over the output, bound by
// memory stores, that cost as much as the multiply-adds of a 1x1
// convolution. Where each register tile accumulates its whole reduction in
// one pass, its accumulators can start as the fill value instead of being
// read back: the fill disappears.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_ACCUMULATORFILLS_H_
#define STRATA_COMPILER_CODEGEN_ACCUMULATORFILLS_H_

#include <optional>

#include "strata/compiler/Codegen/ContractionStrategy.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace strata {

// Marks the accumulator reads of vectorized register tiles, with their
// kernel's index, and the register tiles' reduction loops.
inline constexpr llvm::StringLiteral kAccumulatorReadMarker =
    "strata.accumulator_read";
inline constexpr llvm::StringLiteral kRegisterReductionLoopMarker =
    "strata.register_reduction_loop";

struct AccumulatorFill {
  // The fill (a linalg.fill or a generic yielding one value) of the
  // contraction's output.
  mlir::Operation *fill = nullptr;
  mlir::FloatAttr value;
};

// The fill of `op`'s output that immediately precedes it (only side-effect
// free ops between), when `tiles` accumulate every output element in one
// pass of one register tile: the reduction is not split by cache tiles and
// every other reduction loop has one iteration (a broadcast kernel's
// register tile runs all of them). On buffers.
std::optional<AccumulatorFill>
findAccumulatorFill(mlir::linalg::LinalgOp op, const ContractionTiles &tiles);

// After vectorization and hoisting: the register tiles of kernel `i` with
// `fills[i]` start from the fill value (vectorized tiles whose accumulator
// read left the reduction loop) or fill their own output tile before their
// reduction loop (tiles left as loops, `unvectorized` with their kernel
// index); the fill is then erased. A kernel with a tile that neither applies
// to keeps its fill. Removes the markers.
void foldAccumulatorFills(
    mlir::func::FuncOp func,
    llvm::ArrayRef<std::optional<AccumulatorFill>> fills,
    llvm::ArrayRef<std::pair<mlir::linalg::LinalgOp, unsigned>> unvectorized);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_ACCUMULATORFILLS_H_
