//===- RecurrentOps.cpp - LSTM, GRU, RNN ----------------------------------===//
//
// The recurrent ops, unrolled over their static sequence length. The input
// projection X·Wᵀ + biases is one matmul over all time steps; each step then
// accumulates H_{t-1}·Rᵀ into its slice of it and applies the cell's gates in
// one elementwise generic over [batch, hidden]. Weights that are constants
// are sliced per direction and transposed at import time.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"
#include "strata/compiler/Importers/ONNX/RecurrentLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

struct ActivationInfo {
  const char *name;
  Activation::Kind kind;
  bool usesAlpha, usesBeta;
  double alpha, beta;
};

constexpr ActivationInfo kActivations[] = {
    {"Relu", Activation::Relu, false, false, 0, 0},
    {"Tanh", Activation::Tanh, false, false, 0, 0},
    {"Sigmoid", Activation::Sigmoid, false, false, 0, 0},
    {"Affine", Activation::Affine, true, true, 1, 0},
    {"LeakyRelu", Activation::LeakyRelu, true, false, 0.01, 0},
    {"ThresholdedRelu", Activation::ThresholdedRelu, true, false, 1, 0},
    {"ScaledTanh", Activation::ScaledTanh, true, true, 1, 1},
    {"HardSigmoid", Activation::HardSigmoid, true, true, 0.2, 0.5},
    {"Elu", Activation::Elu, true, false, 1, 0},
    {"Softsign", Activation::Softsign, false, false, 0, 0},
    {"Softplus", Activation::Softplus, false, false, 0, 0},
};

} // namespace

Value applyActivation(OpBuilder &b, Location loc, const Activation &act,
                      Value x) {
  Type t = x.getType();
  auto cst = [&](double v) { return createScalar(b, loc, t, v); };
  ArithBuilder arithmetic(b, loc);
  switch (act.kind) {
  case Activation::Relu:
    return arith::MaximumFOp::create(b, loc, x, cst(0));
  case Activation::Tanh:
    return math::TanhOp::create(b, loc, x);
  case Activation::Sigmoid: {
    Value e = math::ExpOp::create(b, loc, arith::NegFOp::create(b, loc, x));
    return arith::DivFOp::create(b, loc, cst(1), arithmetic.add(cst(1), e));
  }
  case Activation::Affine:
    return arithmetic.add(arithmetic.mul(cst(act.alpha), x), cst(act.beta));
  case Activation::LeakyRelu: {
    Value isNeg =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, cst(0));
    return arith::SelectOp::create(b, loc, isNeg,
                                   arithmetic.mul(cst(act.alpha), x), x);
  }
  case Activation::ThresholdedRelu: {
    Value above = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, x,
                                        cst(act.alpha));
    return arith::SelectOp::create(b, loc, above, x, cst(0));
  }
  case Activation::ScaledTanh:
    return arithmetic.mul(
        cst(act.alpha),
        math::TanhOp::create(b, loc, arithmetic.mul(cst(act.beta), x)));
  case Activation::HardSigmoid: {
    Value y = arithmetic.add(arithmetic.mul(cst(act.alpha), x), cst(act.beta));
    y = arith::MinimumFOp::create(b, loc, y, cst(1));
    return arith::MaximumFOp::create(b, loc, y, cst(0));
  }
  case Activation::Elu: {
    Value isNeg =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, x, cst(0));
    Value neg =
        arithmetic.mul(cst(act.alpha), math::ExpM1Op::create(b, loc, x));
    return arith::SelectOp::create(b, loc, isNeg, neg, x);
  }
  case Activation::Softsign:
    return arith::DivFOp::create(
        b, loc, x, arithmetic.add(cst(1), math::AbsFOp::create(b, loc, x)));
  case Activation::Softplus: {
    // max(x, 0) + log1p(exp(-|x|)), stable for large |x|.
    Value e = math::ExpOp::create(
        b, loc, arith::NegFOp::create(b, loc, math::AbsFOp::create(b, loc, x)));
    return arithmetic.add(arith::MaximumFOp::create(b, loc, x, cst(0)),
                          math::Log1pOp::create(b, loc, e));
  }
  }
  llvm_unreachable("unknown activation");
}

