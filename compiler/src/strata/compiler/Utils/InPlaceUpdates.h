//===- InPlaceUpdates.h - the tensor a chain of updates writes --*- C++ -*-===//
#ifndef STRATA_COMPILER_UTILS_INPLACEUPDATES_H_
#define STRATA_COMPILER_UTILS_INPLACEUPDATES_H_

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace strata {

// The tensor that `value` is an update of, followed back through
// destination operands (the tensor an op writes into), loops whose every
// iteration yields an update of the value it was given (the loop's initial
// value), and sequential regions (the value they yield); `value` itself when
// it updates nothing. The result has `value`'s type, and bufferized in place
// the whole chain writes its buffer: what computes a sequential region's
// output in loops (one element or slice at a time) writes it there.
inline mlir::Value getUpdatedTensor(mlir::Value value) {
  while (auto result = llvm::dyn_cast<mlir::OpResult>(value)) {
    mlir::Operation *owner = result.getOwner();
    unsigned index = result.getResultNumber();
    if (auto update =
            llvm::dyn_cast<mlir::DestinationStyleOpInterface>(owner)) {
      value = update.getTiedOpOperand(result)->get();
      continue;
    }
    if (auto sequential = llvm::dyn_cast<mlir::scf::ExecuteRegionOp>(owner)) {
      if (!sequential.getRegion().hasOneBlock())
        return value;
      value = sequential.getRegion().front().getTerminator()->getOperand(index);
      continue;
    }
    auto loop = llvm::dyn_cast<mlir::scf::ForOp>(owner);
    if (!loop || getUpdatedTensor(loop.getYieldedValues()[index]) !=
                     loop.getRegionIterArgs()[index])
      return value;
    value = loop.getInitArgs()[index];
  }
  return value;
}

} // namespace strata

#endif // STRATA_COMPILER_UTILS_INPLACEUPDATES_H_
