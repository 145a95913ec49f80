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

// How many bytes a dynamically shaped binding spans: `elementBytes` times
// its dims, each static (`staticDims[i]` >= 0) or the push constant
// `staticDims[i] == -1 - k` (the kernel's index argument k).
struct BindingExtent {
  unsigned binding = 0;
  int64_t elementBytes = 1;
  std::vector<int64_t> dims;
};

struct ExecutableExport {
  // Name the runtime sees (profiling, errors).
  std::string name;
  // The kernel: `void kernel(ptr binding0, ..., ptr bindingN-1,
  //                         i64 constant0, ..., i64 constantM-1,
  //                         i64 workgroup_id_x, i64 workgroup_count_x)`.
  std::string kernelFunction;
  unsigned bindingCount = 0;
  // Index (64-bit) push constants; each takes two 32-bit words, low first.
  unsigned constantCount = 0;
  // The entry fails a dispatch (returns 1) whose bindings are shorter than
  // these extents: a kernel reads and writes what its push constants say.
  std::vector<BindingExtent> bindingExtents;
};

llvm::Error
buildExecutableLibrary(llvm::Module &module, const std::string &libraryName,
                       const std::vector<ExecutableExport> &exports);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_EXECUTABLELIBRARYBUILDER_H_