// Concatenates `parts` along `dim` in concatenations of at most 64 operands
// (each becomes a dispatch with a binding per operand).
Value concatenateRecurrentParts(OpBuilder &b, Location loc,
                                SmallVector<Value> parts, int64_t dim) {
  constexpr size_t kMaxConcatOperands = 64;
  while (parts.size() > 1) {
    SmallVector<Value> joined;
    for (size_t i = 0; i < parts.size(); i += kMaxConcatOperands) {
      ArrayRef<Value> chunk = ArrayRef<Value>(parts).slice(
          i, std::min(kMaxConcatOperands, parts.size() - i));
      joined.push_back(
          chunk.size() == 1
              ? chunk.front()
              : tensor::ConcatOp::create(b, loc, dim, chunk).getResult());
    }
    parts = std::move(joined);
  }
  return parts.front();
}

namespace {

// The activations of each direction (`perDirection` each), from the
// activations/activation_alpha/activation_beta attributes or the defaults.
FailureOr<SmallVector<Activation>> getActivations(NodeContext &ctx,
                                                  ArrayRef<StringRef> defaults,
                                                  int64_t numDirections) {
  SmallVector<std::string> names;
  if (const onnx::AttributeProto *attr = ctx.findAttr("activations"))
    for (const std::string &name : attr->strings())
      names.push_back(name);
  size_t perDirection = defaults.size();
  if (names.empty())
    for (int64_t d = 0; d < numDirections; ++d)
      llvm::append_range(names, defaults);
  else if (names.size() == perDirection && numDirections == 2)
    names.append(SmallVector<std::string>(names));
  if (names.size() != perDirection * numDirections)
    return ctx.fail("expected " + Twine(perDirection * numDirections) +
                    " activations, got " + Twine(names.size()));
  SmallVector<float> alphas = ctx.getFloatsAttr("activation_alpha");
  SmallVector<float> betas = ctx.getFloatsAttr("activation_beta");
  size_t nextAlpha = 0, nextBeta = 0;
  SmallVector<Activation> result;
  for (const std::string &name : names) {
    const ActivationInfo *info = llvm::find_if(kActivations, [&](auto &a) {
      return StringRef(a.name).equals_insensitive(name);
    });
    if (info == std::end(kActivations))
      return ctx.fail("unsupported activation '" + name + "'");
    Activation act{info->kind, info->alpha, info->beta};
    if (info->usesAlpha && nextAlpha < alphas.size())
      act.alpha = alphas[nextAlpha++];
    if (info->usesBeta && nextBeta < betas.size())
      act.beta = betas[nextBeta++];
    result.push_back(act);
  }
  return result;
}

Value createConstant(OpBuilder &b, Location loc, RankedTensorType type,
                     ArrayRef<double> values) {
  const llvm::fltSemantics &semantics =
      cast<FloatType>(type.getElementType()).getFloatSemantics();
  SmallVector<APFloat> converted;
  converted.reserve(values.size());
  for (double v : values) {
    APFloat f(v);
    bool losesInfo;
    f.convert(semantics, APFloat::rmNearestTiesToEven, &losesInfo);
    converted.push_back(f);
  }
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, converted));
}

Value extractSlice(OpBuilder &b, Location loc, Value source,
                   ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes,
                   ArrayRef<int64_t> resultShape) {
  auto type = cast<RankedTensorType>(source.getType());
  SmallVector<int64_t> strides(offsets.size(), 1);
  MLIRContext *context = b.getContext();
  return tensor::ExtractSliceOp::create(
      b, loc, RankedTensorType::get(resultShape, type.getElementType()), source,
      getAsIndexOpFoldResult(context, offsets),
      getAsIndexOpFoldResult(context, sizes),
      getAsIndexOpFoldResult(context, strides));
}

