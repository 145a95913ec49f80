//===- TransientPlanner.h - one slab for a function's temporaries -*- C++
//-*-===//
//
// Decides where the intermediate tensors of a host function live: every
// dispatch result that does not escape the function (directly or through a
// reshape) gets an offset in one transient slab allocated per call, and two
// intermediates whose lifetimes do not overlap may share bytes. Results of
// dynamic size are planned the same way in a slab of their own per product
// of dynamic dims (a batch; a batch times an image size): their sizes are
// static multiples of it, and so are their offsets and the slab's size,
// which the host program scales at run time (one allocation per call and
// product, not one per dispatch). Results the function returns get their
// own allocations (the caller keeps them), and so do the values a
// conditional's branches read (the functions they call may return them). A
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
#include "llvm/ADT/SmallVector.h"

namespace strata {

// A slab whose size and offsets scale with the product of `factors` (index
// values of the tensor-level host function: dynamic dims of the results it
// holds).
struct ScaledTransientSlab {
  llvm::SmallVector<mlir::Value> factors;
  // Bytes per unit of the product.
  int64_t unitBytes = 0;
};

// Where a dynamically sized result lies: in `scaledSlabs[slab]`, at
// `unitOffset` times the slab's product.
struct ScaledTransientOffset {
  unsigned slab;
  int64_t unitOffset;
};

struct TransientPlan {
  // Byte offset in the slab of each planned dispatch result (and
  // contiguous concatenation).
  llvm::DenseMap<mlir::Value, int64_t> offsets;
  // Dispatch results of dynamic size, in the scaled slabs.
  llvm::DenseMap<mlir::Value, ScaledTransientOffset> scaledOffsets;
  llvm::SmallVector<ScaledTransientSlab> scaledSlabs;
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
