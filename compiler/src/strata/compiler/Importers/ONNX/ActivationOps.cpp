//===- ActivationOps.cpp - Relu, Sigmoid, Clip, Elu, ... ------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

using UnaryFn = std::function<Value(OpBuilder &, Location, Value)>;

// One elementwise generic over input 0 (plus broadcast inputs 1.. when
// `useAllInputs`), result shape and type from shape inference.
LogicalResult lowerUnary(NodeContext &ctx, const UnaryFn &fn) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  Value result =
      createElementwise(ctx.getBuilder(), ctx.getLoc(), {ctx.getInput(0)},
                        *type, [&](OpBuilder &b, Location loc, ValueRange a) {
                          return fn(b, loc, a[0]);
                        });
  return ctx.setOutput(0, result);
}

Value cst(OpBuilder &b, Location loc, Value like, double v) {
  return createScalar(b, loc, like.getType(), v);
}

Value cmpGT(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x, y);
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, x, y);
}

Value maxOf(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::MaximumFOp::create(b, loc, x, y);
  return arith::MaxSIOp::create(b, loc, x, y);
}

Value minOf(OpBuilder &b, Location loc, Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return arith::MinimumFOp::create(b, loc, x, y);
  return arith::MinSIOp::create(b, loc, x, y);
}

Value sigmoid(OpBuilder &b, Location loc, Value x) {
  Value negX = arith::NegFOp::create(b, loc, x);
  Value e = math::ExpOp::create(b, loc, negX);
  Value one = cst(b, loc, x, 1);
  Value d = arith::AddFOp::create(b, loc, one, e);
  return arith::DivFOp::create(b, loc, one, d);
}

// x * sigmoid(alpha x)
Value swish(OpBuilder &b, Location loc, Value x, double alpha) {
  Value scaled = arith::MulFOp::create(b, loc, cst(b, loc, x, alpha), x);
  return arith::MulFOp::create(b, loc, x, sigmoid(b, loc, scaled));
}

// log(1 + exp(x)), stable for large x: max(x, 0) + log1p(exp(-|x|)).
Value softplus(OpBuilder &b, Location loc, Value x) {
  Value zero = cst(b, loc, x, 0);
  Value absX = math::AbsFOp::create(b, loc, x);
  Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, absX));
  Value l = math::Log1pOp::create(b, loc, e);
  return arith::AddFOp::create(b, loc,
                               arith::MaximumFOp::create(b, loc, x, zero), l);
}

// x < 0 ? alpha * (exp(x) - 1) : x
Value elu(OpBuilder &b, Location loc, Value x, double alpha) {
  Value zero = cst(b, loc, x, 0);
  Value e = math::ExpM1Op::create(b, loc, x);
  Value neg = arith::MulFOp::create(b, loc, cst(b, loc, x, alpha), e);
  Value isNeg =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, zero);
  return arith::SelectOp::create(b, loc, isNeg, neg, x);
}

LogicalResult lowerClip(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Type elementType = type->getElementType();
  SmallVector<Value> inputs{ctx.getInput(0)};
  bool hasMin = false, hasMax = false;
  if (ctx.getOpset() < 11) {
    // Bounds are attributes before opset 11.
    auto scalarTensor = [&](float v) {
      auto t = RankedTensorType::get({}, elementType);
      return createFilled(b, loc, t, createScalar(b, loc, elementType, v));
    };
    hasMin = hasMax = true;
    inputs.push_back(scalarTensor(ctx.getFloatAttr("min", -INFINITY)));
    inputs.push_back(scalarTensor(ctx.getFloatAttr("max", INFINITY)));
  } else {
    if ((hasMin = ctx.hasInput(1)))
      inputs.push_back(ctx.getInput(1));
    if ((hasMax = ctx.hasInput(2)))
      inputs.push_back(ctx.getInput(2));
  }
  bool isUnsigned = ctx.isInputUnsigned(0);
  Value result = createElementwise(
      b, loc, inputs, *type, [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value x = a[0];
        unsigned next = 1;
        auto clampBy = [&](Value bound, bool lower) -> Value {
          if (isa<FloatType>(x.getType()))
            return lower
                       ? arith::MaximumFOp::create(nb, nl, x, bound).getResult()
                       : arith::MinimumFOp::create(nb, nl, x, bound)
                             .getResult();
          if (isUnsigned)
            return lower ? arith::MaxUIOp::create(nb, nl, x, bound).getResult()
                         : arith::MinUIOp::create(nb, nl, x, bound).getResult();
          return lower ? arith::MaxSIOp::create(nb, nl, x, bound).getResult()
                       : arith::MinSIOp::create(nb, nl, x, bound).getResult();
        };
        if (hasMin)
          x = clampBy(a[next++], /*lower=*/true);
        if (hasMax)
          x = clampBy(a[next++], /*lower=*/false);
        return x;
      });
  return ctx.setOutput(0, result);
}