// Inserts `source` into `dest` at `offsets`; missing leading source dims are
// size 1.
Value insertSlice(OpBuilder &b, Location loc, Value source, Value dest,
                  ArrayRef<int64_t> offsets) {
  auto sourceType = cast<RankedTensorType>(source.getType());
  SmallVector<int64_t> sizes(offsets.size() - sourceType.getRank(), 1);
  llvm::append_range(sizes, sourceType.getShape());
  SmallVector<int64_t> strides(offsets.size(), 1);
  MLIRContext *context = b.getContext();
  return tensor::InsertSliceOp::create(
      b, loc, source, dest, getAsIndexOpFoldResult(context, offsets),
      getAsIndexOpFoldResult(context, sizes),
      getAsIndexOpFoldResult(context, strides));
}

Value createMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                   Value init) {
  return linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                  ValueRange{lhs, rhs}, ValueRange{init})
      .getResult(0);
}

// How an operand of a cell generic is indexed by (batch, hidden).
enum class CellOperand { Full, PerHidden, PerBatch };

// An elementwise linalg.generic over [batch, hidden] with `numResults`
// results of `type`.
SmallVector<Value> createCellGeneric(
    OpBuilder &b, Location loc,
    ArrayRef<std::pair<Value, CellOperand>> operands, RankedTensorType type,
    unsigned numResults,
    llvm::function_ref<SmallVector<Value>(OpBuilder &, Location, ValueRange)>
        body) {
  MLIRContext *context = b.getContext();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (auto [value, kind] : operands) {
    inputs.push_back(value);
    switch (kind) {
    case CellOperand::Full:
      maps.push_back(b.getMultiDimIdentityMap(2));
      break;
    case CellOperand::PerHidden:
      maps.push_back(AffineMap::get(2, 0, b.getAffineDimExpr(1), context));
      break;
    case CellOperand::PerBatch:
      maps.push_back(AffineMap::get(2, 0, b.getAffineDimExpr(0), context));
      break;
    }
  }
  SmallVector<Value> inits;
  for (unsigned i = 0; i < numResults; ++i) {
    inits.push_back(createEmpty(b, loc, type));
    maps.push_back(b.getMultiDimIdentityMap(2));
  }
  SmallVector<utils::IteratorType> iterators(2, utils::IteratorType::parallel);
  auto generic = linalg::GenericOp::create(
      b, loc, SmallVector<Type>(numResults, type), inputs, inits, maps,
      iterators, [&](OpBuilder &nb, Location nl, ValueRange args) {
        SmallVector<Value> results =
            body(nb, nl, args.take_front(operands.size()));
        linalg::YieldOp::create(nb, nl, results);
      });
  return SmallVector<Value>(generic.getResults());
}

} // namespace

Value RecurrentLowering::getTransposedWeight(unsigned index, int64_t dir,
                                             int64_t begin, int64_t count) {
  RankedTensorType type = ctx.getInputType(index);
  int64_t rows = type.getDimSize(1), cols = type.getDimSize(2);
  auto resultType = RankedTensorType::get({cols, count}, elementType);
  if (std::optional<SmallVector<double>> values =
          ctx.getConstantFloats(index)) {
    SmallVector<double> transposed(cols * count);
    for (int64_t r = 0; r < count; ++r)
      for (int64_t c = 0; c < cols; ++c)
        transposed[c * count + r] =
            (*values)[(dir * rows + begin + r) * cols + c];
    return createConstant(b, loc, resultType, transposed);
  }
  Value slice = extractSlice(b, loc, ctx.getInput(index), {dir, begin, 0},
                             {1, count, cols}, {count, cols});
  return createTranspose(b, loc, slice, {1, 0});
}

