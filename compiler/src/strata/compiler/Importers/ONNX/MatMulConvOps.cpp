//===- MatMulConvOps.cpp - MatMul, Gemm, Conv -----------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/ConvUtils.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace strata::onnx_importer {

DenseIntElementsAttr getI64VectorAttr(OpBuilder &b, ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    b.getI64Type());
  return DenseIntElementsAttr::get(type, values);
}

Value padSpatial(OpBuilder &b, Location loc, Value input, ArrayRef<int64_t> low,
                 ArrayRef<int64_t> high, Value value) {
  if (llvm::all_of(low, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(high, [](int64_t p) { return p == 0; }))
    return input;
  auto type = cast<RankedTensorType>(input.getType());
  SmallVector<int64_t> lowAll{0, 0}, highAll{0, 0};
  llvm::append_range(lowAll, low);
  llvm::append_range(highAll, high);
  SmallVector<int64_t> shape(type.getShape());
  for (size_t i = 2; i < shape.size(); ++i)
    if (!ShapedType::isDynamic(shape[i]))
      shape[i] += lowAll[i] + highAll[i];
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  return tensor::PadOp::create(
      b, loc, resultType, input, getAsIndexOpFoldResult(b.getContext(), lowAll),
      getAsIndexOpFoldResult(b.getContext(), highAll), value);
}

LogicalResult checkOnlyBatchDynamic(NodeContext &ctx, RankedTensorType input) {
  for (int64_t i = 1; i < input.getRank(); ++i)
    if (input.isDynamicDim(i))
      return ctx.fail("dim " + llvm::Twine(i) + " of input '" +
                      ctx.getNode().input(0) +
                      "' is dynamic; of the channels and spatial dims, which "
                      "size the windows, none may be" +
                      ctx.getState().pinHint);
  return success();
}

OpFoldResult createWindowCount(OpBuilder &b, Location loc, OpFoldResult size,
                               int64_t reach, int64_t stride) {
  if (std::optional<int64_t> known = getConstantIntValue(size))
    return b.getIndexAttr(std::max<int64_t>(0, (*known - reach) / stride) +
                          (*known >= reach ? 1 : 0));
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value in = getValueOrCreateConstantIndexOp(b, loc, size);
  // max(size - reach + stride, 0) / stride: no window where none fits.
  Value span = arith::AddIOp::create(
      b, loc, arith::SubIOp::create(b, loc, in, index(reach)), index(stride));
  span = arith::MaxSIOp::create(b, loc, span, index(0));
  return arith::DivUIOp::create(b, loc, span, index(stride)).getResult();
}

LogicalResult checkWindowedDynamic(NodeContext &ctx, RankedTensorType input) {
  if (input.getRank() > 4 && !input.hasStaticShape())
    return checkOnlyBatchDynamic(ctx, input);
  if (input.getRank() > 1 && input.isDynamicDim(1))
    return ctx.fail("dim 1 (the channels) of input '" + ctx.getNode().input(0) +
                    "' is dynamic; the weights fix it" +
                    ctx.getState().pinHint);
  return success();
}

FailureOr<WindowParams> getWindowParams(NodeContext &ctx,
                                        ArrayRef<int64_t> spatialShape,
                                        ArrayRef<int64_t> kernel) {
  size_t n = spatialShape.size();
  WindowParams p;
  p.kernel = SmallVector<int64_t>(kernel);
  if (ctx.hasAttr("kernel_shape"))
    p.kernel = ctx.getIntsAttr("kernel_shape");
  if (p.kernel.size() != n)
    return ctx.fail("kernel_shape has " + llvm::Twine(p.kernel.size()) +
                    " dims for " + llvm::Twine(n) + " spatial dims");
  p.strides = ctx.getIntsAttr("strides");
  if (p.strides.empty())
    p.strides.assign(n, 1);
  p.dilations = ctx.getIntsAttr("dilations");
  if (p.dilations.empty())
    p.dilations.assign(n, 1);
  if (p.strides.size() != n || p.dilations.size() != n)
    return ctx.fail("strides and dilations need one value per spatial dim");
  for (size_t i = 0; i < n; ++i)
    if (p.strides[i] < 1 || p.dilations[i] < 1 || p.kernel[i] < 1)
      return ctx.fail("strides, dilations and kernel sizes must be positive");
  std::string autoPad = ctx.getStringAttr("auto_pad", "NOTSET");
  p.padsBegin.assign(n, 0);
  p.padsEnd.assign(n, 0);
  if (autoPad == "NOTSET") {
    SmallVector<int64_t> pads = ctx.getIntsAttr("pads");
    if (!pads.empty()) {
      if (pads.size() != 2 * n)
        return ctx.fail("pads has the wrong length");
      for (size_t i = 0; i < n; ++i) {
        p.padsBegin[i] = pads[i];
        p.padsEnd[i] = pads[n + i];
      }
    }
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < n; ++i) {
      int64_t in = spatialShape[i];
      int64_t window = (p.kernel[i] - 1) * p.dilations[i] + 1;
      // Unit strides pad by the window whatever the size; others by an
      // amount of the size, which pads planned here cannot follow.
      if (ShapedType::isDynamic(in)) {
        if (p.strides[i] != 1)
          return ctx.fail(
              "auto_pad " + autoPad + " with stride " + Twine(p.strides[i]) +
              " over dynamic spatial dim " + Twine(i + 2) + " of input '" +
              ctx.getNode().input(0) + "' (its pads depend on the size)" +
              ctx.getState().pinHint);
        p.padsBegin[i] =
            autoPad == "SAME_UPPER" ? (window - 1) / 2 : window / 2;
        p.padsEnd[i] = window - 1 - p.padsBegin[i];
        continue;
      }
      int64_t out = (in + p.strides[i] - 1) / p.strides[i];
      int64_t total =
          std::max<int64_t>(0, (out - 1) * p.strides[i] + window - in);
      int64_t small = total / 2;
      p.padsBegin[i] = autoPad == "SAME_UPPER" ? small : total - small;
      p.padsEnd[i] = total - p.padsBegin[i];
    }
  } else if (autoPad != "VALID") {
    return ctx.fail("unknown auto_pad '" + autoPad + "'");
  }
  return p;
}

