//===- TransformerOps.cpp - RotaryEmbedding, TensorScatter, causal conv ---===//
//
// The operators opsets 23-27 added for transformer and state-space decoders
// besides attention (AttentionOps.cpp): rotary position embeddings, KV-cache
// updates and stateful causal convolution.
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

Value indexConstant(OpBuilder &b, Location loc, int64_t value) {
  return arith::ConstantIndexOp::create(b, loc, value);
}

Value toIndex(OpBuilder &b, Location loc, Value integer) {
  return arith::IndexCastOp::create(b, loc, b.getIndexType(), integer);
}

// RotaryEmbedding: X [B, H, S, D] (or [B, S, H*D] with num_heads) rotated
// pairwise in its first rotary_embedding_dim channels: the halves (or, when
// interleaved, the even and odd channels) x1, x2 become x1 cos - x2 sin and
// x1 sin + x2 cos. cos/sin are [B, S, R/2], or [P, R/2] indexed by
// position_ids [B, S].
LogicalResult lowerRotaryEmbedding(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0);
  if (xt != *type || !isa<FloatType>(xt.getElementType()))
    return ctx.fail("the input and the result must be floats of one type");
  int64_t rank = xt.getRank();
  if (rank != 3 && rank != 4)
    return ctx.fail("the input must be [B, H, S, D] or [B, S, H*D]");
  int64_t heads = rank == 4 ? xt.getDimSize(1) : ctx.getIntAttr("num_heads", 0);
  if (heads <= 0 || (rank == 3 && xt.getDimSize(2) % heads != 0))
    return ctx.fail("a 3-D input needs num_heads dividing its last dim");
  int64_t seq = xt.getDimSize(rank == 4 ? 2 : 1);
  int64_t headSize = rank == 4 ? xt.getDimSize(3) : xt.getDimSize(2) / heads;
  int64_t rotary = ctx.getIntAttr("rotary_embedding_dim", 0);
  if (rotary == 0)
    rotary = headSize;
  if (rotary < 0 || rotary > headSize || rotary % 2 != 0)
    return ctx.fail("rotary_embedding_dim must be even and at most the head "
                    "size " +
                    Twine(headSize));
  int64_t half = rotary / 2;
  bool interleaved = ctx.getIntAttr("interleaved", 0) != 0;
  bool hasPositions = ctx.hasInput(3);
  RankedTensorType cacheType = ctx.getInputType(1);
  if (cacheType != ctx.getInputType(2) ||
      cacheType.getElementType() != xt.getElementType() ||
      cacheType.getShape().back() != half ||
      cacheType.getRank() != (hasPositions ? 2 : 3))
    return ctx.fail("cos_cache and sin_cache must be [" +
                    Twine(hasPositions ? "P" : "B, S") + ", " + Twine(half) +
                    "] of the input's type");
  if (hasPositions) {
    RankedTensorType pt = ctx.getInputType(3);
    if (pt.getRank() != 2 || pt.getDimSize(0) != xt.getDimSize(0) ||
        pt.getDimSize(1) != seq)
      return ctx.fail("position_ids must be [B, S]");
    if (failed(ctx.checkConstantIndices(
            3, [&](int64_t) { return cacheType.getDimSize(0); })))
      return failure();
  } else if (cacheType.getDimSize(0) != xt.getDimSize(0) ||
             cacheType.getDimSize(1) != seq) {
    return ctx.fail("without position_ids the caches must be [B, S, R/2]");
  }
  Value x = ctx.getInput(0);
  Value cosCache = ctx.getInput(1);
  Value sinCache = ctx.getInput(2);
  Value positions = hasPositions ? ctx.getInput(3) : Value();
  int64_t maxPosition = cacheType.getDimSize(0);
  Value y = createIndexedGeneric(
      b, loc, {}, {}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        // (batch, sequence position, channel within the head) of ivs, and
        // the coordinates of channel `c` of the same head.
        Value batch = ivs[0];
        Value pos = ivs[rank == 4 ? 2 : 1];
        Value channel = ivs[rank - 1];
        Value headBase;
        if (rank == 3) {
          Value size = indexConstant(nb, nl, headSize);
          headBase = arith::MulIOp::create(
              nb, nl, arith::DivUIOp::create(nb, nl, channel, size), size);
          channel = arith::RemUIOp::create(nb, nl, channel, size);
        }
        auto at = [&](Value c) {
          SmallVector<Value> coords(ivs);
          coords[rank - 1] =
              rank == 3 ? arith::AddIOp::create(nb, nl, headBase, c) : c;
          return tensor::ExtractOp::create(nb, nl, x, coords).getResult();
        };
        Value self = at(channel);
        // Channel pair (x1 at c1, x2 at c2), frequency i, and whether this
        // channel is the first of its pair.
        Value c1, c2, freq, isFirst;
        Value halfIdx = indexConstant(nb, nl, half);
        if (interleaved) {
          Value two = indexConstant(nb, nl, 2);
          freq = arith::DivUIOp::create(nb, nl, channel, two);
          c1 = arith::MulIOp::create(nb, nl, freq, two);
          c2 = arith::AddIOp::create(nb, nl, c1, indexConstant(nb, nl, 1));
          isFirst = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::eq, c1,
                                          channel);
        } else {
          isFirst = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult,
                                          channel, halfIdx);
          freq = arith::SelectOp::create(
              nb, nl, isFirst, channel,
              arith::SubIOp::create(nb, nl, channel, halfIdx));
          c1 = freq;
          c2 = arith::AddIOp::create(nb, nl, freq, halfIdx);
        }
        Value rotated =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult, channel,
                                  indexConstant(nb, nl, rotary));
        // Out-of-rotation channels read pair 0 harmlessly and keep x.
        Value zero = indexConstant(nb, nl, 0);
        c1 = arith::SelectOp::create(nb, nl, rotated, c1, zero);
        c2 = arith::SelectOp::create(nb, nl, rotated, c2, zero);
        freq = arith::SelectOp::create(nb, nl, rotated, freq, zero);
        SmallVector<Value> cacheAt;
        if (hasPositions) {
          Value id = tensor::ExtractOp::create(nb, nl, positions,
                                               ValueRange{batch, pos});
          cacheAt = {normalizeIndex(nb, nl, id, maxPosition), freq};
        } else {
          cacheAt = {batch, pos, freq};
        }
        Value cos = tensor::ExtractOp::create(nb, nl, cosCache, cacheAt);
        Value sin = tensor::ExtractOp::create(nb, nl, sinCache, cacheAt);
        Value x1 = at(c1), x2 = at(c2);
        Value real = arith::SubFOp::create(
            nb, nl, arith::MulFOp::create(nb, nl, cos, x1),
            arith::MulFOp::create(nb, nl, sin, x2));
        Value imag = arith::AddFOp::create(
            nb, nl, arith::MulFOp::create(nb, nl, sin, x1),
            arith::MulFOp::create(nb, nl, cos, x2));
        Value r = arith::SelectOp::create(nb, nl, isFirst, real, imag);
        return arith::SelectOp::create(nb, nl, rotated, r, self).getResult();
      });
  return ctx.setOutput(0, y);
}

