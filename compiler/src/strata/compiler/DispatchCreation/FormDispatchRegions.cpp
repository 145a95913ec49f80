//===- FormDispatchRegions.cpp - group math into dispatch regions ---------===//
//
// Every linalg op on tensors roots a flow.dispatch.region unless a consumer's
// region already took it. Into each region we then pull:
//   - cheap producers, cloned per use: tensor.empty, scalar and splat
//     constants, linalg.fill of those; not sizes computed from tensor
//     contents, which the host reads back (`isSizeFromTensorData`);
//   - elementwise linalg producers whose every use is inside the region;
//   - one non-elementwise linalg producer (a matmul, a reduction) when all
//     its uses are inside and the region has none yet, so an op and its
//     elementwise epilogue become one dispatch.
// A `scf.execute_region` that yields tensors is a sequential computation
// (loops over scalars, e.g. greedy box suppression) and roots a dispatch of
// its own, run as one workgroup.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/WorkgroupTiling.h"
#include "strata/compiler/Passes.h"
#include "strata/compiler/Utils/ContiguousConcat.h"
#include "strata/compiler/Utils/ElementTypes.h"
#include "strata/compiler/Utils/IndexingMaps.h"
#include "strata/compiler/Utils/ScalarCost.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace strata {
#define GEN_PASS_DEF_FORMDISPATCHREGIONSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

bool hasTensorSemantics(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.hasPureTensorSemantics();
}

bool isDispatchRoot(Operation *op);

// A contiguous concatenation whose operands its producers' dispatches can
// all write in place (each produced by a dispatch or an inner such
// concatenation, used only here, at a 64-byte aligned offset): the host
// program's, with no copy. One that would copy (densenet's, whose operands
// feed several concatenations) stays a dispatch, which splits the copy
// between workers.
bool isHostConcat(Operation *op) {
  auto concat = dyn_cast<tensor::ConcatOp>(op);
  if (!concat || !isContiguousConcat(concat))
    return false;
  int64_t offset = 0;
  for (Value input : concat.getInputs()) {
    Operation *producer = input.getDefiningOp();
    if (!producer || !input.hasOneUse() ||
        !(isDispatchRoot(producer) || isHostConcat(producer)) ||
        offset % kHostConcatAlignment != 0)
      return false;
    offset += getStaticByteSize(cast<ShapedType>(input.getType()));
  }
  return true;
}

// Tensor ops that compute something (copies, gathers, padding) and so
// become dispatches. Reshapes are not here: the host program handles them
// as views of the same buffer, and concatenations of whole byte ranges
// (isHostConcat) as a buffer their producers write into.
bool isTensorComputeOp(Operation *op) {
  if (isHostConcat(op))
    return false;
  if (auto region = dyn_cast<scf::ExecuteRegionOp>(op))
    return region->getNumResults() > 0 &&
           llvm::all_of(region->getResultTypes(),
                        llvm::IsaPred<RankedTensorType>);
  return isa<tensor::ExtractSliceOp, tensor::InsertSliceOp, tensor::ConcatOp,
             tensor::PadOp, tensor::FromElementsOp, tensor::SplatOp,
             tensor::GenerateOp, tensor::GatherOp, tensor::ScatterOp>(op);
}

bool isDispatchRoot(Operation *op) {
  return hasTensorSemantics(op) || isTensorComputeOp(op);
}

// A pad by a constant of a linalg op's only result: the op's dispatch
// writes the padded tensor directly (its tiles into the interior, each
// workgroup the border next to its tile), so the padding costs no pass of
// its own over memory (the input of a padded convolution).
bool isPadOfLinalgResult(Operation *op) {
  auto pad = dyn_cast<tensor::PadOp>(op);
  if (!pad || !isStaticConstantPad(pad))
    return false;
  Operation *producer = pad.getSource().getDefiningOp();
  return producer && hasTensorSemantics(producer) &&
         producer->getNumResults() == 1 && pad.getSource().hasOneUse();
}

