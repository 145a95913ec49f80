//===- RecurrentLoops.cpp - RNN, GRU, LSTM over a dynamic sequence --------===//
//
// With a dynamic sequence length or batch the steps cannot be unrolled. The
// input projection X·Wᵀ + biases stays one matmul over every step (seq *
// batch rows, known at run time); the recurrence becomes one sequential
// region, a dispatch of its own, that loops over the steps and, in each,
// over the batch. It works in place on the region's one result, rows
// [seq + slots, batch, hidden], so the executable needs no temporary of
// run-time size (and no result of it is dropped as unused while the loops
// still write it):
//   rows [0, seq):  Y; step t writes H_t into row t;
//   row seq:        H_{t-1} during a step, H of the last step at the end;
//   row seq + 1:    the LSTM's C.
// Per step and batch entry: the recurrent terms H_{t-1}·Rᵀ of every gate
// into a static scratch vector (rows of Rᵀ scaled and added, loops over
// contiguous columns that vectorize), then each element's cell update,
// writing H_t over H_{t-1} (and C) and into Y. Where sequence lengths mask
// a step, Y is 0 and the state is kept.
//
//===----------------------------------------------------------------------===//
#include "strata/compiler/Importers/ONNX/Builders.h"
#include "strata/compiler/Importers/ONNX/RecurrentLowering.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
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
};

} // namespace

// initial_h or initial_c as [directions, batch, hidden] (layout 1
// transposed); null when absent. Its dims are its own: the region reads it
// at clamped indices, so a caller's state of another batch cannot make it
// read past the buffer.
Value RecurrentLowering::getDynamicInitialState(unsigned index) {
  if (!ctx.hasInput(index))
    return {};
  Value state = ctx.getInput(index);
  if (batchFirst)
    state = createTranspose(b, loc, state, {1, 0, 2});
  return state;
}

// The input projection of every step of one direction, with the biases:
// [seq * batch, gates * hidden]. Accumulated from zeros and the bias added
// after: an accumulator read from another dispatch's result would need a
// copy of run-time size.
Value RecurrentLowering::createLoopInputProjection(int64_t dir) {
  int64_t gatesSize = numGates * hidden;
  OpFoldResult steps = getSizeProduct(b, loc, {seqSize, batchSize});
  auto projectionType =
      RankedTensorType::get({ShapedType::kDynamic, gatesSize}, elementType);
  SmallVector<OpFoldResult> projectionSizes = {steps,
                                               b.getIndexAttr(gatesSize)};
  Value projection =
      linalg::MatmulOp::create(
          b, loc, TypeRange{projectionType},
          ValueRange{x2d, getTransposedWeight(1, dir, 0, gatesSize)},
          ValueRange{createFilled(b, loc, projectionSizes,
                                  createScalar(b, loc, elementType, 0))})
          .getResult(0);
  Value bias = getInputBias(dir);
  if (!bias)
    return projection;
  return createElementwise(
      b, loc, {projection, bias}, projectionType,
      [](OpBuilder &nb, Location nl, ValueRange a) {
        return arith::AddFOp::create(nb, nl, a[0], a[1]).getResult();
      });
}

