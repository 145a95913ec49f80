//===- PlainSubViews.cpp - views of a buffer by rank-keeping subviews -----===//

#include "strata/compiler/Codegen/PlainSubViews.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

using namespace mlir;

namespace strata {

bool isPlainSubView(memref::SubViewOp subview) {
  return subview.getSourceType().getRank() == subview.getType().getRank() &&
         llvm::all_of(subview.getMixedStrides(), [](OpFoldResult stride) {
           return isConstantIntValue(stride, 1);
         });
}

Value getViewRoot(Value view) {
  while (auto subview = view.getDefiningOp<memref::SubViewOp>()) {
    if (!isPlainSubView(subview))
      return nullptr;
    view = subview.getSource();
  }
  return view;
}

SmallVector<OpFoldResult> getOffsetsInRoot(OpBuilder &builder, Location loc,
                                           Value view) {
  auto rank = cast<MemRefType>(view.getType()).getRank();
  SmallVector<OpFoldResult> offsets(rank, builder.getIndexAttr(0));
  AffineExpr d0, d1;
  bindDims(builder.getContext(), d0, d1);
  for (auto subview = view.getDefiningOp<memref::SubViewOp>(); subview;
       subview = subview.getSource().getDefiningOp<memref::SubViewOp>())
    for (auto [offset, step] : llvm::zip(offsets, subview.getMixedOffsets()))
      offset = affine::makeComposedFoldedAffineApply(builder, loc, d0 + d1,
                                                     {offset, step});
  return offsets;
}

} // namespace strata