// Wb + Rb of one direction, [gates * hidden]; for GRU with
// linear_before_reset, without the recurrent bias of the hidden gate (applied
// inside the reset). Null without B.
Value RecurrentLowering::getInputBias(int64_t dir) {
  if (!ctx.hasInput(3))
    return {};
  int64_t size = numGates * hidden;
  auto type = RankedTensorType::get({size}, elementType);
  int64_t recurrentSize = linearBeforeReset ? size - hidden : size;
  if (std::optional<SmallVector<double>> values = ctx.getConstantFloats(3)) {
    SmallVector<double> bias(size);
    const double *wb = values->data() + dir * 2 * size;
    const double *rb = wb + size;
    for (int64_t i = 0; i < size; ++i)
      bias[i] = wb[i] + (i < recurrentSize ? rb[i] : 0.0);
    return createConstant(b, loc, type, bias);
  }
  Value input = ctx.getInput(3);
  Value wb = extractSlice(b, loc, input, {dir, 0}, {1, size}, {size});
  Value rb = extractSlice(b, loc, input, {dir, size}, {1, recurrentSize},
                          {recurrentSize});
  if (recurrentSize != size)
    rb = insertSlice(
        b, loc, rb,
        createFilled(b, loc, type, createScalar(b, loc, elementType, 0)), {0});
  return createElementwise(
      b, loc, {wb, rb}, type, [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::AddFOp::create(nb, nl, a[0], a[1]).getResult();
      });
}

// Rbh of one direction, [hidden] (GRU with linear_before_reset).
Value RecurrentLowering::getRecurrentHiddenBias(int64_t dir) {
  if (!ctx.hasInput(3))
    return createFilled(b, loc, RankedTensorType::get({hidden}, elementType),
                        createScalar(b, loc, elementType, 0));
  int64_t offset = (2 * numGates - 1) * hidden;
  return extractSlice(b, loc, ctx.getInput(3), {dir, offset}, {1, hidden},
                      {hidden});
}

// initial_h or initial_c of one direction, [batch, hidden]; zeros when absent.
Value RecurrentLowering::getInitialState(unsigned index, int64_t dir) {
  if (!ctx.hasInput(index))
    return createFilled(b, loc, stateType,
                        createScalar(b, loc, elementType, 0));
  if (batchFirst)
    return extractSlice(b, loc, ctx.getInput(index), {0, dir, 0},
                        {batch, 1, hidden}, {batch, hidden});
  return extractSlice(b, loc, ctx.getInput(index), {dir, 0, 0},
                      {1, batch, hidden}, {batch, hidden});
}

// The peepholes of one direction, [3, hidden] (i, o, f); null when absent or
// all zero.
Value RecurrentLowering::getPeepholes(int64_t dir) {
  if (kind != CellKind::LSTM || !ctx.hasInput(7))
    return {};
  if (std::optional<SmallVector<double>> values = ctx.getConstantFloats(7))
    if (llvm::all_of(*values, [](double v) { return v == 0; }))
      return {};
  return extractSlice(b, loc, ctx.getInput(7), {dir, 0}, {1, 3 * hidden},
                      {3 * hidden});
}

Value RecurrentLowering::activate(OpBuilder &nb, Location nl, int64_t dir,
                                  unsigned which, Value x) {
  if (clip) {
    x = arith::MaximumFOp::create(nb, nl, x,
                                  createScalar(nb, nl, x.getType(), -*clip));
    x = arith::MinimumFOp::create(nb, nl, x,
                                  createScalar(nb, nl, x.getType(), *clip));
  }
  return applyActivation(nb, nl,
                         activations[dir * activationsPerDirection + which], x);
}

