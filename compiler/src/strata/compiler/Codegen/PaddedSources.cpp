//===- PaddedSources.cpp - windows read from unpadded sources -------------===//

#include "strata/compiler/Codegen/PaddedSources.h"
#include "strata/compiler/Codegen/PlainSubViews.h"
#include "strata/compiler/Codegen/WindowChecks.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace strata {
namespace {

// The value `op` writes to every element of its output, if it is a fill:
// a linalg.fill, or a generic without inputs yielding a value from outside.
Value getFilledValue(Operation *op) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getInputs()[0];
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 0 ||
      generic.getNumDpsInits() != 1 || !generic.hasPureBufferSemantics())
    return nullptr;
  Block *body = generic.getBlock();
  Value yielded = body->getTerminator()->getOperand(0);
  if (body->getOperations().size() != 1 || yielded.getParentBlock() == body)
    return nullptr;
  return yielded;
}

// The buffer `op` copies whole into its output, if it is a copy.
Value getCopiedSource(Operation *op) {
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return copy.getSource();
  if (auto copy = dyn_cast<linalg::CopyOp>(op))
    return copy.getInputs()[0];
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1 ||
      generic.getNumDpsInits() != 1 || !generic.hasPureBufferSemantics() ||
      !llvm::all_of(generic.getIndexingMapsArray(),
                    [](AffineMap map) { return map.isIdentity(); }))
    return nullptr;
  Block *body = generic.getBlock();
  if (body->getOperations().size() != 1 ||
      body->getTerminator()->getOperand(0) != body->getArgument(0))
    return nullptr;
  return generic.getDpsInputOperand(0)->get();
}

// The buffer a copy (`getCopiedSource`) writes.
Value getCopyTarget(Operation *op) {
  if (auto copy = dyn_cast<memref::CopyOp>(op))
    return copy.getTarget();
  return cast<linalg::LinalgOp>(op).getDpsInitOperand(0)->get();
}

// Whether `use` writes the buffer it uses (a linalg op's init, a copy's
// target); false for reads.
bool isWrite(OpOperand &use) {
  if (auto copy = dyn_cast<memref::CopyOp>(use.getOwner()))
    return use.get() == copy.getTarget();
  auto linalgOp = dyn_cast<linalg::LinalgOp>(use.getOwner());
  return linalgOp && linalgOp.isDpsInit(&use);
}

// Whether two values are the same pad value (the same SSA value, or equal
// constants).
bool isSameValue(Value a, Value b) {
  if (a == b)
    return true;
  Attribute x, y;
  return matchPattern(a, m_Constant(&x)) && matchPattern(b, m_Constant(&y)) &&
         x == y;
}

// The views of `root` (through plain subviews, root included) in `views`
// and their other uses in `uses`; failure when a subview is not plain.
LogicalResult collectViews(Value root, SmallVectorImpl<Value> &views,
                           SmallVectorImpl<OpOperand *> &uses) {
  views.push_back(root);
  for (size_t i = 0; i < views.size(); ++i) {
    for (OpOperand &use : views[i].getUses()) {
      if (auto subview = dyn_cast<memref::SubViewOp>(use.getOwner())) {
        if (!isPlainSubView(subview))
          return failure();
        views.push_back(subview.getResult());
        continue;
      }
      uses.push_back(&use);
    }
  }
  return success();
}

// Whether nothing in `func` writes to `buffer` or a view of it: a binding
// that the dispatch only reads.
bool isOnlyRead(Value buffer) {
  while (auto subview = buffer.getDefiningOp<memref::SubViewOp>())
    buffer = subview.getSource();
  // A binding of dynamic shape is its argument viewed at its sizes
  // (DynamicBindings.h): the view stands for the argument.
  auto binding = buffer.getDefiningOp<memref::ReinterpretCastOp>();
  bool isBindingView = binding && isa<BlockArgument>(binding.getSource()) &&
                       binding.getSource().hasOneUse();
  if (!isa<BlockArgument>(buffer) && !isBindingView)
    return false;
  SmallVector<Value> views;
  SmallVector<OpOperand *> uses;
  if (failed(collectViews(buffer, views, uses)))
    return false;
  return llvm::all_of(uses, [](OpOperand *use) {
    if (isa<linalg::LinalgOp, memref::CopyOp>(use->getOwner()))
      return !isWrite(*use);
    // (A size read, of a dynamic batch, reads no element.)
    return isa<memref::LoadOp, vector::TransferReadOp, vector::LoadOp,
               vector::MaskedLoadOp, memref::DimOp>(use->getOwner());
  });
}