namespace {

Value createMatmul2D(OpBuilder &b, Location loc, Value lhs, Value rhs) {
  auto lt = cast<RankedTensorType>(lhs.getType());
  auto rt = cast<RankedTensorType>(rhs.getType());
  Value init = createFilled(
      b, loc, {getDimSize(b, loc, lhs, 0), getDimSize(b, loc, rhs, 1)},
      createScalar(b, loc, lt.getElementType(), 0));
  return linalg::MatmulOp::create(b, loc, TypeRange{init.getType()},
                                  ValueRange{lhs, rhs}, ValueRange{init})
      .getResult(0);
}

// MatMul with dynamic dims: batch dims fold into M when the rhs is a
// matrix, else both sides' batch dims, equal rank for rank (no broadcasting
// of dynamic dims; checkMatMulOperands), fold into one batch dim.
Value createDynamicMatMul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                          RankedTensorType type) {
  auto lt = cast<RankedTensorType>(lhs.getType());
  auto rt = cast<RankedTensorType>(rhs.getType());
  SmallVector<OpFoldResult> ls = getDimSizes(b, loc, lhs),
                            rs = getDimSizes(b, loc, rhs);
  if (lt.getRank() == 1)
    ls.insert(ls.begin(), b.getIndexAttr(1));
  if (rt.getRank() == 1)
    rs.push_back(b.getIndexAttr(1));
  OpFoldResult m = ls[ls.size() - 2], k = ls.back(), n = rs.back();
  Value result;
  if (rs.size() == 2) {
    OpFoldResult rows = getSizeProduct(b, loc, ArrayRef(ls).drop_back());
    Value l = createDynamicReshape(b, loc, lhs, {rows, k});
    Value r = createDynamicReshape(b, loc, rhs, {rs[0], n});
    result = createMatmul2D(b, loc, l, r);
  } else {
    OpFoldResult lb = getSizeProduct(b, loc, ArrayRef(ls).drop_back(2));
    OpFoldResult rb = getSizeProduct(b, loc, ArrayRef(rs).drop_back(2));
    Value l = createDynamicReshape(b, loc, lhs, {lb, m, k});
    Value r = createDynamicReshape(b, loc, rhs, {rb, rs[rs.size() - 2], n});
    Value init = createFilled(b, loc, {lb, m, n},
                              createScalar(b, loc, type.getElementType(), 0));
    result = linalg::BatchMatmulOp::create(b, loc, TypeRange{init.getType()},
                                           ValueRange{l, r}, ValueRange{init})
                 .getResult(0);
  }
  // The result's dims: the batch dims of the longer side, M, N.
  SmallVector<OpFoldResult> sizes(
      ArrayRef(ls.size() >= rs.size() ? ls : rs).drop_back(2));
  if (lt.getRank() > 1)
    sizes.push_back(m);
  if (rt.getRank() > 1)
    sizes.push_back(n);
  return createDynamicReshape(b, loc, result, sizes);
}

} // namespace

