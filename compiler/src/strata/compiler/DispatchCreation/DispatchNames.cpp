//===- DispatchNames.cpp - what a dispatch computes, in a user's words ----===//
#include "strata/compiler/DispatchCreation/DispatchNames.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace strata {
namespace {

// Names stay readable in a table row: past this many kinds the rest of a
// long fused chain is left out.
constexpr size_t kMaxKinds = 5;

// The name of the first NameLoc in `loc`, searching fused, call-site and
// other wrapping locations in order; empty when there is none.
std::string getNodeName(Location loc) {
  std::string name;
  loc->walk([&](Location nested) {
    if (auto named = dyn_cast<NameLoc>(nested)) {
      name = named.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

bool isElementwise(linalg::LinalgOp op) {
  return op.getNumLoops() == op.getNumParallelLoops() &&
         llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
           return map.isProjectedPermutation();
         });
}

// Ops that move or convert a value without computing anything a user
// would call an op.
bool isBookkeeping(Operation *op) {
  return isa<arith::ConstantOp, arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp,
             arith::UIToFPOp, arith::FPToSIOp, arith::FPToUIOp, arith::ExtSIOp,
             arith::ExtUIOp, arith::TruncIOp, arith::IndexCastOp,
             arith::IndexCastUIOp, arith::BitcastOp, linalg::YieldOp,
             linalg::IndexOp>(op);
}

// `value` with conversions (extf, sitofp, ...) looked through.
Value skipConversions(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    if (!isa<arith::ExtFOp, arith::TruncFOp, arith::SIToFPOp, arith::UIToFPOp,
             arith::ExtSIOp, arith::ExtUIOp, arith::TruncIOp>(def))
      break;
    value = def->getOperand(0);
  }
  return value;
}

bool isConstant(Value value) { return matchPattern(value, m_Constant()); }

bool isZero(Value value) {
  return matchPattern(value, m_AnyZeroFloat()) || matchPattern(value, m_Zero());
}

bool isOne(Value value) {
  return matchPattern(value, m_OneFloat()) || matchPattern(value, m_One());
}

bool isMax(Operation *op) {
  return isa<arith::MaximumFOp, arith::MaxNumFOp, arith::MaxSIOp,
             arith::MaxUIOp>(op);
}

bool isMin(Operation *op) {
  return isa<arith::MinimumFOp, arith::MinNumFOp, arith::MinSIOp,
             arith::MinUIOp>(op);
}

// The operand of a binary `op` that is not a constant, when the other is.
Value getNonConstantOperand(Operation *op) {
  if (op->getNumOperands() != 2)
    return {};
  if (isConstant(op->getOperand(1)))
    return op->getOperand(0);
  if (isConstant(op->getOperand(0)))
    return op->getOperand(1);
  return {};
}

// The kind of one scalar op of an elementwise body, when no pattern of
// several ops (relu, clip, sigmoid) claimed it.
std::string getScalarKind(Operation *op) {
  if (isa<arith::AddFOp, arith::AddIOp>(op))
    return "add";
  if (isa<arith::SubFOp, arith::SubIOp>(op))
    return "sub";
  if (isa<arith::MulFOp, arith::MulIOp>(op))
    return "mul";
  if (isa<arith::DivFOp, arith::DivSIOp, arith::DivUIOp, arith::CeilDivSIOp,
          arith::FloorDivSIOp>(op))
    return "div";
  if (isa<arith::RemFOp, arith::RemSIOp, arith::RemUIOp>(op))
    return "rem";
  if (isa<arith::NegFOp>(op))
    return "neg";
  if (isMax(op))
    return isZero(op->getOperand(0)) || isZero(op->getOperand(1)) ? "relu"
                                                                  : "max";
  if (isMin(op))
    return "min";
  if (isa<arith::CmpFOp, arith::CmpIOp>(op))
    return "cmp";
  if (isa<math::PowFOp, math::FPowIOp, math::IPowIOp>(op))
    return "pow";
  if (isa<math::AbsFOp, math::AbsIOp>(op))
    return "abs";
  // exp, tanh, log, sqrt, rsqrt, erf, select, ...: the op's own name.
  return op->getName().stripDialect().str();
}

// Patterns of several scalar ops that a model spells as one op. Fills
// `kinds` with the kind of each pattern's last op and `claimed` with its
// other ops.
void matchScalarPatterns(Block &body, DenseMap<Operation *, StringRef> &kinds,
                         DenseSet<Operation *> &claimed) {
  for (Operation &op : body) {
    // clip: min(max(x, lo), hi) or max(min(x, hi), lo).
    if (isMax(&op) || isMin(&op)) {
      Value inner = getNonConstantOperand(&op);
      Operation *def = inner ? inner.getDefiningOp() : nullptr;
      if (def && def->getBlock() == &body && def->hasOneUse() &&
          (isMax(&op) ? isMin(def) : isMax(def)) &&
          getNonConstantOperand(def)) {
        kinds[&op] = "clip";
        claimed.insert(def);
      }
    }
    // sigmoid: 1 / (1 + exp(-x)).
    if (auto div = dyn_cast<arith::DivFOp>(op)) {
      auto add = div.getRhs().getDefiningOp<arith::AddFOp>();
      if (!isOne(div.getLhs()) || !add)
        continue;
      Value other;
      if (isOne(add.getLhs()))
        other = add.getRhs();
      else if (isOne(add.getRhs()))
        other = add.getLhs();
      auto exp = other ? other.getDefiningOp<math::ExpOp>() : math::ExpOp();
      auto neg = exp ? exp.getOperand().getDefiningOp<arith::NegFOp>()
                     : arith::NegFOp();
      if (!neg)
        continue;
      kinds[&op] = "sigmoid";
      claimed.insert(add);
      claimed.insert(exp);
      claimed.insert(neg);
    }
  }
}

// The kinds of an elementwise op's body, in order, leaving out ops from the
// model node `skipNode` (the root's own bias add, say).
void appendElementwiseKinds(linalg::LinalgOp op, StringRef skipNode,
                            SmallVectorImpl<std::string> &out) {
  Block *body = op.getBlock();
  DenseMap<Operation *, StringRef> patternKinds;
  DenseSet<Operation *> claimed;
  matchScalarPatterns(*body, patternKinds, claimed);
  for (Operation &scalar : *body) {
    if (isBookkeeping(&scalar) || claimed.contains(&scalar))
      continue;
    if (!skipNode.empty() && getNodeName(scalar.getLoc()) == skipNode)
      continue;
    auto pattern = patternKinds.find(&scalar);
    out.push_back(pattern != patternKinds.end() ? pattern->second.str()
                                                : getScalarKind(&scalar));
  }
}

// A body computing out + a * b (through conversions): one multiply-add per
// iteration.
bool isMultiplyAccumulate(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (op.getNumDpsInits() != 1 || op.getNumDpsInputs() != 2)
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  Operation *add = skipConversions(yield.getOperand(0)).getDefiningOp();
  if (!add || !isa<arith::AddFOp, arith::AddIOp>(add))
    return false;
  Value accumulator = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  Value lhs = skipConversions(add->getOperand(0));
  Value rhs = skipConversions(add->getOperand(1));
  Value product = lhs == accumulator ? rhs : lhs;
  if ((lhs == accumulator) == (rhs == accumulator))
    return false;
  Operation *mul = product.getDefiningOp();
  if (!mul || !isa<arith::MulFOp, arith::MulIOp>(mul))
    return false;
  return llvm::all_of(mul->getOperands(), [&](Value factor) {
    auto arg = dyn_cast<BlockArgument>(skipConversions(factor));
    return arg && arg.getOwner() == body &&
           arg.getArgNumber() < op.getNumDpsInputs();
  });
}

// 2 per multiply-add over static loop bounds.
std::optional<int64_t> getMultiplyAccumulateFlops(linalg::LinalgOp op) {
  if (!isMultiplyAccumulate(op))
    return std::nullopt;
  int64_t flops = 2;
  for (int64_t range : op.getStaticLoopRanges())
    if (ShapedType::isDynamic(range) || llvm::MulOverflow(flops, range, flops))
      return std::nullopt;
  return flops;
}

// The combining op of a reduction's body: the one that reads the
// accumulator.
std::string getReductionKind(linalg::LinalgOp op) {
  Value accumulator = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  for (Operation *user : accumulator.getUsers()) {
    if (isa<arith::AddFOp, arith::AddIOp>(user))
      return "reduce_sum";
    if (isMax(user))
      return "reduce_max";
    if (isMin(user))
      return "reduce_min";
    if (isa<arith::MulFOp, arith::MulIOp>(user))
      return "reduce_prod";
  }
  return "reduce";
}

// A body that only yields an input: which copy its indexing maps make.
std::string getCopyKind(linalg::LinalgOp op) {
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (!llvm::all_of(maps,
                    [](AffineMap map) { return map.isProjectedPermutation(); }))
    return "gather";
  if (llvm::all_of(maps, [](AffineMap map) { return map.isIdentity(); }))
    return "copy";
  if (llvm::all_of(maps, [](AffineMap map) { return map.isPermutation(); }))
    return "transpose";
  return "broadcast";
}

// The kind of the op a dispatch is built around.
std::string getRootKind(Operation *op) {
  if (auto kind = op->getAttrOfType<StringAttr>(kOpKindAttr))
    return kind.str();
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp) {
    if (isa<scf::ExecuteRegionOp>(op))
      return "loops";
    if (isa<tensor::ExtractSliceOp>(op))
      return "slice";
    return op->getName().stripDialect().str(); // pad, concat, gather, ...
  }
  StringRef name = op->getName().stripDialect();
  if (name.contains("pooling"))
    return name.contains("max")   ? "maxpool"
           : name.contains("min") ? "minpool"
                                  : "sumpool";
  for (StringRef prefix : {"conv_", "depthwise_conv_"})
    for (StringRef rank : {"1d", "2d", "3d"})
      if (name.starts_with((prefix + rank).str()))
        return (prefix.drop_back() + rank).str();
  if (!isa<linalg::GenericOp>(op))
    return name.str(); // matmul, batch_matmul, transpose, reduce, ...
  if (linalgOp.getNumReductionLoops() > 0)
    return isMultiplyAccumulate(linalgOp) ? "matmul"
                                          : getReductionKind(linalgOp);
  if (llvm::all_of(linalgOp.getBlock()->getOperations(),
                   [](Operation &scalar) { return isBookkeeping(&scalar); }))
    return getCopyKind(linalgOp); // a gather: im2col patches, a slice
  return "generic";
}

// The op a region is built around: its one non-elementwise compute op,
// else its first data movement (a pad, a concat), else the op producing
// its first result. (A pad that joined the convolution reading it comes
// first in the region, but the dispatch is the convolution's.)
Operation *findRoot(Block &body) {
  Operation *movement = nullptr;
  for (Operation &op : body) {
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(&op)) {
      if (!isa<linalg::FillOp>(op) && !isElementwise(linalgOp))
        return &op;
      continue;
    }
    if (!movement &&
        isa<scf::ExecuteRegionOp, tensor::ExtractSliceOp, tensor::InsertSliceOp,
            tensor::ConcatOp, tensor::PadOp, tensor::FromElementsOp,
            tensor::SplatOp, tensor::GenerateOp, tensor::GatherOp,
            tensor::ScatterOp>(op))
      movement = &op;
  }
  if (movement)
    return movement;
  Operation *terminator = body.getTerminator();
  if (terminator && terminator->getNumOperands() > 0)
    return terminator->getOperand(0).getDefiningOp();
  return nullptr;
}

} // namespace

