//===- Builders.h - IR building helpers shared by the lowerings -*- C++ -*-===//
#ifndef STRATA_COMPILER_IMPORTERS_ONNX_BUILDERS_H_
#define STRATA_COMPILER_IMPORTERS_ONNX_BUILDERS_H_

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace strata::onnx_importer {

using ScalarBuilder = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

// A scalar constant of `type` (float, or integer truncated from `value`).
mlir::Value createScalar(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Type type, double value);
mlir::Value createEmpty(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type);
// An empty tensor of `sizes` (static where an attribute, else dynamic).
mlir::Value createEmpty(mlir::OpBuilder &b, mlir::Location loc,
                        llvm::ArrayRef<mlir::OpFoldResult> sizes,
                        mlir::Type elementType);
// The size of dim `dim` of `tensor`: an attribute when static, else a
// tensor.dim read at run time.
mlir::OpFoldResult getDimSize(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::Value tensor, int64_t dim);
llvm::SmallVector<mlir::OpFoldResult>
getDimSizes(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tensor);
// `type`'s sizes: its static dims, and for each dynamic dim i the size of
// dim i of `like` (of `type`'s rank).
llvm::SmallVector<mlir::OpFoldResult> getSizesLike(mlir::OpBuilder &b,
                                                   mlir::Location loc,
                                                   mlir::RankedTensorType type,
                                                   mlir::Value like);
// The value of a result with no elements: a constant, as the host program
// cannot return a tensor.empty.
mlir::Value createZeroElements(mlir::OpBuilder &b, mlir::Location loc,
                               mlir::RankedTensorType type);
// An empty tensor of `type` whose dynamic dims take, in order, the sizes of
// `like`'s dynamic dims (the batch of a convolution's input for its
// result); `like` may be null when `type` is static.
mlir::Value createEmpty(mlir::OpBuilder &b, mlir::Location loc,
                        mlir::RankedTensorType type, mlir::Value like);
// A tensor of `type` filled with `scalar` (dynamic dims as createEmpty's
// with `like`).
mlir::Value createFilled(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, mlir::Value scalar,
                         mlir::Value like = {});
mlir::Value createFilled(mlir::OpBuilder &b, mlir::Location loc,
                         llvm::ArrayRef<mlir::OpFoldResult> sizes,
                         mlir::Value scalar);

// An elementwise linalg.generic over `resultType`'s shape; inputs broadcast
// numpy-style (trailing alignment, size-1 dims stretch). A dynamic result
// dim takes its size from an input dynamic there; dynamic dims of inputs
// are taken not to broadcast (as IREE and torch-mlir assume; the host
// checks arguments whose dims this ties). `sizes`, when given, size the
// result's dynamic dims instead (an Expand to a computed shape).
mlir::Value createElementwise(mlir::OpBuilder &b, mlir::Location loc,
                              mlir::ValueRange inputs,
                              mlir::RankedTensorType resultType,
                              ScalarBuilder body,
                              llvm::ArrayRef<mlir::OpFoldResult> sizes = {});

// A fresh copy of `input` (an elementwise identity generic). For a value
// used as the `outs` (accumulator start) of a generic: a function argument
// or constant there could be written in place.
// Where the rank-0 i1 tensor `cond` is true `whenTrue`, else `whenFalse`
// (of one type).
mlir::Value createSelect(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value cond, mlir::Value whenTrue,
                         mlir::Value whenFalse);

mlir::Value createCopy(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value input);

// Broadcasts `input` numpy-style to `shape`.
mlir::Value createBroadcast(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value input, llvm::ArrayRef<int64_t> shape);

// The broadcast shape of two shapes (numpy rules; a dynamic dim against 1
// or a dynamic one stays dynamic, against a static size takes it).
llvm::SmallVector<int64_t> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                           llvm::ArrayRef<int64_t> b);

// `size` (an index) as a scalar of `type`, built where it is used (inside
// a generic's body, a run-time size is converted there).
mlir::Value createSizeScalar(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::OpFoldResult size, mlir::Type type);

