//===- AttentionOps.cpp - Attention, LinearAttention ----------------------===//
//
// The attention operators of opsets 23-27: scaled dot-product attention
// with masks, grouped-query heads and a KV cache, and linear attention's
// recurrent state.
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

// A batched contraction over 4-D operands: result[b, h, i, j] =
// sum_k lhs[b, h, i, k] * rhs[b, h, k, j] (rhs read transposed when
// `rhsTransposed`: rhs[b, h, j, k]).
Value createBatchedMatmul(OpBuilder &b, Location loc, Value lhs, Value rhs,
                          bool rhsTransposed) {
  auto lt = cast<RankedTensorType>(lhs.getType());
  auto rt = cast<RankedTensorType>(rhs.getType());
  Type et = lt.getElementType();
  int64_t n = rt.getDimSize(rhsTransposed ? 2 : 3);
  auto resultType = RankedTensorType::get(
      {lt.getDimSize(0), lt.getDimSize(1), lt.getDimSize(2), n}, et);
  auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
  MLIRContext *context = b.getContext();
  // Loops (b, h, i, j, k).
  SmallVector<AffineMap> maps{
      AffineMap::get(5, 0, {d(0), d(1), d(2), d(4)}, context),
      rhsTransposed ? AffineMap::get(5, 0, {d(0), d(1), d(3), d(4)}, context)
                    : AffineMap::get(5, 0, {d(0), d(1), d(4), d(3)}, context),
      AffineMap::get(5, 0, {d(0), d(1), d(2), d(3)}, context)};
  SmallVector<utils::IteratorType> iterators(4, utils::IteratorType::parallel);
  iterators.push_back(utils::IteratorType::reduction);
  Value init = createFilled(b, loc, resultType, createScalar(b, loc, et, 0));
  return linalg::GenericOp::create(
             b, loc, TypeRange{resultType}, ValueRange{lhs, rhs},
             ValueRange{init}, maps, iterators,
             [](OpBuilder &nb, Location nl, ValueRange a) {
               Value product = arith::MulFOp::create(nb, nl, a[0], a[1]);
               linalg::YieldOp::create(
                   nb, nl,
                   ValueRange{arith::AddFOp::create(nb, nl, a[2], product)});
             })
      .getResult(0);
}

// [B, S, H*D] -> [B, H, S, D].
Value splitHeads(OpBuilder &b, Location loc, Value x, int64_t heads) {
  auto t = cast<RankedTensorType>(x.getType());
  Value r = createReshape(
      b, loc, x,
      {t.getDimSize(0), t.getDimSize(1), heads, t.getDimSize(2) / heads});
  return createTranspose(b, loc, r, {0, 2, 1, 3});
}

// Concatenates past [B, H, P, D] and current [B, H, S, D] along dim 2.
Value appendToCache(OpBuilder &b, Location loc, Value past, Value current) {
  auto pt = cast<RankedTensorType>(past.getType());
  auto ct = cast<RankedTensorType>(current.getType());
  int64_t pastLength = pt.getDimSize(2);
  auto resultType =
      RankedTensorType::get({ct.getDimSize(0), ct.getDimSize(1),
                             pastLength + ct.getDimSize(2), ct.getDimSize(3)},
                            ct.getElementType());
  return createIndexedGeneric(
      b, loc, {}, {}, resultType,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        Value p = indexConstant(nb, nl, pastLength);
        Value inPast =
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ult, ivs[2], p);
        Value zero = indexConstant(nb, nl, 0);
        SmallVector<Value> pastAt(ivs), currentAt(ivs);
        pastAt[2] = arith::SelectOp::create(nb, nl, inPast, ivs[2], zero);
        currentAt[2] = arith::SelectOp::create(
            nb, nl, inPast, zero, arith::SubIOp::create(nb, nl, ivs[2], p));
        Value fromCurrent =
            tensor::ExtractOp::create(nb, nl, current, currentAt);
        if (pastLength == 0)
          return fromCurrent;
        Value fromPast = tensor::ExtractOp::create(nb, nl, past, pastAt);
        return arith::SelectOp::create(nb, nl, inPast, fromPast, fromCurrent)
            .getResult();
      });
}