// TensorScatter: past_cache with `update` written along `axis` from each
// batch's write index (0 without write_indices; modulo the cache length
// when mode is circular).
LogicalResult lowerTensorScatter(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType past = ctx.getInputType(0);
  RankedTensorType update = ctx.getInputType(1);
  int64_t rank = past.getRank();
  if (past != *type || update.getRank() != rank || rank < 2 ||
      update.getElementType() != past.getElementType())
    return ctx.fail("past_cache, update and the result must have one rank "
                    "(at least 2) and element type");
  FailureOr<int64_t> axisOr = ctx.getAxis(ctx.getIntAttr("axis", -2), rank);
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  if (axis == 0)
    return ctx.fail("axis must not be the batch dimension");
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis && update.getDimSize(d) != past.getDimSize(d))
      return ctx.fail("update must match past_cache except along axis");
  int64_t maxLength = past.getDimSize(axis);
  int64_t length = update.getDimSize(axis);
  if (length > maxLength)
    return ctx.fail("update is longer than the cache along axis");
  if (length == 0)
    return ctx.setOutput(0, createCopy(b, loc, ctx.getInput(0)));
  std::string mode = ctx.getStringAttr("mode", "linear");
  if (mode != "linear" && mode != "circular")
    return ctx.fail("unknown mode '" + mode + "'");
  bool circular = mode == "circular";
  bool hasIndices = ctx.hasInput(2);
  if (hasIndices && (ctx.getInputType(2).getRank() != 1 ||
                     ctx.getInputType(2).getDimSize(0) != past.getDimSize(0)))
    return ctx.fail("write_indices must be [batch]");
  Value pastValue = ctx.getInput(0);
  Value updateValue = ctx.getInput(1);
  Value indices = hasIndices ? ctx.getInput(2) : Value();
  Value y = createIndexedGeneric(
      b, loc, {}, {}, *type,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        Type i64 = nb.getI64Type();
        Value position = arith::IndexCastOp::create(nb, nl, i64, ivs[axis]);
        Value start = createScalar(nb, nl, i64, 0);
        if (hasIndices)
          start = tensor::ExtractOp::create(nb, nl, indices, ivs[0]);
        // Offset of this position into the update, modulo the cache
        // length when circular.
        Value offset = arith::SubIOp::create(nb, nl, position, start);
        if (circular) {
          Value n = createScalar(nb, nl, i64, maxLength);
          offset = arith::RemSIOp::create(
              nb, nl,
              arith::AddIOp::create(
                  nb, nl, arith::RemSIOp::create(nb, nl, offset, n), n),
              n);
        }
        Value inUpdate = arith::AndIOp::create(
            nb, nl,
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge, offset,
                                  createScalar(nb, nl, i64, 0)),
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, offset,
                                  createScalar(nb, nl, i64, length)));
        Value oldValue = tensor::ExtractOp::create(nb, nl, pastValue, ivs);
        SmallVector<Value> coords(ivs);
        coords[axis] =
            toIndex(nb, nl,
                    arith::SelectOp::create(nb, nl, inUpdate, offset,
                                            createScalar(nb, nl, i64, 0)));
        Value newValue = tensor::ExtractOp::create(nb, nl, updateValue, coords);
        return arith::SelectOp::create(nb, nl, inUpdate, newValue, oldValue)
            .getResult();
      });
  return ctx.setOutput(0, y);
}

