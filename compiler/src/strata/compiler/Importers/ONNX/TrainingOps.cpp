//===- TrainingOps.cpp - Adagrad, Adam, Momentum (ai.onnx.preview.training)
//-===//
//
// One step of an optimizer is a deterministic elementwise update of each
// tensor it optimizes: inputs R (learning rate, a scalar), T (the update
// count, an int64 scalar), then the tensors X1..Xn, their gradients
// G1..Gn and the optimizer's state (V1..Vn, H1..Hn); outputs the new X,
// then the new state, in the same order. Each output is an elementwise op
// over its tensor's shape with R and T broadcast, as the operator
// definitions (and the ONNX reference) write the update; the ops fuse into
// one dispatch per tensor later.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

// Scalar arithmetic on the element type of one update, in a generic body.
struct UpdateMath {
  OpBuilder &b;
  Location loc;
  Type type;

  Value c(double value) { return createScalar(b, loc, type, value); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
  Value sqrt(Value x) { return math::SqrtOp::create(b, loc, x); }
  // The update count T (int64) as a float of the element type.
  Value count(Value t) { return arith::SIToFPOp::create(b, loc, type, t); }
  // Whether T > 0 (the first update, T = 0, is special in Adam and
  // Momentum).
  Value isLaterUpdate(Value t) {
    Value zero = arith::ConstantIntOp::create(b, loc, t.getType(), 0);
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, t, zero);
  }
  Value select(Value cond, Value x, Value y) {
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  // norm_coefficient * X + G: the gradient with the L2 regularization's.
  Value regularized(double normCoefficient, Value x, Value g) {
    return add(mul(c(normCoefficient), x), g);
  }
};

// Checks the operands shared by the optimizers: R a float scalar, T an
// int64 scalar, and `groups` groups of `count` tensors (X, G, state...)
// where the tensors of one index agree in type; returns `count`.
FailureOr<unsigned> checkOptimizerOperands(NodeContext &ctx, unsigned groups) {
  unsigned tensors = ctx.getNumInputs() < 2 ? 0 : ctx.getNumInputs() - 2;
  if (tensors == 0 || tensors % groups != 0)
    return ctx.fail("expects R, T and " + Twine(groups) +
                    " groups of tensors of equal length (X, G" +
                    (groups > 2 ? ", state" : "") + "), got " +
                    Twine(ctx.getNumInputs()) + " inputs");
  unsigned count = tensors / groups;
  if (ctx.getNumOutputs() > tensors - count)
    return ctx.fail("has " + Twine(ctx.getNumOutputs()) + " outputs; at most " +
                    Twine(tensors - count) +
                    " (the new X and state of each tensor)");
  for (unsigned i = 0; i < ctx.getNumInputs(); ++i)
    if (!ctx.hasInput(i))
      return ctx.fail("input " + Twine(i) + " is missing");
  RankedTensorType r = ctx.getInputType(0), t = ctx.getInputType(1);
  if (r.getRank() != 0 || !isa<FloatType>(r.getElementType()))
    return LogicalResult(ctx.emitError()
                         << "R must be a float scalar, got " << r);
  if (t.getRank() != 0 || !t.getElementType().isInteger(64))
    return LogicalResult(ctx.emitError()
                         << "T must be an int64 scalar, got " << t);
  for (unsigned k = 0; k < count; ++k) {
    RankedTensorType x = ctx.getInputType(2 + k);
    if (x.getElementType() != r.getElementType())
      return LogicalResult(ctx.emitError() << "X" << k + 1 << " (" << x
                                           << ") must have R's element type, "
                                           << r.getElementType());
    for (unsigned group = 1; group < groups; ++group)
      if (ctx.getInputType(2 + group * count + k) != x)
        return ctx.fail("input " + Twine(2 + group * count + k) +
                        " must have the type of X" + Twine(k + 1));
  }
  return count;
}

// Sets output `index` (when the node has it) to an elementwise op over
// tensor `k`'s shape: `body` gets R, T, then tensor `k` of each of the
// `groups` groups of `count` tensors (X, G, state...).
LogicalResult setUpdate(NodeContext &ctx, unsigned groups, unsigned count,
                        unsigned k, unsigned index,
                        function_ref<Value(UpdateMath &, ValueRange)> body) {
  if (!ctx.hasOutput(index))
    return success();
  SmallVector<Value> operands = {ctx.getInput(0), ctx.getInput(1)};
  for (unsigned group = 0; group < groups; ++group)
    operands.push_back(ctx.getInput(2 + group * count + k));
  RankedTensorType type = ctx.getInputType(2 + k);
  Value result =
      createElementwise(ctx.getBuilder(), ctx.getLoc(), operands, type,
                        [&](OpBuilder &nb, Location nl, ValueRange args) {
                          UpdateMath m{nb, nl, type.getElementType()};
                          return body(m, args);
                        });
  return ctx.setOutput(index, result);
}

// Sets the node's outputs from one update per optimized tensor: output
// `j * count + k` is `bodies[j]` over tensor `k` (the new X, then the new
// state, as the optimizers order their outputs).
LogicalResult
setUpdates(NodeContext &ctx, unsigned groups, unsigned count,
           ArrayRef<function_ref<Value(UpdateMath &, ValueRange)>> bodies) {
  for (auto [j, body] : llvm::enumerate(bodies))
    for (unsigned k = 0; k < count; ++k)
      if (failed(setUpdate(ctx, groups, count, k, j * count + k, body)))
        return failure();
  return success();
}

// Adagrad: R' = R / (1 + T * decay_factor); G' = norm_coefficient * X + G;
// H_new = H + G' * G'; X_new = X - R' * G' / (sqrt(H_new) + epsilon).
LogicalResult lowerAdagrad(NodeContext &ctx) {
  FailureOr<unsigned> count = checkOptimizerOperands(ctx, 3);
  if (failed(count))
    return failure();
  double decay = ctx.getFloatAttr("decay_factor", 0.0f);
  double epsilon = ctx.getFloatAttr("epsilon", 0.0f);
  double norm = ctx.getFloatAttr("norm_coefficient", 0.0f);
  // a: R, T, X, G, H.
  auto newH = [&](UpdateMath &m, ValueRange a) {
    Value gr = m.regularized(norm, a[2], a[3]);
    return m.add(a[4], m.mul(gr, gr));
  };
  auto newX = [&](UpdateMath &m, ValueRange a) {
    Value rate = m.div(a[0], m.add(m.c(1), m.mul(m.count(a[1]), m.c(decay))));
    Value scale = m.add(m.sqrt(newH(m, a)), m.c(epsilon));
    return m.sub(a[2],
                 m.div(m.mul(rate, m.regularized(norm, a[2], a[3])), scale));
  };
  return setUpdates(ctx, 3, *count, {newX, newH});
}

// Adam: G' = norm_coefficient * X + G; V_new = alpha * V + (1 - alpha) * G';
// H_new = beta * H + (1 - beta) * G'^2; R' = R * sqrt(1 - beta^T) /
// (1 - alpha^T) when T > 0, else R; X_new = (1 - norm_coefficient_post) *
// (X - R' * V_new / (sqrt(H_new) + epsilon)).
LogicalResult lowerAdam(NodeContext &ctx) {
  FailureOr<unsigned> count = checkOptimizerOperands(ctx, 4);
  if (failed(count))
    return failure();
  double alpha = ctx.getFloatAttr("alpha", 0.9f);
  double beta = ctx.getFloatAttr("beta", 0.999f);
  double epsilon = ctx.getFloatAttr("epsilon", 0.0f);
  double norm = ctx.getFloatAttr("norm_coefficient", 0.0f);
  double normPost = ctx.getFloatAttr("norm_coefficient_post", 0.0f);
  // a: R, T, X, G, V, H.
  auto newV = [&](UpdateMath &m, ValueRange a) {
    Value gr = m.regularized(norm, a[2], a[3]);
    return m.add(m.mul(m.c(alpha), a[4]), m.mul(m.c(1 - alpha), gr));
  };
  auto newH = [&](UpdateMath &m, ValueRange a) {
    Value gr = m.regularized(norm, a[2], a[3]);
    return m.add(m.mul(m.c(beta), a[5]), m.mul(m.c(1 - beta), m.mul(gr, gr)));
  };
  auto newX = [&](UpdateMath &m, ValueRange a) {
    Value t = m.count(a[1]);
    auto power = [&](double base) {
      return math::PowFOp::create(m.b, m.loc, m.c(base), t).getResult();
    };
    Value corrected = m.div(m.mul(a[0], m.sqrt(m.sub(m.c(1), power(beta)))),
                            m.sub(m.c(1), power(alpha)));
    Value rate = m.select(m.isLaterUpdate(a[1]), corrected, a[0]);
    Value scale = m.add(m.sqrt(newH(m, a)), m.c(epsilon));
    Value x = m.sub(a[2], m.mul(rate, m.div(newV(m, a), scale)));
    return m.mul(m.c(1 - normPost), x);
  };
  return setUpdates(ctx, 4, *count, {newX, newV, newH});
}

// Momentum: G' = norm_coefficient * X + G; V_new = alpha * V + beta' * G'
// (beta' = beta when T > 0, else 1); X_new = X - R * V_new ('standard') or
// X - R * (G' + alpha * V_new) ('nesterov').
LogicalResult lowerMomentum(NodeContext &ctx) {
  FailureOr<unsigned> count = checkOptimizerOperands(ctx, 3);
  if (failed(count))
    return failure();
  for (StringRef name : {"alpha", "beta", "norm_coefficient", "mode"})
    if (!ctx.hasAttr(name))
      return ctx.fail("attribute '" + name + "' is required");
  double alpha = ctx.getFloatAttr("alpha", 0.0f);
  double beta = ctx.getFloatAttr("beta", 0.0f);
  double norm = ctx.getFloatAttr("norm_coefficient", 0.0f);
  std::string mode = ctx.getStringAttr("mode", "");
  if (mode != "standard" && mode != "nesterov")
    return ctx.fail("mode '" + mode + "' is not 'standard' or 'nesterov'");
  bool nesterov = mode == "nesterov";
  // a: R, T, X, G, V.
  auto newV = [&](UpdateMath &m, ValueRange a) {
    Value gr = m.regularized(norm, a[2], a[3]);
    Value betaNow = m.select(m.isLaterUpdate(a[1]), m.c(beta), m.c(1));
    return m.add(m.mul(m.c(alpha), a[4]), m.mul(betaNow, gr));
  };
  auto newX = [&](UpdateMath &m, ValueRange a) {
    Value v = newV(m, a);
    Value step =
        nesterov ? m.add(m.regularized(norm, a[2], a[3]), m.mul(m.c(alpha), v))
                 : v;
    return m.sub(a[2], m.mul(a[0], step));
  };
  return setUpdates(ctx, 3, *count, {newX, newV});
}

} // namespace

void addTrainingLowerings(LoweringTable &table) {
  table[std::string(kPreviewTrainingDomain) + ":Adagrad"] = lowerAdagrad;
  table[std::string(kPreviewTrainingDomain) + ":Adam"] = lowerAdam;
  table[std::string(kPreviewTrainingDomain) + ":Momentum"] = lowerMomentum;
}

} // namespace strata::onnx_importer
