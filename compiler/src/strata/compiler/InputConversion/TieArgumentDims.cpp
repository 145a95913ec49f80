//===- TieArgumentDims.cpp - what the program implies about input dims ----===//
//
// A program over dynamically shaped arguments assumes relations between
// their dims: `linalg.add` of two `tensor<?x4xf32>` needs equal rows, a
// matmul with a 4x8 weight needs inputs of 4 columns. Left unchecked, a
// caller's mismatched tensors would make a kernel read past a buffer. This
// pass finds the dims every linalg op (and shape-preserving tensor op)
// equates, and records on each argument, per dynamic dim, what it must be
// (kArgumentDimTiesAttr): a static size, or the dim of an earlier argument
// (or an earlier dim of the same one: a square [n, n] input).
// The host program then checks the caller's tensors at the call.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"
#include "strata/compiler/Utils/ElementTypes.h"
#include "strata/compiler/Utils/IndexingMaps.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace strata {
#define GEN_PASS_DEF_TIEARGUMENTDIMSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

using TensorDim = std::pair<Value, int64_t>;

// Union-find over the dims of the function's tensors.
class DimClasses {
public:
  void unite(TensorDim a, TensorDim b) {
    unsigned rootA = find(getId(a)), rootB = find(getId(b));
    if (rootA != rootB)
      parents[rootB] = rootA;
  }
  // The representative of a dim's class (the dim itself when alone).
  unsigned classOf(TensorDim dim) { return find(getId(dim)); }
  ArrayRef<TensorDim> getDims() { return dims; }

private:
  unsigned getId(TensorDim dim) {
    auto [it, inserted] = ids.try_emplace(dim, dims.size());
    if (inserted) {
      dims.push_back(dim);
      parents.push_back(it->second);
    }
    return it->second;
  }
  unsigned find(unsigned id) {
    while (parents[id] != id)
      id = parents[id] = parents[parents[id]];
    return id;
  }
  DenseMap<TensorDim, unsigned> ids;
  SmallVector<TensorDim> dims;
  SmallVector<unsigned> parents;
};

void addLinalgRelations(linalg::LinalgOp op, DimClasses &classes) {
  // The dims of operands each loop runs over.
  DenseMap<unsigned, TensorDim> loopDims;
  forEachLoopIndexedDim(
      op, [&](OpOperand &operand, int64_t dim, unsigned loop) {
        TensorDim here{operand.get(), dim};
        auto [it, inserted] = loopDims.try_emplace(loop, here);
        if (!inserted)
          classes.unite(it->second, here);
      });
  for (OpResult result : op->getResults()) {
    Value init = op.getDpsInitOperand(result.getResultNumber())->get();
    auto type = cast<RankedTensorType>(result.getType());
    for (int64_t dim = 0; dim < type.getRank(); ++dim)
      classes.unite({init, dim}, {result, dim});
  }
}

void addReshapeRelations(Value source, Value result,
                         ArrayRef<ReassociationIndices> groups,
                         bool sourceIsCollapsed, DimClasses &classes) {
  for (auto [index, group] : llvm::enumerate(groups)) {
    if (group.size() != 1)
      continue;
    TensorDim collapsed{sourceIsCollapsed ? source : result,
                        static_cast<int64_t>(index)};
    TensorDim expanded{sourceIsCollapsed ? result : source, group.front()};
    classes.unite(collapsed, expanded);
  }
}

struct TieArgumentDimsPass
    : public impl::TieArgumentDimsPassBase<TieArgumentDimsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal())
      return;
    auto isDynamic = [](Type type) {
      auto tensor = dyn_cast<RankedTensorType>(type);
      return tensor && !tensor.hasStaticShape();
    };
    if (llvm::none_of(func.getArgumentTypes(), isDynamic))
      return;

    DimClasses classes;
    func.walk([&](Operation *op) {
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
        if (linalgOp.hasPureTensorSemantics())
          addLinalgRelations(linalgOp, classes);
      } else if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
        addReshapeRelations(collapse.getSrc(), collapse.getResult(),
                            collapse.getReassociationIndices(),
                            /*sourceIsCollapsed=*/false, classes);
      } else if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
        addReshapeRelations(expand.getSrc(), expand.getResult(),
                            expand.getReassociationIndices(),
                            /*sourceIsCollapsed=*/true, classes);
      } else if (auto cast = dyn_cast<tensor::CastOp>(op)) {
        auto type = dyn_cast<RankedTensorType>(cast.getType());
        if (type && isa<RankedTensorType>(cast.getSource().getType()))
          for (int64_t dim = 0; dim < type.getRank(); ++dim)
            classes.unite({cast.getSource(), dim}, {cast.getResult(), dim});
      }
    });

    // What each class is known to be: a static size somewhere in it, or
    // the first argument dim in it.
    DenseMap<unsigned, int64_t> staticSizes;
    for (TensorDim dim : classes.getDims()) {
      auto type = cast<RankedTensorType>(dim.first.getType());
      if (!type.isDynamicDim(dim.second))
        staticSizes.try_emplace(classes.classOf(dim),
                                type.getDimSize(dim.second));
    }
    DenseMap<unsigned, std::pair<int64_t, int64_t>> firstArgumentDim;
    Builder builder(func.getContext());
    for (BlockArgument arg : func.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(arg.getType());
      if (!type || type.hasStaticShape())
        continue;
      SmallVector<Attribute> ties;
      bool tied = false;
      for (int64_t dim = 0; dim < type.getRank(); ++dim) {
        Attribute tie = builder.getUnitAttr();
        if (type.isDynamicDim(dim)) {
          unsigned id = classes.classOf({arg, dim});
          auto size = staticSizes.find(id);
          auto [first, isFirst] =
              firstArgumentDim.try_emplace(id, arg.getArgNumber(), dim);
          if (size != staticSizes.end()) {
            tie = builder.getI64IntegerAttr(size->second);
            tied = true;
          } else if (!isFirst) {
            tie = builder.getDenseI64ArrayAttr(
                {first->second.first, first->second.second});
            tied = true;
          }
        }
        ties.push_back(tie);
      }
      if (tied)
        func.setArgAttr(arg.getArgNumber(), kArgumentDimTiesAttr,
                        builder.getArrayAttr(ties));
    }
  }
};

} // namespace
} // namespace strata
