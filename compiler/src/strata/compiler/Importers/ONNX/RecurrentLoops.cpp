//===- RecurrentLoops.cpp - RNN, GRU, LSTM over a dynamic sequence --------===//
//
// With a dynamic sequence length or batch the steps cannot be unrolled. The
// input projection X·Wᵀ + biases stays one matmul over every step (seq *
// batch rows, known at run time); the recurrence becomes one sequential
// region, a dispatch of its own, that loops over the steps. Each step works
// in place on the region's one result, rows [seq + slots, batch, hidden],
// so the executable needs no temporary of run-time size (and no result of
// it is dropped as unused while the loops still write it):
//   rows [0, seq):     Y; step t writes H_t into row t;
//   row seq:           H_{t-1} during a step, H of the last step at the end;
//   row seq + 1:       the LSTM's C, or for GRU the reset state
//                      r ⊙ H_{t-1} that its candidate gate reads.
// A step: (GRU without linear_before_reset) r ⊙ H_{t-1} into slot 1; then,
// per (batch, hidden) element, its gates as dot products of H_{t-1} with
// rows of R, the cell update and H_t into Y[t]; then Y[t] into row seq.
// Where sequence lengths mask a step, Y is 0 and the state is kept.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/RecurrentLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace strata::onnx_importer {
namespace {

// Scalar code of the region: index arithmetic, element reads and writes,
// counted loops that carry values.
struct RegionBuilder {
  OpBuilder &b;
  Location loc;

