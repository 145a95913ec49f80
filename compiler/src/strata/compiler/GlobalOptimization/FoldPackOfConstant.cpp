//===- FoldPackOfConstant.cpp ---------------------------------------------===//
#include "strata/compiler/GlobalOptimization/FoldPackOfConstant.h"

#include <cstring>
#include <vector>

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace strata {
namespace {

// The packed layout of a constant, computed at compile time.
struct FoldPackOfConstant : OpRewritePattern<linalg::PackOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::PackOp pack,
                                PatternRewriter &rewriter) const override {
    DenseElementsAttr source;
    if (!matchPattern(pack.getSource(), m_Constant(&source)))
      return failure();
    RankedTensorType resultType = pack.getDestType();
    if (!resultType.hasStaticShape())
      return failure();
    // The padding (past the source's end in a last, partial tile) as the
    // bytes of one element.
    ArrayRef<char> padding;
    DenseElementsAttr paddingElement;
    if (Value paddingValue = pack.getPaddingValue()) {
      TypedAttr scalar;
      if (!matchPattern(paddingValue, m_Constant(&scalar)) || source.isSplat())
        return failure();
      paddingElement = DenseElementsAttr::get(
          RankedTensorType::get({}, scalar.getType()), scalar);
      padding = paddingElement.getRawData();
    }
    if (source.isSplat()) {
      rewriter.replaceOpWithNewOp<arith::ConstantOp>(
          pack, resultType, source.resizeSplat(resultType));
      return success();
    }
    ArrayRef<int64_t> sourceShape = pack.getSourceType().getShape();
    ArrayRef<int64_t> tiles = pack.getStaticInnerTiles();
    ArrayRef<int64_t> innerPos = pack.getInnerDimsPos();
    SmallVector<int64_t> outerPerm(pack.getOuterDimsPerm());
    unsigned rank = sourceShape.size();
    if (outerPerm.empty())
      outerPerm = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    for (auto [pos, tile] : llvm::zip(innerPos, tiles))
      if (ShapedType::isDynamic(tile) ||
          (sourceShape[pos] % tile != 0 && padding.empty()))
        return failure();
    unsigned elementBytes = source.getElementType().getIntOrFloatBitWidth() / 8;
    if (elementBytes == 0)
      return failure();
    ArrayRef<char> raw = source.getRawData();
    SmallVector<int64_t> sourceStrides(rank, 1);
    for (int i = int(rank) - 2; i >= 0; --i)
      sourceStrides[i] = sourceStrides[i + 1] * sourceShape[i + 1];
    ArrayRef<int64_t> resultShape = resultType.getShape();
    int64_t count = resultType.getNumElements();
    std::vector<char> data(count * elementBytes);
    SmallVector<int64_t> index(resultShape.size(), 0);
    for (int64_t linear = 0; linear < count; ++linear) {
      // The source element of result element `index`: outer dimension d
      // is source dimension outerPerm[d], scaled by its tile if packed.
      SmallVector<int64_t> sourceIndex(rank, 0);
      for (unsigned d = 0; d < rank; ++d)
        sourceIndex[outerPerm[d]] = index[d];
      for (auto [t, pos] : llvm::enumerate(innerPos))
        sourceIndex[pos] = sourceIndex[pos] * tiles[t] + index[rank + t];
      int64_t offset = 0;
      bool inside = true;
      for (unsigned d = 0; d < rank; ++d) {
        inside &= sourceIndex[d] < sourceShape[d];
        offset += sourceIndex[d] * sourceStrides[d];
      }
      std::memcpy(&data[linear * elementBytes],
                  inside ? &raw[offset * elementBytes] : padding.data(),
                  elementBytes);
      for (int d = int(index.size()) - 1; d >= 0; --d) {
        if (++index[d] < resultShape[d])
          break;
        index[d] = 0;
      }
    }
    rewriter.replaceOpWithNewOp<arith::ConstantOp>(
        pack, resultType,
        DenseElementsAttr::getFromRawBuffer(resultType, data));
    return success();
  }
};

} // namespace

void populateFoldPackOfConstantPatterns(RewritePatternSet &patterns) {
  patterns.add<FoldPackOfConstant>(patterns.getContext());
}

} // namespace strata
