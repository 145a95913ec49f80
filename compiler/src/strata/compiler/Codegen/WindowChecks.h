//===- WindowChecks.h - one bounds check per convolution window -*- C++ -*-===//
//
// A register tile that reads a padded input in place (PaddedSources.h)
// must check that what it reads lies inside the source. Checked at every
// tap, the check and its branch cost as much as the tap's multiply-adds,
// and the tap loops no longer unroll. The positions a tile reads are
// affine in the tap loops' variables, so their least and greatest values
// over the whole window are known before the loops: one check covers
// every tap. The tap loops are then versioned on it (unswitched): plain
// loads in one copy, masked ones in the other, each unrolled later where
// its taps are few (unrollTapLoops). The first and last tiles of a row of
// up to 32 tiles, which meet the padding, become iterations of their own
// with constant positions.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_WINDOWCHECKS_H_
#define STRATA_COMPILER_CODEGEN_WINDOWCHECKS_H_

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace strata {

// Whether every position lies in [0, its size): one unsigned compare
// each, positions known to lie inside skipped; null when all are.
mlir::Value buildInsideCheck(
    mlir::OpBuilder &builder, mlir::Location loc,
    llvm::ArrayRef<std::pair<mlir::OpFoldResult, int64_t>> positions);

// The same check for every iteration of the register tile's tap loops
// around the insertion point, built before them from each position's least
// and greatest value; null when there are no such loops, when a position
// is not an affine function of them (and of values defined outside them),
// or when nothing needs checking.
mlir::Value buildWindowCheck(
    mlir::OpBuilder &builder, mlir::Location loc,
    llvm::ArrayRef<std::pair<mlir::OpFoldResult, int64_t>> positions);

// Marks `branch`, whose condition is a buildWindowCheck, for
// unswitchWindowChecks.
void markWindowCheck(mlir::scf::IfOp branch);

// Versions the tap loops around every marked window check on it, the
// loops' first and last tiles peeled first. (Each version's taps then
// unroll as any register tile's do: unrollTapLoops.)
void unswitchWindowChecks(mlir::RewriterBase &rewriter,
                          mlir::func::FuncOp func);

// Moves the reads that `canReadAhead` allows (operands the dispatch only
// reads, never the padded source) out of the unrolled versions of each
// window, ahead of them, shared by both; then CSE.
void hoistWindowSharedReads(
    mlir::RewriterBase &rewriter, mlir::func::FuncOp func,
    llvm::function_ref<bool(mlir::Value memref)> canReadAhead);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_WINDOWCHECKS_H_