LogicalResult checkMatMulOperands(NodeContext &ctx, RankedTensorType lt,
                                  RankedTensorType rt, RankedTensorType type) {
  if (lt.getRank() < 1 || rt.getRank() < 1)
    return ctx.fail("operands must have rank 1 or more, not " +
                    Twine(lt.getRank()) + " and " + Twine(rt.getRank()));
  SmallVector<int64_t> lshape(lt.getShape()), rshape(rt.getShape());
  if (lshape.size() == 1)
    lshape.insert(lshape.begin(), 1);
  if (rshape.size() == 1)
    rshape.push_back(1);
  auto differ = [](int64_t x, int64_t y) {
    return x != y && !ShapedType::isDynamic(x) && !ShapedType::isDynamic(y);
  };
  if (differ(lshape.back(), rshape[rshape.size() - 2]))
    return ctx.fail("the operands' inner dimensions differ (" +
                    Twine(lshape.back()) + " and " +
                    Twine(rshape[rshape.size() - 2]) + ")");
  ArrayRef<int64_t> lbatch = ArrayRef(lshape).drop_back(2),
                    rbatch = ArrayRef(rshape).drop_back(2);
  SmallVector<int64_t> shape = broadcastShapes(lbatch, rbatch);
  for (auto [i, d] : llvm::enumerate(shape)) {
    int64_t offsetL = shape.size() - lbatch.size(),
            offsetR = shape.size() - rbatch.size();
    int64_t dl = static_cast<int64_t>(i) < offsetL ? 1 : lbatch[i - offsetL];
    int64_t dr = static_cast<int64_t>(i) < offsetR ? 1 : rbatch[i - offsetR];
    if ((differ(dl, d) && dl != 1) || (differ(dr, d) && dr != 1))
      return ctx.fail("the operands' batch dimensions do not broadcast");
    // Dynamic batch dims are not broadcast: both sides have them.
    if ((ShapedType::isDynamic(dl) || ShapedType::isDynamic(dr)) &&
        lbatch.size() != rbatch.size() && !rbatch.empty())
      return ctx.fail("dynamic batch dims must appear on both operands, "
                      "rank for rank");
  }
  if (lt.getRank() > 1)
    shape.push_back(lshape[lshape.size() - 2]);
  if (rt.getRank() > 1)
    shape.push_back(rshape.back());
  if (shape.size() != static_cast<size_t>(type.getRank()) ||
      llvm::any_of(llvm::zip(shape, type.getShape()), [&](auto dims) {
        return differ(std::get<0>(dims), std::get<1>(dims));
      }))
    return ctx.fail("the result's shape is not the operands' product's");
  return success();
}

Value createMatMul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                   RankedTensorType type) {
  auto lt = cast<RankedTensorType>(lhs.getType());
  auto rt = cast<RankedTensorType>(rhs.getType());
  if (!lt.hasStaticShape() || !rt.hasStaticShape())
    return createDynamicMatMul(b, loc, lhs, rhs, type);
  SmallVector<int64_t> lshape(lt.getShape()), rshape(rt.getShape());
  if (lshape.size() == 1)
    lshape.insert(lshape.begin(), 1);
  if (rshape.size() == 1)
    rshape.push_back(1);
  int64_t m = lshape[lshape.size() - 2], k = lshape.back(), n = rshape.back();
  Value result;
  if (rshape.size() == 2) {
    // Batch dims of the lhs fold into M.
    int64_t rows = 1;
    for (int64_t d : lshape)
      rows *= d;
    rows /= k;
    Value l = createReshape(b, loc, lhs, {rows, k});
    Value r = createReshape(b, loc, rhs, {k, n});
    result = createMatmul2D(b, loc, l, r);
  } else {
    SmallVector<int64_t> lbatch(lshape.begin(), lshape.end() - 2);
    SmallVector<int64_t> rbatch(rshape.begin(), rshape.end() - 2);
    SmallVector<int64_t> batch = broadcastShapes(lbatch, rbatch);
    int64_t batchSize = 1;
    for (int64_t d : batch)
      batchSize *= d;
    SmallVector<int64_t> lfull(batch), rfull(batch);
    lfull.append({m, k});
    rfull.append({k, n});
    Value l =
        createBroadcast(b, loc, createReshape(b, loc, lhs, lshape), lfull);
    Value r =
        createBroadcast(b, loc, createReshape(b, loc, rhs, rshape), rfull);
    l = createReshape(b, loc, l, {batchSize, m, k});
    r = createReshape(b, loc, r, {batchSize, k, n});
    auto bmType =
        RankedTensorType::get({batchSize, m, n}, type.getElementType());
    Value init = createFilled(b, loc, bmType,
                              createScalar(b, loc, bmType.getElementType(), 0));
    result = linalg::BatchMatmulOp::create(b, loc, TypeRange{bmType},
                                           ValueRange{l, r}, ValueRange{init})
                 .getResult(0);
  }
  return createReshape(b, loc, result, type.getShape());
}

