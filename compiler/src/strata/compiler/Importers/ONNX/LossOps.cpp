//===- LossOps.cpp - NegativeLogLikelihoodLoss, SoftmaxCrossEntropyLoss ---===//
//
// Both losses are deterministic functions of their inputs (a model may
// compute its loss at inference), lowered as the ONNX reference defines
// them: per element of the target, the negated input at the target's class
// times the class weight (0 where the target is ignore_index), then the
// reduction ('none', 'sum', or 'mean' = sum / sum of the weights used).
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

Value addF(OpBuilder &b, Location loc, ValueRange a) {
  return arith::AddFOp::create(b, loc, a[0], a[1]);
}

// log(softmax(x)) over axis 1, computed as (x - max) - log(sum(exp(x - max))).
Value createLogSoftmaxAxis1(OpBuilder &b, Location loc, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  Type et = type.getElementType();
  Value max = createReduction(
      b, loc, x, {1}, /*keepDims=*/true, createScalar(b, loc, et, -INFINITY),
      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::MaximumFOp::create(nb, nl, a[0], a[1]);
      });
  Value shifted =
      createElementwise(b, loc, {x, max}, type,
                        [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                          return arith::SubFOp::create(nb, nl, a[0], a[1]);
                        });
  Value exp =
      createElementwise(b, loc, {shifted}, type,
                        [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                          return math::ExpOp::create(nb, nl, a[0]);
                        });
  Value sum = createReduction(b, loc, exp, {1}, /*keepDims=*/true,
                              createScalar(b, loc, et, 0), addF);
  return createElementwise(
      b, loc, {shifted, sum}, type,
      [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
        return arith::SubFOp::create(nb, nl, a[0],
                                     math::LogOp::create(nb, nl, a[1]));
      });
}

// The negative log-likelihood of `logProb` ([N, C, d...]) at `target`
// ([N, d...]) with optional class `weight` ([C]); inputs 1 and 2 of the node
// are the target and the weight.
LogicalResult lowerNLL(NodeContext &ctx, Value logProb) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  auto inputType = cast<RankedTensorType>(logProb.getType());
  Type et = inputType.getElementType();
  if (!isa<FloatType>(et))
    return ctx.fail("input must be floating-point");
  RankedTensorType targetType = ctx.getInputType(1);
  int64_t rank = inputType.getRank();
  if (rank < 2 || targetType.getRank() != rank - 1)
    return ctx.fail("input must be [N, C, d...] and target [N, d...]");
  int64_t numClasses = inputType.getDimSize(1);
  std::string reduction = ctx.getStringAttr("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return ctx.fail("unknown reduction '" + reduction + "'");
  bool hasIgnore = ctx.hasAttr("ignore_index");
  int64_t ignoreIndex = ctx.getIntAttr("ignore_index", 0);
  bool hasWeight = ctx.hasInput(2);
  Value weight = hasWeight ? ctx.getInput(2) : Value();
  auto targetMap = b.getMultiDimIdentityMap(targetType.getRank());
  auto elementType = RankedTensorType::get(targetType.getShape(), et);

  // The weight of each target element: the class weight (class clamped into
  // range as numpy's take(mode='clip') does), 1 without weights, 0 where
  // the target is ignored.
  auto ignored = [&](OpBuilder &nb, Location nl, Value target) -> Value {
    if (!hasIgnore)
      return createScalar(nb, nl, nb.getI1Type(), 0);
    return arith::CmpIOp::create(
        nb, nl, arith::CmpIPredicate::eq, target,
        createScalar(nb, nl, target.getType(), ignoreIndex));
  };
  auto clampedClass = [&](OpBuilder &nb, Location nl, Value target) -> Value {
    Value i = arith::IndexCastOp::create(nb, nl, nb.getIndexType(), target);
    i = arith::MaxSIOp::create(nb, nl, i,
                               arith::ConstantIndexOp::create(nb, nl, 0));
    return arith::MinSIOp::create(
        nb, nl, i, arith::ConstantIndexOp::create(nb, nl, numClasses - 1));
  };
  Value weights = createIndexedGeneric(
      b, loc, {ctx.getInput(1)}, {targetMap}, elementType,
      [&](OpBuilder &nb, Location nl, ValueRange args, ArrayRef<Value>) {
        Value w = hasWeight ? tensor::ExtractOp::create(
                                  nb, nl, weight,
                                  ValueRange{clampedClass(nb, nl, args[0])})
                                  .getResult()
                            : createScalar(nb, nl, et, 1);
        return arith::SelectOp::create(nb, nl, ignored(nb, nl, args[0]),
                                       createScalar(nb, nl, et, 0), w)
            .getResult();
      });
  Value losses = createIndexedGeneric(
      b, loc, {ctx.getInput(1), weights}, {targetMap, targetMap}, elementType,
      [&](OpBuilder &nb, Location nl, ValueRange args, ArrayRef<Value> ivs) {
        SmallVector<Value> coords{ivs[0], clampedClass(nb, nl, args[0])};
        coords.append(ivs.begin() + 1, ivs.end());
        Value x = tensor::ExtractOp::create(nb, nl, logProb, coords);
        Value loss = arith::MulFOp::create(
            nb, nl, arith::NegFOp::create(nb, nl, x), args[1]);
        // Not x * 0: an ignored class may hold -inf.
        return arith::SelectOp::create(nb, nl, ignored(nb, nl, args[0]),
                                       createScalar(nb, nl, et, 0), loss)
            .getResult();
      });
  if (reduction == "none")
    return ctx.setOutput(0, losses);
  SmallVector<int64_t> allAxes =
      llvm::to_vector(llvm::seq<int64_t>(0, targetType.getRank()));
  Value total = createReduction(b, loc, losses, allAxes, /*keepDims=*/false,
                                createScalar(b, loc, et, 0), addF);
  if (reduction == "sum")
    return ctx.setOutput(0, total);
  Value count;
  if (hasWeight || hasIgnore)
    count = createReduction(b, loc, weights, allAxes, /*keepDims=*/false,
                            createScalar(b, loc, et, 0), addF);
  else
    count = createFilled(
        b, loc, RankedTensorType::get({}, et),
        createScalar(b, loc, et,
                     static_cast<double>(targetType.getNumElements())));
  Value mean =
      createElementwise(b, loc, {total, count}, RankedTensorType::get({}, et),
                        [](OpBuilder &nb, Location nl, ValueRange a) -> Value {
                          return arith::DivFOp::create(nb, nl, a[0], a[1]);
                        });
  return ctx.setOutput(0, mean);
}

LogicalResult lowerSoftmaxCrossEntropy(NodeContext &ctx) {
  RankedTensorType scoresType = ctx.getInputType(0);
  if (scoresType.getRank() < 2 || !isa<FloatType>(scoresType.getElementType()))
    return ctx.fail("scores must be floating-point [N, C, d...]");
  Value logProb =
      createLogSoftmaxAxis1(ctx.getBuilder(), ctx.getLoc(), ctx.getInput(0));
  if (failed(lowerNLL(ctx, logProb)))
    return failure();
  return ctx.setOutput(1, logProb);
}

} // namespace

void addLossLowerings(LoweringTable &t) {
  t["NegativeLogLikelihoodLoss"] = [](NodeContext &ctx) {
    return lowerNLL(ctx, ctx.getInput(0));
  };
  t["SoftmaxCrossEntropyLoss"] = lowerSoftmaxCrossEntropy;
}

} // namespace strata::onnx_importer
