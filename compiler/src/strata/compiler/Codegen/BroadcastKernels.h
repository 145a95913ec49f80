//===- BroadcastKernels.h - depthwise and direct convolution kernels -*- C++
//-*-//
//
// The broadcast strategy of the contraction kernels: C[.., v] += A[..] *
// B[.., v + offsets], where A does not read the vector loop v (a depthwise
// or direct convolution's weights). Each step is one weight broadcast to
// all lanes times a row of input lanes at the tap's offset, one FMA per
// vector; the accumulators stay in registers across every tap.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_BROADCASTKERNELS_H_
#define STRATA_COMPILER_CODEGEN_BROADCASTKERNELS_H_

#include <optional>

#include "strata/compiler/Codegen/ContractionStrategy.h"
#include "strata/compiler/Codegen/PaddedSources.h"

#include "mlir/IR/PatternMatch.h"

namespace strata {

// Marks a broadcast kernel's register reduction loops (its taps and
// channel blocks), for unrollTapLoops.
inline constexpr llvm::StringLiteral kRegisterTapLoopMarker =
    "strata.register_tap_loop";

// The tiles of a broadcast kernel for `op`, or nullopt when `op` is not one
// (no input walks the output's innermost loop, or the other input does).
std::optional<ContractionTiles> chooseBroadcastTiles(mlir::linalg::LinalgOp op,
                                                     unsigned vectorBits);

// Whether `op` is an f32 arith op that applies lane by lane to vectors.
bool isLaneWiseArithmetic(mlir::Operation &op);

// Whether `op`'s body is f32 arithmetic that folds its inputs into the
// output element (a pooling's max or sum), each op applicable lane-wise.
bool isLaneWiseReduction(mlir::linalg::LinalgOp op);

// Vectorizes a static register tile of a broadcast kernel (every loop but
// the vector loop, and the row loop when `tiles` has one, has one
// iteration), replacing `op`.
// The accumulator reads are marked as kernel `kernel`'s (AccumulatorFills.h).
// Lanes read from a buffer of `padded` come from its source
// (PaddedSources.h).
mlir::LogicalResult vectorizeBroadcastTile(mlir::RewriterBase &rewriter,
                                           mlir::linalg::LinalgOp op,
                                           const ContractionTiles &tiles,
                                           unsigned kernel,
                                           const PaddedSources &padded);

// Whether the register tiles of `op`, a broadcast kernel of `tiles`, read
// every input as lanes or as one element for the whole tile (a depthwise
// convolution, a pooling): their taps then share input loads once
// unrolled. Not so a direct convolution's, each row broadcasting its own
// element at every step.
bool readsTapsAsLanes(mlir::linalg::LinalgOp op, const ContractionTiles &tiles);

// Steps of tap loops unrolled together, at most (a 5x5 window's 25). A 7x7
// window's 49, unrolled whole, shared so many input vectors between the
// tile's rows that LLVM spilled them in the loop, and those stores to the
// stack stalled the input loads whose addresses matched them modulo 4 KiB
// (the same module 0.38 or 0.62 ms per call from one process to the next,
// as the stack moved).
inline constexpr int64_t kMaxUnrolledTaps = 25;

// Unrolls the tap loops of each nest of a broadcast kernel (marked
// kRegisterTapLoopMarker, unmarked after), innermost first, as long as the
// unrolled loops have at most kMaxUnrolledTaps steps in all; the outer ones
// stay loops. A row's unrolled taps then share their input loads (CSE) and
// need no loop control. Loaded and stored once per tile, the accumulators
// stay in registers either way.
void unrollTapLoops(mlir::func::FuncOp func);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_BROADCASTKERNELS_H_
