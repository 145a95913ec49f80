//===- SymbolicShapes.h - shape computations on dynamic dims ----*- C++ -*-===//
//
// Exports compute shapes from the shapes of their values (torch's
// `x.view(x.size(0), -1)` is Shape -> Gather -> Unsqueeze -> Concat ->
// Reshape). With static shapes these fold to constants; with dynamic dims
// the importer keeps them as symbolic shapes (NodeContext.h) whose elements
// are run-time index values, and the reshapes they feed get their sizes
// from those values.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_IMPORTERS_ONNX_SYMBOLICSHAPES_H_
#define STRATA_COMPILER_IMPORTERS_ONNX_SYMBOLICSHAPES_H_

#include "strata/compiler/Importers/ONNX/NodeContext.h"

namespace strata::onnx_importer {

// Folds the node when it computes a shape from dynamic dims (Shape or Size
// of a dynamically shaped value; Gather, Slice, Concat, Unsqueeze, Squeeze,
// Reshape, Cast, Identity, Add, Sub, Mul, Div, Where of symbolic shapes and
// constants; an Equal whose answer does not depend on the sizes).
// Returns false when it does not apply.
bool tryFoldSymbolicShape(NodeContext &ctx, mlir::LogicalResult &result);

// Input `index` as elements: a symbolic shape, or a small integer constant
// of rank 0 or 1.
std::optional<SymbolicShape> getSymbolicInput(NodeContext &ctx, unsigned index);

// Input `index` as getSymbolicInput gives it, or else, when it is a small
// integer tensor computed at run time (pads or slice bounds taken from a
// data input), its elements read back by the host program: the host waits
// for the dispatches that compute them, so use it only where the values
// size a result.
std::optional<SymbolicShape> getSymbolicOrReadBackInput(NodeContext &ctx,
                                                        unsigned index);

// Reshape, Flatten, Squeeze and Unsqueeze of a dynamically shaped value, or
// a Reshape to a symbolic shape.
mlir::LogicalResult lowerDynamicReshapeLike(NodeContext &ctx);

// ConstantOfShape of a symbolic shape: `value` everywhere.
mlir::LogicalResult lowerSymbolicConstantOfShape(NodeContext &ctx,
                                                 const SymbolicShape &shape,
                                                 mlir::TypedAttr value);

// Range whose limit (or start) is computed from dynamic dims (torch's
// `arange(x.size(1))`): integer operands, a constant delta.
mlir::LogicalResult lowerSymbolicRange(NodeContext &ctx);

// Expand of a dynamically shaped value, or to a symbolic shape.
mlir::LogicalResult lowerDynamicExpand(NodeContext &ctx);

} // namespace strata::onnx_importer

#endif // STRATA_COMPILER_IMPORTERS_ONNX_SYMBOLICSHAPES_H_
