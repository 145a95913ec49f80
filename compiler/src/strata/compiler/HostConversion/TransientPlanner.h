//===- TransientPlanner.h - one slab for a function's temporaries -*- C++
//-*-===//
//
// Decides where the intermediate tensors of a host function live: every
// dispatch result that does not escape the function (directly or through a
// reshape) gets an offset in one transient slab allocated per call, and two
// intermediates whose lifetimes do not overlap may share bytes. Results the
// function returns get their own allocations (the caller keeps them). A
// contiguous concatenation (isContiguousConcat) is a storage too, and a
// dispatch result used only by it is placed inside it: the dispatch writes
// its part of the concatenation and no copy is made.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_HOSTCONVERSION_TRANSIENTPLANNER_H_
#define STRATA_COMPILER_HOSTCONVERSION_TRANSIENTPLANNER_H_

#include <cstdint>

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"

namespace strata {

struct TransientPlan {
  // Byte offset in the slab of each planned dispatch result (and
  // contiguous concatenation).
  llvm::DenseMap<mlir::Value, int64_t> offsets;
  // The operands of contiguous concatenations that are written in place:
  // their producers' results lie inside the concatenation's bytes (their
  // offsets above are there); the others are copied in.
  llvm::DenseSet<mlir::Value> inPlaceConcatOperands;
  // Slab size; 0 when nothing is planned.
  int64_t slabBytes = 0;
};

// Offsets are aligned to this many bytes.
inline constexpr int64_t kTransientAlignment = 64;

// Plans the single-block, tensor-level host function `func` (before its
// conversion to buffers): dispatch results are the storages, reshapes alias
// their source.
TransientPlan planTransients(mlir::func::FuncOp func);

} // namespace strata

#endif // STRATA_COMPILER_HOSTCONVERSION_TRANSIENTPLANNER_H_
