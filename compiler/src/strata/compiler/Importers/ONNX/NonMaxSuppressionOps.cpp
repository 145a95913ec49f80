//===- NonMaxSuppressionOps.cpp - NonMaxSuppression -----------------------===//
//
// Greedy suppression is sequential (whether a box is kept depends on which
// higher-scored boxes were kept), so it is built as loops over scalars in
// one scf.execute_region, which becomes a dispatch of its own (one
// workgroup). For each batch and class, each step picks the best remaining
// candidate (ties to the lower index), drops it when its score is not above
// score_threshold or the class has max_output_boxes_per_class boxes, and
// keeps it unless it overlaps a kept box by more than iou_threshold. A
// per-box state (0 candidate, 1 dropped, 2 kept) lives in one tensor reset
// for each class. Rows are [batch, class, box] in selection order; their
// number is the inferred or declared one.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

constexpr int64_t kCandidate = 0, kDropped = 1, kKept = 2;

// Scalar helpers over one builder and location.
struct ScalarOps {
  OpBuilder &b;
  Location loc;

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value i8(int64_t v) { return createScalar(b, loc, b.getI8Type(), v); }
  Value cmpI(arith::CmpIPredicate p, Value x, Value y) {
    return arith::CmpIOp::create(b, loc, p, x, y);
  }
  Value cmpF(arith::CmpFPredicate p, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, p, x, y);
  }
  Value andOf(Value x, Value y) { return arith::AndIOp::create(b, loc, x, y); }
  Value orOf(Value x, Value y) { return arith::OrIOp::create(b, loc, x, y); }
  Value select(Value c, Value x, Value y) {
    return arith::SelectOp::create(b, loc, c, x, y);
  }
  Value extract(Value tensor, ArrayRef<Value> indices) {
    return tensor::ExtractOp::create(b, loc, tensor, indices);
  }
  Value insert(Value scalar, Value tensor, ArrayRef<Value> indices) {
    return tensor::InsertOp::create(b, loc, scalar, tensor, indices);
  }
  Value minF(Value x, Value y) {
    return arith::MinimumFOp::create(b, loc, x, y);
  }
  Value maxF(Value x, Value y) {
    return arith::MaximumFOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) { return arith::SubFOp::create(b, loc, x, y); }
  Value add(Value x, Value y) { return arith::AddFOp::create(b, loc, x, y); }
  Value mul(Value x, Value y) { return arith::MulFOp::create(b, loc, x, y); }
  Value div(Value x, Value y) { return arith::DivFOp::create(b, loc, x, y); }
};

// A box as (ymin, xmin, ymax, xmax), from corners in either order or from
// (x_center, y_center, width, height).
struct Box {
  Value ymin, xmin, ymax, xmax;
};

Box readBox(ScalarOps &s, Value boxes, Value batch, Value box, bool centerPoint,
            Type et) {
  Value v[4];
  for (int k = 0; k < 4; ++k)
    v[k] = s.extract(boxes, {batch, box, s.index(k)});
  if (centerPoint) {
    Value half = createScalar(s.b, s.loc, et, 0.5);
    Value hw = s.mul(v[2], half), hh = s.mul(v[3], half);
    return {s.sub(v[1], hh), s.sub(v[0], hw), s.add(v[1], hh), s.add(v[0], hw)};
  }
  return {s.minF(v[0], v[2]), s.minF(v[1], v[3]), s.maxF(v[0], v[2]),
          s.maxF(v[1], v[3])};
}

// Whether two boxes overlap by more than `threshold` (intersection over
// union; empty boxes and empty intersections never do).
Value overlapsTooMuch(ScalarOps &s, const Box &a, const Box &c, Value threshold,
                      Type et) {
  Value zero = createScalar(s.b, s.loc, et, 0);
  Value ih =
      s.maxF(zero, s.sub(s.minF(a.ymax, c.ymax), s.maxF(a.ymin, c.ymin)));
  Value iw =
      s.maxF(zero, s.sub(s.minF(a.xmax, c.xmax), s.maxF(a.xmin, c.xmin)));
  Value intersection = s.mul(ih, iw);
  Value areaA = s.mul(s.sub(a.ymax, a.ymin), s.sub(a.xmax, a.xmin));
  Value areaC = s.mul(s.sub(c.ymax, c.ymin), s.sub(c.xmax, c.xmin));
  Value unionArea = s.sub(s.add(areaA, areaC), intersection);
  Value valid =
      s.andOf(s.cmpF(arith::CmpFPredicate::OGT, intersection, zero),
              s.andOf(s.andOf(s.cmpF(arith::CmpFPredicate::OGT, areaA, zero),
                              s.cmpF(arith::CmpFPredicate::OGT, areaC, zero)),
                      s.cmpF(arith::CmpFPredicate::OGT, unionArea, zero)));
  Value iou = s.div(intersection, s.select(valid, unionArea,
                                           createScalar(s.b, s.loc, et, 1)));
  return s.andOf(valid, s.cmpF(arith::CmpFPredicate::OGT, iou, threshold));
}

