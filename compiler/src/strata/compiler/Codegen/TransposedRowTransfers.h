//===- TransposedRowTransfers.h - register tiles moved as rows -*- C++ -*-===//
//
// A register tile whose lanes run along a strided dimension of its output
// (the output channels of a direct convolution that writes NCHW, its rows
// being pixels: findOutputChannelLanes) moves each row's accumulator as a
// column of the output, one element per lane: 16 scalar stores per row on
// AVX-512. Where a tile's rows are consecutive elements of the output's
// contiguous dimension, its rows x lanes block is transposed in registers
// (log2(rows) rounds of two-vector shuffles) and moved as one contiguous
// vector of rows per lane.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_TRANSPOSEDROWTRANSFERS_H_
#define STRATA_COMPILER_CODEGEN_TRANSPOSEDROWTRANSFERS_H_

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace strata {

// On buffers, after vectorization and hoisting: every run of 1-D transfer
// reads (or writes) of one block, each moving the lanes of a column view
// (a static subview of one view, unit but for a strided lanes dimension)
// at consecutive offsets of the contiguous dimension and with nothing in
// between that writes memory (for reads: that touches it), is replaced by
// one transfer of rows per lane and an in-register transpose.
void transposeRowTransfers(mlir::func::FuncOp func);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_TRANSPOSEDROWTRANSFERS_H_
