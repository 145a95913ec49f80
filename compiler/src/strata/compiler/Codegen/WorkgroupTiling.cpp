//===- WorkgroupTiling.cpp ------------------------------------------------===//
#include "strata/compiler/Codegen/WorkgroupTiling.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace strata {

// Below this many loop iterations per workgroup, spreading costs more than
// it gains; above 64 workgroups the grid only adds scheduling overhead for
// the core counts we target.
static constexpr int64_t kMinIterationsPerWorkgroup = 1 << 14;
static constexpr int64_t kMaxWorkgroups = 64;

linalg::LinalgOp findDispatchRoot(Operation *terminator) {
  if (!terminator || terminator->getNumOperands() != 1)
    return nullptr;
  auto root = terminator->getOperand(0).getDefiningOp<linalg::LinalgOp>();
  if (!root || root->getNumResults() != 1)
    return nullptr;
  return root;
}

std::optional<WorkgroupTiling> chooseWorkgroupTiling(linalg::LinalgOp root) {
  SmallVector<int64_t> ranges = root.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  int64_t iterations = 0;
  for (Operation &op : *root->getBlock()) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
    if (!linalgOp)
      continue;
    int64_t opIterations = 1;
    for (int64_t range : linalgOp.getStaticLoopRanges())
      opIterations *=
          ShapedType::isDynamic(range) ? 1 : std::max<int64_t>(range, 1);
    iterations += opIterations;
  }
  int64_t wanted =
      std::min(kMaxWorkgroups, iterations / kMinIterationsPerWorkgroup);
  if (wanted < 2)
    return std::nullopt;

  SmallVector<utils::IteratorType> iterators = root.getIteratorTypesArray();
  for (auto [loop, range] : llvm::enumerate(ranges)) {
    if (iterators[loop] != utils::IteratorType::parallel || range < 2)
      continue;
    int64_t count = std::min(range, wanted);
    // Prefer a count that divides the loop evenly: every tile then has a
    // static shape (better code, no dynamically sized temporaries).
    for (int64_t candidate = count;
         candidate >= std::max<int64_t>(2, count / 2); --candidate)
      if (range % candidate == 0) {
        count = candidate;
        break;
      }
    WorkgroupTiling tiling;
    tiling.loop = loop;
    tiling.tileSize = llvm::divideCeil(range, count);
    tiling.count = llvm::divideCeil(range, tiling.tileSize);
    if (tiling.count < 2)
      return std::nullopt;
    return tiling;
  }
  return std::nullopt;
}

} // namespace strata