// A pad of a linalg result that other linalg ops read too: they read the
// padded tensor's interior instead (one slice each, a view that fuses into
// their dispatch), so that the producer's dispatch still writes the padded
// tensor directly and no dispatch of its own pads a copy (a residual
// block's output, padded for the next block's 3x3 convolution and added
// back after it: resnet18 padded 8 such values in 8 dispatches). The pad
// moves up to its producer, above the other readers.
void readInteriorOfPaddedResult(tensor::PadOp pad) {
  Value source = pad.getSource();
  Operation *producer = source.getDefiningOp();
  auto type = dyn_cast<RankedTensorType>(source.getType());
  if (!isStaticConstantPad(pad) || !producer || !hasTensorSemantics(producer) ||
      producer->getNumResults() != 1 || source.hasOneUse() || !type ||
      !type.hasStaticShape() || producer->getBlock() != pad->getBlock())
    return;
  SmallVector<OpOperand *> others;
  for (OpOperand &use : source.getUses()) {
    if (use.getOwner() == pad.getOperation())
      continue;
    if (!hasTensorSemantics(use.getOwner()) ||
        use.getOwner()->getBlock() != pad->getBlock())
      return;
    others.push_back(&use);
  }
  // The padding value must be there before the producer's result is.
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(pad.getRegion(), captured);
  for (Value value : captured) {
    Operation *def = value.getDefiningOp();
    if (def && def->getBlock() == pad->getBlock() &&
        !def->isBeforeInBlock(producer))
      return;
  }
  pad->moveAfter(producer);
  OpBuilder builder(pad->getContext());
  builder.setInsertionPointAfter(pad);
  SmallVector<OpFoldResult> offsets, sizes, strides;
  for (auto [low, size] : llvm::zip(pad.getStaticLow(), type.getShape())) {
    offsets.push_back(builder.getIndexAttr(low));
    sizes.push_back(builder.getIndexAttr(size));
    strides.push_back(builder.getIndexAttr(1));
  }
  for (OpOperand *use : others)
    use->set(tensor::ExtractSliceOp::create(
        builder, pad.getLoc(), type, pad.getResult(), offsets, sizes, strides));
}

// A pad of a value no dispatch can write padded (a function argument, a
// value with other uses) pads a copy of it instead: the copy is then the
// dispatch's root, written into the interior while each workgroup fills
// the border next to its tile (one pass over memory, split like any
// elementwise op), rather than a fill of the whole result and a copy over
// it.
void padACopy(tensor::PadOp pad) {
  auto type = cast<RankedTensorType>(pad.getSource().getType());
  if (!type.hasStaticShape())
    return;
  OpBuilder builder(pad);
  Location loc = pad.getLoc();
  Value empty = tensor::EmptyOp::create(builder, loc, type.getShape(),
                                        type.getElementType());
  SmallVector<AffineMap> maps(2,
                              builder.getMultiDimIdentityMap(type.getRank()));
  SmallVector<utils::IteratorType> iterators(type.getRank(),
                                             utils::IteratorType::parallel);
  auto copy = linalg::GenericOp::create(
      builder, loc, TypeRange{type}, ValueRange{pad.getSource()},
      ValueRange{empty}, maps, iterators,
      [](OpBuilder &nested, Location nestedLoc, ValueRange args) {
        linalg::YieldOp::create(nested, nestedLoc, args[0]);
      });
  pad.getSourceMutable().set(copy.getResult(0));
}

bool isElementwise(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.getNumLoops() == linalgOp.getNumParallelLoops() &&
         llvm::all_of(linalgOp.getIndexingMapsArray(), [](AffineMap map) {
           return map.isProjectedPermutation();
         });
}

// Ops worth recomputing in every region that uses them instead of passing
// their result in as a binding: empty tensors, splats, and side-effect free
// scalar computations (index math, tensor.extract of one element).
bool isCheapToClone(Operation *op) {
  if (isa<tensor::EmptyOp>(op))
    return true;
  // A dim stays on the host: the region captures the index, not the tensor.
  if (isa<tensor::DimOp>(op))
    return false;
  if (op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
      llvm::none_of(op->getResultTypes(), llvm::IsaPred<ShapedType>) &&
      op->getNumResults() > 0)
    return true;
  if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
    if (!isa<ShapedType>(constant.getType()))
      return true;
    auto elements = dyn_cast<DenseElementsAttr>(constant.getValue());
    return elements && elements.isSplat();
  }
  // A reshaped empty tensor is still just an empty tensor.
  if (isa<tensor::ExpandShapeOp, tensor::CollapseShapeOp>(op)) {
    Operation *source = op->getOperand(0).getDefiningOp();
    return source && isCheapToClone(source);
  }
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return llvm::all_of(fill->getOperands(), [](Value operand) {
      Operation *def = operand.getDefiningOp();
      return def && isCheapToClone(def);
    });
  return false;
}

