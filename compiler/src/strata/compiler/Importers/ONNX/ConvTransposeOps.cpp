//===- ConvTransposeOps.cpp - ConvTranspose (1-D, 2-D, 3-D, groups) -------===//
//
// ConvTranspose is a stride-1 convolution of the input spread out by the
// strides (s - 1 zeros between elements, one strided tensor.insert_slice
// into zeros that also applies the padding) with the kernel flipped and its
// in/out channels swapped. The convolution is one linalg.generic for any
// number of spatial dims and groups; the flip and the channel swap are in
// the weight's indexing map, so the weight is read in place.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>

using namespace mlir;

namespace strata::onnx_importer {
namespace {

Value createTransposedConvGeneric(NodeContext &ctx, Value spreadX,
                                  ArrayRef<OpFoldResult> outSizes,
                                  RankedTensorType type,
                                  ArrayRef<int64_t> dilations);

// ConvTranspose over dynamic dims (explicit pads): the spread-out input and
// the result sized at run time, as lowerConvTranspose sizes them here.
LogicalResult lowerDynamicConvTranspose(NodeContext &ctx, RankedTensorType type,
                                        ArrayRef<int64_t> strides,
                                        ArrayRef<int64_t> dilations,
                                        ArrayRef<int64_t> outputPadding,
                                        ArrayRef<int64_t> pads, bool valid) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0), wt = ctx.getInputType(1);
  int64_t rank = xt.getRank(), spatial = rank - 2;
  Type et = xt.getElementType();
  Value x = ctx.getInput(0);
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  auto add = [&](Value l, int64_t r) {
    return arith::AddIOp::create(b, loc, l, index(r)).getResult();
  };
  OpFoldResult n = getDimSize(b, loc, x, 0);
  SmallVector<OpFoldResult> spreadSizes{n, b.getIndexAttr(xt.getDimSize(1))};
  SmallVector<OpFoldResult> outSizes{n, b.getIndexAttr(type.getDimSize(1))};
  SmallVector<OpFoldResult> offsets(2, b.getIndexAttr(0)),
      firsts(2, b.getIndexAttr(0)), counts{n, spreadSizes[1]},
      steps(2, b.getIndexAttr(1));
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t k = wt.getDimSize(2 + i), s = strides[i], d = dilations[i];
    int64_t padBegin = valid || pads.empty() ? 0 : pads[i];
    int64_t padEnd = valid || pads.empty() ? 0 : pads[spatial + i];
    Value in =
        getValueOrCreateConstantIndexOp(b, loc, getDimSize(b, loc, x, 2 + i));
    // out = s (in - 1) + output_padding + (K - 1) d + 1 - pads.
    Value out = add(arith::MulIOp::create(b, loc, add(in, -1), index(s)),
                    outputPadding[i] + (k - 1) * d + 1 - padBegin - padEnd);
    out = arith::MaxSIOp::create(b, loc, out, index(0));
    int64_t low = (k - 1) * d - padBegin;
    int64_t first = low >= 0 ? 0 : (-low + s - 1) / s;
    // The last input element landing inside [0, out + (K - 1) d).
    Value last = arith::MinSIOp::create(
        b, loc, add(in, -1),
        arith::FloorDivSIOp::create(b, loc, add(out, padBegin - 1), index(s)));
    Value count =
        arith::MaxSIOp::create(b, loc, add(last, 1 - first), index(0));
    outSizes.push_back(out);
    spreadSizes.push_back(add(out, (k - 1) * d));
    offsets.push_back(b.getIndexAttr(low + first * s));
    firsts.push_back(b.getIndexAttr(first));
    counts.push_back(count);
    steps.push_back(b.getIndexAttr(s));
  }
  Value spreadX =
      createFilled(b, loc, spreadSizes, createScalar(b, loc, et, 0));
  SmallVector<OpFoldResult> ones(rank, b.getIndexAttr(1));
  Value taken = tensor::ExtractSliceOp::create(b, loc, x, firsts, counts, ones);
  spreadX = tensor::InsertSliceOp::create(b, loc, taken, spreadX, offsets,
                                          counts, steps);
  return ctx.setOutput(
      0, createTransposedConvGeneric(ctx, spreadX, outSizes, type, dilations));
}