namespace {

LogicalResult lowerMatMul(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  if (failed(checkMatMulOperands(ctx, ctx.getInputType(0), ctx.getInputType(1),
                                 *type)))
    return failure();
  return ctx.setOutput(0,
                       createMatMul(ctx.getBuilder(), ctx.getLoc(),
                                    ctx.getInput(0), ctx.getInput(1), *type));
}

LogicalResult lowerGemm(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value a = ctx.getInput(0), bm = ctx.getInput(1);
  if (ctx.getInputType(0).getRank() != 2 || ctx.getInputType(1).getRank() != 2)
    return ctx.fail("A and B must be matrices (rank 2)");
  if (ctx.getIntAttr("transA", 0))
    a = createTranspose(b, loc, a, {1, 0});
  if (ctx.getIntAttr("transB", 0))
    bm = createTranspose(b, loc, bm, {1, 0});
  Value y = createMatmul2D(b, loc, a, bm);
  double alpha = ctx.getFloatAttr("alpha", 1.0f);
  double beta = ctx.getFloatAttr("beta", 1.0f);
  SmallVector<Value> inputs{y};
  bool hasC = ctx.hasInput(2) && beta != 0;
  if (hasC) {
    // C broadcasts one way to the result: rank <= 2, each dim 1 or equal
    // (inference does not check it).
    ArrayRef<int64_t> c = ctx.getInputType(2).getShape();
    ArrayRef<int64_t> out = type->getShape();
    if (c.size() > out.size() ||
        llvm::any_of(llvm::seq<size_t>(0, c.size()), [&](size_t i) {
          int64_t d = c[c.size() - 1 - i], o = out[out.size() - 1 - i];
          return d != 1 && d != o && !ShapedType::isDynamic(o);
        }))
      return ctx.emitError() << "C of type " << ctx.getInputType(2)
                             << " does not broadcast to the result " << *type;
    inputs.push_back(ctx.getInput(2));
  }
  if (alpha == 1.0 && !hasC)
    return ctx.setOutput(0, y);
  bool isFloat = isa<FloatType>(type->getElementType());
  Value result = createElementwise(
      b, loc, inputs, *type, [&](OpBuilder &nb, Location nl, ValueRange args) {
        Type t = args[0].getType();
        auto mul = [&](Value x, double s) -> Value {
          if (s == 1.0)
            return x;
          Value c = createScalar(nb, nl, t, s);
          return isFloat ? arith::MulFOp::create(nb, nl, x, c).getResult()
                         : arith::MulIOp::create(nb, nl, x, c).getResult();
        };
        Value r = mul(args[0], alpha);
        if (hasC) {
          Value c = mul(args[1], beta);
          r = isFloat ? arith::AddFOp::create(nb, nl, r, c).getResult()
                      : arith::AddIOp::create(nb, nl, r, c).getResult();
        }
        return r;
      });
  return ctx.setOutput(0, result);
}

} // namespace

