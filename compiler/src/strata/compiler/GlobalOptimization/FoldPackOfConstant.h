//===- FoldPackOfConstant.h - constants packed at compile time -*- C++ -*-===//
#ifndef STRATA_COMPILER_GLOBALOPTIMIZATION_FOLDPACKOFCONSTANT_H_
#define STRATA_COMPILER_GLOBALOPTIMIZATION_FOLDPACKOFCONSTANT_H_

#include "mlir/IR/PatternMatch.h"

namespace strata {

// A linalg.pack of a constant (weights, biases) becomes the packed constant,
// computed at compile time (a last, partial tile filled with the pack's
// padding value).
void populateFoldPackOfConstantPatterns(mlir::RewritePatternSet &patterns);

} // namespace strata

#endif // STRATA_COMPILER_GLOBALOPTIMIZATION_FOLDPACKOFCONSTANT_H_