LogicalResult lowerConvTranspose(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0), wt = ctx.getInputType(1);
  int64_t rank = xt.getRank(), spatial = rank - 2;
  if (spatial < 1 || wt.getRank() != rank || type->getRank() != rank)
    return ctx.fail("input, weight and result must be [N, C, spatial...] "
                    "of one rank");
  Type et = xt.getElementType();
  if (!isa<FloatType>(et))
    return ctx.fail("only floating-point ConvTranspose is supported");
  int64_t group = ctx.getIntAttr("group", 1);
  int64_t c = xt.getDimSize(1);
  if (!wt.hasStaticShape() || xt.isDynamicDim(1))
    return ctx.fail("the weight and the input's channels must be static" +
                    ctx.getState().pinHint);
  if (group < 1 || c % group != 0 || wt.getDimSize(0) != c)
    return ctx.fail("weight channels do not match the input and group");
  int64_t cg = c / group, mg = wt.getDimSize(1), m = mg * group;
  if (type->getDimSize(1) != m ||
      failed(verifyCompatibleShape(ArrayRef<int64_t>{xt.getDimSize(0)},
                                   ArrayRef<int64_t>{type->getDimSize(0)})))
    return ctx.fail("result shape does not match the weight");

  auto attrOr = [&](StringRef name, int64_t value) {
    SmallVector<int64_t> v = ctx.getIntsAttr(name);
    if (v.empty())
      v.assign(spatial, value);
    return v;
  };
  SmallVector<int64_t> strides = attrOr("strides", 1);
  SmallVector<int64_t> dilations = attrOr("dilations", 1);
  SmallVector<int64_t> outputPadding = attrOr("output_padding", 0);
  SmallVector<int64_t> pads = ctx.getIntsAttr("pads");
  std::string autoPad = ctx.getStringAttr("auto_pad", "NOTSET");
  if (strides.size() != static_cast<size_t>(spatial) ||
      dilations.size() != static_cast<size_t>(spatial) ||
      outputPadding.size() != static_cast<size_t>(spatial) ||
      (!pads.empty() && pads.size() != static_cast<size_t>(2 * spatial)))
    return ctx.fail("strides, dilations, output_padding or pads have the "
                    "wrong length");
  if (llvm::any_of(strides, [](int64_t s) { return s < 1; }) ||
      llvm::any_of(dilations, [](int64_t d) { return d < 1; }))
    return ctx.fail("strides and dilations must be positive");
  if (autoPad != "NOTSET" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER" && autoPad != "VALID")
    return ctx.fail("unknown auto_pad '" + autoPad + "'");
  bool splitPadding = autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER" ||
                      ctx.hasAttr("output_shape");
  if (!xt.hasStaticShape() && splitPadding)
    return ctx.fail("with dynamic dims, auto_pad SAME_* and output_shape are "
                    "not supported yet" +
                    ctx.getState().pinHint);
  if (!xt.hasStaticShape())
    return lowerDynamicConvTranspose(ctx, *type, strides, dilations,
                                     outputPadding, pads, autoPad == "VALID");
  int64_t n = xt.getDimSize(0);

  // Per spatial dim: where the first input element lands in the spread-out
  // input (low), and its size (out + (K - 1) * d for a valid convolution to
  // the result size).
  SmallVector<int64_t> low(spatial), spread(spatial), kernel(spatial);
  SmallVector<int64_t> first(spatial), count(spatial);
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t in = xt.getDimSize(2 + i), k = wt.getDimSize(2 + i);
    int64_t out = type->getDimSize(2 + i), s = strides[i], d = dilations[i];
    kernel[i] = k;
    int64_t padBegin = pads.empty() ? 0 : pads[i];
    if (splitPadding) {
      // The padding that gives the result size, split as the spec says.
      int64_t total = s * (in - 1) + outputPadding[i] + (k - 1) * d + 1 - out;
      // (floor division, as the reference: a negative total, i.e. a
      // result larger than the input gives, extends the end.)
      int64_t half = llvm::divideFloorSigned(total, 2);
      padBegin = autoPad == "SAME_UPPER" ? half : total - half;
    } else if (autoPad == "VALID") {
      padBegin = 0;
    }
    low[i] = (k - 1) * d - padBegin;
    spread[i] = out + (k - 1) * d;
    // Input elements that land inside [0, spread).
    first[i] = low[i] >= 0 ? 0 : (-low[i] + s - 1) / s;
    int64_t last = (spread[i] - 1 - low[i]) >= 0
                       ? std::min(in - 1, (spread[i] - 1 - low[i]) / s)
                       : -1;
    count[i] = std::max<int64_t>(0, last - first[i] + 1);
    low[i] += first[i] * s;
  }

  Value zero = createScalar(b, loc, et, 0);
  SmallVector<int64_t> spreadShape{n, c};
  llvm::append_range(spreadShape, spread);
  Value spreadX =
      createFilled(b, loc, RankedTensorType::get(spreadShape, et), zero);
  if (llvm::all_of(count, [](int64_t v) { return v > 0; })) {
    SmallVector<int64_t> offsets{0, 0}, sizes{n, c}, steps{1, 1};
    SmallVector<int64_t> sliceOffsets{0, 0}, ones(rank, 1);
    llvm::append_range(offsets, low);
    llvm::append_range(sizes, count);
    llvm::append_range(steps, strides);
    llvm::append_range(sliceOffsets, first);
    Value x = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get(sizes, et), ctx.getInput(0), ValueRange{},
        ValueRange{}, ValueRange{}, b.getDenseI64ArrayAttr(sliceOffsets),
        b.getDenseI64ArrayAttr(sizes), b.getDenseI64ArrayAttr(ones));
    spreadX = tensor::InsertSliceOp::create(
        b, loc, x, spreadX, ValueRange{}, ValueRange{}, ValueRange{},
        b.getDenseI64ArrayAttr(offsets), b.getDenseI64ArrayAttr(sizes),
        b.getDenseI64ArrayAttr(steps));
  }

  SmallVector<OpFoldResult> outSizes;
  for (int64_t size : type->getShape())
    outSizes.push_back(b.getIndexAttr(size));
  return ctx.setOutput(
      0, createTransposedConvGeneric(ctx, spreadX, outSizes, *type, dilations));
}