// The same when every offset is static, without building anything.
std::optional<SmallVector<int64_t>> getStaticOffsetsInRoot(Value view) {
  SmallVector<int64_t> offsets(cast<MemRefType>(view.getType()).getRank(), 0);
  for (auto subview = view.getDefiningOp<memref::SubViewOp>(); subview;
       subview = subview.getSource().getDefiningOp<memref::SubViewOp>())
    for (auto [offset, step] : llvm::zip(offsets, subview.getStaticOffsets())) {
      if (ShapedType::isDynamic(step))
        return std::nullopt;
      offset += step;
    }
  return offsets;
}

// The buffer of `sources` that `view` is a view of, or null.
const PaddedSource *findPaddedSource(Value view, const PaddedSources &sources) {
  Value root = getViewRoot(view);
  if (!root || !root.getDefiningOp())
    return nullptr;
  auto it = sources.find(root.getDefiningOp());
  return it == sources.end() ? nullptr : &it->second;
}

// The one buffer of `sources` that every view of `views` is a view of, or
// null.
const PaddedSource *findTileSource(ArrayRef<Value> views,
                                   const PaddedSources &sources) {
  const PaddedSource *found =
      views.empty() ? nullptr : findPaddedSource(views.front(), sources);
  if (!found || llvm::any_of(views, [&](Value view) {
        return findPaddedSource(view, sources) != found;
      }))
    return nullptr;
  return found;
}

// The origin of `view` (a view of `padded`'s buffer) in the source: its
// offsets less the padding.
SmallVector<OpFoldResult> getPositionsInSource(OpBuilder &builder, Location loc,
                                               Value view,
                                               const PaddedSource &padded) {
  SmallVector<OpFoldResult> positions = getOffsetsInRoot(builder, loc, view);
  AffineExpr d0 = builder.getAffineDimExpr(0);
  for (auto [position, low] : llvm::zip(positions, padded.low))
    position = affine::makeComposedFoldedAffineApply(builder, loc, d0 - low,
                                                     {position});
  return positions;
}

// `index` clamped into [0, size).
Value clampIndex(OpBuilder &builder, Location loc, Value index, int64_t size) {
  Value zero = arith::ConstantIndexOp::create(builder, loc, 0);
  Value last = arith::ConstantIndexOp::create(builder, loc, size - 1);
  return arith::MinSIOp::create(
      builder, loc, arith::MaxSIOp::create(builder, loc, index, zero), last);
}

// The smallest extent of a padded dimension for which register tiles check
// once whether they lie inside the source (readPaddedTileLanes).
constexpr int64_t kMinVersionedExtent = 32;

} // namespace