// [B, Hkv, T, D] with each head repeated `times` in place: [B, Hkv*times,
// T, D] (grouped-query attention).
Value repeatHeads(OpBuilder &b, Location loc, Value x, int64_t times) {
  if (times == 1)
    return x;
  auto t = cast<RankedTensorType>(x.getType());
  int64_t bs = t.getDimSize(0), h = t.getDimSize(1), n = t.getDimSize(2),
          d = t.getDimSize(3);
  Value expanded = createReshape(b, loc, x, {bs, h, 1, n, d});
  expanded = createBroadcast(b, loc, expanded, {bs, h, times, n, d});
  return createReshape(b, loc, expanded, {bs, h * times, n, d});
}

struct AttentionShape {
  int64_t batch, qHeads, kvHeads, qLength, kvLength, pastLength, headSize,
      valueHeadSize;
  int64_t total() const { return pastLength + kvLength; }
};

// The additive bias [B, Hq, Sq, T] of the attention mask (padded to T with
// -inf; bools as 0 / -inf), the causal and sliding-window frontiers (offset
// by the past length, or by nonpad_kv_seqlen - Sq per batch) and the
// nonpad_kv_seqlen padding.
Value createAttentionBias(NodeContext &ctx, const AttentionShape &s, Type et) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  bool causal = ctx.getIntAttr("is_causal", 0) != 0;
  int64_t leftWindow = ctx.getIntAttr("left_window_size", -1);
  int64_t rightWindow = ctx.getIntAttr("right_window_size", -1);
  Value mask = ctx.hasInput(3) ? ctx.getInput(3) : Value();
  Value nonpad = ctx.hasInput(6) ? ctx.getInput(6) : Value();
  auto biasType =
      RankedTensorType::get({s.batch, s.qHeads, s.qLength, s.total()}, et);
  return createIndexedGeneric(
      b, loc, {}, {}, biasType,
      [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
        Type i64 = nb.getI64Type();
        Value negInf = createScalar(nb, nl, et, -INFINITY);
        Value zero = createScalar(nb, nl, et, 0);
        Value bias = zero;
        Value allowed = arith::ConstantIntOp::create(nb, nl, 1, 1);
        auto allow = [&](Value condition) {
          allowed = arith::AndIOp::create(nb, nl, allowed, condition);
        };
        Value i = arith::IndexCastOp::create(nb, nl, i64, ivs[2]);
        Value j = arith::IndexCastOp::create(nb, nl, i64, ivs[3]);
        if (mask) {
          auto mt = cast<RankedTensorType>(mask.getType());
          int64_t rank = mt.getRank();
          int64_t width = mt.getDimSize(rank - 1);
          Value inMask =
              arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, j,
                                    createScalar(nb, nl, i64, width));
          SmallVector<Value> at;
          for (int64_t d = 0; d < rank; ++d) {
            Value iv = ivs[4 - rank + d];
            if (mt.getDimSize(d) == 1)
              iv = indexConstant(nb, nl, 0);
            if (d == rank - 1)
              iv = arith::SelectOp::create(nb, nl, inMask, iv,
                                           indexConstant(nb, nl, 0));
            at.push_back(iv);
          }
          Value m = tensor::ExtractOp::create(nb, nl, mask, at);
          allow(inMask);
          if (m.getType().isInteger(1))
            allow(m);
          else
            bias = createScalarCast(nb, nl, m, et, false, false);
        }
        Value offset = createScalar(nb, nl, i64, s.pastLength);
        if (nonpad) {
          Value valid = tensor::ExtractOp::create(nb, nl, nonpad, ivs[0]);
          valid = createScalarCast(nb, nl, valid, i64, false, false);
          allow(arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::slt, j,
                                      valid));
          offset = arith::SubIOp::create(nb, nl, valid,
                                         createScalar(nb, nl, i64, s.qLength));
        }
        // How far query i (at absolute position i + offset) is past key j.
        Value distance = arith::SubIOp::create(
            nb, nl, arith::AddIOp::create(nb, nl, i, offset), j);
        auto distanceAtLeast = [&](int64_t bound) {
          return arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sge,
                                       distance,
                                       createScalar(nb, nl, i64, bound));
        };
        auto distanceAtMost = [&](int64_t bound) {
          return arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sle,
                                       distance,
                                       createScalar(nb, nl, i64, bound));
        };
        if (causal)
          allow(distanceAtLeast(0));
        if (leftWindow >= 0)
          allow(distanceAtMost(leftWindow));
        if (rightWindow >= 0)
          allow(distanceAtLeast(-rightWindow));
        return arith::SelectOp::create(nb, nl, allowed, bias, negInf)
            .getResult();
      });
}

