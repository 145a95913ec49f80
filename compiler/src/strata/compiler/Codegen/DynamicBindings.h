//===- DynamicBindings.h - executables over dynamically shaped tensors ----===//
//
// An executable whose tensors have dynamic dims receives them as index
// arguments (push constants) after its tensors: the dynamic dims of each
// argument, of each result, then captured scalars (OutlineDispatchRegions).
// Its results cannot be allocated by the executable, so they become output
// arguments written in place, and its dynamically shaped buffers are bound
// as bare pointers whose sizes are those index arguments.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_DYNAMICBINDINGS_H_
#define STRATA_COMPILER_CODEGEN_DYNAMICBINDINGS_H_

#include "strata/compiler/Codegen/ExecutableLibraryBuilder.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace strata {

// Tensor level: concatenations become copies into their results, and
// each result becomes a writable tensor argument after the
// tensor arguments (before the index ones) that the body's result is
// materialized in; the function still returns it (bufferization makes the
// result the argument's buffer; dropResultsWrittenInPlace removes it).
void passResultsAsDestinations(mlir::func::FuncOp func);

// Buffer level: removes the results that are the function's own arguments.
mlir::LogicalResult dropResultsWrittenInPlace(mlir::func::FuncOp func);

// Buffer level: each of the first `bindingCount` arguments with a dynamic
// shape becomes a rank-0 memref (a bare pointer once lowered) viewed with
// its dims from the index arguments that follow the bindings, in order.
// Returns the extent each such binding must have (checked at dispatch).
mlir::FailureOr<std::vector<BindingExtent>>
bindDynamicBuffers(mlir::func::FuncOp func, unsigned bindingCount);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_DYNAMICBINDINGS_H_
