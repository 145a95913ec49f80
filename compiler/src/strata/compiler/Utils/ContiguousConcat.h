//===- ContiguousConcat.h - concatenations of whole byte ranges --*- C++
//-*-===//
#ifndef STRATA_COMPILER_UTILS_CONTIGUOUSCONCAT_H_
#define STRATA_COMPILER_UTILS_CONTIGUOUSCONCAT_H_

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace strata {

// The alignment of an operand's offset inside a concatenation for its
// producer to write it in place (as aligned as a transient's offset).
inline constexpr int64_t kHostConcatAlignment = 64;

// Whether `concat` lays its operands one after the other in memory: static
// shapes and every dimension before the concatenated one of size 1 (a
// channel concatenation of one image, NCHW or blocked). Such a
// concatenation may be the host program's (FormDispatchRegions leaves it
// out of dispatches where its producers can write their results straight
// into its bytes; the host copies in what it cannot place there).
inline bool isContiguousConcat(mlir::tensor::ConcatOp concat) {
  mlir::RankedTensorType type = concat.getResultType();
  if (!type.hasStaticShape())
    return false;
  for (int64_t dim = 0; dim < int64_t(concat.getDim()); ++dim)
    if (type.getDimSize(dim) != 1)
      return false;
  return llvm::all_of(concat.getInputs(), [](mlir::Value input) {
    return mlir::cast<mlir::RankedTensorType>(input.getType()).hasStaticShape();
  });
}

} // namespace strata

#endif // STRATA_COMPILER_UTILS_CONTIGUOUSCONCAT_H_
