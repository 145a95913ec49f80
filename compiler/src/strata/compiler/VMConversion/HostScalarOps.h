//===- HostScalarOps.h - host program shape arithmetic to VM ops ----------===//
//
// The host program computes shapes at run time (dynamic dims, buffer
// sizes, push constants) with arith ops on i64 (index), i32 and i1, and
// checks them with cf.assert; the VM holds i1 and i32 in its i32 registers
// and i64 in its i64 ones.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_VMCONVERSION_HOSTSCALAROPS_H_
#define STRATA_COMPILER_VMCONVERSION_HOSTSCALAROPS_H_

#include "mlir/Dialect/ControlFlow/IR/ControlFlowOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace strata {

// Emits `op` (an arith op on integers) as VM ops at `body`, mapping its
// results. Fails, with an error at `op`, for an op it does not convert.
mlir::LogicalResult convertHostScalarOp(mlir::Operation *op,
                                        mlir::OpBuilder &body,
                                        mlir::IRMapping &mapping);

// Emits a run-time check: `body` goes on in a new block where it holds;
// elsewhere the call fails (INVALID_ARGUMENT) with the check's message.
mlir::LogicalResult convertHostCheck(mlir::cf::AssertOp check,
                                     mlir::OpBuilder &body,
                                     mlir::IRMapping &mapping);

} // namespace strata

#endif // STRATA_COMPILER_VMCONVERSION_HOSTSCALAROPS_H_
