//===- ExecutableLibraryBuilder.h - executable ABI in LLVM IR --*- C++ -*-===//
//
// Adds to an LLVM module the runtime-facing side of an executable library
// (runtime/src/strata/hal/local/executable_library.h): one dispatch entry
// point per export that unpacks the binding pointers and calls the kernel,
// the library descriptor, and the query function, the one exported symbol.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_EXECUTABLELIBRARYBUILDER_H_
#define STRATA_COMPILER_CODEGEN_EXECUTABLELIBRARYBUILDER_H_

#include <string>
#include <vector>

#include "llvm/Support/Error.h"

namespace llvm {
class Module;
} // namespace llvm

namespace strata {

struct ExecutableExport {
  // Name the runtime sees (profiling, errors).
  std::string name;
  // The kernel: `void kernel(ptr binding0, ..., ptr bindingN-1,
  //                         i64 constant0, ..., i64 constantM-1,
  //                         i64 workgroup_id_x, i64 workgroup_count_x)`.
  std::string kernelFunction;
  unsigned bindingCount = 0;
  unsigned constantCount = 0;
};

llvm::Error
buildExecutableLibrary(llvm::Module &module, const std::string &libraryName,
                       const std::vector<ExecutableExport> &exports);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_EXECUTABLELIBRARYBUILDER_H_
