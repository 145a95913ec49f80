//===- ElementTypes.h - MLIR types to the runtime's element types -*- C++
//-*-===//
#ifndef STRATA_COMPILER_UTILS_ELEMENTTYPES_H_
#define STRATA_COMPILER_UTILS_ELEMENTTYPES_H_

#include <cstdint>
#include <optional>

#include "mlir/IR/BuiltinTypes.h"
#include "strata/hal/element_type.h"
#include "llvm/ADT/StringRef.h"

namespace strata {

// The ABI element type of an MLIR scalar type, or nullopt when the runtime
// has none for it. Signless integers are reported as signed; i1 is a
// one-byte boolean.
inline std::optional<uint32_t> getElementTypeValue(mlir::Type type) {
  if (type.isF32())
    return STRATA_HAL_ELEMENT_TYPE_FLOAT_32;
  if (type.isF64())
    return STRATA_HAL_ELEMENT_TYPE_FLOAT_64;
  if (type.isF16())
    return STRATA_HAL_ELEMENT_TYPE_FLOAT_16;
  if (type.isBF16())
    return STRATA_HAL_ELEMENT_TYPE_BFLOAT_16;
  if (auto intType = mlir::dyn_cast<mlir::IntegerType>(type)) {
    unsigned width = intType.getWidth();
    if (width == 1)
      return STRATA_HAL_ELEMENT_TYPE_BOOL_8;
    if (width != 8 && width != 16 && width != 32 && width != 64)
      return std::nullopt;
    auto numerical = intType.isUnsigned()
                         ? STRATA_HAL_NUMERICAL_TYPE_INTEGER_UNSIGNED
                         : STRATA_HAL_NUMERICAL_TYPE_INTEGER_SIGNED;
    return STRATA_HAL_ELEMENT_TYPE_VALUE(numerical, width);
  }
  return std::nullopt;
}

// The argument/result attribute marking a function boundary value whose
// signless integers are unsigned (ONNX uint8..uint64): its ABI element type
// is the unsigned one, so callers pass and read it as stored.
inline constexpr llvm::StringLiteral kUnsignedAbiAttr = "strata.unsigned";
// The name a function argument or result has in the source (an ONNX graph
// input's or output's), kept in the module's reflection.
inline constexpr llvm::StringLiteral kAbiNameAttr = "strata.name";
// What the program implies about a function argument's dynamic dims, one
// entry per dim: an integer (the size it must have), [argument, dim] (it
// must equal that dim of an earlier argument), or unit (read from the
// caller's tensor). Set by TieArgumentDims; the host program checks the
// caller's tensors against it.
inline constexpr llvm::StringLiteral kArgumentDimTiesAttr = "strata.dim_ties";
// The names of a host function's arguments and results (kAbiNameAttr, ""
// for none), beside their types in strata.abi.arguments/results.
inline constexpr llvm::StringLiteral kAbiArgumentNamesAttr =
    "strata.abi.argument_names";
inline constexpr llvm::StringLiteral kAbiResultNamesAttr =
    "strata.abi.result_names";

// `type` as the function boundary declares it: the unsigned integer type of
// the same width when `isUnsigned` (bools stay bools).
inline mlir::RankedTensorType getAbiTensorType(mlir::RankedTensorType type,
                                               bool isUnsigned) {
  auto intType = mlir::dyn_cast<mlir::IntegerType>(type.getElementType());
  if (!isUnsigned || !intType || intType.getWidth() == 1)
    return type;
  return mlir::RankedTensorType::get(
      type.getShape(),
      mlir::IntegerType::get(type.getContext(), intType.getWidth(),
                             mlir::IntegerType::Unsigned));
}

// Bytes one element of `type` takes in a buffer (i1 takes a byte).
inline int64_t getElementByteSize(mlir::Type type) {
  return (type.getIntOrFloatBitWidth() + 7) / 8;
}

// Byte size of a statically shaped tensor or memref.
inline int64_t getStaticByteSize(mlir::ShapedType type) {
  return type.getNumElements() * getElementByteSize(type.getElementType());
}

} // namespace strata

#endif // STRATA_COMPILER_UTILS_ELEMENTTYPES_H_