LogicalResult lowerPRelu(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  // The slope broadcasts unidirectionally onto X (opset >= 7). Before
  // opset 7 a 1-D slope was per channel (dim 1), and libonnx's version
  // adapter keeps it as is: when it cannot broadcast numpy-style but
  // matches the channels, it is reshaped to [C, 1, ...].
  Value slope = ctx.getInput(1);
  RankedTensorType xt = ctx.getInputType(0), st = ctx.getInputType(1);
  if (st.getRank() == 1 && xt.getRank() >= 2 &&
      st.getDimSize(0) != xt.getDimSize(xt.getRank() - 1) &&
      st.getDimSize(0) != 1 && st.getDimSize(0) == xt.getDimSize(1)) {
    SmallVector<int64_t> shape(xt.getRank() - 1, 1);
    shape[0] = st.getDimSize(0);
    slope = createReshape(ctx.getBuilder(), ctx.getLoc(), slope, shape);
  }
  Value result = createElementwise(
      ctx.getBuilder(), ctx.getLoc(), {ctx.getInput(0), slope}, *type,
      [](OpBuilder &b, Location loc, ValueRange a) -> Value {
        Value zero = cst(b, loc, a[0], 0);
        Value neg = isa<FloatType>(a[0].getType())
                        ? arith::MulFOp::create(b, loc, a[0], a[1]).getResult()
                        : arith::MulIOp::create(b, loc, a[0], a[1]).getResult();
        return arith::SelectOp::create(b, loc, cmpGT(b, loc, zero, a[0]), neg,
                                       a[0]);
      });
  return ctx.setOutput(0, result);
}

// A uniform draw in [0, 1) for element `index` of a generator seeded with
// `seed`: splitmix64 of the seeded index, its top 24 bits as an f32.
// Counter-based, so every element draws independently of the others and
// of the order workgroups run in; no state is kept between calls (each
// call draws the same numbers).
Value createUniformDraw(OpBuilder &b, Location loc, int64_t seed, Value index) {
  Type i64 = b.getI64Type();
  auto c = [&](uint64_t v) -> Value {
    return arith::ConstantIntOp::create(b, loc, i64, int64_t(v));
  };
  auto mix = [&](Value z, unsigned shift, uint64_t factor) -> Value {
    Value shifted = arith::ShRUIOp::create(b, loc, z, c(shift));
    return arith::MulIOp::create(
        b, loc, arith::XOrIOp::create(b, loc, z, shifted), c(factor));
  };
  Value counter = arith::AddIOp::create(b, loc, index, c(1));
  Value z = arith::AddIOp::create(
      b, loc, c(uint64_t(seed)),
      arith::MulIOp::create(b, loc, counter, c(0x9E3779B97F4A7C15ull)));
  z = mix(z, 30, 0xBF58476D1CE4E5B9ull);
  z = mix(z, 27, 0x94D049BB133111EBull);
  z = arith::XOrIOp::create(b, loc, z,
                            arith::ShRUIOp::create(b, loc, z, c(31)));
  Value top = arith::ShRUIOp::create(b, loc, z, c(40));
  Value asFloat = arith::UIToFPOp::create(b, loc, b.getF32Type(), top);
  return arith::MulFOp::create(
      b, loc, asFloat,
      arith::ConstantOp::create(b, loc, b.getF32FloatAttr(1.0f / (1 << 24))));
}

