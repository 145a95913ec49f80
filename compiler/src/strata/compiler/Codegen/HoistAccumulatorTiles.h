//===- HoistAccumulatorTiles.h - accumulators carried in registers -*- C++ -*-//
//
// A vectorized register tile reads its accumulators at the start of each
// reduction step and writes them at its end. Hoisting that read and write
// out of the reduction loop carries the accumulators in vector registers.
// Upstream's hoistRedundantVectorTransfers refuses transfers on views, and
// buffers with views anywhere in the function, which is every tile here:
// this one looks through views to the binding or temporary they are
// carved from and hoists where nothing else in the loop touches it.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_HOISTACCUMULATORTILES_H_
#define STRATA_COMPILER_CODEGEN_HOISTACCUMULATORTILES_H_

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace strata {

// On buffers, after vectorization: CSE and loop-invariant code motion (the
// read and the write of a tile must use the same view and index values,
// defined outside the loop), then every accumulator read/write pair of a
// scf.for moves out of it, innermost loops first and repeatedly.
void hoistAccumulatorTiles(mlir::func::FuncOp func);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_HOISTACCUMULATORTILES_H_
