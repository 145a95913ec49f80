//===- ExecutableHelpers.h - what an executable may call ------*- C++ -*-===//
//
// LLVM's code generator calls functions for operations the target CPU has
// no instruction for (f16 conversions without F16C, floor without SSE4.1,
// i128 division, ...). runtime/src/strata/hal/local/executable_symbols.def
// lists every one an executable may call and who provides it; the `helper`
// ones come from a small library built with the compiler and linked
// lazily into each executable.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_EXECUTABLEHELPERS_H_
#define STRATA_COMPILER_CODEGEN_EXECUTABLEHELPERS_H_

#include <string>

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

namespace strata {

// The helper library as an archive file for the linker: written to a
// temporary file on first use, once per process, and removed at exit.
llvm::Expected<std::string> getExecutableHelpersArchivePath();

// Fails, naming them, when the relocatable ELF `object` references symbols
// it does not define that executable_symbols.def does not list.
llvm::Error checkExecutableImports(llvm::StringRef object);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_EXECUTABLEHELPERS_H_