// CausalConvWithState: a depthwise causal 1-D convolution over
// [past_state (or zeros), input] along the length, with an optional bias
// and SiLU; present_state is the last k - 1 positions of that sequence.
LogicalResult lowerCausalConvWithState(NodeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType xt = ctx.getInputType(0), wt = ctx.getInputType(1);
  Type et = xt.getElementType();
  if (xt.getRank() != 3 || wt.getRank() != 3 || !isa<FloatType>(et) ||
      wt.getElementType() != et || wt.getDimSize(0) != xt.getDimSize(1) ||
      wt.getDimSize(1) != 1 || wt.getDimSize(2) < 1)
    return ctx.fail("input must be [B, C, L] and weight [C, 1, k] floats of "
                    "one type");
  int64_t batch = xt.getDimSize(0), channels = xt.getDimSize(1),
          length = xt.getDimSize(2), kernel = wt.getDimSize(2);
  if (kernel > 64)
    return ctx.fail("kernels longer than 64 are not supported");
  std::string activation = ctx.getStringAttr("activation", "none");
  if (activation != "none" && activation != "silu" && activation != "swish")
    return ctx.fail("unknown activation '" + activation + "'");
  bool hasBias = ctx.hasInput(2), hasPast = ctx.hasInput(3);
  auto stateType = RankedTensorType::get({batch, channels, kernel - 1}, et);
  if ((hasBias &&
       ctx.getInputType(2) != RankedTensorType::get({channels}, et)) ||
      (hasPast && ctx.getInputType(3) != stateType))
    return ctx.fail("bias must be [C] and past_state [B, C, k - 1]");
  Value x = ctx.getInput(0), w = ctx.getInput(1);
  Value bias = hasBias ? ctx.getInput(2) : Value();
  Value past = hasPast ? ctx.getInput(3) : Value();
  // Element p of the padded sequence of (batch, channel) ivs.
  auto padded = [&](OpBuilder &nb, Location nl, Value batchIv, Value channel,
                    int64_t offsetFromPosition, Value position) -> Value {
    Value p = arith::AddIOp::create(nb, nl, position,
                                    indexConstant(nb, nl, offsetFromPosition));
    Value inPast = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult, p,
                                         indexConstant(nb, nl, kernel - 1));
    Value zero = indexConstant(nb, nl, 0);
    Value xAt = arith::SelectOp::create(
        nb, nl, inPast, zero,
        arith::SubIOp::create(nb, nl, p, indexConstant(nb, nl, kernel - 1)));
    Value current =
        tensor::ExtractOp::create(nb, nl, x, ValueRange{batchIv, channel, xAt});
    Value before = createScalar(nb, nl, et, 0);
    if (past)
      before = tensor::ExtractOp::create(
          nb, nl, past,
          ValueRange{batchIv, channel,
                     arith::SelectOp::create(nb, nl, inPast, p, zero)});
    return arith::SelectOp::create(nb, nl, inPast, before, current);
  };
  Value y = createIndexedGeneric(
      b, loc, {}, {}, xt,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        Value acc =
            bias ? tensor::ExtractOp::create(nb, nl, bias, ivs[1]).getResult()
                 : createScalar(nb, nl, et, 0);
        for (int64_t i = 0; i < kernel; ++i) {
          Value weight = tensor::ExtractOp::create(
              nb, nl, w,
              ValueRange{ivs[1], indexConstant(nb, nl, 0),
                         indexConstant(nb, nl, i)});
          Value v = padded(nb, nl, ivs[0], ivs[1], i, ivs[2]);
          acc = arith::AddFOp::create(nb, nl, acc,
                                      arith::MulFOp::create(nb, nl, weight, v));
        }
        if (activation == "none")
          return acc;
        Value one = createScalar(nb, nl, et, 1);
        Value sigmoid = arith::DivFOp::create(
            nb, nl, one,
            arith::AddFOp::create(
                nb, nl, one,
                math::ExpOp::create(nb, nl,
                                    arith::NegFOp::create(nb, nl, acc))));
        return arith::MulFOp::create(nb, nl, acc, sigmoid).getResult();
      });
  if (failed(ctx.setOutput(0, y)))
    return failure();
  if (!ctx.hasOutput(1))
    return success();
  if (kernel == 1)
    return ctx.setOutput(1, createZeroElements(b, loc, stateType));
  Value state = createIndexedGeneric(
      b, loc, {}, {}, stateType,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        return padded(nb, nl, ivs[0], ivs[1], length, ivs[2]);
      });
  return ctx.setOutput(1, state);
}

} // namespace

void addTransformerLowerings(LoweringTable &t) {
  t["RotaryEmbedding"] = lowerRotaryEmbedding;
  t["TensorScatter"] = lowerTensorScatter;
  t["CausalConvWithState"] = lowerCausalConvWithState;
}

} // namespace strata::onnx_importer