LogicalResult lowerNonMaxSuppression(NodeContext &ctx) {
  FailureOr<RankedTensorType> type = ctx.getOutputType(0);
  if (failed(type))
    return failure();
  RankedTensorType boxesType = ctx.getInputType(0),
                   scoresType = ctx.getInputType(1);
  if (boxesType.getRank() != 3 || boxesType.getDimSize(2) != 4)
    return ctx.fail("boxes must be [batch, boxes, 4]");
  if (scoresType.getRank() != 3 ||
      scoresType.getDimSize(0) != boxesType.getDimSize(0) ||
      scoresType.getDimSize(2) != boxesType.getDimSize(1))
    return ctx.fail("scores must be [batch, classes, boxes] of the boxes");
  Type et = boxesType.getElementType();
  if (!isa<FloatType>(et) || scoresType.getElementType() != et)
    return ctx.fail("boxes and scores must be floats of one type");
  if (type->getRank() != 2 || type->getDimSize(1) != 3 ||
      !type->getElementType().isInteger(64))
    return ctx.fail("result must be [selected, 3] of int64");
  for (unsigned i = 2; i < 5; ++i)
    if (ctx.hasInput(i) && ctx.getInputType(i).getNumElements() != 1)
      return ctx.fail("input " + Twine(i) + " must have one element");
  OpBuilder &b = ctx.getBuilder();
  Location loc = ctx.getLoc();
  int64_t rows = type->getDimSize(0);
  int64_t batches = boxesType.getDimSize(0), classes = scoresType.getDimSize(1),
          count = boxesType.getDimSize(1);
  // No max_output_boxes_per_class selects nothing.
  if (rows == 0 || !ctx.hasInput(2) || batches * classes * count == 0)
    return ctx.setOutput(0, createZeroElements(b, loc, *type));
  bool centerPoint = ctx.getIntAttr("center_point_box", 0) != 0;
  Value boxes = ctx.getInput(0), scores = ctx.getInput(1);
  Value maxPerClass = ctx.getInput(2);
  Value iouInput = ctx.hasInput(3) ? ctx.getInput(3) : Value();
  Value scoreInput = ctx.hasInput(4) ? ctx.getInput(4) : Value();
  bool maxUnsigned = ctx.isInputUnsigned(2);

  Type i64 = b.getI64Type();
  auto region = scf::ExecuteRegionOp::create(b, loc, TypeRange{*type});
  region.setNoInline(true);
  OpBuilder::InsertionGuard guard(b);
  b.createBlock(&region.getRegion());
  ScalarOps s{b, loc};
  Value limit = createScalarCast(b, loc, extractFirst(b, loc, maxPerClass), i64,
                                 maxUnsigned, false);
  Value iouThreshold =
      iouInput ? extractFirst(b, loc, iouInput) : createScalar(b, loc, et, 0);
  Value scoreThreshold =
      scoreInput ? extractFirst(b, loc, scoreInput) : Value();
  Value initOut = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(*type, static_cast<int64_t>(0)));
  auto stateType = RankedTensorType::get({count}, b.getI8Type());
  Value initState = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(stateType, static_cast<int8_t>(0)));

  Value c0 = s.index(0), c1 = s.index(1);
  auto batchLoop = scf::ForOp::create(
      b, loc, c0, s.index(batches), c1,
      ValueRange{initOut, initState, createScalar(b, loc, i64, 0)},
      [&](OpBuilder &, Location, Value batch, ValueRange batchArgs) {
        auto classLoop = scf::ForOp::create(
            b, loc, c0, s.index(classes), c1, batchArgs,
            [&](OpBuilder &, Location, Value cls, ValueRange classArgs) {
              // Every box a candidate again.
              auto reset = scf::ForOp::create(
                  b, loc, c0, s.index(count), c1, ValueRange{classArgs[1]},
                  [&](OpBuilder &, Location, Value box, ValueRange args) {
                    scf::YieldOp::create(
                        b, loc, s.insert(s.i8(kCandidate), args[0], {box}));
                  });
              // One step per box: the best candidate is dropped or kept.
              auto steps = scf::ForOp::create(
                  b, loc, c0, s.index(count), c1,
                  ValueRange{classArgs[0], reset.getResult(0), classArgs[2],
                             createScalar(b, loc, i64, 0)},
                  [&](OpBuilder &, Location, Value, ValueRange args) {
                    Value out = args[0], state = args[1], total = args[2],
                          kept = args[3];
                    Value lowest = createScalar(
                        b, loc, et, -std::numeric_limits<double>::infinity());
                    auto search = scf::ForOp::create(
                        b, loc, c0, s.index(count), c1,
                        ValueRange{c0, lowest,
                                   createScalar(b, loc, b.getI1Type(), 0)},
                        [&](OpBuilder &, Location, Value box, ValueRange best) {
                          Value isCandidate =
                              s.cmpI(arith::CmpIPredicate::eq,
                                     s.extract(state, {box}), s.i8(kCandidate));
                          Value score = s.extract(scores, {batch, cls, box});
                          Value better = s.andOf(
                              isCandidate,
                              s.orOf(s.cmpI(arith::CmpIPredicate::eq, best[2],
                                            createScalar(b, loc, b.getI1Type(),
                                                         0)),
                                     s.cmpF(arith::CmpFPredicate::OGT, score,
                                            best[1])));
                          scf::YieldOp::create(
                              b, loc,
                              ValueRange{s.select(better, box, best[0]),
                                         s.select(better, score, best[1]),
                                         s.orOf(best[2], better)});
                        });
                    Value box = search.getResult(0);
                    Value found = search.getResult(2);
                    Value usable = s.andOf(
                        found, s.cmpI(arith::CmpIPredicate::slt, kept, limit));
                    if (scoreThreshold)
                      usable = s.andOf(usable, s.cmpF(arith::CmpFPredicate::OGT,
                                                      search.getResult(1),
                                                      scoreThreshold));
                    // Overlap with any kept box.
                    Box candidate =
                        readBox(s, boxes, batch, box, centerPoint, et);
                    auto overlap = scf::ForOp::create(
                        b, loc, c0, s.index(count), c1,
                        ValueRange{createScalar(b, loc, b.getI1Type(), 0)},
                        [&](OpBuilder &, Location, Value other,
                            ValueRange acc) {
                          Value isKept =
                              s.cmpI(arith::CmpIPredicate::eq,
                                     s.extract(state, {other}), s.i8(kKept));
                          Box keptBox =
                              readBox(s, boxes, batch, other, centerPoint, et);
                          Value hit = s.andOf(
                              isKept, overlapsTooMuch(s, keptBox, candidate,
                                                      iouThreshold, et));
                          scf::YieldOp::create(b, loc, s.orOf(acc[0], hit));
                        });
                    Value keep = s.andOf(
                        usable,
                        s.cmpI(arith::CmpIPredicate::eq, overlap.getResult(0),
                               createScalar(b, loc, b.getI1Type(), 0)));
                    // The box's new state (unchanged when none was found).
                    Value newState = s.select(
                        found, s.select(keep, s.i8(kKept), s.i8(kDropped)),
                        s.extract(state, {box}));
                    Value nextState = s.insert(newState, state, {box});
                    // Its row, while rows remain.
                    Value hasRow = s.cmpI(arith::CmpIPredicate::slt, total,
                                          createScalar(b, loc, i64, rows));
                    Value write = s.andOf(keep, hasRow);
                    Value row = arith::IndexCastOp::create(
                        b, loc, b.getIndexType(),
                        s.select(hasRow, total,
                                 createScalar(b, loc, i64, rows - 1)));
                    Value fields[3] = {
                        arith::IndexCastOp::create(b, loc, i64, batch),
                        arith::IndexCastOp::create(b, loc, i64, cls),
                        arith::IndexCastOp::create(b, loc, i64, box)};
                    for (int k = 0; k < 3; ++k) {
                      Value old = s.extract(out, {row, s.index(k)});
                      out = s.insert(s.select(write, fields[k], old), out,
                                     {row, s.index(k)});
                    }
                    Value one = createScalar(b, loc, i64, 1);
                    Value zero = createScalar(b, loc, i64, 0);
                    Value added = s.select(keep, one, zero);
                    scf::YieldOp::create(
                        b, loc,
                        ValueRange{out, nextState,
                                   arith::AddIOp::create(b, loc, total, added),
                                   arith::AddIOp::create(b, loc, kept, added)});
                  });
              scf::YieldOp::create(b, loc,
                                   ValueRange{steps.getResult(0),
                                              steps.getResult(1),
                                              steps.getResult(2)});
            });
        scf::YieldOp::create(b, loc, classLoop.getResults());
      });
  scf::YieldOp::create(b, loc, batchLoop.getResult(0));
  return ctx.setOutput(0, region.getResult(0));
}

} // namespace

void addNonMaxSuppressionLowerings(LoweringTable &t) {
  t["NonMaxSuppression"] = lowerNonMaxSuppression;
}

} // namespace strata::onnx_importer
