//===- PaddedSources.h - windows read from unpadded sources ------*- C++
//-*-===//
//
// A pad inside a dispatch bufferizes to a stack buffer P: fills of its
// borders with the pad value c, then a copy of the source S into its
// interior, then the windowed op (a depthwise convolution, a pooling) that
// reads P. Building P costs as much as the convolution of a small map (a
// 960x7x7 depthwise convolution: 10 us of padding around 10 us of
// multiply-adds), all of it stores.
//
// A register tile can read S instead: a vector of P's lanes at P-position
// (i.., j) is S's lanes at (i - low.., j - low_j), masked where that
// position falls outside S, with c in the masked lanes. When no op reads
// P any more, its fills, its copy and P itself go.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_PADDEDSOURCES_H_
#define STRATA_COMPILER_CODEGEN_PADDEDSOURCES_H_

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/ADT/DenseMap.h"

namespace strata {

// On a tensor.pad whose padded tensor is never to be built: every reader
// is a broadcast kernel's register tile that reads the source in place
// (FusePadsIntoConsumers decides it; the workgroup split leaves the pad
// whole, outside its loop).
inline constexpr llvm::StringLiteral kPadReadInPlaceAttr =
    "strata.pad_read_in_place";

// On the stack buffer of such a pad once bufferized, when it is too large
// for a workgroup's stack: the register tiles must leave it unread
// (`verifyUnbuiltPaddedSources`).
inline constexpr llvm::StringLiteral kUnbuiltPaddedSourceAttr =
    "strata.unbuilt_padded_source";

// A stack buffer that holds pad(source, low, high, padValue), and the ops
// that write it.
struct PaddedSource {
  mlir::Value source;
  llvm::SmallVector<int64_t> low;
  // Whether each dimension has padding: reads of the others stay inside
  // the source.
  llvm::SmallVector<bool> paddedDims;
  mlir::Value padValue;
  // The fills and the copy, in program order.
  llvm::SmallVector<mlir::Operation *> writes;
};

using PaddedSources = llvm::DenseMap<mlir::Operation *, PaddedSource>;

// The stack buffers of `func` (memref.alloca) that are written only by
// fills of one value and then one copy of an f32 source into their
// interior, before anything reads them, keyed by their alloca.
PaddedSources findPaddedSources(mlir::func::FuncOp func);

// Reads `lanes` lanes (a vector of `type`, its lanes past `lanes` masked
// off) of `view`, a view of a buffer of `sources` with unit strides, at its
// origin along its innermost dimension, from the buffer's source instead.
// Returns null when `view` is not a view of one of `sources`.
mlir::Value readPaddedLanes(mlir::RewriterBase &rewriter, mlir::Location loc,
                            mlir::Value view, mlir::VectorType type,
                            int64_t lanes, const PaddedSources &sources);

// The lanes of each of `views` (views of one buffer of `sources`, as
// readPaddedLanes reads them) under one check: where every view lies
// inside the source, plain loads from it; otherwise masked ones. Inside a
// register tile's tap loops the check covers every tap, before the loops
// (WindowChecks.h). A
// register tile's rows pay one branch instead of a mask per row. Returns
// an empty list when `views` are not all views of one of `sources`, or
// when most tiles would not lie inside (lanes along a padded dimension, a
// small map): the caller masks each row (readPaddedLanes) instead.
llvm::SmallVector<mlir::Value>
readPaddedTileLanes(mlir::RewriterBase &rewriter, mlir::Location loc,
                    llvm::ArrayRef<mlir::Value> views, mlir::VectorType type,
                    int64_t lanes, const PaddedSources &sources);

// Elements of a padded buffer read from its source (readPaddedTileElements):
// each view's element, and whether it lies inside the source (null: it
// does). Where it does not, `values` holds an element of the source at a
// clamped position, which the caller must not use as is: it selects the
// pad value, or leaves the accumulator the element would feed unchanged.
struct PaddedElements {
  llvm::SmallVector<mlir::Value> values;
  llvm::SmallVector<mlir::Value> insides;
  mlir::Value padValue;
};

// The element at the origin of each of `views` (views of one buffer of
// `sources`, the rows of a register tile that broadcasts one element per
// row: a direct convolution's input) read from the buffer's source, under
// one check that they all lie inside it: plain loads where they do; loads
// at positions clamped into the source, with their inside flags,
// otherwise. Inside a register tile's tap loops the check covers every
// tap, before the loops (WindowChecks.h). Returns nullopt when `views` are
// not all views of one of `sources`.
std::optional<PaddedElements>
readPaddedTileElements(mlir::RewriterBase &rewriter, mlir::Location loc,
                       llvm::ArrayRef<mlir::Value> views,
                       const PaddedSources &sources);

// Whether a read of `memref` may move ahead of a window check
// (WindowChecks.h): the dispatch only reads it, and it is not the source
// of one of `sources`, which is in bounds only where the check holds.
bool canReadAhead(mlir::Value memref, const PaddedSources &sources);

// Erases the buffers of `sources` that nothing reads any more, with their
// writes and views.
void eraseUnreadPaddedSources(mlir::RewriterBase &rewriter,
                              const PaddedSources &sources);

// Fails, naming the dispatch's op, where a buffer marked
// `kUnbuiltPaddedSourceAttr` is still there.
mlir::LogicalResult verifyUnbuiltPaddedSources(mlir::func::FuncOp func);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_PADDEDSOURCES_H_
