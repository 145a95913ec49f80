//===- ExpandMath.cpp - math functions without libm -----------------------===//
//
// Executables link no libc or libm, so math functions become code: f16/bf16
// math is computed in f32, composite ops are expanded (tan, pow, ...) and
// transcendental f32 functions use polynomial approximations. What remains
// maps onto LLVM instructions (sqrt, fabs, floor, fma, ...).
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DEF_EXPANDMATHPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

struct ExpandMathPass : public impl::ExpandMathPassBase<ExpandMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathF32ExpansionPatterns(patterns, [](StringRef) { return true; });
    math::populateExpansionPatterns(patterns);
    MathPolynomialApproximationOptions options;
    populateMathPolynomialApproximationPatterns(patterns, options);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
} // namespace strata
