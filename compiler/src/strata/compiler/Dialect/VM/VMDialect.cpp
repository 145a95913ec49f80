//===- VMDialect.cpp ------------------------------------------------------===//
#include "strata/compiler/Dialect/VM/VMDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace strata::vm;

#include "strata/compiler/Dialect/VM/VMDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "strata/compiler/Dialect/VM/VMTypes.cpp.inc"

void VMDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "strata/compiler/Dialect/VM/VMTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "strata/compiler/Dialect/VM/VMOps.cpp.inc"
      >();
}

ParseResult FuncOp::parse(OpAsmParser &parser, OperationState &result) {
  auto buildFuncType =
      [](Builder &builder, ArrayRef<Type> argTypes, ArrayRef<Type> results,
         function_interface_impl::VariadicFlag,
         std::string &) { return builder.getFunctionType(argTypes, results); };
  return function_interface_impl::parseFunctionOp(
      parser, result, /*allowVariadic=*/false,
      getFunctionTypeAttrName(result.name), buildFuncType,
      getArgAttrsAttrName(result.name), getResAttrsAttrName(result.name));
}

void FuncOp::print(OpAsmPrinter &printer) {
  function_interface_impl::printFunctionOp(
      printer, *this, /*isVariadic=*/false, getFunctionTypeAttrName(),
      getArgAttrsAttrName(), getResAttrsAttrName());
}

SuccessorOperands BranchOp::getSuccessorOperands(unsigned index) {
  return SuccessorOperands(getDestOperandsMutable());
}

SuccessorOperands CondBranchOp::getSuccessorOperands(unsigned index) {
  return SuccessorOperands(index == 0 ? getTrueDestOperandsMutable()
                                      : getFalseDestOperandsMutable());
}

#define GET_OP_CLASSES
#include "strata/compiler/Dialect/VM/VMOps.cpp.inc"