// The static shape of `sizes`: constants stay, the rest is dynamic.
llvm::SmallVector<int64_t>
getStaticShape(llvm::ArrayRef<mlir::OpFoldResult> sizes);

// The product of `sizes`, folded where known.
mlir::OpFoldResult getSizeProduct(mlir::OpBuilder &b, mlir::Location loc,
                                  llvm::ArrayRef<mlir::OpFoldResult> sizes);

// Whether two sizes are equal by construction: the same constant, or
// values that trace back to the same run-time size (through the dims that
// elementwise ops, transposes, pads and reshapes pass on).
bool isSameSize(mlir::OpFoldResult a, mlir::OpFoldResult b);

// `input` reshaped to `sizes` (static where attributes); the element counts
// must agree at run time, which the host program checks.
mlir::Value createDynamicReshape(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::Value input,
                                 llvm::ArrayRef<mlir::OpFoldResult> sizes);

// Reshapes to `shape` (same element count) with collapse/expand_shape. A
// dynamic dim of `shape` takes the size of the input's dynamic dim of the
// same order (reshapes that keep the batch dynamic).
mlir::Value createReshape(mlir::OpBuilder &b, mlir::Location loc,
                          mlir::Value input, llvm::ArrayRef<int64_t> shape);

// Permutes dimensions: result dim i is input dim perm[i].
mlir::Value createTranspose(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value input, llvm::ArrayRef<int64_t> perm);

// Converts a scalar between element types with ONNX Cast semantics.
mlir::Value createScalarCast(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::Value value, mlir::Type to,
                             bool fromUnsigned, bool toUnsigned);
// Converts a tensor's element type.
mlir::Value createCast(mlir::OpBuilder &b, mlir::Location loc,
                       mlir::Value input, mlir::Type to, bool fromUnsigned,
                       bool toUnsigned);

// Normalizes a possibly negative axis against `rank`.
inline int64_t normalizeAxis(int64_t axis, int64_t rank) {
  return axis < 0 ? axis + rank : axis;
}

// Reduces `input` over `axes` with a combiner starting from `init`; the
// result keeps reduced dims as size 1 when `keepDims`.
mlir::Value createReduction(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value input, llvm::ArrayRef<int64_t> axes,
                            bool keepDims, mlir::Value init,
                            ScalarBuilder combine);

// An ONNX index (any integer type, negative from the end) as an index value
// clamped into [0, dim).
mlir::Value normalizeIndex(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value index, int64_t dim);
mlir::Value normalizeIndex(mlir::OpBuilder &b, mlir::Location loc,
                           mlir::Value index, mlir::OpFoldResult dim);

// A linalg.generic over `resultType` (all loops parallel) reading `inputs`
// through `inputMaps`, whose body builds the result element from the input
// elements and the iteration indices (data-dependent reads use
// tensor.extract in the body).
using IndexedBody = llvm::function_ref<mlir::Value(
    mlir::OpBuilder &, mlir::Location, mlir::ValueRange,
    llvm::ArrayRef<mlir::Value>)>;
// `sizes`, when given, size the result's dynamic dims.
mlir::Value createIndexedGeneric(mlir::OpBuilder &b, mlir::Location loc,
                                 mlir::ValueRange inputs,
                                 llvm::ArrayRef<mlir::AffineMap> inputMaps,
                                 mlir::RankedTensorType resultType,
                                 IndexedBody body,
                                 llvm::ArrayRef<mlir::OpFoldResult> sizes = {});

// The first element of a tensor (a scalar operand given as a tensor of any
// rank, e.g. a rank-0 or shape-[1] input).
mlir::Value extractFirst(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::Value tensor);

// A generic over `resultType` plus one reduction loop of `size`: each
// result element starts at 0 and adds `term(ivs, k)` for k in [0, size)
// (floats; operands are read with tensor.extract in `term`).
using IndexedTerm =
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location,
                                   llvm::ArrayRef<mlir::Value>, mlir::Value)>;
mlir::Value createIndexedSum(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::RankedTensorType resultType, int64_t size,
                             IndexedTerm term);

} // namespace strata::onnx_importer

#endif // STRATA_COMPILER_IMPORTERS_ONNX_BUILDERS_H_
