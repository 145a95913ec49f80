//===- FlowDialect.cpp ----------------------------------------------------===//
#include "strata/compiler/Dialect/Flow/FlowDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace strata::flow;

#include "strata/compiler/Dialect/Flow/FlowDialect.cpp.inc"

void FlowDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "strata/compiler/Dialect/Flow/FlowOps.cpp.inc"
      >();
}

LogicalResult DispatchRegionOp::verify() {
  auto terminator = cast<ReturnOp>(getBody().front().getTerminator());
  if (terminator.getOperandTypes() != getResultTypes())
    return emitOpError("returns ")
           << terminator.getOperandTypes().size()
           << " values whose types differ from the region's results";
  return success();
}

ModuleOp ExecutableOp::getInnerModule() {
  for (Operation &op : getBody().front())
    if (auto module = dyn_cast<ModuleOp>(op))
      return module;
  return nullptr;
}

#define GET_OP_CLASSES
#include "strata/compiler/Dialect/Flow/FlowOps.cpp.inc"