// Attention (opsets 23-25): softmax(Q K^T * scale [softcapped] + bias) V
// with grouped-query heads, a KV cache (past_key/past_value ->
// present_key/present_value) and the optional QK output.
LogicalResult lowerAttention(NodeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType qt = ctx.getInputType(0), kt = ctx.getInputType(1),
                   vt = ctx.getInputType(2);
  int64_t rank = qt.getRank();
  Type et = qt.getElementType();
  if ((rank != 3 && rank != 4) || kt.getRank() != rank ||
      vt.getRank() != rank || !isa<FloatType>(et) ||
      kt.getElementType() != et || vt.getElementType() != et)
    return ctx.fail("Q, K and V must be float tensors of one type, all 3-D "
                    "or all 4-D");
  if (ctx.hasInput(4) != ctx.hasInput(5))
    return ctx.fail("past_key and past_value go together");
  if (ctx.hasInput(6) && ctx.hasInput(4))
    return ctx.fail("nonpad_kv_seqlen cannot be used with past_key");
  Value q = ctx.getInput(0), k = ctx.getInput(1), v = ctx.getInput(2);
  if (rank == 3) {
    int64_t qHeads = ctx.getIntAttr("q_num_heads", 0);
    int64_t kvHeads = ctx.getIntAttr("kv_num_heads", 0);
    if (qHeads <= 0 || kvHeads <= 0 || qt.getDimSize(2) % qHeads != 0 ||
        kt.getDimSize(2) % kvHeads != 0 || vt.getDimSize(2) % kvHeads != 0)
      return ctx.fail("3-D inputs need q_num_heads and kv_num_heads dividing "
                      "their hidden sizes");
    q = splitHeads(b, loc, q, qHeads);
    k = splitHeads(b, loc, k, kvHeads);
    v = splitHeads(b, loc, v, kvHeads);
  }
  auto shapeOf = [](Value x) {
    return cast<RankedTensorType>(x.getType()).getShape();
  };
  AttentionShape s;
  s.batch = shapeOf(q)[0];
  s.qHeads = shapeOf(q)[1];
  s.qLength = shapeOf(q)[2];
  s.headSize = shapeOf(q)[3];
  s.kvHeads = shapeOf(k)[1];
  s.kvLength = shapeOf(k)[2];
  s.valueHeadSize = shapeOf(v)[3];
  s.pastLength = ctx.hasInput(4) ? ctx.getInputType(4).getDimSize(2) : 0;
  if (shapeOf(k)[0] != s.batch || shapeOf(v)[0] != s.batch ||
      shapeOf(k)[3] != s.headSize || shapeOf(v)[1] != s.kvHeads ||
      shapeOf(v)[2] != s.kvLength || s.qHeads % s.kvHeads != 0)
    return ctx.fail("Q, K and V shapes do not agree (batch, heads, lengths, "
                    "head sizes; q heads a multiple of kv heads)");
  if (ctx.hasInput(4)) {
    ArrayRef<int64_t> pk = ctx.getInputType(4).getShape();
    ArrayRef<int64_t> pv = ctx.getInputType(5).getShape();
    if (pk.size() != 4 || pv.size() != 4 || pk[0] != s.batch ||
        pk[1] != s.kvHeads || pk[3] != s.headSize || pv[0] != s.batch ||
        pv[1] != s.kvHeads || pv[2] != s.pastLength || pv[3] != s.valueHeadSize)
      return ctx.fail("past_key/past_value must be [B, kv_heads, past, "
                      "head_size]");
    k = appendToCache(b, loc, ctx.getInput(4), k);
    v = appendToCache(b, loc, ctx.getInput(5), v);
  }
  if (ctx.hasInput(3)) {
    RankedTensorType mt = ctx.getInputType(3);
    if (mt.getRank() < 1 || mt.getRank() > 4 ||
        mt.getShape().back() > s.total() ||
        (!mt.getElementType().isInteger(1) && mt.getElementType() != et))
      return ctx.fail("attn_mask must be bool or Q's type, broadcastable to "
                      "[B, q_heads, q_length, total_length]");
    for (int64_t d = 0; d + 1 < mt.getRank(); ++d) {
      int64_t want =
          ArrayRef<int64_t>{s.batch, s.qHeads, s.qLength}[4 - mt.getRank() + d];
      if (mt.getDimSize(d) != 1 && mt.getDimSize(d) != want)
        return ctx.fail("attn_mask does not broadcast to [B, q_heads, "
                        "q_length, total_length]");
    }
  }
  if (ctx.hasInput(6) && (ctx.getInputType(6).getRank() != 1 ||
                          ctx.getInputType(6).getDimSize(0) != s.batch))
    return ctx.fail("nonpad_kv_seqlen must be [batch]");
  Value presentKey = k, presentValue = v;

  // Scores, scaled by sqrt(scale) on each side.
  double scale = ctx.hasAttr("scale")
                     ? ctx.getFloatAttr("scale", 1.0f)
                     : 1.0 / std::sqrt(static_cast<double>(s.headSize));
  double rootScale = std::sqrt(scale);
  auto scaled = [&](Value x) {
    return createElementwise(b, loc, {x}, cast<RankedTensorType>(x.getType()),
                             [&](OpBuilder &nb, Location nl, ValueRange a) {
                               return arith::MulFOp::create(
                                          nb, nl, a[0],
                                          createScalar(nb, nl, et, rootScale))
                                   .getResult();
                             });
  };
  int64_t groups = s.qHeads / s.kvHeads;
  Value scores = createBatchedMatmul(b, loc, scaled(q),
                                     scaled(repeatHeads(b, loc, k, groups)),
                                     /*rhsTransposed=*/true);
  auto scoresType = cast<RankedTensorType>(scores.getType());
  double softcap = ctx.getFloatAttr("softcap", 0.0f);
  if (softcap > 0)
    scores = createElementwise(
        b, loc, {scores}, scoresType,
        [&](OpBuilder &nb, Location nl, ValueRange a) {
          Value c = createScalar(nb, nl, et, softcap);
          Value t = math::TanhOp::create(
              nb, nl, arith::DivFOp::create(nb, nl, a[0], c));
          return arith::MulFOp::create(nb, nl, t, c).getResult();
        });
  Value bias = createAttentionBias(ctx, s, et);
  Value withBias = createElementwise(
      b, loc, {scores, bias}, scoresType,
      [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::AddFOp::create(nb, nl, a[0], a[1]).getResult();
      });

  // Softmax over keys in softmax_precision; rows with no key allowed are 0.
  Type st = et;
  if (ctx.hasAttr("softmax_precision")) {
    st = convertElementType(ctx.getContext(),
                            ctx.getIntAttr("softmax_precision", 1));
    if (!st || !isa<FloatType>(st))
      return ctx.fail("softmax_precision must name a float type");
  }
  Value logits = createCast(b, loc, withBias, st, false, false);
  auto logitsType = RankedTensorType::get(scoresType.getShape(), st);
  Value rowMax = createReduction(
      b, loc, logits, {3}, true, createScalar(b, loc, st, -INFINITY),
      [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::MaximumFOp::create(nb, nl, a[0], a[1]).getResult();
      });
  Value exps = createElementwise(
      b, loc, {logits, rowMax}, logitsType,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value isMasked =
            arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ, a[1],
                                  createScalar(nb, nl, st, -INFINITY));
        Value safeMax = arith::SelectOp::create(
            nb, nl, isMasked, createScalar(nb, nl, st, 0), a[1]);
        return math::ExpOp::create(nb, nl,
                                   arith::SubFOp::create(nb, nl, a[0], safeMax))
            .getResult();
      });
  Value sums = createReduction(
      b, loc, exps, {3}, true, createScalar(b, loc, st, 0),
      [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::AddFOp::create(nb, nl, a[0], a[1]).getResult();
      });
  Value biasMax = createReduction(
      b, loc, bias, {3}, true, createScalar(b, loc, et, -INFINITY),
      [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::MaximumFOp::create(nb, nl, a[0], a[1]).getResult();
      });
  Value probabilities = createElementwise(
      b, loc, {exps, sums, biasMax}, logitsType,
      [&](OpBuilder &nb, Location nl, ValueRange a) {
        Value zero = createScalar(nb, nl, st, 0);
        Value isZero = arith::CmpFOp::create(nb, nl, arith::CmpFPredicate::OEQ,
                                             a[1], zero);
        Value sum = arith::SelectOp::create(nb, nl, isZero,
                                            createScalar(nb, nl, st, 1), a[1]);
        Value p = arith::DivFOp::create(nb, nl, a[0], sum);
        Value rowMasked = arith::CmpFOp::create(
            nb, nl, arith::CmpFPredicate::OEQ, a[2],
            createScalar(nb, nl, a[2].getType(), -INFINITY));
        return arith::SelectOp::create(nb, nl, rowMasked, zero, p).getResult();
      });

  // Y = P V, in the softmax's precision, then Q's type.
  Value values =
      createCast(b, loc, repeatHeads(b, loc, v, groups), st, false, false);
  Value y = createBatchedMatmul(b, loc, probabilities, values,
                                /*rhsTransposed=*/false);
  y = createCast(b, loc, y, et, false, false);
  if (rank == 3) {
    y = createTranspose(b, loc, y, {0, 2, 1, 3});
    y = createReshape(b, loc, y,
                      {s.batch, s.qLength, s.qHeads * s.valueHeadSize});
  }
  if (failed(ctx.setOutput(0, y)))
    return failure();
  if (ctx.hasOutput(1) && failed(ctx.setOutput(1, presentKey)))
    return failure();
  if (ctx.hasOutput(2) && failed(ctx.setOutput(2, presentValue)))
    return failure();
  if (!ctx.hasOutput(3))
    return success();
  int64_t mode = ctx.getIntAttr("qk_matmul_output_mode", 0);
  Value qk = mode == 0 || mode == 1 ? scores
             : mode == 2            ? withBias
             : mode == 3 ? createCast(b, loc, probabilities, et, false, false)
                         : Value();
  if (!qk)
    return ctx.fail("qk_matmul_output_mode must be 0, 1, 2 or 3");
  return ctx.setOutput(3, qk);
}

