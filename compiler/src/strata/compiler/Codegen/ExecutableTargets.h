//===- ExecutableTargets.h - executables of multi-target modules -*- C++
//-*-===//
//
// A module compiled for several targets (--target=cpu,cuda) holds every
// executable once per target: CloneExecutablesPerTarget marks the original
// for the first target and adds a clone `name__target` for each other one,
// naming the original as the executable it is a variant of. Each target's
// lowering then compiles only the executables meant for it, and the host
// program loads, for every executable, the variant of the first target the
// device can run.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_EXECUTABLETARGETS_H_
#define STRATA_COMPILER_CODEGEN_EXECUTABLETARGETS_H_

#include "mlir/IR/BuiltinAttributes.h"
#include "strata/compiler/Dialect/Flow/FlowDialect.h"

namespace strata {

// The target an executable is meant for (a StringAttr); absent when the
// module has one target.
inline constexpr llvm::StringLiteral kExecutableTargetAttrName =
    "strata.target";
// The executable a clone for another target is a variant of.
inline constexpr llvm::StringLiteral kExecutableVariantOfAttrName =
    "strata.variant_of";

// Whether the lowering of `target` must leave `executable` to another one.
inline bool isForAnotherTarget(flow::ExecutableOp executable,
                               llvm::StringRef target) {
  auto marked =
      executable->getAttrOfType<mlir::StringAttr>(kExecutableTargetAttrName);
  return marked && marked.getValue() != target;
}

// The executable `executable` is a variant of, or null for an original.
inline mlir::FlatSymbolRefAttr getVariantOf(flow::ExecutableOp executable) {
  return executable->getAttrOfType<mlir::FlatSymbolRefAttr>(
      kExecutableVariantOfAttrName);
}

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_EXECUTABLETARGETS_H_
