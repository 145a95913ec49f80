//===- HALImportTable.h - the runtime's `hal` imports ----------*- C++ -*-===//
#ifndef STRATA_COMPILER_VMCONVERSION_HALIMPORTTABLE_H_
#define STRATA_COMPILER_VMCONVERSION_HALIMPORTTABLE_H_

#include "llvm/ADT/StringRef.h"
#include <optional>

namespace strata {

// Calling convention of the `hal` module function `name`, from the table the
// runtime implements (runtime/src/strata/modules/hal/hal_imports.def).
inline std::optional<llvm::StringRef> lookupHALImport(llvm::StringRef name) {
#define STRATA_HAL_IMPORT(identifier, qualifiedName, callingConvention)        \
  if (name == qualifiedName)                                                   \
    return llvm::StringRef(callingConvention);
#include "strata/modules/hal/hal_imports.def"
#undef STRATA_HAL_IMPORT
  return std::nullopt;
}

} // namespace strata

#endif // STRATA_COMPILER_VMCONVERSION_HALIMPORTTABLE_H_
