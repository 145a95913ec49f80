//===- NVPTXTarget.h - LLVM IR to PTX for the cuda target -----*- C++ -*-===//
#ifndef STRATA_COMPILER_CODEGEN_CUDA_NVPTXTARGET_H_
#define STRATA_COMPILER_CODEGEN_CUDA_NVPTXTARGET_H_

#include <memory>
#include <string>

#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

namespace llvm {
class Module;
} // namespace llvm

namespace strata {

// The compute capability of an `sm_XY` name (80 for sm_80), or an error
// naming the accepted form.
llvm::Expected<unsigned> parseCudaArch(llvm::StringRef arch);

// A target machine emitting PTX for `arch` ("sm_80", "sm_90", ...).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createNVPTXTargetMachine(llvm::StringRef arch);

// Optimizes `module` for `machine` and returns its PTX text.
llvm::Expected<std::string> compileToPTX(llvm::Module &module,
                                         llvm::TargetMachine &machine);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_CUDA_NVPTXTARGET_H_