// Dropout: the identity (and an all-true mask) in inference. In training
// mode (training_mode true, known or at run time) each element is kept
// when a uniform draw is at least `ratio` and then scaled by
// 1 / (1 - ratio), else zeroed; the mask says which were kept. A ratio of 0
// keeps every element. The draws follow the `seed` attribute (0 without
// one) and cannot match another implementation's generator.
LogicalResult lowerDropout(NodeContext &ctx) {
  bool maybeTraining = false;
  if (ctx.hasInput(2)) {
    std::optional<DenseElementsAttr> mode = ctx.getConstantInput(2);
    if (mode && mode->getNumElements() != 1)
      return ctx.fail("training_mode must be a scalar");
    maybeTraining = !mode || !mode->getValues<APInt>()[0].isZero();
  }
  if (ctx.hasInput(1)) {
    RankedTensorType ratioType = ctx.getInputType(1);
    if (ratioType.getNumElements() != 1 ||
        !isa<FloatType>(ratioType.getElementType()))
      return ctx.fail("ratio must be a float scalar");
  }
  if (ctx.hasInput(2) && (ctx.getInputType(2).getNumElements() != 1 ||
                          !ctx.getInputType(2).getElementType().isInteger(1)))
    return ctx.fail("training_mode must be a bool scalar");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value x = ctx.getInput(0);
  auto xType = cast<RankedTensorType>(x.getType());
  FailureOr<RankedTensorType> maskType =
      ctx.hasOutput(1) ? ctx.getOutputType(1)
                       : FailureOr<RankedTensorType>(RankedTensorType());
  if (failed(maskType))
    return failure();
  if (!maybeTraining) {
    if (failed(ctx.setOutput(0, x)))
      return failure();
    if (!ctx.hasOutput(1))
      return success();
    return ctx.setOutput(1, createFilled(b, loc, *maskType,
                                         createScalar(b, loc, b.getI1Type(), 1),
                                         x));
  }
  if (!isa<FloatType>(xType.getElementType()))
    return ctx.fail("training mode needs a float input");

  // The scalars as rank-0 operands of the generics, read per element.
  int64_t rank = xType.getRank();
  SmallVector<Value> inputs = {x};
  SmallVector<AffineMap> maps = {b.getMultiDimIdentityMap(rank)};
  auto addScalar = [&](unsigned index) {
    Value scalar = ctx.getInput(index);
    auto type = cast<RankedTensorType>(scalar.getType());
    if (type.getRank() != 0)
      scalar = createReshape(b, loc, scalar, {});
    inputs.push_back(scalar);
    maps.push_back(AffineMap::get(rank, 0, {}, b.getContext()));
  };
  bool hasRatio = ctx.hasInput(1), hasMode = ctx.hasInput(2);
  if (hasRatio)
    addScalar(1);
  if (hasMode)
    addScalar(2);
  int64_t seed = ctx.getIntAttr("seed", 0);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  SmallVector<Value> extents;
  for (OpFoldResult size : sizes)
    extents.push_back(getValueOrCreateConstantIndexOp(b, loc, size));

  // Per element: (whether it is kept, the ratio as f32, whether training).
  auto draw = [&](OpBuilder &nb, Location nl, ValueRange args,
                  ArrayRef<Value> ivs) {
    Value index = arith::ConstantIndexOp::create(nb, nl, 0);
    for (int64_t d = 0; d < rank; ++d)
      index = arith::AddIOp::create(
          nb, nl, arith::MulIOp::create(nb, nl, index, extents[d]), ivs[d]);
    Value index64 =
        arith::IndexCastUIOp::create(nb, nl, nb.getI64Type(), index);
    Value ratio =
        hasRatio
            ? createScalarCast(nb, nl, args[1], nb.getF32Type(), false, false)
            : arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(0.5f))
                  .getResult();
    Value training =
        hasMode ? args[hasRatio ? 2 : 1]
                : arith::ConstantIntOp::create(nb, nl, nb.getI1Type(), 1)
                      .getResult();
    Value kept =
        arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OGE,
                              createUniformDraw(nb, nl, seed, index64), ratio);
    return std::make_tuple(kept, ratio, training);
  };
  Value y = createIndexedGeneric(
      b, loc, inputs, maps, xType,
      [&](OpBuilder &nb, Location nl, ValueRange args,
          ArrayRef<Value> ivs) -> Value {
        auto [kept, ratio, training] = draw(nb, nl, args, ivs);
        Type et = args[0].getType();
        Value one = arith::ConstantOp::create(nb, nl, nb.getF32FloatAttr(1));
        Value scale = arith::DivFOp::create(
            nb, nl, one, arith::SubFOp::create(nb, nl, one, ratio));
        Value scaleT = createScalarCast(nb, nl, scale, et, false, false);
        Value zero = createScalar(nb, nl, et, 0);
        Value dropped = arith::SelectOp::create(
            nb, nl, kept, arith::MulFOp::create(nb, nl, args[0], scaleT), zero);
        return arith::SelectOp::create(nb, nl, training, dropped, args[0]);
      },
      sizes);
  if (failed(ctx.setOutput(0, y)))
    return failure();
  if (!ctx.hasOutput(1))
    return success();
  Value mask = createIndexedGeneric(
      b, loc, inputs, maps,
      RankedTensorType::get(xType.getShape(), b.getI1Type()),
      [&](OpBuilder &nb, Location nl, ValueRange args,
          ArrayRef<Value> ivs) -> Value {
        auto [kept, ratio, training] = draw(nb, nl, args, ivs);
        Value notTraining = arith::XOrIOp::create(
            nb, nl, training,
            arith::ConstantIntOp::create(nb, nl, nb.getI1Type(), 1));
        return arith::OrIOp::create(nb, nl, kept, notTraining);
      },
      sizes);
  return ctx.setOutput(1, mask);
}

} // namespace