PaddedSources findPaddedSources(func::FuncOp func) {
  PaddedSources found;
  func.walk([&](memref::AllocaOp alloca) {
    auto paddedType = alloca.getType();
    if (!paddedType.getElementType().isF32())
      return;
    SmallVector<Value> views;
    SmallVector<OpOperand *> uses;
    if (failed(collectViews(alloca.getResult(), views, uses)))
      return;
    PaddedSource padded;
    Operation *copy = nullptr;
    Block *block = alloca->getBlock();
    Operation *firstRead = nullptr;
    for (OpOperand *use : uses) {
      Operation *user = use->getOwner();
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock)
        return;
      if (!isa<linalg::LinalgOp, memref::CopyOp>(user))
        return;
      if (!isWrite(*use)) {
        if (!firstRead || inBlock->isBeforeInBlock(firstRead))
          firstRead = inBlock;
        continue;
      }
      // Writes come before every read, in P's own block.
      if (inBlock != user)
        return;
      if (Value value = getFilledValue(user)) {
        if (padded.padValue && !isSameValue(padded.padValue, value))
          return;
        padded.padValue = value;
        padded.writes.push_back(user);
        continue;
      }
      Value source = getCopiedSource(user);
      if (!source || copy)
        return;
      copy = user;
      padded.source = source;
      padded.writes.push_back(user);
    }
    // Every write precedes every read, and the copy of the interior comes
    // after every fill.
    llvm::sort(padded.writes, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    if (!copy || !padded.padValue || !firstRead ||
        padded.writes.back() != copy || !copy->isBeforeInBlock(firstRead) ||
        !isOnlyRead(padded.source))
      return;
    auto sourceType = cast<MemRefType>(padded.source.getType());
    auto interior = getCopyTarget(copy).getDefiningOp<memref::SubViewOp>();
    if (!interior || getViewRoot(interior) != alloca.getResult() ||
        sourceType.getRank() == 0 ||
        sourceType.isDynamicDim(sourceType.getRank() - 1) ||
        sourceType.getElementType() != paddedType.getElementType() ||
        interior.getType().getShape() != sourceType.getShape())
      return;
    std::optional<SmallVector<int64_t>> low = getStaticOffsetsInRoot(interior);
    if (!low)
      return;
    // A dimension of dynamic size (a workgroup's share of the channels) is
    // not padded: the interior spans all of it.
    SmallVector<OpFoldResult> interiorSizes = interior.getMixedSizes();
    SmallVector<OpFoldResult> paddedSizes = getMixedValues(
        paddedType.getShape(), alloca.getDynamicSizes(), alloca.getContext());
    for (int64_t dim = 0; dim < sourceType.getRank(); ++dim) {
      bool spansAll =
          (*low)[dim] == 0 &&
          isEqualConstantIntOrValue(interiorSizes[dim], paddedSizes[dim]);
      if (sourceType.isDynamicDim(dim) && !spansAll)
        return;
      padded.paddedDims.push_back(!spansAll);
    }
    padded.low = std::move(*low);
    found[alloca] = std::move(padded);
  });
  return found;
}

Value readPaddedLanes(RewriterBase &rewriter, Location loc, Value view,
                      VectorType type, int64_t lanes,
                      const PaddedSources &sources) {
  const PaddedSource *found = findPaddedSource(view, sources);
  if (!found)
    return nullptr;
  const PaddedSource &padded = *found;
  SmallVector<OpFoldResult> positions =
      getPositionsInSource(rewriter, loc, view, padded);
  auto sourceType = cast<MemRefType>(padded.source.getType());
  int64_t rank = sourceType.getRank();
  // The view's origin in the source; outer positions outside it read only
  // padding (every lane masked, at a position clamped into the source).
  SmallVector<Value> indices;
  Value inside;
  Type i1 = rewriter.getI1Type();
  for (int64_t dim = 0; dim < rank; ++dim) {
    OpFoldResult position = positions[dim];
    int64_t size = sourceType.getDimSize(dim);
    std::optional<int64_t> constant = getConstantIntValue(position);
    Value index = getValueOrCreateConstantIndexOp(rewriter, loc, position);
    if (dim == rank - 1 || !padded.paddedDims[dim] ||
        (constant && *constant >= 0 && *constant < size)) {
      indices.push_back(index);
      continue;
    }
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value last = arith::ConstantIndexOp::create(rewriter, loc, size - 1);
    Value ok = arith::AndIOp::create(
        rewriter, loc,
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge, index,
                              zero),
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sle, index,
                              last));
    inside = inside ? arith::AndIOp::create(rewriter, loc, inside, ok) : ok;
    indices.push_back(clampIndex(rewriter, loc, index, size));
  }

  // Lane l reads the source's innermost position start + l: masked where
  // that is outside the source or l is past the tile's lanes.
  int64_t width = type.getNumElements();
  int64_t rowSize = sourceType.getDimSize(rank - 1);
  auto maskType = VectorType::get({width}, i1);
  Value mask;
  if (std::optional<int64_t> start = getConstantIntValue(indices.back())) {
    SmallVector<bool> bits;
    for (int64_t lane = 0; lane < width; ++lane)
      bits.push_back(lane < lanes && *start + lane >= 0 &&
                     *start + lane < rowSize);
    mask = arith::ConstantOp::create(rewriter, loc,
                                     DenseElementsAttr::get(maskType, bits));
  } else {
    auto i32Lanes = VectorType::get({width}, rewriter.getI32Type());
    SmallVector<int32_t> steps;
    for (int64_t lane = 0; lane < width; ++lane)
      steps.push_back(int32_t(lane));
    Value step = arith::ConstantOp::create(
        rewriter, loc, DenseElementsAttr::get(i32Lanes, ArrayRef(steps)));
    Value first = arith::IndexCastOp::create(
        rewriter, loc, rewriter.getI32Type(), indices.back());
    Value position = arith::AddIOp::create(
        rewriter, loc, step,
        vector::BroadcastOp::create(rewriter, loc, i32Lanes, first));
    auto splat = [&](int64_t value) -> Value {
      return arith::ConstantOp::create(
          rewriter, loc, DenseElementsAttr::get(i32Lanes, int32_t(value)));
    };
    mask = arith::AndIOp::create(
        rewriter, loc,
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sge,
                              position, splat(0)),
        arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt,
                              position, splat(rowSize)));
    if (lanes < width)
      mask = arith::AndIOp::create(
          rewriter, loc, mask,
          arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::slt, step,
                                splat(lanes)));
  }
  if (inside)
    mask = arith::AndIOp::create(
        rewriter, loc, mask,
        vector::BroadcastOp::create(rewriter, loc, maskType, inside));
  Value passThrough =
      vector::BroadcastOp::create(rewriter, loc, type, padded.padValue);
  return vector::MaskedLoadOp::create(rewriter, loc, type, padded.source,
                                      indices, mask, passThrough);
}

