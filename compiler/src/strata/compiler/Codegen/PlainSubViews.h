//===- PlainSubViews.h - views of a buffer by rank-keeping subviews -*- C++
//-*-===//
//
// Tiling a bufferized op views each operand through a chain of subviews
// of unit strides that keep its rank (a cache tile's, then a register
// tile's): an element of the view is the root buffer's element at the
// view's offsets plus its own indices.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_PLAINSUBVIEWS_H_
#define STRATA_COMPILER_CODEGEN_PLAINSUBVIEWS_H_

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace strata {

// Whether `subview` has unit strides and keeps its source's rank.
bool isPlainSubView(mlir::memref::SubViewOp subview);

// The buffer at the root of `view`'s plain subviews, or null where a
// subview on the way is not plain.
mlir::Value getViewRoot(mlir::Value view);

// The offsets of `view` (a view of plain subviews) in its root buffer,
// folded where static.
llvm::SmallVector<mlir::OpFoldResult> getOffsetsInRoot(mlir::OpBuilder &builder,
                                                       mlir::Location loc,
                                                       mlir::Value view);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_PLAINSUBVIEWS_H_
