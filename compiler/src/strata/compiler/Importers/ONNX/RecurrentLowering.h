//===- RecurrentLowering.h - RNN, GRU and LSTM lowering ---------*- C++ -*-===//
//
// Shared by the two lowerings of the recurrent ops: unrolled over a static
// sequence (RecurrentOps.cpp), or a loop over a dynamic one
// (RecurrentLoops.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_IMPORTERS_ONNX_RECURRENTLOWERING_H_
#define STRATA_COMPILER_IMPORTERS_ONNX_RECURRENTLOWERING_H_

#include "strata/compiler/Importers/ONNX/NodeContext.h"

#include "mlir/IR/Builders.h"

#include <optional>

namespace strata::onnx_importer {

enum class CellKind { RNN, GRU, LSTM };

// One of the activation functions the recurrent ops accept, with its
// alpha/beta (the ONNX op's defaults when the node gives none).
struct Activation {
  enum Kind {
    Relu,
    Tanh,
    Sigmoid,
    Affine,
    LeakyRelu,
    ThresholdedRelu,
    ScaledTanh,
    HardSigmoid,
    Elu,
    Softsign,
    Softplus
  } kind;
  double alpha = 0, beta = 0;
};

mlir::Value applyActivation(mlir::OpBuilder &b, mlir::Location loc,
                            const Activation &act, mlir::Value x);

// Concatenates `parts` along `dim`, at most 64 operands per concatenation.
mlir::Value concatenateRecurrentParts(mlir::OpBuilder &b, mlir::Location loc,
                                      llvm::SmallVector<mlir::Value> parts,
                                      int64_t dim);

// Lowers RNN, GRU and LSTM.
class RecurrentLowering {
public:
  RecurrentLowering(NodeContext &ctx, CellKind kind)
      : ctx(ctx), b(ctx.getBuilder()), loc(ctx.getLoc()), kind(kind) {}

  mlir::LogicalResult lower();

private:
  mlir::Value getTransposedWeight(unsigned index, int64_t dir, int64_t begin,
                                  int64_t count);
  mlir::Value getInputBias(int64_t dir);
  mlir::Value getRecurrentHiddenBias(int64_t dir);
  mlir::Value getInitialState(unsigned index, int64_t dir);
  mlir::Value getPeepholes(int64_t dir);
  mlir::Value activate(mlir::OpBuilder &nb, mlir::Location nl, int64_t dir,
                       unsigned which, mlir::Value x);
  // One direction's Y [seq, 1, batch, hidden], Y_h and Y_c [1, batch,
  // hidden], each where the node has that output.
  struct DirectionOutputs {
    mlir::Value y, yh, yc;
  };
  mlir::LogicalResult lowerDirection(int64_t dir, bool reverse,
                                     DirectionOutputs &outputs);

  // The lowering over a dynamic sequence or batch (RecurrentLoops.cpp):
  // each direction's steps run in one sequential region.
  mlir::LogicalResult lowerDirectionAsLoop(int64_t dir, bool reverse,
                                           DirectionOutputs &outputs);
  mlir::Value getDynamicInitialState(unsigned index);
  mlir::Value createLoopInputProjection(int64_t dir);
  // One element's operands of a cell update in the loop lowering: its
  // gates' input projections and recurrent terms, H_{t-1}, and where the
  // cell has them C_{t-1}, the peepholes (i, o, f), GRU's h-gate term of
  // r ⊙ H_{t-1} (without linear_before_reset) or its recurrent h bias.
  struct CellTerms {
    llvm::SmallVector<mlir::Value, 4> projected, recurrent;
    mlir::Value hPrev, cPrev, resetTerm, hiddenBias;
    mlir::Value peepholes[3];
  };
  std::pair<mlir::Value, mlir::Value>
  createLoopCellUpdate(int64_t dir, const CellTerms &terms);

  NodeContext &ctx;
  mlir::OpBuilder &b;
  mlir::Location loc;
  CellKind kind;
  int64_t numGates = 1, seqLength = 0, batch = 0, inputSize = 0, hidden = 0,
          numDirections = 1;
  unsigned activationsPerDirection = 1;
  bool batchFirst = false, linearBeforeReset = false, inputForget = false;
  std::optional<double> clip;
  llvm::SmallVector<Activation> activations;
  mlir::Type elementType;
  mlir::RankedTensorType stateType;
  // X as [seq * batch, input]; sequence lengths when they mask steps.
  mlir::Value x2d, sequenceLens;
  // The sequence and batch sizes (dynamic lowering).
  mlir::OpFoldResult seqSize, batchSize;
};

} // namespace strata::onnx_importer

#endif // STRATA_COMPILER_IMPORTERS_ONNX_RECURRENTLOWERING_H_