SmallVector<Value> readPaddedTileLanes(RewriterBase &rewriter, Location loc,
                                       ArrayRef<Value> views, VectorType type,
                                       int64_t lanes,
                                       const PaddedSources &sources) {
  const PaddedSource *found = findTileSource(views, sources);
  if (!found)
    return {};
  const PaddedSource &padded = *found;
  auto sourceType = cast<MemRefType>(padded.source.getType());
  int64_t rank = sourceType.getRank();
  // The check pays where most tiles lie inside: not where the lanes run
  // along a padded row (a row's first or last vector meets the padding at
  // every tap off the centre), nor on maps so small that many tiles touch
  // their border (there a mask per row costs less than a branch that
  // often goes the other way).
  if (padded.paddedDims[rank - 1])
    return {};
  for (int64_t dim = 0; dim < rank; ++dim)
    if (padded.paddedDims[dim] &&
        sourceType.getDimSize(dim) < kMinVersionedExtent)
      return {};
  AffineExpr d0 = rewriter.getAffineDimExpr(0);
  // Every view's origin in the source, and the positions that must lie
  // inside it (with the last of each row's lanes).
  SmallVector<SmallVector<Value>> positions;
  SmallVector<std::pair<OpFoldResult, int64_t>> checked;
  for (Value view : views) {
    SmallVector<Value> indices;
    for (auto [dim, position] :
         llvm::enumerate(getPositionsInSource(rewriter, loc, view, padded))) {
      int64_t size = sourceType.getDimSize(dim);
      if (padded.paddedDims[dim]) {
        checked.push_back({position, size});
        if (dim == rank - 1)
          checked.push_back({affine::makeComposedFoldedAffineApply(
                                 rewriter, loc, d0 + (lanes - 1), {position}),
                             size});
      }
      indices.push_back(
          getValueOrCreateConstantIndexOp(rewriter, loc, position));
    }
    positions.push_back(std::move(indices));
  }
  Type i1 = rewriter.getI1Type();
  auto readInside = [&](OpBuilder &builder) {
    SmallVector<Value> loaded;
    int64_t width = type.getNumElements();
    for (ArrayRef<Value> indices : positions) {
      if (lanes == width) {
        loaded.push_back(
            vector::LoadOp::create(builder, loc, type, padded.source, indices));
        continue;
      }
      SmallVector<bool> bits;
      for (int64_t lane = 0; lane < width; ++lane)
        bits.push_back(lane < lanes);
      Value mask = arith::ConstantOp::create(
          builder, loc,
          DenseElementsAttr::get(VectorType::get({width}, i1), bits));
      Value passThrough =
          vector::BroadcastOp::create(builder, loc, type, padded.padValue);
      loaded.push_back(vector::MaskedLoadOp::create(
          builder, loc, type, padded.source, indices, mask, passThrough));
    }
    return loaded;
  };
  auto readMasked = [&](OpBuilder &builder) {
    SmallVector<Value> masked;
    for (Value view : views)
      masked.push_back(
          readPaddedLanes(rewriter, loc, view, type, lanes, sources));
    return masked;
  };
  // Plain loads where `inside` holds, else masked ones.
  auto branchOn = [&](Value inside) -> scf::IfOp {
    SmallVector<Type> resultTypes(views.size(), type);
    auto branch = scf::IfOp::create(rewriter, loc, resultTypes, inside,
                                    /*addThenBlock=*/true,
                                    /*addElseBlock=*/true);
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(branch.thenBlock());
    scf::YieldOp::create(rewriter, loc, readInside(rewriter));
    rewriter.setInsertionPointToStart(branch.elseBlock());
    scf::YieldOp::create(rewriter, loc, readMasked(rewriter));
    return branch;
  };
  // Tiles inside tap loops check their whole window once, before the
  // loops (unswitched on it: each version then unrolls on its own, the
  // border tiles' with masks per row); others check each step.
  if (Value windowInside = buildWindowCheck(rewriter, loc, checked)) {
    scf::IfOp branch = branchOn(windowInside);
    markWindowCheck(branch);
    return branch.getResults();
  }
  Value stepInside = buildInsideCheck(rewriter, loc, checked);
  if (!stepInside)
    return readInside(rewriter);
  return branchOn(stepInside).getResults();
}

