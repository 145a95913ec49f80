//===- ConvUtils.h - windows, matmul and conv builders ----------*- C++ -*-===//
#ifndef STRATA_COMPILER_IMPORTERS_ONNX_CONVUTILS_H_
#define STRATA_COMPILER_IMPORTERS_ONNX_CONVUTILS_H_

#include "strata/compiler/Importers/ONNX/NodeContext.h"

namespace strata::onnx_importer {

// The spatial window parameters of a Conv or pooling node, with auto_pad
// resolved into explicit pads.
struct WindowParams {
  llvm::SmallVector<int64_t> kernel, strides, dilations, padsBegin, padsEnd;
};

// Reads kernel_shape (or `kernel` when given), strides, dilations, pads and
// auto_pad for `spatialShape`.
mlir::FailureOr<WindowParams>
getWindowParams(NodeContext &ctx, llvm::ArrayRef<int64_t> spatialShape,
                llvm::ArrayRef<int64_t> kernel);

// Pads the spatial dims (from dim 2) of an NC... tensor with `value`.
mlir::Value padSpatial(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value input, llvm::ArrayRef<int64_t> low,
                       llvm::ArrayRef<int64_t> high, mlir::Value value);

// Windows are planned at compile time: of an [N, C, spatial...] input only
// the batch N may be dynamic. Fails naming the first other dynamic dim.
mlir::LogicalResult checkOnlyBatchDynamic(NodeContext &ctx,
                                          mlir::RankedTensorType input);

// Windows over 1-D and 2-D spatial dims may have dynamic sizes (and any
// rank a dynamic batch); the channels, which the weights fix, may not.
// Fails naming the dim.
mlir::LogicalResult checkWindowedDynamic(NodeContext &ctx,
                                         mlir::RankedTensorType input);

// How many windows reaching `reach` elements, `stride` apart, fit in a
// (padded) spatial dim of `size`: static when the size is.
mlir::OpFoldResult createWindowCount(mlir::OpBuilder &b, mlir::Location loc,
                                     mlir::OpFoldResult size, int64_t reach,
                                     int64_t stride);

mlir::DenseIntElementsAttr getI64VectorAttr(mlir::OpBuilder &b,
                                            llvm::ArrayRef<int64_t> values);

// Fails unless `lhs` and `rhs` (numpy matmul operands) multiply into
// `type`: ranks of at least 1, inner dims equal, batch dims broadcastable,
// the result's shape theirs. Subgraph types come from non-strict
// inference, so createMatMul's operands are checked here first.
mlir::LogicalResult checkMatMulOperands(NodeContext &ctx,
                                        mlir::RankedTensorType lhs,
                                        mlir::RankedTensorType rhs,
                                        mlir::RankedTensorType type);

// MatMul with numpy batch broadcasting (1-D operands promoted) into
// `type` (MatMulConvOps.cpp; any element type).
mlir::Value createMatMul(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value lhs, mlir::Value rhs,
                         mlir::RankedTensorType type);

// A grouped convolution over an already padded [N, C, spatial...] input
// with an [M, C/group, K...] weight into `resultType`, as one generic (any
// number of spatial dims, float or integer).
mlir::Value createConvGeneric(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value x, mlir::Value w,
                              mlir::RankedTensorType resultType,
                              const WindowParams &p, int64_t group);

} // namespace strata::onnx_importer

#endif // STRATA_COMPILER_IMPORTERS_ONNX_CONVUTILS_H_