// LinearAttention (opset 27): a recurrent state S [B, Hkv, dk, dv] per
// token t: decayed by exp(g_t) (gated rules), updated by k_t (x) v_t, where
// delta rules use beta_t (v_t - S^T k_t); o_t = scale q_t^T S, query heads
// sharing their group's state. Computed in f32, one step per token.
LogicalResult lowerLinearAttention(NodeContext &ctx) {
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  RankedTensorType qt = ctx.getInputType(0), kt = ctx.getInputType(1),
                   vt = ctx.getInputType(2);
  Type et = qt.getElementType();
  if (qt.getRank() != 3 || kt.getRank() != 3 || vt.getRank() != 3 ||
      !isa<FloatType>(et) || kt.getElementType() != et ||
      vt.getElementType() != et)
    return ctx.fail("query, key and value must be [B, T, H*D] floats of one "
                    "type");
  std::string rule = ctx.getStringAttr("update_rule", "gated_delta");
  if (rule != "linear" && rule != "gated" && rule != "delta" &&
      rule != "gated_delta")
    return ctx.fail("unknown update_rule '" + rule + "'");
  bool gated = rule == "gated" || rule == "gated_delta";
  bool delta = rule == "delta" || rule == "gated_delta";
  int64_t qHeads = ctx.getIntAttr("q_num_heads", 0);
  int64_t kvHeads = ctx.getIntAttr("kv_num_heads", 0);
  if (qHeads <= 0 || kvHeads <= 0 || qHeads % kvHeads != 0 ||
      qt.getDimSize(2) % qHeads != 0 || vt.getDimSize(2) % kvHeads != 0)
    return ctx.fail("q_num_heads must be a positive multiple of kv_num_heads, "
                    "each dividing its hidden size");
  int64_t batch = qt.getDimSize(0), steps = qt.getDimSize(1);
  int64_t dk = qt.getDimSize(2) / qHeads, dv = vt.getDimSize(2) / kvHeads;
  int64_t group = qHeads / kvHeads;
  if (kt.getShape() != ArrayRef<int64_t>{batch, steps, kvHeads * dk} ||
      vt.getDimSize(0) != batch || vt.getDimSize(1) != steps)
    return ctx.fail("key must be [B, T, kv_heads * dk] and value [B, T, ...]");
  if (gated != ctx.hasInput(4) || delta != ctx.hasInput(5))
    return ctx.fail("update_rule '" + rule + "' " +
                    (gated ? "needs" : "forbids") + " decay and " +
                    (delta ? "needs" : "forbids") + " beta");
  bool decayPerKey = false;
  if (gated) {
    RankedTensorType gt = ctx.getInputType(4);
    decayPerKey = gt.getRank() == 3 && gt.getDimSize(2) == kvHeads * dk;
    if (gt.getRank() != 3 || gt.getDimSize(0) != batch ||
        gt.getDimSize(1) != steps ||
        (!decayPerKey && gt.getDimSize(2) != kvHeads))
      return ctx.fail("decay must be [B, T, kv_heads] or [B, T, kv_heads * "
                      "dk]");
  }
  bool betaPerHead = false;
  if (delta) {
    RankedTensorType bt = ctx.getInputType(5);
    betaPerHead = bt.getRank() == 3 && bt.getDimSize(2) == kvHeads;
    if (bt.getRank() != 3 || bt.getDimSize(0) != batch ||
        bt.getDimSize(1) != steps || (!betaPerHead && bt.getDimSize(2) != 1))
      return ctx.fail("beta must be [B, T, kv_heads] or [B, T, 1]");
  }
  auto stateType =
      RankedTensorType::get({batch, kvHeads, dk, dv}, b.getF32Type());
  if (ctx.hasInput(3) && ctx.getInputType(3).getShape() != stateType.getShape())
    return ctx.fail("past_state must be [B, kv_heads, dk, dv]");
  double scale = ctx.getFloatAttr("scale", 0.0f);
  if (scale == 0)
    scale = 1.0 / std::sqrt(static_cast<double>(dk));
  Type f32 = b.getF32Type();
  auto toF32 = [&](Value v) {
    return createCast(b, loc, v, f32, false, false);
  };
  Value query = toF32(ctx.getInput(0)), key = toF32(ctx.getInput(1)),
        value = toF32(ctx.getInput(2));
  Value decay = gated ? toF32(ctx.getInput(4)) : Value();
  Value beta = delta ? toF32(ctx.getInput(5)) : Value();
  Value state = ctx.hasInput(3) ? toF32(ctx.getInput(3))
                                : createFilled(b, loc, stateType,
                                               createScalar(b, loc, f32, 0));
  auto outType = RankedTensorType::get({batch, steps, qHeads * dv}, f32);
  Value out = createFilled(b, loc, outType, createScalar(b, loc, f32, 0));
  auto mulAdd = [](OpBuilder &nb, Location nl, Value base, int64_t stride,
                   Value offset) -> Value {
    return arith::AddIOp::create(
        nb, nl,
        arith::MulIOp::create(nb, nl, base,
                              arith::ConstantIndexOp::create(nb, nl, stride)),
        offset);
  };
  // One step per token, unrolled: a step's dispatches cannot take the
  // token index from a run-time loop.
  constexpr int64_t kMaxSteps = 256;
  if (steps > kMaxSteps)
    return ctx.fail("sequences longer than " + Twine(kMaxSteps) +
                    " tokens are not supported (the recurrence is unrolled "
                    "per token)");
  for (int64_t step = 0; step < steps; ++step) {
    Value t = indexConstant(b, loc, step);
    Value s = state;
    auto read = [&](OpBuilder &nb, Location nl, Value tensor, Value bIv,
                    Value channel) -> Value {
      return tensor::ExtractOp::create(nb, nl, tensor,
                                       ValueRange{bIv, t, channel});
    };
    if (gated) {
      s = createIndexedGeneric(
          b, loc, {s}, {b.getMultiDimIdentityMap(4)}, stateType,
          [&](OpBuilder &nb, Location nl, ValueRange a, ArrayRef<Value> ivs) {
            Value channel =
                decayPerKey ? mulAdd(nb, nl, ivs[1], dk, ivs[2]) : ivs[1];
            Value g = math::ExpOp::create(nb, nl,
                                          read(nb, nl, decay, ivs[0], channel));
            return arith::MulFOp::create(nb, nl, a[0], g).getResult();
          });
    }
    // The value each state column moves toward: v_t, or with the delta
    // rule beta_t (v_t - S^T k_t).
    auto updateType = RankedTensorType::get({batch, kvHeads, dv}, f32);
    Value retrieved;
    if (delta)
      retrieved = createIndexedSum(
          b, loc, updateType, dk,
          [&](OpBuilder &nb, Location nl, ArrayRef<Value> ivs, Value d) {
            Value sv = tensor::ExtractOp::create(
                nb, nl, s, ValueRange{ivs[0], ivs[1], d, ivs[2]});
            Value kv = read(nb, nl, key, ivs[0], mulAdd(nb, nl, ivs[1], dk, d));
            return arith::MulFOp::create(nb, nl, sv, kv).getResult();
          });
    Value update = createIndexedGeneric(
        b, loc, {}, {}, updateType,
        [&](OpBuilder &nb, Location nl, ValueRange, ArrayRef<Value> ivs) {
          Value v =
              read(nb, nl, value, ivs[0], mulAdd(nb, nl, ivs[1], dv, ivs[2]));
          if (!delta)
            return v;
          Value r = tensor::ExtractOp::create(nb, nl, retrieved, ivs);
          Value rate = read(nb, nl, beta, ivs[0],
                            betaPerHead ? ivs[1] : indexConstant(nb, nl, 0));
          return arith::MulFOp::create(nb, nl, rate,
                                       arith::SubFOp::create(nb, nl, v, r))
              .getResult();
        });
    s = createIndexedGeneric(
        b, loc, {s}, {b.getMultiDimIdentityMap(4)}, stateType,
        [&](OpBuilder &nb, Location nl, ValueRange a, ArrayRef<Value> ivs) {
          Value k =
              read(nb, nl, key, ivs[0], mulAdd(nb, nl, ivs[1], dk, ivs[2]));
          Value u = tensor::ExtractOp::create(
              nb, nl, update, ValueRange{ivs[0], ivs[1], ivs[3]});
          return arith::AddFOp::create(nb, nl, a[0],
                                       arith::MulFOp::create(nb, nl, k, u))
              .getResult();
        });
    // o_t [B, 1, Hq * dv]: query head h reads state head h / group.
    auto stepType = RankedTensorType::get({batch, 1, qHeads * dv}, f32);
    Value o = createIndexedSum(
        b, loc, stepType, dk,
        [&](OpBuilder &nb, Location nl, ArrayRef<Value> ivs, Value d) {
          Value dvIdx = indexConstant(nb, nl, dv);
          Value head = arith::DivUIOp::create(nb, nl, ivs[2], dvIdx);
          Value m = arith::RemUIOp::create(nb, nl, ivs[2], dvIdx);
          Value kvHead = arith::DivUIOp::create(nb, nl, head,
                                                indexConstant(nb, nl, group));
          Value q = read(nb, nl, query, ivs[0], mulAdd(nb, nl, head, dk, d));
          Value sv = tensor::ExtractOp::create(
              nb, nl, s, ValueRange{ivs[0], kvHead, d, m});
          return arith::MulFOp::create(nb, nl,
                                       arith::MulFOp::create(nb, nl, q, sv),
                                       createScalar(nb, nl, f32, scale))
              .getResult();
        });
    SmallVector<OpFoldResult> offsets{b.getIndexAttr(0), t, b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(batch), b.getIndexAttr(1),
                                    b.getIndexAttr(qHeads * dv)};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    out =
        tensor::InsertSliceOp::create(b, loc, o, out, offsets, sizes, strides);
    state = s;
  }
  Value y = createCast(b, loc, out, et, false, false);
  if (failed(ctx.setOutput(0, y)))
    return failure();
  if (!ctx.hasOutput(1))
    return success();
  Type stateElement =
      ctx.hasInput(3) ? ctx.getInputType(3).getElementType() : et;
  return ctx.setOutput(1,
                       createCast(b, loc, state, stateElement, false, false));
}

} // namespace

void addAttentionLowerings(LoweringTable &t) {
  t["Attention"] = lowerAttention;
  t["LinearAttention"] = lowerLinearAttention;
}

} // namespace strata::onnx_importer