std::optional<PaddedElements>
readPaddedTileElements(RewriterBase &rewriter, Location loc,
                       ArrayRef<Value> views, const PaddedSources &sources) {
  const PaddedSource *found = findTileSource(views, sources);
  if (!found)
    return std::nullopt;
  const PaddedSource &padded = *found;
  auto sourceType = cast<MemRefType>(padded.source.getType());
  int64_t rank = sourceType.getRank();
  // Every view's origin in the source, and its positions along the padded
  // dimensions, which must lie inside it.
  SmallVector<SmallVector<OpFoldResult>> positions;
  SmallVector<SmallVector<std::pair<OpFoldResult, int64_t>>> checkedPerView;
  SmallVector<std::pair<OpFoldResult, int64_t>> checked;
  for (Value view : views) {
    SmallVector<OpFoldResult> position =
        getPositionsInSource(rewriter, loc, view, padded);
    SmallVector<std::pair<OpFoldResult, int64_t>> viewChecked;
    for (int64_t dim = 0; dim < rank; ++dim)
      if (padded.paddedDims[dim])
        viewChecked.push_back({position[dim], sourceType.getDimSize(dim)});
    llvm::append_range(checked, viewChecked);
    positions.push_back(std::move(position));
    checkedPerView.push_back(std::move(viewChecked));
  }
  Type f32 = sourceType.getElementType();
  Type i1 = rewriter.getI1Type();
  auto readInside = [&](OpBuilder &builder) {
    SmallVector<Value> loaded;
    for (ArrayRef<OpFoldResult> position : positions)
      loaded.push_back(memref::LoadOp::create(
          builder, loc, padded.source,
          getValueOrCreateConstantIndexOp(builder, loc, position)));
    return loaded;
  };
  // Loads at positions clamped into the source, then their inside flags.
  auto readClamped = [&](OpBuilder &builder) {
    SmallVector<Value> loaded, insides;
    for (auto [position, viewChecked] : llvm::zip(positions, checkedPerView)) {
      SmallVector<Value> indices;
      for (int64_t dim = 0; dim < rank; ++dim) {
        Value index =
            getValueOrCreateConstantIndexOp(builder, loc, position[dim]);
        if (padded.paddedDims[dim])
          index = clampIndex(builder, loc, index, sourceType.getDimSize(dim));
        indices.push_back(index);
      }
      loaded.push_back(
          memref::LoadOp::create(builder, loc, padded.source, indices));
      Value inside = buildInsideCheck(builder, loc, viewChecked);
      insides.push_back(inside ? inside
                               : arith::ConstantIntOp::create(builder, loc, 1,
                                                              /*width=*/1));
    }
    llvm::append_range(loaded, insides);
    return loaded;
  };
  PaddedElements elements;
  elements.padValue = padded.padValue;
  // Plain loads where every view lies inside for every tap, else clamped
  // ones (the tap loops are unswitched on the check).
  Value check = buildWindowCheck(rewriter, loc, checked);
  bool window = check != nullptr;
  if (!check)
    check = buildInsideCheck(rewriter, loc, checked);
  if (!check) {
    elements.values = readInside(rewriter);
    elements.insides.assign(views.size(), Value());
    return elements;
  }
  SmallVector<Type> resultTypes(views.size(), f32);
  resultTypes.append(views.size(), i1);
  auto branch = scf::IfOp::create(rewriter, loc, resultTypes, check,
                                  /*addThenBlock=*/true,
                                  /*addElseBlock=*/true);
  {
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPointToStart(branch.thenBlock());
    SmallVector<Value> yielded = readInside(rewriter);
    Value inside = arith::ConstantIntOp::create(rewriter, loc, 1, /*width=*/1);
    yielded.append(views.size(), inside);
    scf::YieldOp::create(rewriter, loc, yielded);
    rewriter.setInsertionPointToStart(branch.elseBlock());
    scf::YieldOp::create(rewriter, loc, readClamped(rewriter));
  }
  if (window)
    markWindowCheck(branch);
  ValueRange results = branch.getResults();
  elements.values.assign(results.begin(), results.begin() + views.size());
  elements.insides.assign(results.begin() + views.size(), results.end());
  return elements;
}