LogicalResult RecurrentLowering::lowerDirection(int64_t dir, bool reverse,
                                                DirectionOutputs &outputs) {
  bool y = ctx.hasOutput(0);
  int64_t gatesSize = numGates * hidden;
  // The input projection of every step, with the biases added after the
  // product (an epilogue, as a Gemm's: a product that starts from zero has
  // its constant matrix packed in panels).
  auto projectionType =
      RankedTensorType::get({seqLength * batch, gatesSize}, elementType);
  Value projection =
      createMatmul(b, loc, x2d, getTransposedWeight(1, dir, 0, gatesSize),
                   createFilled(b, loc, projectionType,
                                createScalar(b, loc, elementType, 0)));
  if (Value bias = getInputBias(dir))
    projection = createElementwise(
        b, loc, {projection, bias}, projectionType,
        [](OpBuilder &nb, Location nl, ValueRange args) -> Value {
          return arith::AddFOp::create(nb, nl, args[0], args[1]);
        });

  bool gruReset = kind == CellKind::GRU && !linearBeforeReset;
  Value recurrentT =
      getTransposedWeight(2, dir, 0, gruReset ? gatesSize - hidden : gatesSize);
  Value recurrentHT =
      gruReset ? getTransposedWeight(2, dir, gatesSize - hidden, hidden)
               : Value();
  Value hiddenBias = kind == CellKind::GRU && linearBeforeReset
                         ? getRecurrentHiddenBias(dir)
                         : Value();
  Value peepholes = getPeepholes(dir);
  SmallVector<Value> peepholeParts;
  if (peepholes)
    for (int64_t k = 0; k < 3; ++k)
      peepholeParts.push_back(
          extractSlice(b, loc, peepholes, {k * hidden}, {hidden}, {hidden}));

  Value h = getInitialState(5, dir);
  Value c = kind == CellKind::LSTM ? getInitialState(6, dir) : Value();
  // Each step's Y, as [1, 1, batch, hidden], by time.
  SmallVector<Value> ySteps(y ? seqLength : 0);
  Type lenType =
      sequenceLens
          ? cast<RankedTensorType>(sequenceLens.getType()).getElementType()
          : Type();
  auto gate = [&](Value gates, int64_t k) {
    if (cast<RankedTensorType>(gates.getType()).getDimSize(1) == hidden)
      return gates;
    return extractSlice(b, loc, gates, {0, k * hidden}, {batch, hidden},
                        {batch, hidden});
  };

  for (int64_t step = 0; step < seqLength; ++step) {
    int64_t t = reverse ? seqLength - 1 - step : step;
    Value xw = extractSlice(b, loc, projection, {t * batch, 0},
                            {batch, gatesSize}, {batch, gatesSize});
    // Operands of the cell generic; the last ones are H_{t-1}, C_{t-1} and
    // the sequence lengths when present.
    SmallVector<std::pair<Value, CellOperand>> operands;
    if (kind == CellKind::GRU && !linearBeforeReset) {
      int64_t zrSize = 2 * hidden;
      Value zr = createMatmul(
          b, loc, h, recurrentT,
          extractSlice(b, loc, xw, {0, 0}, {batch, zrSize}, {batch, zrSize}));
      Value zPre = gate(zr, 0), rPre = gate(zr, 1);
      Value rh = createCellGeneric(
          b, loc, {{rPre, CellOperand::Full}, {h, CellOperand::Full}},
          stateType, 1, [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value r = activate(nb, nl, dir, 0, a[0]);
            return SmallVector<Value>{
                arith::MulFOp::create(nb, nl, r, a[1]).getResult()};
          })[0];
      Value hPre = createMatmul(b, loc, rh, recurrentHT, gate(xw, 2));
      operands = {{zPre, CellOperand::Full}, {hPre, CellOperand::Full}};
    } else if (kind == CellKind::GRU) {
      Value hr = createMatmul(
          b, loc, h, recurrentT,
          createFilled(b, loc, cast<RankedTensorType>(xw.getType()),
                       createScalar(b, loc, elementType, 0)));
      operands = {
          {gate(xw, 0), CellOperand::Full},    {gate(xw, 1), CellOperand::Full},
          {gate(xw, 2), CellOperand::Full},    {gate(hr, 0), CellOperand::Full},
          {gate(hr, 1), CellOperand::Full},    {gate(hr, 2), CellOperand::Full},
          {hiddenBias, CellOperand::PerHidden}};
    } else {
      Value gates = createMatmul(b, loc, h, recurrentT, xw);
      for (int64_t k = 0; k < numGates; ++k)
        operands.push_back({gate(gates, k), CellOperand::Full});
      for (Value p : peepholeParts)
        operands.push_back({p, CellOperand::PerHidden});
    }
    size_t numCellOperands = operands.size();
    operands.push_back({h, CellOperand::Full});
    if (c)
      operands.push_back({c, CellOperand::Full});
    if (sequenceLens)
      operands.push_back({sequenceLens, CellOperand::PerBatch});

    // With sequence lengths, Y_t is 0 where a step is masked while the state
    // keeps H_{t-1}; from a zero initial state both are the same value, which
    // the step then yields once.
    bool separateY = sequenceLens && y && !(step == 0 && !ctx.hasInput(5));
    unsigned numResults = (c ? 2 : 1) + (separateY ? 1 : 0);
    SmallVector<Value> results = createCellGeneric(
        b, loc, operands, stateType, numResults,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          ArithBuilder arithmetic(nb, nl);
          auto one = [&] { return createScalar(nb, nl, elementType, 1); };
          Value hPrev = a[numCellOperands];
          Value cPrev = c ? a[numCellOperands + 1] : Value();
          Value hNew, cNew;
          switch (kind) {
          case CellKind::RNN:
            hNew = activate(nb, nl, dir, 0, a[0]);
            break;
          case CellKind::GRU: {
            Value z, hCand;
            if (!linearBeforeReset) {
              z = activate(nb, nl, dir, 0, a[0]);
              hCand = activate(nb, nl, dir, 1, a[1]);
            } else {
              z = activate(nb, nl, dir, 0, arithmetic.add(a[0], a[3]));
              Value r = activate(nb, nl, dir, 0, arithmetic.add(a[1], a[4]));
              hCand = activate(
                  nb, nl, dir, 1,
                  arithmetic.add(
                      a[2], arithmetic.mul(r, arithmetic.add(a[5], a[6]))));
            }
            // (1 - z) * h~ + z * H_{t-1}
            hNew =
                arithmetic.add(arithmetic.mul(arithmetic.sub(one(), z), hCand),
                               arithmetic.mul(z, hPrev));
            break;
          }
          case CellKind::LSTM: {
            Value iPre = a[0], oPre = a[1], fPre = a[2], cPre = a[3];
            if (peepholes) {
              iPre = arithmetic.add(iPre, arithmetic.mul(a[4], cPrev));
              fPre = arithmetic.add(fPre, arithmetic.mul(a[6], cPrev));
            }
            Value i = activate(nb, nl, dir, 0, iPre);
            Value f = inputForget ? arithmetic.sub(one(), i)
                                  : activate(nb, nl, dir, 0, fPre);
            Value g = activate(nb, nl, dir, 1, cPre);
            cNew =
                arithmetic.add(arithmetic.mul(f, cPrev), arithmetic.mul(i, g));
            if (peepholes)
              oPre = arithmetic.add(oPre, arithmetic.mul(a[5], cNew));
            Value o = activate(nb, nl, dir, 0, oPre);
            hNew = arithmetic.mul(o, activate(nb, nl, dir, 2, cNew));
            break;
          }
          }
          SmallVector<Value> out;
          if (!sequenceLens) {
            out.push_back(hNew);
            if (c)
              out.push_back(cNew);
            return out;
          }
          // Steps past a batch entry's length keep its state and output 0.
          Value len = a.back();
          Value valid =
              arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt,
                                    createScalar(nb, nl, lenType, t), len);
          out.push_back(arith::SelectOp::create(nb, nl, valid, hNew, hPrev));
          if (c)
            out.push_back(arith::SelectOp::create(nb, nl, valid, cNew, cPrev));
          if (separateY)
            out.push_back(arith::SelectOp::create(
                nb, nl, valid, hNew, createScalar(nb, nl, elementType, 0)));
          return out;
        });
    h = results[0];
    if (c)
      c = results[1];
    if (y)
      ySteps[t] = createReshape(b, loc, separateY ? results.back() : h,
                                {1, 1, batch, hidden});
  }
  // Y, Y_h and Y_c of this direction are built once, from every step's
  // value: inserting each step into Y would cost a dispatch per step.
  if (y)
    outputs.y = concatenateRecurrentParts(b, loc, ySteps, 0);
  if (ctx.hasOutput(1))
    outputs.yh = createReshape(b, loc, h, {1, batch, hidden});
  if (c && ctx.hasOutput(2))
    outputs.yc = createReshape(b, loc, c, {1, batch, hidden});
  return success();
}

