//===- TransposesAsReshapes.h - unit-dim transposes as views ----*- C++ -*-===//
#ifndef STRATA_COMPILER_DISPATCHCREATION_TRANSPOSESASRESHAPES_H_
#define STRATA_COMPILER_DISPATCHCREATION_TRANSPOSESASRESHAPES_H_

#include "mlir/IR/PatternMatch.h"

namespace strata {

// Rewrites each linalg.transpose that moves only dimensions of size 1 into
// a collapse_shape of its input and an expand_shape to its result's shape.
void populateTransposesAsReshapesPatterns(mlir::RewritePatternSet &patterns);

} // namespace strata

#endif // STRATA_COMPILER_DISPATCHCREATION_TRANSPOSESASRESHAPES_H_
