//===- ContiguousConcat.h - concatenations of whole byte ranges --*- C++
//-*-===//
#ifndef STRATA_COMPILER_UTILS_CONTIGUOUSCONCAT_H_
#define STRATA_COMPILER_UTILS_CONTIGUOUSCONCAT_H_

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace strata {

// The alignment of an operand's offset inside a concatenation for its
// producer to write it in place (as aligned as a transient's offset).
inline constexpr int64_t kHostConcatAlignment = 64;

// Whether a concatenation's static result `type` along `dim` has only unit
// dimensions before `dim` (its operands' bytes then follow each other).
inline bool isContiguousConcatResult(mlir::RankedTensorType type,
                                     uint64_t dim) {
  return type.hasStaticShape() &&
         llvm::all_of(type.getShape().take_front(dim),
                      [](int64_t size) { return size == 1; });
}

// Whether `concat` lays its operands one after the other in memory: static
// shapes and every dimension before the concatenated one of size 1 (a
// channel concatenation of one image, NCHW or blocked). Such a
// concatenation may be the host program's (FormDispatchRegions leaves it
// out of dispatches where its producers can write their results straight
// into its bytes; the host copies in what it cannot place there).
inline bool isContiguousConcat(mlir::tensor::ConcatOp concat) {
  if (!isContiguousConcatResult(concat.getResultType(), concat.getDim()))
    return false;
  return llvm::all_of(concat.getInputs(), [](mlir::Value input) {
    return mlir::cast<mlir::RankedTensorType>(input.getType()).hasStaticShape();
  });
}

} // namespace strata

#endif // STRATA_COMPILER_UTILS_CONTIGUOUSCONCAT_H_