// `weight` [C, M/G, K...] with its kernel dims reversed, computed at
// compile time; null for elements not stored in whole bytes.
DenseElementsAttr flipKernelDims(DenseElementsAttr weight) {
  if (weight.isSplat())
    return weight;
  auto type = cast<RankedTensorType>(weight.getType());
  unsigned bits = type.getElementTypeBitWidth();
  if (bits % 8 != 0)
    return {};
  size_t bytes = bits / 8;
  ArrayRef<int64_t> shape = type.getShape();
  int64_t rank = type.getRank();
  ArrayRef<char> source = weight.getRawData();
  std::vector<char> flipped(source.size());
  SmallVector<int64_t> index(rank, 0);
  for (int64_t linear = 0, count = type.getNumElements(); linear < count;
       ++linear) {
    int64_t from = 0;
    for (int64_t d = 0; d < rank; ++d)
      from = from * shape[d] + (d >= 2 ? shape[d] - 1 - index[d] : index[d]);
    std::memcpy(&flipped[linear * bytes], &source[from * bytes], bytes);
    for (int64_t d = rank - 1; d >= 0 && ++index[d] == shape[d]; --d)
      index[d] = 0;
  }
  return DenseElementsAttr::getFromRawBuffer(type, flipped);
}

// The stride-1 convolution of the spread-out input with the flipped
// kernel, into `type` of `outSizes` (static where attributes), from the
// bias when there is one.
Value createTransposedConvGeneric(NodeContext &ctx, Value spreadX,
                                  ArrayRef<OpFoldResult> outSizes,
                                  RankedTensorType type,
                                  ArrayRef<int64_t> dilations) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType wt = ctx.getInputType(1);
  int64_t rank = type.getRank(), spatial = rank - 2;
  Type et = type.getElementType();
  int64_t group = ctx.getIntAttr("group", 1);
  int64_t c = wt.getDimSize(0), cg = c / group, mg = wt.getDimSize(1);
  SmallVector<int64_t> kernel(wt.getShape().drop_front(2));
  Value zero = createScalar(b, loc, et, 0);
  // Loops: n, g, m, o_1..o_s (parallel), c, k_1..k_s (reduction) over a
  // [N, G, M/G, out...] result and the weight as [G, C/G, M/G, K...], so
  // every loop appears alone in some map. A constant kernel is flipped at
  // compile time, so the input's map, o + k * d, grows with every loop
  // (the workgroup split sizes a tile's input window from its loops'
  // bounds as if it did: o + (K - 1 - k) * d undersized it); a kernel
  // known only at run time is flipped in that map.
  Value weight = ctx.getInput(1);
  DenseElementsAttr flippedWeight;
  if (std::optional<DenseElementsAttr> known = ctx.getConstantInput(1))
    flippedWeight = flipKernelDims(*known);
  if (flippedWeight)
    weight = arith::ConstantOp::create(b, loc, flippedWeight);
  int64_t loops = 3 + 2 * spatial + 1;
  auto dim = [&](int64_t i) { return b.getAffineDimExpr(i); };
  AffineExpr cLoop = dim(3 + spatial);
  SmallVector<AffineExpr> xExprs{dim(0), dim(1) * cg + cLoop};
  SmallVector<AffineExpr> wExprs{dim(1), cLoop, dim(2)};
  SmallVector<AffineExpr> outExprs{dim(0), dim(1), dim(2)};
  for (int64_t i = 0; i < spatial; ++i) {
    AffineExpr o = dim(3 + i), k = dim(4 + spatial + i);
    xExprs.push_back(flippedWeight
                         ? o + k * dilations[i]
                         : o + (b.getAffineConstantExpr(kernel[i] - 1) - k) *
                                   dilations[i]);
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
  SmallVector<int64_t> groupedWeight{group, cg, mg};
  llvm::append_range(groupedWeight, kernel);
  Value w = createReshape(b, loc, weight, groupedWeight);
  SmallVector<int64_t> groupedShape{type.getDimSize(0), group, mg};
  llvm::append_range(groupedShape, type.getShape().drop_front(2));
  auto groupedType = RankedTensorType::get(groupedShape, et);
  SmallVector<OpFoldResult> groupedSizes{outSizes[0], b.getIndexAttr(group),
                                         b.getIndexAttr(mg)};
  llvm::append_range(groupedSizes, outSizes.drop_front(2));
  // The accumulator starts from the bias (broadcast over the spatial dims;
  // a fresh tensor, never the bias itself, which the generic must not
  // write). Over dynamic dims it starts from zeros and the bias is added
  // after: an accumulator another dispatch computed would need a copy of
  // run-time size.
  bool dynamic = !groupedType.hasStaticShape();
  SmallVector<int64_t> biasShape{group, mg};
  biasShape.append(spatial, 1);
  Value init;
  if (ctx.hasInput(2) && !dynamic) {
    init = createElementwise(
        b, loc, {createReshape(b, loc, ctx.getInput(2), biasShape)},
        groupedType, [](OpBuilder &, Location, ValueRange a) { return a[0]; },
        groupedSizes);
  } else {
    init = createFilled(b, loc, groupedSizes, zero);
  }
  Value result =
      linalg::GenericOp::create(
          b, loc, TypeRange{groupedType}, ValueRange{spreadX, w},
          ValueRange{init}, maps, iterators,
          [](OpBuilder &nb, Location nl, ValueRange a) {
            Value product = arith::MulFOp::create(nb, nl, a[0], a[1]);
            linalg::YieldOp::create(
                nb, nl,
                ValueRange{
                    arith::AddFOp::create(nb, nl, a[2], product).getResult()});
          })
          .getResult(0);
  if (ctx.hasInput(2) && dynamic)
    result = createElementwise(
        b, loc, {result, createReshape(b, loc, ctx.getInput(2), biasShape)},
        groupedType, [](OpBuilder &nb, Location nl, ValueRange a) {
          return arith::AddFOp::create(nb, nl, a[0], a[1]).getResult();
        });
  return createReshape(b, loc, result, type.getShape());
}

} // namespace

