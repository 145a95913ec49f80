//===- ExpandFloatRemainder.cpp - exact arith.remf without a libm ---------===//
//
// NVPTX lowers `frem` as x - trunc(x / y) * y, which is wrong once the
// quotient passes the significand (fmod(1e17, 1.5) loses every digit), and
// the cuda target links no libdevice. This pass expands each scalar
// arith.remf into the exact long division fmod is defined by: subtract the
// largest y * 2^k not above the running remainder, halving k down to 0.
// Every subtraction is exact (the operands are within a factor of two), so
// the result is C's fmod to the last bit, whatever the operands' exponents.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace strata {
#define GEN_PASS_DEF_CUDAEXPANDFLOATREMAINDERPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// while (cond(values)) values = body(values), as one scf.while whose
// condition and body see the same values.
using WhileCondition = function_ref<Value(OpBuilder &, Location, ValueRange)>;
using WhileBody =
    function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>;

ValueRange buildWhile(OpBuilder &builder, Location loc, ValueRange initial,
                      WhileCondition condition, WhileBody body) {
  auto loop = scf::WhileOp::create(
      builder, loc, initial.getTypes(), initial,
      [&](OpBuilder &b, Location l, ValueRange values) {
        scf::ConditionOp::create(b, l, condition(b, l, values), values);
      },
      [&](OpBuilder &b, Location l, ValueRange values) {
        scf::YieldOp::create(b, l, body(b, l, values));
      });
  return loop.getResults();
}

struct ExpandScalarRemF : public OpRewritePattern<arith::RemFOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(arith::RemFOp op,
                                PatternRewriter &rewriter) const override {
    auto type = dyn_cast<FloatType>(op.getType());
    if (!type)
      return rewriter.notifyMatchFailure(op, "not a scalar float");
    Location loc = op.getLoc();
    Value x = op.getLhs(), y = op.getRhs();
    auto constant = [&](double value) -> Value {
      return arith::ConstantOp::create(rewriter, loc,
                                       rewriter.getFloatAttr(type, value));
    };
    auto compare = [&](OpBuilder &b, Location l, arith::CmpFPredicate p,
                       Value a, Value c) -> Value {
      return arith::CmpFOp::create(b, l, p, a, c);
    };
    Value zero = constant(0.0), half = constant(0.5), two = constant(2.0);
    Value infinity = arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getFloatAttr(type, APFloat::getInf(type.getFloatSemantics())));
    Value nan = arith::ConstantOp::create(
        rewriter, loc,
        rewriter.getFloatAttr(type, APFloat::getNaN(type.getFloatSemantics())));
    Value ax = math::AbsFOp::create(rewriter, loc, x);
    Value ay = math::AbsFOp::create(rewriter, loc, y);
    // NaN operands, y == 0 and infinite x give NaN; the loops must not see
    // them (an infinite remainder never shrinks, a zero divisor never grows).
    Value invalid = arith::OrIOp::create(
        rewriter, loc,
        arith::OrIOp::create(
            rewriter, loc,
            compare(rewriter, loc, arith::CmpFPredicate::UNO, x, y),
            compare(rewriter, loc, arith::CmpFPredicate::OEQ, ay, zero)),
        compare(rewriter, loc, arith::CmpFPredicate::OEQ, ax, infinity));
    Value one = constant(1.0);
    Value start = arith::SelectOp::create(rewriter, loc, invalid, zero, ax);
    Value divisor = arith::SelectOp::create(rewriter, loc, invalid, one, ay);

    // The largest y * 2^k with 2 * (y * 2^k) > r: doubling is exact and
    // cannot overflow below r.
    Value top =
        buildWhile(
            rewriter, loc, ValueRange{divisor},
            [&](OpBuilder &b, Location l, ValueRange v) {
              Value halfRemainder = arith::MulFOp::create(b, l, start, half);
              return compare(b, l, arith::CmpFPredicate::OLE, v[0],
                             halfRemainder);
            },
            [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
              return {arith::MulFOp::create(b, l, v[0], two)};
            })
            .front();
    // Long division: r < 2t holds throughout, so t <= r makes r - t exact;
    // t stays a multiple y * 2^j (j >= 0) while r >= |y|.
    Value remainder =
        buildWhile(
            rewriter, loc, ValueRange{start, top},
            [&](OpBuilder &b, Location l, ValueRange v) {
              return compare(b, l, arith::CmpFPredicate::OGE, v[0], divisor);
            },
            [&](OpBuilder &b, Location l, ValueRange v) -> SmallVector<Value> {
              Value fits = compare(b, l, arith::CmpFPredicate::OGE, v[0], v[1]);
              Value reduced = arith::SubFOp::create(b, l, v[0], v[1]);
              return {arith::SelectOp::create(b, l, fits, reduced, v[0]),
                      arith::MulFOp::create(b, l, v[1], half)};
            })
            .front();
    Value signed_ = math::CopySignOp::create(rewriter, loc, remainder, x);
    rewriter.replaceOpWithNewOp<arith::SelectOp>(op, invalid, nan, signed_);
    return success();
  }
};

struct CUDAExpandFloatRemainderPass
    : public impl::CUDAExpandFloatRemainderPassBase<
          CUDAExpandFloatRemainderPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<ExpandScalarRemF>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
    WalkResult vectors = getOperation()->walk([](arith::RemFOp op) {
      op.emitOpError("on vectors is not supported by the cuda target");
      return WalkResult::interrupt();
    });
    if (vectors.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace strata
