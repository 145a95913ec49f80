//===- HALDialect.cpp -----------------------------------------------------===//
#include "strata/compiler/Dialect/HAL/HALDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace strata::hal;

#include "strata/compiler/Dialect/HAL/HALDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "strata/compiler/Dialect/HAL/HALTypes.cpp.inc"

void HALDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "strata/compiler/Dialect/HAL/HALTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "strata/compiler/Dialect/HAL/HALOps.cpp.inc"
      >();
}

LogicalResult CommandBufferDispatchOp::verify() {
  size_t count = getBindingBuffers().size();
  if (getBindingOffsets().size() != count ||
      getBindingLengths().size() != count)
    return emitOpError("needs one offset and one length per binding buffer");
  return success();
}

#define GET_OP_CLASSES
#include "strata/compiler/Dialect/HAL/HALOps.cpp.inc"