DispatchDescription describeDispatch(Block &body) {
  DispatchDescription description;
  Operation *root = findRoot(body);
  if (!root)
    return description;
  std::string node = getNodeName(root->getLoc());
  auto rootLinalg = dyn_cast<linalg::LinalgOp>(root);
  bool rootIsElementwise = rootLinalg && !root->hasAttr(kOpKindAttr) &&
                           isElementwise(rootLinalg) &&
                           !isa<linalg::FillOp>(root);
  SmallVector<std::string> kinds;
  if (!rootIsElementwise) {
    kinds.push_back(getRootKind(root));
    if (rootLinalg)
      description.flops = getMultiplyAccumulateFlops(rootLinalg);
  }
  // Elementwise ops fused before or after a root, in program order; the
  // root's own node (a convolution's bias) is part of the root.
  StringRef skipNode = rootIsElementwise ? StringRef() : StringRef(node);
  for (Operation &op : body) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
    if (!linalgOp || isa<linalg::FillOp>(op) || op.hasAttr(kOpKindAttr) ||
        (&op == root && !rootIsElementwise) || !isElementwise(linalgOp))
      continue;
    appendElementwiseKinds(linalgOp, skipNode, kinds);
  }
  if (kinds.empty())
    kinds.push_back(getCopyKind(rootLinalg));
  if (node.empty())
    for (Operation &op : body)
      if (!(node = getNodeName(op.getLoc())).empty())
        break;

  SmallVector<std::string> unique;
  for (std::string &kind : kinds)
    if (!llvm::is_contained(unique, kind) && unique.size() < kMaxKinds)
      unique.push_back(std::move(kind));
  description.name = llvm::join(unique, "_");
  if (!node.empty())
    description.name += ":" + node;
  return description;
}

void setDispatchDescription(Operation *op,
                            const DispatchDescription &description) {
  Builder builder(op->getContext());
  op->setAttr(kDispatchNameAttr, builder.getStringAttr(description.name));
  if (description.flops)
    op->setAttr(kDispatchFlopsAttr,
                builder.getI64IntegerAttr(*description.flops));
}

} // namespace strata