// A grouped convolution over any number of spatial dims as one
// linalg.generic: loops n, g, m, out... (parallel), c, kernel... (reduction)
// over a [N, G, M/G, out...] result and the weight as [G, M/G, C/G, K...],
// so every loop appears alone in some map. `x` is already padded.
Value createConvGeneric(OpBuilder &b, Location loc, Value x, Value w,
                        RankedTensorType resultType, const WindowParams &p,
                        int64_t group) {
  auto xt = cast<RankedTensorType>(x.getType());
  auto wt = cast<RankedTensorType>(w.getType());
  int64_t rank = xt.getRank(), spatial = rank - 2;
  int64_t n = xt.getDimSize(0), cg = wt.getDimSize(1);
  int64_t m = wt.getDimSize(0), mg = m / group;
  Type et = resultType.getElementType();
  int64_t loops = 3 + 2 * spatial + 1;
  auto dim = [&](int64_t i) { return b.getAffineDimExpr(i); };
  AffineExpr cLoop = dim(3 + spatial);
  SmallVector<AffineExpr> xExprs{dim(0), dim(1) * cg + cLoop};
  SmallVector<AffineExpr> wExprs{dim(1), dim(2), cLoop};
  SmallVector<AffineExpr> outExprs{dim(0), dim(1), dim(2)};
  for (int64_t i = 0; i < spatial; ++i) {
    AffineExpr o = dim(3 + i), k = dim(4 + spatial + i);
    xExprs.push_back(o * p.strides[i] + k * p.dilations[i]);
    wExprs.push_back(k);
    outExprs.push_back(o);
  }
  SmallVector<AffineMap> maps{
      AffineMap::get(loops, 0, xExprs, b.getContext()),
      AffineMap::get(loops, 0, wExprs, b.getContext()),
      AffineMap::get(loops, 0, outExprs, b.getContext())};
  SmallVector<utils::IteratorType> iterators(3 + spatial,
                                             utils::IteratorType::parallel);
  iterators.append(1 + spatial, utils::IteratorType::reduction);
  SmallVector<int64_t> groupedWeight{group, mg, cg};
  llvm::append_range(groupedWeight, wt.getShape().drop_front(2));
  SmallVector<int64_t> groupedShape{n, group, mg};
  llvm::append_range(groupedShape, resultType.getShape().drop_front(2));
  auto groupedType = RankedTensorType::get(groupedShape, et);
  Value init =
      createFilled(b, loc, groupedType, createScalar(b, loc, et, 0), x);
  Value result =
      linalg::GenericOp::create(
          b, loc, TypeRange{groupedType},
          ValueRange{x, createReshape(b, loc, w, groupedWeight)},
          ValueRange{init}, maps, iterators,
          [&](OpBuilder &nb, Location nl, ValueRange a) {
            Value sum;
            if (isa<FloatType>(et))
              sum = arith::AddFOp::create(
                  nb, nl, a[2], arith::MulFOp::create(nb, nl, a[0], a[1]));
            else
              sum = arith::AddIOp::create(
                  nb, nl, a[2], arith::MulIOp::create(nb, nl, a[0], a[1]));
            linalg::YieldOp::create(nb, nl, ValueRange{sum});
          })
          .getResult(0);
  return createReshape(b, loc, result, resultType.getShape());
}