// Whether `value` is a dynamic size of a tensor `user` makes: of a
// tensor.empty, or of a tensor.extract_slice (a slice whose bounds are
// read at run time).
bool isResultSize(Value value, Operation *user) {
  if (isa<tensor::EmptyOp>(user))
    return true;
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(user))
    return llvm::is_contained(slice.getSizes(), value);
  return false;
}

// Whether a size (an index value that shapes a tensor.empty or a slice) is
// computed from the contents of a tensor: a tensor.extract up its chain of
// scalar ops (a Range's length from run-time operands). It stays on the
// host, which reads the element back, and reaches the regions it shapes
// as a push constant: computed inside a region, the host could not size
// the region's results before running it.
bool isSizeFromTensorData(Value value) {
  if (!value.getType().isIndex() ||
      llvm::none_of(value.getUsers(),
                    [&](Operation *user) { return isResultSize(value, user); }))
    return false;
  SmallVector<Value> worklist = {value};
  DenseSet<Value> visited;
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val().getDefiningOp();
    if (!op || op->getNumRegions() != 0)
      continue;
    if (isa<tensor::ExtractOp>(op))
      return true;
    for (Value operand : op->getOperands())
      if (!isa<ShapedType>(operand.getType()) && visited.insert(operand).second)
        worklist.push_back(operand);
  }
  return false;
}

bool allUsesInside(Operation *op, flow::DispatchRegionOp region) {
  return llvm::all_of(op->getUsers(), [&](Operation *user) {
    return region->isProperAncestor(user);
  });
}

flow::DispatchRegionOp wrapInRegion(Operation *root) {
  OpBuilder builder(root);
  auto region = flow::DispatchRegionOp::create(builder, root->getLoc(),
                                               root->getResultTypes());
  Block *body = new Block();
  region.getBody().push_back(body);
  root->moveBefore(body, body->end());
  for (auto [oldResult, newResult] :
       llvm::zip(root->getResults(), region.getResults()))
    oldResult.replaceUsesWithIf(newResult, [&](OpOperand &use) {
      return !region->isProperAncestor(use.getOwner());
    });
  builder.setInsertionPointToEnd(body);
  flow::ReturnOp::create(builder, root->getLoc(), root->getResults());
  return region;
}

// Whether `producer` may move into a region rooted at a linalg op. Linalg
// producers fuse into the root's workgroup tiles; of the tensor ops only
// extract_slice does (it is a view): padding, concatenation and the like
// would need whole-tensor temporaries inside the executable, so they stay
// dispatches of their own and pass their result through memory.
bool isFusableProducer(Operation *producer) {
  return hasTensorSemantics(producer) || isa<tensor::ExtractSliceOp>(producer);
}

// Whether a contraction or reduction in `region` reads a result of
// `producer` across one of its parallel loops: an elementwise producer that
// computes something would then run once per multiply-add (or need a whole
// temporary inside the executable). It stays out of the region, and
// becomes the epilogue of its own producer's dispatch instead.
bool isReadAcrossLoopByReduction(Operation *producer,
                                 flow::DispatchRegionOp region) {
  auto linalgProducer = dyn_cast<linalg::LinalgOp>(producer);
  if (!linalgProducer)
    return false;
  // A plain copy is cheap to redo per tile; a transpose (a layout change,
  // such as weights packed at run time) is not: each tile would gather its
  // operand element by element.
  bool transposes =
      llvm::any_of(linalgProducer.getIndexingMapsArray(), [](AffineMap map) {
        return map.isPermutation() && !map.isIdentity();
      });
  if (linalgProducer.getBlock()->getOperations().size() <= 1 && !transposes)
    return false;
  for (OpOperand &use : producer->getUses()) {
    auto consumer = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (consumer && region->isProperAncestor(consumer) &&
        consumer.getNumReductionLoops() > 0 && isReadAcrossAParallelLoop(&use))
      return true;
  }
  return false;
}

// Whether an op in `region` reads a result of `producer` transposed (its
// operand map a permutation other than its output's): a reduction producer
// then needs a whole temporary inside the executable instead of running
// its consumers in place as an epilogue (a convolution before the
// transpose out of a blocked layout).
bool isTransposedInRegion(Operation *producer, flow::DispatchRegionOp region) {
  for (OpOperand &use : producer->getUses()) {
    auto consumer = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!consumer || !region->isProperAncestor(consumer) ||
        consumer.getNumDpsInits() != 1 || consumer.isDpsInit(&use))
      continue;
    AffineMap map = consumer.getMatchingIndexingMap(&use);
    if (map.isPermutation() &&
        map != consumer.getMatchingIndexingMap(consumer.getDpsInitOperand(0)))
      return true;
  }
  return false;
}