bool canReadAhead(Value memref, const PaddedSources &sources) {
  Value root = getViewRoot(memref);
  return root && isOnlyRead(memref) &&
         llvm::none_of(sources, [&](const auto &entry) {
           return getViewRoot(entry.second.source) == root;
         });
}

void eraseUnreadPaddedSources(RewriterBase &rewriter,
                              const PaddedSources &sources) {
  for (auto &[alloca, padded] : sources) {
    SmallVector<Value> views;
    SmallVector<OpOperand *> uses;
    if (failed(collectViews(alloca->getResult(0), views, uses)) ||
        llvm::any_of(uses, [&](OpOperand *use) {
          return !llvm::is_contained(padded.writes, use->getOwner());
        }))
      continue;
    for (Operation *write : padded.writes)
      rewriter.eraseOp(write);
    // The views, innermost first.
    for (Value view : llvm::reverse(views))
      if (view.use_empty())
        rewriter.eraseOp(view.getDefiningOp());
  }
}

LogicalResult verifyUnbuiltPaddedSources(func::FuncOp func) {
  WalkResult result = func.walk([](memref::AllocaOp alloca) {
    if (!alloca->hasAttr(kUnbuiltPaddedSourceAttr))
      return WalkResult::advance();
    // The first op reading it says which kernel failed to read in place.
    Operation *reader = nullptr;
    SmallVector<Value> views;
    SmallVector<OpOperand *> uses;
    if (succeeded(collectViews(alloca.getResult(), views, uses)))
      for (OpOperand *use : uses)
        if (!isWrite(*use)) {
          reader = use->getOwner();
          break;
        }
    InFlightDiagnostic diag =
        (reader ? reader : alloca.getOperation())->emitOpError();
    MemRefType type = alloca.getType();
    diag << "reads a padded input of ";
    if (type.hasStaticShape())
      diag << type.getNumElements() * (type.getElementTypeBitWidth() / 8)
           << " bytes";
    else
      diag << "a dynamic size";
    diag << " that was to be read in place from its source, and building "
            "it would not fit a workgroup's stack";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

} // namespace strata