void addActivationLowerings(LoweringTable &t) {
  t["Relu"] = [](NodeContext &ctx) {
    return lowerUnary(ctx, [](OpBuilder &b, Location loc, Value x) {
      return maxOf(b, loc, x, cst(b, loc, x, 0));
    });
  };
  t["LeakyRelu"] = [](NodeContext &ctx) {
    double alpha = ctx.getFloatAttr("alpha", 0.01f);
    return lowerUnary(ctx, [=](OpBuilder &b, Location loc, Value x) -> Value {
      Value scaled = arith::MulFOp::create(b, loc, x, cst(b, loc, x, alpha));
      return arith::SelectOp::create(
          b, loc, cmpGT(b, loc, x, cst(b, loc, x, 0)), x, scaled);
    });
  };
  t["Sigmoid"] = [](NodeContext &ctx) { return lowerUnary(ctx, sigmoid); };
  t["HardSigmoid"] = [](NodeContext &ctx) {
    double alpha = ctx.getFloatAttr("alpha", 0.2f);
    double beta = ctx.getFloatAttr("beta", 0.5f);
    return lowerUnary(ctx, [=](OpBuilder &b, Location loc, Value x) {
      Value y = arith::AddFOp::create(
          b, loc, arith::MulFOp::create(b, loc, x, cst(b, loc, x, alpha)),
          cst(b, loc, x, beta));
      return minOf(b, loc, maxOf(b, loc, y, cst(b, loc, x, 0)),
                   cst(b, loc, x, 1));
    });
  };
  t["HardSwish"] = [](NodeContext &ctx) {
    return lowerUnary(ctx, [](OpBuilder &b, Location loc, Value x) -> Value {
      Value y = arith::AddFOp::create(
          b, loc, arith::MulFOp::create(b, loc, x, cst(b, loc, x, 1.0 / 6)),
          cst(b, loc, x, 0.5));
      y = minOf(b, loc, maxOf(b, loc, y, cst(b, loc, x, 0)), cst(b, loc, x, 1));
      return arith::MulFOp::create(b, loc, x, y);
    });
  };
  t["Elu"] = [](NodeContext &ctx) {
    double alpha = ctx.getFloatAttr("alpha", 1.0f);
    return lowerUnary(ctx, [=](OpBuilder &b, Location loc, Value x) {
      return elu(b, loc, x, alpha);
    });
  };
  t["Celu"] = [](NodeContext &ctx) {
    double alpha = ctx.getFloatAttr("alpha", 1.0f);
    return lowerUnary(ctx, [=](OpBuilder &b, Location loc, Value x) -> Value {
      // max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
      Value scaled = arith::DivFOp::create(b, loc, x, cst(b, loc, x, alpha));
      Value e = arith::MulFOp::create(b, loc, cst(b, loc, x, alpha),
                                      math::ExpM1Op::create(b, loc, scaled));
      Value zero = cst(b, loc, x, 0);
      return arith::AddFOp::create(b, loc, maxOf(b, loc, x, zero),
                                   minOf(b, loc, e, zero));
    });
  };
  t["Selu"] = [](NodeContext &ctx) {
    double alpha = ctx.getFloatAttr("alpha", 1.67326319217681884765625f);
    double gamma = ctx.getFloatAttr("gamma", 1.05070102214813232421875f);
    return lowerUnary(ctx, [=](OpBuilder &b, Location loc, Value x) -> Value {
      return arith::MulFOp::create(b, loc, cst(b, loc, x, gamma),
                                   elu(b, loc, x, alpha));
    });
  };
  t["ThresholdedRelu"] = [](NodeContext &ctx) {
    double alpha = ctx.getFloatAttr("alpha", 1.0f);
    return lowerUnary(ctx, [=](OpBuilder &b, Location loc, Value x) -> Value {
      return arith::SelectOp::create(b, loc,
                                     cmpGT(b, loc, x, cst(b, loc, x, alpha)), x,
                                     cst(b, loc, x, 0));
    });
  };
  t["Softplus"] = [](NodeContext &ctx) { return lowerUnary(ctx, softplus); };
  t["Softsign"] = [](NodeContext &ctx) {
    return lowerUnary(ctx, [](OpBuilder &b, Location loc, Value x) -> Value {
      Value d = arith::AddFOp::create(b, loc, cst(b, loc, x, 1),
                                      math::AbsFOp::create(b, loc, x));
      return arith::DivFOp::create(b, loc, x, d);
    });
  };
  t["Mish"] = [](NodeContext &ctx) {
    return lowerUnary(ctx, [](OpBuilder &b, Location loc, Value x) -> Value {
      Value t = math::TanhOp::create(b, loc, softplus(b, loc, x));
      return arith::MulFOp::create(b, loc, x, t);
    });
  };
  t["Gelu"] = [](NodeContext &ctx) {
    std::string approximate = ctx.getStringAttr("approximate", "none");
    if (approximate != "none" && approximate != "tanh")
      return ctx.fail("unknown approximate '" + approximate + "'");
    bool useTanh = approximate == "tanh";
    return lowerUnary(ctx, [=](OpBuilder &b, Location loc, Value x) -> Value {
      // 0.5 x (1 + erf(x / sqrt 2)), or with tanh(sqrt(2/pi) (x + 0.044715
      // x^3)) in place of the erf.
      Value inner;
      if (useTanh) {
        Value x3 = arith::MulFOp::create(b, loc, x,
                                         arith::MulFOp::create(b, loc, x, x));
        Value sum = arith::AddFOp::create(
            b, loc, x,
            arith::MulFOp::create(b, loc, cst(b, loc, x, 0.044715), x3));
        inner = math::TanhOp::create(
            b, loc,
            arith::MulFOp::create(
                b, loc, cst(b, loc, x, 0.79788456080286535587989), sum));
      } else {
        inner = math::ErfOp::create(
            b, loc,
            arith::MulFOp::create(b, loc, x,
                                  cst(b, loc, x, 0.70710678118654752440)));
      }
      Value halfX = arith::MulFOp::create(b, loc, cst(b, loc, x, 0.5), x);
      return arith::MulFOp::create(
          b, loc, halfX,
          arith::AddFOp::create(b, loc, cst(b, loc, x, 1), inner));
    });
  };
  t["Swish"] = [](NodeContext &ctx) {
    double alpha = ctx.getFloatAttr("alpha", 1.0f);
    return lowerUnary(ctx, [=](OpBuilder &b, Location loc, Value x) -> Value {
      return swish(b, loc, x, alpha);
    });
  };
  // SwiGLU: Swish(A) * B, A and B of one shape.
  t["SwiGLU"] = [](NodeContext &ctx) -> LogicalResult {
    FailureOr<RankedTensorType> type = ctx.getOutputType(0);
    if (failed(type))
      return failure();
    if (ctx.getInputType(0) != ctx.getInputType(1))
      return ctx.fail("A and B must have the same type and shape");
    double alpha = ctx.getFloatAttr("alpha", 1.0f);
    Value y = createElementwise(
        ctx.getBuilder(), ctx.getLoc(), {ctx.getInput(0), ctx.getInput(1)},
        *type, [&](OpBuilder &b, Location loc, ValueRange a) -> Value {
          return arith::MulFOp::create(b, loc, swish(b, loc, a[0], alpha),
                                       a[1]);
        });
    return ctx.setOutput(0, y);
  };
  t["Shrink"] = [](NodeContext &ctx) {
    double bias = ctx.getFloatAttr("bias", 0.0f);
    double lambd = ctx.getFloatAttr("lambd", 0.5f);
    bool isUnsigned = ctx.isInputUnsigned(0);
    return lowerUnary(ctx, [=](OpBuilder &b, Location loc, Value x) -> Value {
      Type type = x.getType();
      Type f = isa<FloatType>(type) ? type : b.getF64Type();
      Value xf = createScalarCast(b, loc, x, f, isUnsigned, false);
      Value lo = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, xf,
                                       createScalar(b, loc, f, -lambd));
      Value hi = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, xf,
                                       createScalar(b, loc, f, lambd));
      Value bv = createScalar(b, loc, f, bias);
      Value r = arith::SelectOp::create(b, loc, hi,
                                        arith::SubFOp::create(b, loc, xf, bv),
                                        createScalar(b, loc, f, 0));
      r = arith::SelectOp::create(b, loc, lo,
                                  arith::AddFOp::create(b, loc, xf, bv), r);
      return createScalarCast(b, loc, r, type, false, isUnsigned);
    });
  };
  t["Clip"] = lowerClip;
  t["PRelu"] = lowerPRelu;
  t["Dropout"] = lowerDropout;
}

} // namespace strata::onnx_importer