bool hasDynamicShape(TypeRange types) {
  return llvm::any_of(types, [](Type type) {
    auto shaped = dyn_cast<ShapedType>(type);
    return shaped && !shaped.hasStaticShape();
  });
}

// Whether `use` is an input of an elementwise op with one init that reads
// it element for element (with the init's indexing map).
bool isReadElementForElement(OpOperand &use) {
  auto consumer = dyn_cast<linalg::LinalgOp>(use.getOwner());
  return consumer && isElementwise(consumer) &&
         consumer.getNumDpsInits() == 1 && !consumer.isDpsInit(&use) &&
         consumer.getMatchingIndexingMap(&use) ==
             consumer.getMatchingIndexingMap(consumer.getDpsInitOperand(0));
}

// Whether `value` reaches the region's result only through elementwise ops
// of its own type that read it element for element (`EpiloguesInPlace`
// then writes each over it, into the output binding). Anything else (a
// broadcast of a squeeze-excitation's scale over the pixels, a second
// reader) needs it whole in a temporary, which over a dynamic extent has
// no size an executable can allocate.
bool flowsInPlaceToResult(Value value, flow::DispatchRegionOp region) {
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<flow::ReturnOp>(user) && user->getParentOp() == region)
      continue;
    if (!region->isProperAncestor(user) || !isReadElementForElement(use) ||
        user->getNumResults() != 1 ||
        user->getResult(0).getType() != value.getType() ||
        !flowsInPlaceToResult(user->getResult(0), region))
      return false;
  }
  return true;
}

// A producer read across a parallel loop of its reader, folded into it,
// is computed again for every element of that loop: only a few scalar ops.
constexpr int64_t kMaxRecomputedBodyOps = 16;

// Whether the executable's elementwise fusion (FuseElementwiseOps) folds
// the producer of `use` into the elementwise op reading it through a
// transposed or broadcast view (a squeeze-excitation's scale moved out of
// a blocked layout, then broadcast over the pixels): the producer's only
// use, its one result written through a permutation of its loops, and
// when read across a parallel loop, cheap math (no transcendental). One
// loop nest then computes both, with no temporary.
bool isFoldedIntoElementwiseReader(OpOperand &use) {
  auto producer = use.get().getDefiningOp<linalg::LinalgOp>();
  auto consumer = dyn_cast<linalg::LinalgOp>(use.getOwner());
  if (!producer || !consumer || !producer->hasOneUse() ||
      producer->getNumResults() != 1 || !isElementwise(producer) ||
      !isElementwise(consumer) || consumer.isDpsInit(&use) ||
      !producer.getMatchingIndexingMap(producer.getDpsInitOperand(0))
           .isPermutation())
    return false;
  if (!isReadAcrossAParallelLoop(&use))
    return true;
  int64_t bodyOps = 0;
  producer->walk([&](Operation *) { ++bodyOps; });
  return !hasTranscendentalMath(producer) && bodyOps <= kMaxRecomputedBodyOps;
}

// Whether `producer` may join `region` over dynamic shapes: where a tile
// of a fused producer could need a temporary spanning a dynamic extent,
// it stays a dispatch of its own. An elementwise producer fuses into
// elementwise consumers that read it element for element, or that the
// executable's elementwise fusion folds it into
// (`isFoldedIntoElementwiseReader`): one loop nest either way (a computed
// scale read by two ops, or a sigmoid broadcast over the pixels, would be
// computed once into a temporary instead); a contraction or reduction only
// as the source of an in-place epilogue chain (`flowsInPlaceToResult`).
bool isFusableOverDynamicShapes(Operation *producer,
                                flow::DispatchRegionOp region) {
  if (!isElementwise(producer))
    return llvm::all_of(producer->getResults(), [&](Value result) {
      return flowsInPlaceToResult(result, region);
    });
  return llvm::all_of(producer->getUses(), [&](OpOperand &use) {
    return !region->isProperAncestor(use.getOwner()) ||
           isReadElementForElement(use) || isFoldedIntoElementwiseReader(use);
  });
}

