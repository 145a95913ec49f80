//===- ExpandMath.cpp - math functions without libm -----------------------===//
//
// Executables link no libc or libm, so math functions become code: f16/bf16
// math is computed in f32, composite ops are expanded (tan, pow, ...) and
// transcendental f32 functions use polynomial approximations. What remains
// maps onto LLVM instructions (sqrt, fabs, floor, fma, ...) or, where the
// CPU level lacks one, onto Strata's helpers (floor without SSE4.1, fma
// without FMA, and frem everywhere: arith.remf stays, computed exactly by
// fmod; executable_symbols.def).
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DEF_EXPANDMATHPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Math functions on f64 that LLVM would turn into libm calls are computed
// in f32 (the polynomial approximations are f32 only): about 1e-7 relative
// error instead of 1e-16.
bool needsF32Computation(Operation *op) {
  return isa<math::ExpOp, math::Exp2Op, math::ExpM1Op, math::LogOp,
             math::Log2Op, math::Log10Op, math::Log1pOp, math::TanhOp,
             math::ErfOp, math::SinOp, math::CosOp, math::TanOp, math::AtanOp,
             math::Atan2Op, math::AsinOp, math::AcosOp, math::SinhOp,
             math::CoshOp, math::AsinhOp, math::AcoshOp, math::AtanhOp,
             math::PowFOp, math::CbrtOp>(op);
}

struct ComputeF64MathInF32 : public RewritePattern {
  ComputeF64MathInF32(MLIRContext *context)
      : RewritePattern(MatchAnyOpTypeTag(), /*benefit=*/2, context) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    if (!needsF32Computation(op) || op->getNumResults() != 1 ||
        !getElementTypeOrSelf(op->getResult(0).getType()).isF64())
      return failure();
    Type f32 = rewriter.getF32Type();
    auto narrow = [&](Type type) -> Type {
      if (auto shaped = dyn_cast<ShapedType>(type))
        return shaped.clone(f32);
      return f32;
    };
    SmallVector<Value> operands;
    for (Value operand : op->getOperands())
      operands.push_back(arith::TruncFOp::create(
          rewriter, op->getLoc(), narrow(operand.getType()), operand));
    OperationState state(op->getLoc(), op->getName(), operands,
                         {narrow(op->getResult(0).getType())}, op->getAttrs());
    Operation *computed = rewriter.create(state);
    rewriter.replaceOpWithNewOp<arith::ExtFOp>(op, op->getResult(0).getType(),
                                               computed->getResult(0));
    return success();
  }
};

// Integers wider than 64 bits to f16 go through f32: LLVM 22 cannot select
// vector i128 -> f16 conversions on CPUs with AVX512-FP16 (it crashes).
// Exact: an integer whose f16 value is finite is below 65520 and fits f32's
// significand, and one at or above it stays at or above it in f32, which
// then overflows to infinity like the direct conversion.
template <typename ConvertOp>
struct ConvertWideIntToHalfThroughF32 : public OpRewritePattern<ConvertOp> {
  using OpRewritePattern<ConvertOp>::OpRewritePattern;
  LogicalResult matchAndRewrite(ConvertOp op,
                                PatternRewriter &rewriter) const override {
    Type in = getElementTypeOrSelf(op.getIn().getType());
    Type out = getElementTypeOrSelf(op.getType());
    if (!out.isF16() || in.getIntOrFloatBitWidth() <= 64)
      return failure();
    Type f32 = rewriter.getF32Type();
    Type wide = f32;
    if (auto shaped = dyn_cast<ShapedType>(op.getType()))
      wide = shaped.clone(f32);
    Value converted =
        ConvertOp::create(rewriter, op.getLoc(), wide, op.getIn());
    rewriter.replaceOpWithNewOp<arith::TruncFOp>(op, op.getType(), converted);
    return success();
  }
};

// pow with an exponent known only at run time, as C defines it: |x|^y is
// exp(y * log|x|), negated for a negative x and an odd integral y, NaN for
// a negative x and a fractional y, and 1 wherever y is 0. Upstream's
// expansion is NaN for every negative x, but Pow(-2, 2) is 4 (a spectrum's
// squared magnitude with the exponent passed in). Constant exponents are
// left to upstream's expansion (multiplications).
struct ExpandPowFOfVariableExponent : public OpRewritePattern<math::PowFOp> {
  ExpandPowFOfVariableExponent(MLIRContext *context)
      : OpRewritePattern<math::PowFOp>(context, /*benefit=*/2) {}
  LogicalResult matchAndRewrite(math::PowFOp op,
                                PatternRewriter &rewriter) const override {
    if (matchPattern(op.getRhs(), m_Constant()))
      return failure();
    Location loc = op.getLoc();
    Value x = op.getLhs(), y = op.getRhs();
    Type type = x.getType();
    auto constant = [&](double value) -> Value {
      TypedAttr attr = rewriter.getFloatAttr(getElementTypeOrSelf(type), value);
      if (auto shaped = dyn_cast<ShapedType>(type))
        attr = DenseElementsAttr::get(shaped, attr);
      return arith::ConstantOp::create(rewriter, loc, attr);
    };
    auto compare = [&](arith::CmpFPredicate predicate, Value a, Value b) {
      return arith::CmpFOp::create(rewriter, loc, predicate, a, b);
    };
    auto select = [&](Value condition, Value a, Value b) {
      return arith::SelectOp::create(rewriter, loc, condition, a, b);
    };
    Value logOfMagnitude = math::LogOp::create(
        rewriter, loc, math::AbsFOp::create(rewriter, loc, x));
    Value magnitude = math::ExpOp::create(
        rewriter, loc, arith::MulFOp::create(rewriter, loc, y, logOfMagnitude));
    Value integral = compare(arith::CmpFPredicate::OEQ,
                             math::FloorOp::create(rewriter, loc, y), y);
    Value half = arith::MulFOp::create(rewriter, loc, y, constant(0.5));
    Value odd = arith::AndIOp::create(
        rewriter, loc, integral,
        compare(arith::CmpFPredicate::ONE,
                math::FloorOp::create(rewriter, loc, half), half));
    Value ofNegative = select(
        integral,
        select(odd, arith::NegFOp::create(rewriter, loc, magnitude), magnitude),
        constant(std::numeric_limits<double>::quiet_NaN()));
    Value result = select(compare(arith::CmpFPredicate::OLT, x, constant(0)),
                          ofNegative, magnitude);
    rewriter.replaceOp(
        op, select(compare(arith::CmpFPredicate::OEQ, y, constant(0)),
                   constant(1), result));
    return success();
  }
};

struct ExpandMathPass : public impl::ExpandMathPassBase<ExpandMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ComputeF64MathInF32, ExpandPowFOfVariableExponent,
                 ConvertWideIntToHalfThroughF32<arith::SIToFPOp>,
                 ConvertWideIntToHalfThroughF32<arith::UIToFPOp>>(
        &getContext());
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