  Value index(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value addIndex(Value l, Value r) {
    return arith::AddIOp::create(b, loc, l, r);
  }
  Value mulIndex(Value l, Value r) {
    return arith::MulIOp::create(b, loc, l, r);
  }
  Value subIndex(Value l, Value r) {
    return arith::SubIOp::create(b, loc, l, r);
  }
  Value read(Value tensor, ArrayRef<Value> indices) {
    return tensor::ExtractOp::create(b, loc, tensor, indices);
  }
  Value write(Value scalar, Value tensor, ArrayRef<Value> indices) {
    return tensor::InsertOp::create(b, loc, scalar, tensor, indices);
  }
  // for (i = 0; i < count; ++i), carrying `inits`; `body` returns the
  // values the next iteration gets.
  SmallVector<Value>
  loop(Value count, ValueRange inits,
       llvm::function_ref<SmallVector<Value>(Value, ValueRange)> body) {
    auto forOp = scf::ForOp::create(
        b, loc, index(0), count, index(1), inits,
        [&](OpBuilder &, Location, Value iv, ValueRange args) {
          scf::YieldOp::create(b, loc, body(iv, args));
        });
    return SmallVector<Value>(forOp.getResults());
  }
  // Float arithmetic the dot products may reassociate (vectorised sums).
  Value fma(Value acc, Value l, Value r) {
    auto flags = arith::FastMathFlagsAttr::get(
        b.getContext(),
        arith::FastMathFlags::reassoc | arith::FastMathFlags::contract);
    Value product = arith::MulFOp::create(b, loc, l, r, flags);
    return arith::AddFOp::create(b, loc, acc, product, flags);
  }
};

} // namespace

// initial_h or initial_c of one direction as [1, batch, hidden]; null when
// absent.
Value RecurrentLowering::getDynamicInitialState(unsigned index, int64_t dir) {
  if (!ctx.hasInput(index))
    return {};
  Value state = ctx.getInput(index);
  if (batchFirst)
    state = createTranspose(b, loc, state, {1, 0, 2});
  SmallVector<OpFoldResult> offsets = {b.getIndexAttr(dir), b.getIndexAttr(0),
                                       b.getIndexAttr(0)};
  SmallVector<OpFoldResult> sizes = {b.getIndexAttr(1), batchSize,
                                     b.getIndexAttr(hidden)};
  SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
  return tensor::ExtractSliceOp::create(b, loc, state, offsets, sizes, strides);
}

LogicalResult
RecurrentLowering::lowerDirectionAsLoop(int64_t dir, bool reverse,
                                        DirectionOutputs &outputs) {
  int64_t gatesSize = numGates * hidden;
  OpFoldResult steps = getSizeProduct(b, loc, {seqSize, batchSize});
  // The input projection of every step, with the biases: [seq * batch,
  // gates * hidden].
  auto projectionType =
      RankedTensorType::get({ShapedType::kDynamic, gatesSize}, elementType);
  SmallVector<OpFoldResult> projectionSizes = {steps,
                                               b.getIndexAttr(gatesSize)};
  // Accumulated from zeros and the bias added after: an accumulator read
  // from another dispatch's result would need a copy of run-time size.
  Value projection =
      linalg::MatmulOp::create(
          b, loc, TypeRange{projectionType},
          ValueRange{x2d, getTransposedWeight(1, dir, 0, gatesSize)},
          ValueRange{createFilled(b, loc, projectionSizes,
                                  createScalar(b, loc, elementType, 0))})
          .getResult(0);
  if (Value bias = getInputBias(dir))
    projection = createElementwise(
        b, loc, {projection, bias}, projectionType,
        [](OpBuilder &nb, Location nl, ValueRange a) {
          return arith::AddFOp::create(nb, nl, a[0], a[1]).getResult();
        });

  // R of this direction as given, [gates * hidden, hidden]: the dot products
  // read its rows.
  Value recurrent = getWeightRows(2, dir, gatesSize);
  Value hiddenBias = kind == CellKind::GRU && linearBeforeReset
                         ? getRecurrentHiddenBias(dir)
                         : Value();
  Value peepholes = getPeepholes(dir);
  Value initialH = getDynamicInitialState(5, dir);
  Value initialC =
      kind == CellKind::LSTM ? getDynamicInitialState(6, dir) : Value();
  bool gruReset = kind == CellKind::GRU && !linearBeforeReset;
  int64_t slots = kind == CellKind::LSTM || gruReset ? 2 : 1;

  Value seq = getValueOrCreateConstantIndexOp(b, loc, seqSize);
  Value batchCount = getValueOrCreateConstantIndexOp(b, loc, batchSize);
  auto rowsType = RankedTensorType::get(
      {ShapedType::kDynamic, ShapedType::kDynamic, hidden}, elementType);
  auto region = scf::ExecuteRegionOp::create(b, loc, TypeRange{rowsType});
  region.setNoInline(true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.createBlock(&region.getRegion());
    RegionBuilder r{b, loc};
    Value c0 = r.index(0), c1 = r.index(1), hiddenCount = r.index(hidden);
    // The state slots follow Y's rows.
    Value hSlot = seq, cSlot = r.addIndex(seq, c1);
    Value zero = createScalar(b, loc, elementType, 0);
    Value one = createScalar(b, loc, elementType, 1);
    auto mul = [&](Value l, Value v) {
      return arith::MulFOp::create(b, loc, l, v).getResult();
    };
    auto add = [&](Value l, Value v) {
      return arith::AddFOp::create(b, loc, l, v).getResult();
    };
    auto sub = [&](Value l, Value v) {
      return arith::SubFOp::create(b, loc, l, v).getResult();
    };

    // Over every (batch, hidden) element of one step, carrying the rows.
    auto forEachElement =
        [&](Value rows, llvm::function_ref<Value(Value, Value, Value)> body) {
          return r.loop(batchCount, rows, [&](Value bi, ValueRange outer) {
            return r.loop(hiddenCount, outer, [&](Value j, ValueRange inner) {
              return SmallVector<Value>{body(bi, j, inner[0])};
            });
          })[0];
        };
    // Σ_k rows[slot, bi, k] · R[row, k] for each (slot, row), starting from
    // `starts`.
    auto dots = [&](Value rows, Value bi, ArrayRef<Value> slotsRead,
                    ArrayRef<Value> rowsRead, ArrayRef<Value> starts) {
      return r.loop(hiddenCount, starts, [&](Value k, ValueRange sums) {
        SmallVector<Value> next;
        for (auto [i, sum] : llvm::enumerate(sums))
          next.push_back(r.fma(sum, r.read(rows, {slotsRead[i], bi, k}),
                               r.read(recurrent, {rowsRead[i], k})));
        return next;
      });
    };

    // The region's own empty tensor, so that it is the dispatch's output
    // buffer, written in place.
    Value rows = tensor::EmptyOp::create(
        b, loc,
        ArrayRef<OpFoldResult>{r.addIndex(seq, r.index(slots)), batchSize,
                               b.getIndexAttr(hidden)},
        elementType);
    rows = forEachElement(rows, [&](Value bi, Value j, Value rows) {
      Value h = initialH ? r.read(initialH, {c0, bi, j}) : zero;
      rows = r.write(h, rows, {hSlot, bi, j});
      if (kind == CellKind::LSTM)
        rows = r.write(initialC ? r.read(initialC, {c0, bi, j}) : zero, rows,
                       {cSlot, bi, j});
      return rows;
    });

    Type lenType =
        sequenceLens
            ? cast<RankedTensorType>(sequenceLens.getType()).getElementType()
            : Type();
    // Whether step t of batch entry bi is inside its sequence.
    auto isValid = [&](Value t, Value bi) -> Value {
      if (!sequenceLens)
        return {};
      Value len = r.read(sequenceLens, {bi});
      Value step = arith::IndexCastOp::create(b, loc, lenType, t);
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, step,
                                   len);
    };
    auto select = [&](Value valid, Value a, Value other) {
      return valid
                 ? arith::SelectOp::create(b, loc, valid, a, other).getResult()
                 : a;
    };

    Value result = r.loop(seq, rows, [&](Value s, ValueRange carried) {
      Value t = reverse ? r.subIndex(r.subIndex(seq, c1), s) : s;
      Value rowBase = r.mulIndex(t, batchCount);
      auto projected = [&](Value bi, int64_t gate, Value j) {
        return r.read(projection, {r.addIndex(rowBase, bi),
                                   r.addIndex(r.index(gate * hidden), j)});
      };
      auto row = [&](int64_t gate, Value j) {
        return r.addIndex(r.index(gate * hidden), j);
      };
      Value step = carried[0];
      // GRU: r ⊙ H_{t-1} into the second slot, for the candidate gate.
      if (gruReset)
        step = forEachElement(step, [&](Value bi, Value k, Value rows) {
          Value pre =
              dots(rows, bi, {hSlot}, {row(1, k)}, {projected(bi, 1, k)})[0];
          Value reset = activate(b, loc, dir, 0, pre);
          Value h = r.read(rows, {hSlot, bi, k});
          return r.write(mul(reset, h), rows, {cSlot, bi, k});
        });
      step = forEachElement(step, [&](Value bi, Value j, Value rows) {
        Value valid = isValid(t, bi);
        Value hPrev = r.read(rows, {hSlot, bi, j});
        Value hNew, cNew, cPrev;
        switch (kind) {
        case CellKind::RNN: {
          Value pre =
              dots(rows, bi, {hSlot}, {row(0, j)}, {projected(bi, 0, j)})[0];
          hNew = activate(b, loc, dir, 0, pre);
          break;
        }
        case CellKind::GRU: {
          Value z, hCand;
          if (gruReset) {
            SmallVector<Value> pre =
                dots(rows, bi, {hSlot, cSlot}, {row(0, j), row(2, j)},
                     {projected(bi, 0, j), projected(bi, 2, j)});
            z = activate(b, loc, dir, 0, pre[0]);
            hCand = activate(b, loc, dir, 1, pre[1]);
          } else {
            SmallVector<Value> pre =
                dots(rows, bi, {hSlot, hSlot, hSlot},
                     {row(0, j), row(1, j), row(2, j)},
                     {projected(bi, 0, j), projected(bi, 1, j),
                      r.read(hiddenBias, {j})});
            z = activate(b, loc, dir, 0, pre[0]);
            Value reset = activate(b, loc, dir, 0, pre[1]);
            hCand = activate(b, loc, dir, 1,
                             add(projected(bi, 2, j), mul(reset, pre[2])));
          }
          // (1 - z) * h~ + z * H_{t-1}
          hNew = add(mul(sub(one, z), hCand), mul(z, hPrev));
          break;
        }
        case CellKind::LSTM: {
          SmallVector<Value> pre =
              dots(rows, bi, {hSlot, hSlot, hSlot, hSlot},
                   {row(0, j), row(1, j), row(2, j), row(3, j)},
                   {projected(bi, 0, j), projected(bi, 1, j),
                    projected(bi, 2, j), projected(bi, 3, j)});
          Value iPre = pre[0], oPre = pre[1], fPre = pre[2];
          cPrev = r.read(rows, {cSlot, bi, j});
          auto peephole = [&](int64_t which) {
            return r.read(peepholes, {r.addIndex(r.index(which * hidden), j)});
          };
          if (peepholes) {
            iPre = add(iPre, mul(peephole(0), cPrev));
            fPre = add(fPre, mul(peephole(2), cPrev));
          }
          Value i = activate(b, loc, dir, 0, iPre);
          Value f = inputForget ? sub(one, i) : activate(b, loc, dir, 0, fPre);
          Value g = activate(b, loc, dir, 1, pre[3]);
          cNew = add(mul(f, cPrev), mul(i, g));
          if (peepholes)
            oPre = add(oPre, mul(peephole(1), cNew));
          Value o = activate(b, loc, dir, 0, oPre);
          hNew = mul(o, activate(b, loc, dir, 2, cNew));
          break;
        }
        }
        rows = r.write(select(valid, hNew, zero), rows, {t, bi, j});
        if (cNew)
          rows = r.write(select(valid, cNew, cPrev), rows, {cSlot, bi, j});
        return rows;
      });
      // H_t becomes the state the next step reads.
      step = forEachElement(step, [&](Value bi, Value j, Value rows) {
        Value h = r.read(rows, {t, bi, j});
        if (Value valid = isValid(t, bi))
          h = arith::SelectOp::create(b, loc, valid, h,
                                      r.read(rows, {hSlot, bi, j}));
        return r.write(h, rows, {hSlot, bi, j});
      });
      return SmallVector<Value>{step};
    })[0];
    scf::YieldOp::create(b, loc, result);
  }

  // Y, Y_h and Y_c are slices of the region's rows.
  Value regionRows = region.getResult(0);
  auto slice = [&](OpFoldResult offset, OpFoldResult size) -> Value {
    SmallVector<OpFoldResult> offsets = {offset, b.getIndexAttr(0),
                                         b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes = {size, batchSize, b.getIndexAttr(hidden)};
    SmallVector<OpFoldResult> strides(3, b.getIndexAttr(1));
    return tensor::ExtractSliceOp::create(b, loc, regionRows, offsets, sizes,
                                          strides);
  };
  OpFoldResult oneRow = b.getIndexAttr(1);
  if (ctx.hasOutput(0))
    outputs.y = createDynamicReshape(
        b, loc, slice(b.getIndexAttr(0), seqSize),
        {seqSize, oneRow, batchSize, b.getIndexAttr(hidden)});
  if (ctx.hasOutput(1))
    outputs.yh = slice(seq, oneRow);
  if (kind == CellKind::LSTM && ctx.hasOutput(2))
    outputs.yc =
        slice(getAsOpFoldResult(arith::AddIOp::create(
                  b, loc, seq, arith::ConstantIndexOp::create(b, loc, 1))),
              oneRow);
  return success();
}

} // namespace strata::onnx_importer
