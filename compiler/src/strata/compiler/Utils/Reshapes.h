//===- Reshapes.h - what a reshape does to dynamic dims -----------*- C++
//-*-===//
#ifndef STRATA_COMPILER_UTILS_RESHAPES_H_
#define STRATA_COMPILER_UTILS_RESHAPES_H_

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace strata {

// Whether a reshape by `reassociation` whose larger-rank side is
// `expanded` leaves every dynamic dim whole: each is a group of its own (a
// dynamic batch), and every group that splits or joins dims is static.
inline bool leavesDynamicDimsWhole(
    mlir::RankedTensorType expanded,
    llvm::ArrayRef<mlir::ReassociationIndices> reassociation) {
  return llvm::all_of(
      reassociation, [&](const mlir::ReassociationIndices &group) {
        return group.size() == 1 || llvm::none_of(group, [&](int64_t dim) {
                 return expanded.isDynamicDim(dim);
               });
      });
}

inline bool leavesDynamicDimsWhole(mlir::tensor::ExpandShapeOp expand) {
  return leavesDynamicDimsWhole(expand.getResultType(),
                                expand.getReassociationIndices());
}

inline bool leavesDynamicDimsWhole(mlir::tensor::CollapseShapeOp collapse) {
  return leavesDynamicDimsWhole(collapse.getSrcType(),
                                collapse.getReassociationIndices());
}

} // namespace strata

#endif // STRATA_COMPILER_UTILS_RESHAPES_H_