// Col2Im (opset 18): the columns [N, C * prod(block), L] of an im2col
// summed back into images [N, C, image...]: pixel y of channel c gathers
// column (c, k) at block position l for each kernel offset k with
// y + pad_begin - k * dilation = l * stride. block_shape may arrive at run
// time (the image sizes are the result's); its offsets are decomposed in
// the body.
LogicalResult lowerCol2Im(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  RankedTensorType xt = ctx.getInputType(0);
  int64_t rank = type->getRank();
  int64_t spatial = rank - 2;
  Type et = xt.getElementType();
  if (xt.getRank() != 3 || spatial < 1 || !isa<FloatType>(et) ||
      type->getElementType() != et || type->getDimSize(0) != xt.getDimSize(0))
    return ctx.fail("input must be float [N, C * prod(block), L] and the "
                    "result [N, C, image...] of its type");
  int64_t channels = type->getDimSize(1);
  if (channels <= 0 || xt.getDimSize(1) % channels != 0)
    return ctx.fail("the input's dim 1 must be a multiple of the result's "
                    "channels");
  int64_t kernel = xt.getDimSize(1) / channels;
  if (ctx.getInputType(2).getNumElements() != spatial ||
      ctx.getInputType(1).getNumElements() != spatial)
    return ctx.fail("image_shape and block_shape must have one value per "
                    "image dim");
  auto attr = [&](StringRef name, int64_t fill, int64_t count) {
    SmallVector<int64_t> values = ctx.getIntsAttr(name);
    if (values.empty())
      values.assign(count, fill);
    return values;
  };
  SmallVector<int64_t> dilations = attr("dilations", 1, spatial);
  SmallVector<int64_t> strides = attr("strides", 1, spatial);
  SmallVector<int64_t> pads = attr("pads", 0, 2 * spatial);
  if (static_cast<int64_t>(dilations.size()) != spatial ||
      static_cast<int64_t>(strides.size()) != spatial ||
      static_cast<int64_t>(pads.size()) != 2 * spatial ||
      llvm::any_of(dilations, [](int64_t v) { return v < 1; }) ||
      llvm::any_of(strides, [](int64_t v) { return v < 1; }))
    return ctx.fail("dilations and strides need one positive value per "
                    "image dim, pads two");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  Value columns = ctx.getInput(0), blockShape = ctx.getInput(2);
  int64_t blocks = xt.getDimSize(2);
  Value y = createIndexedSum(
      b, loc, *type, kernel,
      [&](OpBuilder &nb, Location nl, ArrayRef<Value> ivs, Value k) -> Value {
        Type i64 = nb.getI64Type();
        auto c64 = [&](int64_t v) { return createScalar(nb, nl, i64, v); };
        auto toI64 = [&](Value index) -> Value {
          return arith::IndexCastOp::create(nb, nl, i64, index);
        };
        // Kernel offsets of k (last dim fastest) and block positions.
        Value rest = toI64(k), valid = createScalar(nb, nl, nb.getI1Type(), 1);
        SmallVector<Value> blockSizes(spatial), offsets(spatial);
        for (int64_t d = spatial - 1; d >= 0; --d) {
          Value size = createScalarCast(
              nb, nl,
              tensor::ExtractOp::create(
                  nb, nl, blockShape,
                  ValueRange{arith::ConstantIndexOp::create(nb, nl, d)}),
              i64, false, false);
          size = arith::MaxSIOp::create(nb, nl, size, c64(1));
          blockSizes[d] = size;
          offsets[d] = arith::RemSIOp::create(nb, nl, rest, size);
          rest = arith::DivSIOp::create(nb, nl, rest, size);
        }
        Value flat = c64(0);
        for (int64_t d = 0; d < spatial; ++d) {
          int64_t image = type->getDimSize(2 + d);
          // Blocks along d: (image + pads - dilation (block - 1) - 1) /
          // stride + 1.
          Value extent = arith::SubIOp::create(
              nb, nl, c64(image + pads[d] + pads[spatial + d] - 1),
              arith::MulIOp::create(
                  nb, nl, c64(dilations[d]),
                  arith::SubIOp::create(nb, nl, blockSizes[d], c64(1))));
          Value count = arith::AddIOp::create(
              nb, nl, arith::DivSIOp::create(nb, nl, extent, c64(strides[d])),
              c64(1));
          Value position = arith::SubIOp::create(
              nb, nl,
              arith::AddIOp::create(nb, nl, toI64(ivs[2 + d]), c64(pads[d])),
              arith::MulIOp::create(nb, nl, offsets[d], c64(dilations[d])));
          Value block =
              arith::DivSIOp::create(nb, nl, position, c64(strides[d]));
          using P = arith::CmpIPredicate;
          Value aligned = arith::CmpIOp::create(
              nb, nl, P::eq,
              arith::RemSIOp::create(nb, nl, position, c64(strides[d])),
              c64(0));
          Value inside = arith::AndIOp::create(
              nb, nl, arith::CmpIOp::create(nb, nl, P::sge, position, c64(0)),
              arith::CmpIOp::create(nb, nl, P::slt, block, count));
          valid = arith::AndIOp::create(
              nb, nl, valid, arith::AndIOp::create(nb, nl, aligned, inside));
          flat = arith::AddIOp::create(
              nb, nl, arith::MulIOp::create(nb, nl, flat, count), block);
        }
        valid = arith::AndIOp::create(
            nb, nl, valid,
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, flat,
                                  c64(blocks)));
        flat = arith::SelectOp::create(nb, nl, valid, flat, c64(0));
        Value row = arith::AddIOp::create(
            nb, nl,
            arith::MulIOp::create(
                nb, nl, ivs[1], arith::ConstantIndexOp::create(nb, nl, kernel)),
            k);
        Value v = tensor::ExtractOp::create(
            nb, nl, columns,
            ValueRange{
                ivs[0], row,
                arith::IndexCastOp::create(nb, nl, nb.getIndexType(), flat)});
        return arith::SelectOp::create(nb, nl, valid, v,
                                       createScalar(nb, nl, et, 0));
      });
  return ctx.setOutput(0, y);
}

void addConvTransposeLowerings(LoweringTable &t) {
  t["ConvTranspose"] = lowerConvTranspose;
  t["Col2Im"] = lowerCol2Im;
}

} // namespace strata::onnx_importer