// Pulls producers into `region` until none qualifies. Looks at every value
// the region uses from above, including uses nested in op bodies (a scalar
// constant used inside a linalg.generic). A region rooted at a tensor op
// (concat, ...) only clones cheap producers; a pad of a linalg result
// (`isPadOfLinalgResult`) takes producers as that linalg op would.
// Over dynamic shapes, producers fuse as `isFusableOverDynamicShapes`
// allows.
void fuseProducers(flow::DispatchRegionOp region, bool rootIsLinalg) {
  Block &body = region.getBody().front();
  bool dynamic = hasDynamicShape(region.getResultTypes());
  bool hasNonElementwise = llvm::any_of(body, [](Operation &op) {
    return hasTensorSemantics(&op) && !isElementwise(&op);
  });
  bool changed = true;
  while (changed) {
    changed = false;
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(region.getBody(), captured);
    // Every cheap producer in one sweep, then look again: one at a time,
    // a region whose body reads long chains of run-time sizes (a dynamic
    // scatter's index arithmetic) took minutes. The originals left dead
    // go with the pass's final DCE (roots pending in its worklist are
    // erased there once dead).
    for (Value value : captured) {
      Operation *producer = value.getDefiningOp();
      if (!producer || !isCheapToClone(producer) || isSizeFromTensorData(value))
        continue;
      OpBuilder builder(&body, body.begin());
      Operation *clone = builder.clone(*producer);
      for (auto [oldResult, newResult] :
           llvm::zip(producer->getResults(), clone->getResults()))
        oldResult.replaceUsesWithIf(newResult, [&](OpOperand &use) {
          return region->isProperAncestor(use.getOwner());
        });
      changed = true;
    }
    if (changed)
      continue;
    for (Value value : captured) {
      Operation *producer = value.getDefiningOp();
      if (!producer || isSizeFromTensorData(value))
        continue;
      if (!rootIsLinalg || !isFusableProducer(producer) ||
          !allUsesInside(producer, region))
        continue;
      if ((dynamic || hasDynamicShape(producer->getResultTypes())) &&
          !isFusableOverDynamicShapes(producer, region))
        continue;
      bool elementwise = isElementwise(producer) || isTensorComputeOp(producer);
      if (!elementwise && hasNonElementwise)
        continue;
      if (isReadAcrossLoopByReduction(producer, region) ||
          (!elementwise && isTransposedInRegion(producer, region)))
        continue;
      // The region's tiles compute a fused producer once per use:
      // transcendental math read by two of its ops (a softmax's exp, summed
      // and then divided by the sum) would run twice; it is cheaper as a
      // dispatch of its own whose result they read.
      if (hasTranscendentalMath(producer) &&
          !llvm::hasSingleElement(producer->getUses()))
        continue;
      hasNonElementwise |= !elementwise;
      producer->moveBefore(&body, body.begin());
      changed = true;
      break;
    }
  }
}

struct FormDispatchRegionsPass
    : public impl::FormDispatchRegionsPassBase<FormDispatchRegionsPass> {
  void runOnOperation() override {
    func::FuncOp func = getOperation();
    SmallVector<tensor::PadOp> pads;
    func.walk([&](tensor::PadOp pad) {
      if (!pad->getParentOfType<flow::DispatchRegionOp>())
        pads.push_back(pad);
    });
    for (tensor::PadOp pad : pads)
      readInteriorOfPaddedResult(pad);
    // Walk backwards so consumers claim their producers first.
    SmallVector<Operation *> roots;
    func.walk([&](Operation *op) {
      if (isDispatchRoot(op) && !op->getParentOfType<flow::DispatchRegionOp>())
        roots.push_back(op);
    });
    for (Operation *root : llvm::reverse(roots)) {
      if (root->getParentOfType<flow::DispatchRegionOp>())
        continue;
      if (root->use_empty()) {
        root->erase();
        continue;
      }
      if (auto pad = dyn_cast<tensor::PadOp>(root);
          pad && isStaticConstantPad(pad) && !isPadOfLinalgResult(pad))
        padACopy(pad);
      bool rootIsLinalg = hasTensorSemantics(root) || isPadOfLinalgResult(root);
      fuseProducers(wrapInRegion(root), rootIsLinalg);
    }
    // Producers cloned into regions may have left their originals dead.
    IRRewriter rewriter(&getContext());
    (void)runRegionDCE(rewriter, func.getBody());
  }
};

} // namespace
} // namespace strata