namespace {

// Adds Conv's optional bias (input 2, one value per output channel).
Value addConvBias(NodeContext &ctx, Value result, RankedTensorType type) {
  if (!ctx.hasInput(2))
    return result;
  SmallVector<int64_t> biasShape{type.getDimSize(1)};
  biasShape.append(type.getRank() - 2, 1);
  OpBuilder &b = ctx.getBuilder();
  Value bias = createReshape(b, ctx.getLoc(), ctx.getInput(2), biasShape);
  return createElementwise(
      b, ctx.getLoc(), {result, bias}, type,
      [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::AddFOp::create(nb, nl, a[0], a[1]).getResult();
      });
}

LogicalResult lowerConv(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value x = ctx.getInput(0), w = ctx.getInput(1);
  auto xt = ctx.getInputType(0), wt = ctx.getInputType(1);
  int64_t spatial = xt.getRank() - 2;
  if (spatial < 1)
    return ctx.fail("input must be [N, C, spatial...]");
  if (wt.getRank() != xt.getRank())
    return ctx.fail("the weight has rank " + llvm::Twine(wt.getRank()) +
                    " but the input has rank " + llvm::Twine(xt.getRank()));
  if (failed(checkWindowedDynamic(ctx, xt)))
    return failure();
  FailureOr<WindowParams> p = getWindowParams(ctx, xt.getShape().drop_front(2),
                                              wt.getShape().drop_front(2));
  if (failed(p))
    return failure();
  Type et = type->getElementType();
  if (spatial > 2) {
    Value result =
        createConvGeneric(b, loc,
                          padSpatial(b, loc, x, p->padsBegin, p->padsEnd,
                                     createScalar(b, loc, et, 0)),
                          w, *type, *p, ctx.getIntAttr("group", 1));
    return ctx.setOutput(0, addConvBias(ctx, result, *type));
  }
  if (spatial == 1) {
    // As a 2-D convolution over a height of 1.
    x = createReshape(
        b, loc, x, {xt.getDimSize(0), xt.getDimSize(1), 1, xt.getDimSize(2)});
    w = createReshape(
        b, loc, w, {wt.getDimSize(0), wt.getDimSize(1), 1, wt.getDimSize(2)});
    for (auto *v : {&p->kernel, &p->padsBegin, &p->padsEnd})
      v->insert(v->begin(), v == &p->kernel ? 1 : 0);
    p->strides.insert(p->strides.begin(), 1);
    p->dilations.insert(p->dilations.begin(), 1);
  }
  x = padSpatial(b, loc, x, p->padsBegin, p->padsEnd,
                 createScalar(b, loc, et, 0));
  auto xs = cast<RankedTensorType>(x.getType()).getShape();
  auto ws = cast<RankedTensorType>(w.getType()).getShape();
  int64_t group = ctx.getIntAttr("group", 1);
  int64_t n = xs[0], c = xs[1], m = ws[0];
  // The output's spatial sizes: computed here when static, else at run
  // time from the padded input's.
  OpFoldResult batchSize = getDimSize(b, loc, x, 0);
  SmallVector<OpFoldResult> outSpatial;
  for (int64_t i = 0; i < 2; ++i) {
    int64_t reach = (ws[2 + i] - 1) * p->dilations[i] + 1;
    if (!ShapedType::isDynamic(xs[2 + i])) {
      outSpatial.push_back(
          b.getIndexAttr((xs[2 + i] - reach) / p->strides[i] + 1));
      continue;
    }
    outSpatial.push_back(createWindowCount(b, loc, getDimSize(b, loc, x, 2 + i),
                                           reach, p->strides[i]));
  }
  auto sizesOf = [&](ArrayRef<OpFoldResult> leading) {
    SmallVector<OpFoldResult> sizes(leading);
    llvm::append_range(sizes, outSpatial);
    return sizes;
  };
  auto typeOf = [&](ArrayRef<OpFoldResult> sizes) {
    SmallVector<int64_t> shape = getStaticShape(sizes);
    return RankedTensorType::get(shape, et);
  };
  auto strides = getI64VectorAttr(b, p->strides);
  auto dilations = getI64VectorAttr(b, p->dilations);
  Value zero = createScalar(b, loc, et, 0);
  Value result;
  if (group == 1) {
    SmallVector<OpFoldResult> sizes = sizesOf({batchSize, b.getIndexAttr(m)});
    result =
        linalg::Conv2DNchwFchwOp::create(
            b, loc, TypeRange{typeOf(sizes)}, ValueRange{x, w},
            ValueRange{createFilled(b, loc, sizes, zero)}, strides, dilations)
            .getResult(0);
  } else if (group == c && m == c) {
    SmallVector<OpFoldResult> sizes = sizesOf({batchSize, b.getIndexAttr(c)});
    Value dw = createReshape(b, loc, w, {c, ws[2], ws[3]});
    result =
        linalg::DepthwiseConv2DNchwChwOp::create(
            b, loc, TypeRange{typeOf(sizes)}, ValueRange{x, dw},
            ValueRange{createFilled(b, loc, sizes, zero)}, strides, dilations)
            .getResult(0);
  } else {
    int64_t g = group;
    Value gx = createReshape(b, loc, x, {n, g, c / g, xs[2], xs[3]});
    Value gw = createReshape(b, loc, w, {g, m / g, ws[1], ws[2], ws[3]});
    SmallVector<OpFoldResult> sizes =
        sizesOf({batchSize, b.getIndexAttr(g), b.getIndexAttr(m / g)});
    RankedTensorType t = typeOf(sizes);
    result =
        linalg::Conv2DNgchwGfchwOp::create(
            b, loc, TypeRange{t}, ValueRange{gx, gw},
            ValueRange{createFilled(b, loc, sizes, zero)}, strides, dilations)
            .getResult(0);
    result = createReshape(
        b, loc, result, {t.getDimSize(0), m, t.getDimSize(3), t.getDimSize(4)});
  }
  result = createReshape(b, loc, result, type->getShape());
  return ctx.setOutput(0, addConvBias(ctx, result, *type));
}

} // namespace

void addMatMulConvLowerings(LoweringTable &t) {
  t["MatMul"] = lowerMatMul;
  t["Gemm"] = lowerGemm;
  t["Conv"] = lowerConv;
}

} // namespace strata::onnx_importer