// One element's cell update from its gates' terms: H_t, and C_t for LSTM.
std::pair<Value, Value>
RecurrentLowering::createLoopCellUpdate(int64_t dir, const CellTerms &terms) {
  ArithBuilder arithmetic(b, loc);
  Value one = createScalar(b, loc, elementType, 1);
  auto pre = [&](int64_t gate) {
    return arithmetic.add(terms.projected[gate], terms.recurrent[gate]);
  };
  switch (kind) {
  case CellKind::RNN:
    return {activate(b, loc, dir, 0, pre(0)), Value()};
  case CellKind::GRU: {
    Value z = activate(b, loc, dir, 0, pre(0)), hCand;
    if (terms.resetTerm) {
      hCand = activate(b, loc, dir, 1,
                       arithmetic.add(terms.projected[2], terms.resetTerm));
    } else {
      Value gate = activate(b, loc, dir, 0, pre(1));
      Value term = arithmetic.add(terms.recurrent[2], terms.hiddenBias);
      hCand = activate(
          b, loc, dir, 1,
          arithmetic.add(terms.projected[2], arithmetic.mul(gate, term)));
    }
    // (1 - z) * h~ + z * H_{t-1}
    return {arithmetic.add(arithmetic.mul(arithmetic.sub(one, z), hCand),
                           arithmetic.mul(z, terms.hPrev)),
            Value()};
  }
  case CellKind::LSTM: {
    Value iPre = pre(0), oPre = pre(1), fPre = pre(2);
    if (terms.peepholes[0]) {
      iPre =
          arithmetic.add(iPre, arithmetic.mul(terms.peepholes[0], terms.cPrev));
      fPre =
          arithmetic.add(fPre, arithmetic.mul(terms.peepholes[2], terms.cPrev));
    }
    Value i = activate(b, loc, dir, 0, iPre);
    Value f =
        inputForget ? arithmetic.sub(one, i) : activate(b, loc, dir, 0, fPre);
    Value g = activate(b, loc, dir, 1, pre(3));
    Value cNew =
        arithmetic.add(arithmetic.mul(f, terms.cPrev), arithmetic.mul(i, g));
    if (terms.peepholes[1])
      oPre = arithmetic.add(oPre, arithmetic.mul(terms.peepholes[1], cNew));
    Value o = activate(b, loc, dir, 0, oPre);
    return {arithmetic.mul(o, activate(b, loc, dir, 2, cNew)), cNew};
  }
  }
  llvm_unreachable("unknown cell kind");
}