LogicalResult RecurrentLowering::lower() {
  RankedTensorType xType = ctx.getInputType(0);
  RankedTensorType wType = ctx.getInputType(1);
  RankedTensorType rType = ctx.getInputType(2);
  if (!xType || !wType || !rType || xType.getRank() != 3 ||
      wType.getRank() != 3 || rType.getRank() != 3)
    return ctx.fail("X, W and R must be rank-3 tensors");
  // Only X (and the per-batch inputs that follow its batch) may be dynamic.
  for (unsigned index : {1u, 2u, 3u, 7u})
    if (ctx.hasInput(index) && !ctx.getInputType(index).hasStaticShape())
      return ctx.fail("input " + Twine(index) + " ('" +
                      ctx.getNode().input(index) +
                      "') must have a static shape (weights, biases and "
                      "peepholes)");
  elementType = xType.getElementType();
  if (!isa<FloatType>(elementType))
    return ctx.fail("only float element types are supported");

  switch (kind) {
  case CellKind::RNN:
    numGates = 1;
    activationsPerDirection = 1;
    break;
  case CellKind::GRU:
    numGates = 3;
    activationsPerDirection = 2;
    break;
  case CellKind::LSTM:
    numGates = 4;
    activationsPerDirection = 3;
    break;
  }
  int64_t layout = ctx.getIntAttr("layout", 0);
  if (layout != 0 && layout != 1)
    return ctx.fail("unsupported layout " + Twine(layout));
  batchFirst = layout == 1;
  seqLength = xType.getDimSize(batchFirst ? 1 : 0);
  batch = xType.getDimSize(batchFirst ? 0 : 1);
  inputSize = wType.getDimSize(2);
  if (!xType.isDynamicDim(2) && xType.getDimSize(2) != inputSize)
    return ctx.fail("X has input size " + Twine(xType.getDimSize(2)) +
                    " but W " + Twine(inputSize));
  bool dynamic =
      ShapedType::isDynamic(seqLength) || ShapedType::isDynamic(batch);
  hidden = ctx.getIntAttr("hidden_size", rType.getDimSize(2));
  std::string direction = ctx.getStringAttr("direction", "forward");
  if (direction != "forward" && direction != "reverse" &&
      direction != "bidirectional")
    return ctx.fail("unknown direction '" + direction + "'");
  numDirections = direction == "bidirectional" ? 2 : 1;
  if (wType.getShape() !=
          ArrayRef<int64_t>{numDirections, numGates * hidden, inputSize} ||
      rType.getShape() !=
          ArrayRef<int64_t>{numDirections, numGates * hidden, hidden})
    return ctx.fail("W or R does not match hidden_size " + Twine(hidden) +
                    " and direction '" + direction + "'");
  if (ctx.hasInput(3) &&
      ctx.getInputType(3).getShape() !=
          ArrayRef<int64_t>{numDirections, 2 * numGates * hidden})
    return ctx.fail("B has the wrong shape");
  linearBeforeReset = ctx.getIntAttr("linear_before_reset", 0) != 0;
  inputForget = ctx.getIntAttr("input_forget", 0) != 0;
  if (ctx.hasAttr("clip"))
    clip = ctx.getFloatAttr("clip", 0);
  static constexpr StringRef kRnnDefaults[] = {"Tanh"};
  static constexpr StringRef kGruDefaults[] = {"Sigmoid", "Tanh"};
  static constexpr StringRef kLstmDefaults[] = {"Sigmoid", "Tanh", "Tanh"};
  ArrayRef<StringRef> defaults = kLstmDefaults;
  if (kind == CellKind::RNN)
    defaults = kRnnDefaults;
  else if (kind == CellKind::GRU)
    defaults = kGruDefaults;
  FailureOr<SmallVector<Activation>> acts =
      getActivations(ctx, defaults, numDirections);
  if (failed(acts))
    return failure();
  activations = std::move(*acts);
  stateType = RankedTensorType::get({batch, hidden}, elementType);
  if (kind == CellKind::LSTM && ctx.hasInput(7) &&
      ctx.getInputType(7).getShape() !=
          ArrayRef<int64_t>{numDirections, 3 * hidden})
    return ctx.fail("P has the wrong shape");

  // Sequence lengths mask the steps unless they are all the full length.
  if (ctx.hasInput(4)) {
    std::optional<DenseElementsAttr> lens = ctx.getConstantInput(4);
    bool allFull = lens && isa<IntegerType>(lens->getElementType()) &&
                   llvm::all_of(lens->getValues<APInt>(), [&](const APInt &v) {
                     return v.getSExtValue() == seqLength;
                   });
    if (!allFull) {
      sequenceLens = ctx.getInput(4);
      auto lensType = dyn_cast<RankedTensorType>(sequenceLens.getType());
      if (!lensType || !isa<IntegerType>(lensType.getElementType()) ||
          lensType.getRank() != 1 ||
          (!lensType.isDynamicDim(0) && !ShapedType::isDynamic(batch) &&
           lensType.getDimSize(0) != batch))
        return ctx.fail("sequence_lens must be an integer tensor of [batch]");
    }
  }

  Value x = ctx.getInput(0);
  if (batchFirst)
    x = createTranspose(b, loc, x, {1, 0, 2});
  if (dynamic) {
    seqSize = getDimSize(b, loc, x, 0);
    batchSize = getDimSize(b, loc, x, 1);
    x2d = createDynamicReshape(b, loc, x,
                               {getSizeProduct(b, loc, {seqSize, batchSize}),
                                b.getIndexAttr(inputSize)});
  } else {
    x2d = createReshape(b, loc, x, {seqLength * batch, inputSize});
  }

  auto yType = RankedTensorType::get({seqLength, numDirections, batch, hidden},
                                     elementType);
  auto stateOutType =
      RankedTensorType::get({numDirections, batch, hidden}, elementType);
  // Each direction's outputs, joined along the direction dimension.
  SmallVector<Value> yParts, yhParts, ycParts;
  for (int64_t dir = 0; dir < numDirections; ++dir) {
    DirectionOutputs outputs;
    bool reverse = direction == "reverse" || dir == 1;
    if (failed(dynamic ? lowerDirectionAsLoop(dir, reverse, outputs)
                       : lowerDirection(dir, reverse, outputs)))
      return failure();
    if (outputs.y)
      yParts.push_back(outputs.y);
    if (outputs.yh)
      yhParts.push_back(outputs.yh);
    if (outputs.yc)
      ycParts.push_back(outputs.yc);
  }
  Value y =
      yParts.empty() ? Value() : concatenateRecurrentParts(b, loc, yParts, 1);
  Value yh =
      yhParts.empty() ? Value() : concatenateRecurrentParts(b, loc, yhParts, 0);
  Value yc =
      ycParts.empty() ? Value() : concatenateRecurrentParts(b, loc, ycParts, 0);
  assert((dynamic || !y || cast<RankedTensorType>(y.getType()) == yType) &&
         (dynamic || !yh ||
          cast<RankedTensorType>(yh.getType()) == stateOutType) &&
         "recurrent outputs have their ONNX shapes");
  (void)yType;
  (void)stateOutType;

  auto setOutput = [&](unsigned index, Value value,
                       ArrayRef<int64_t> batchFirstPerm) -> LogicalResult {
    if (!value)
      return success();
    if (batchFirst)
      value = createTranspose(b, loc, value, batchFirstPerm);
    return ctx.setOutput(index, value);
  };
  if (failed(setOutput(0, y, {2, 0, 1, 3})) ||
      failed(setOutput(1, yh, {1, 0, 2})) ||
      failed(setOutput(2, yc, {1, 0, 2})))
    return failure();
  return success();
}

void addRecurrentLowerings(LoweringTable &t) {
  t["RNN"] = [](NodeContext &ctx) {
    return RecurrentLowering(ctx, CellKind::RNN).lower();
  };
  t["GRU"] = [](NodeContext &ctx) {
    return RecurrentLowering(ctx, CellKind::GRU).lower();
  };
  t["LSTM"] = [](NodeContext &ctx) {
    return RecurrentLowering(ctx, CellKind::LSTM).lower();
  };
}

} // namespace strata::onnx_importer