LogicalResult
RecurrentLowering::lowerDirectionAsLoop(int64_t dir, bool reverse,
                                        DirectionOutputs &outputs) {
  int64_t gatesSize = numGates * hidden;
  Value projection = createLoopInputProjection(dir);

  // Rᵀ of this direction, [hidden, gates * hidden] (for GRU without
  // linear_before_reset, the z and r gates' and the h gate's apart): the
  // recurrent term of every gate is H_{t-1}·Rᵀ, a row of Rᵀ per element of
  // H_{t-1}, added across contiguous gate columns.
  bool gruReset = kind == CellKind::GRU && !linearBeforeReset;
  int64_t accColumns = gruReset ? 2 * hidden : gatesSize;
  Value recurrentT = getTransposedWeight(2, dir, 0, accColumns);
  Value recurrentHT =
      gruReset ? getTransposedWeight(2, dir, 2 * hidden, hidden) : Value();
  Value hiddenBias = kind == CellKind::GRU && linearBeforeReset
                         ? getRecurrentHiddenBias(dir)
                         : Value();
  Value peepholes = getPeepholes(dir);
  Value initialH = getDynamicInitialState(5);
  Value initialC = kind == CellKind::LSTM ? getDynamicInitialState(6) : Value();
  int64_t slots = kind == CellKind::LSTM ? 2 : 1;

  Value seq = getValueOrCreateConstantIndexOp(b, loc, seqSize);
  Value batchCount = getValueOrCreateConstantIndexOp(b, loc, batchSize);
  // As static as its sizes (the region's tensor.empty folds them): dispatch
  // formation sizes the region's result from its type and cannot see a
  // static dim through a cast to a dynamic one.
  std::optional<int64_t> staticSeq = getConstantIntValue(seqSize),
                         staticBatch = getConstantIntValue(batchSize);
  auto rowsType = RankedTensorType::get(
      {staticSeq ? *staticSeq + slots : ShapedType::kDynamic,
       staticBatch ? *staticBatch : ShapedType::kDynamic, hidden},
      elementType);
  auto region = scf::ExecuteRegionOp::create(b, loc, TypeRange{rowsType});
  region.setNoInline(true);
  {
    OpBuilder::InsertionGuard guard(b);
    b.createBlock(&region.getRegion());
    RegionBuilder r{b, loc};
    Value c0 = r.index(0), c1 = r.index(1), hiddenCount = r.index(hidden);
    // An element of an input whose dims are the caller's (initial states,
    // sequence lengths), each index clamped into its dim.
    auto readClamped = [&](Value tensor, ArrayRef<Value> indices) {
      SmallVector<Value> clamped;
      for (auto [d, i] : llvm::enumerate(indices)) {
        Value last = r.subIndex(tensor::DimOp::create(b, loc, tensor, d), c1);
        clamped.push_back(arith::MaxSIOp::create(
            b, loc, arith::MinSIOp::create(b, loc, i, last), c0));
      }
      return r.read(tensor, clamped);
    };
    Value dirIndex = r.index(dir);
    // The state rows follow Y's.
    Value hSlot = seq, cSlot = r.addIndex(seq, c1);
    Value zero = createScalar(b, loc, elementType, 0);
    ArithBuilder arithmetic(b, loc);
    // scratch[offset + j] = Σ_k input(k) · weightT[k, j] over j < columns:
    // rows of weightT scaled and added, each a loop over contiguous columns.
    // `input` reads from the scratch as the loop carries it (reads of an
    // older value would need a copy).
    auto matvec = [&](Value scratch, int64_t offset, Value weightT,
                      int64_t columns,
                      llvm::function_ref<Value(Value, Value)> input) {
      Value count = r.index(columns), first = r.index(offset);
      scratch = r.loop(count, scratch, [&](Value j, ValueRange a) {
        return SmallVector<Value>{r.write(zero, a[0], {r.addIndex(first, j)})};
      })[0];
      return r.loop(hiddenCount, scratch, [&](Value k, ValueRange a) {
        Value x = input(k, a[0]);
        return r.loop(count, a, [&](Value j, ValueRange inner) {
          Value at = r.addIndex(first, j);
          Value sum = arith::AddFOp::create(
              b, loc, r.read(inner[0], {at}),
              arith::MulFOp::create(b, loc, x, r.read(weightT, {k, j})));
          return SmallVector<Value>{r.write(sum, inner[0], {at})};
        });
      })[0];
    };

    // The region's own empty tensor, so that it is the dispatch's output
    // buffer, written in place.
    Value rows = tensor::EmptyOp::create(
        b, loc,
        ArrayRef<OpFoldResult>{r.addIndex(seq, r.index(slots)), batchSize,
                               b.getIndexAttr(hidden)},
        elementType);
    rows = r.loop(batchCount, rows, [&](Value bi, ValueRange outer) {
      return r.loop(hiddenCount, outer, [&](Value j, ValueRange a) {
        Value h = initialH ? readClamped(initialH, {dirIndex, bi, j}) : zero;
        Value next = r.write(h, a[0], {hSlot, bi, j});
        if (kind == CellKind::LSTM)
          next = r.write(initialC ? readClamped(initialC, {dirIndex, bi, j})
                                  : zero,
                         next, {cSlot, bi, j});
        return SmallVector<Value>{next};
      });
    })[0];

    Type lenType =
        sequenceLens
            ? cast<RankedTensorType>(sequenceLens.getType()).getElementType()
            : Type();
    // Whether step t of batch entry bi is inside its sequence.
    auto isValid = [&](Value t, Value bi) -> Value {
      if (!sequenceLens)
        return {};
      Value len = readClamped(sequenceLens, {bi});
      Value step = arith::IndexCastOp::create(b, loc, lenType, t);
      return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, step,
                                   len);
    };
    auto select = [&](Value valid, Value a, Value other) {
      return valid
                 ? arith::SelectOp::create(b, loc, valid, a, other).getResult()
                 : a;
    };

    // Carried with the rows: one static scratch vector (a buffer on the
    // executable's stack) holding the recurrent terms, and for GRU's reset
    // the reset state and its h-gate term after them.
    int64_t resetAt = accColumns, resetTermAt = accColumns + hidden;
    Value scratch = tensor::EmptyOp::create(
        b, loc,
        ArrayRef<int64_t>{gruReset ? accColumns + 2 * hidden : accColumns},
        elementType);
    Value result =
        r.loop(seq, {rows, scratch}, [&](Value s, ValueRange stepArgs) {
          Value t = reverse ? r.subIndex(r.subIndex(seq, c1), s) : s;
          Value rowBase = r.mulIndex(t, batchCount);
          return r.loop(batchCount, stepArgs, [&](Value bi, ValueRange args) {
            Value row = r.addIndex(rowBase, bi);
            auto projected = [&](int64_t gate, Value j) {
              return r.read(projection,
                            {row, r.addIndex(r.index(gate * hidden), j)});
            };
            auto hPrevOf = [&](Value rowsNow, Value k) {
              return r.read(rowsNow, {hSlot, bi, k});
            };
            Value rowsNow = args[0];
            Value terms =
                matvec(args[1], 0, recurrentT, accColumns,
                       [&](Value k, Value) { return hPrevOf(rowsNow, k); });
            auto termAt = [&](int64_t offset, Value j) {
              return r.read(terms, {r.addIndex(r.index(offset), j)});
            };
            auto recurrentTerm = [&](int64_t gate, Value j) {
              return termAt(gate * hidden, j);
            };
            if (gruReset) {
              // r ⊙ H_{t-1}, then its product with the h gate's Rᵀ.
              terms = r.loop(hiddenCount, terms, [&](Value k, ValueRange a) {
                Value term = r.read(a[0], {r.addIndex(r.index(hidden), k)});
                Value gate = activate(b, loc, dir, 0,
                                      arithmetic.add(projected(1, k), term));
                return SmallVector<Value>{
                    r.write(arithmetic.mul(gate, hPrevOf(rowsNow, k)), a[0],
                            {r.addIndex(r.index(resetAt), k)})};
              })[0];
              terms = matvec(terms, resetTermAt, recurrentHT, hidden,
                             [&](Value k, Value current) {
                               return r.read(current,
                                             {r.addIndex(r.index(resetAt), k)});
                             });
            }
            Value valid = isValid(t, bi);
            // Every element's cell update; H_{t-1} of this batch entry is read
            // only at its own element from here on, so H_t replaces it in
            // place.
            rowsNow = r.loop(hiddenCount, rowsNow, [&](Value j, ValueRange a) {
              Value rowsJ = a[0];
              Value hPrev = hPrevOf(rowsJ, j);
              CellTerms cell;
              cell.hPrev = hPrev;
              int64_t recurrentGates = gruReset ? 2 : numGates;
              for (int64_t gate = 0; gate < numGates; ++gate) {
                cell.projected.push_back(projected(gate, j));
                if (gate < recurrentGates)
                  cell.recurrent.push_back(recurrentTerm(gate, j));
              }
              if (gruReset)
                cell.resetTerm = termAt(resetTermAt, j);
              if (hiddenBias)
                cell.hiddenBias = r.read(hiddenBias, {j});
              Value cPrev;
              if (kind == CellKind::LSTM) {
                cPrev = r.read(rowsJ, {cSlot, bi, j});
                cell.cPrev = cPrev;
                for (int64_t which = 0; which < 3 && peepholes; ++which)
                  cell.peepholes[which] = r.read(
                      peepholes, {r.addIndex(r.index(which * hidden), j)});
              }
              auto [hNew, cNew] = createLoopCellUpdate(dir, cell);
              rowsJ = r.write(select(valid, hNew, zero), rowsJ, {t, bi, j});
              rowsJ =
                  r.write(select(valid, hNew, hPrev), rowsJ, {hSlot, bi, j});
              if (cNew)
                rowsJ =
                    r.write(select(valid, cNew, cPrev), rowsJ, {cSlot, bi, j});
              return SmallVector<Value>{rowsJ};
            })[0];
            return SmallVector<Value>{rowsNow, terms};
          });
        })[0];
    if (result.getType() != rowsType)
      result = tensor::CastOp::create(b, loc, rowsType, result);
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
