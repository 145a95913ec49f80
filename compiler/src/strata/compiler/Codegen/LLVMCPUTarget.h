//===- LLVMCPUTarget.h - native code for the host CPU ----------*- C++ -*-===//
//
// Turns an LLVM module into a position-independent ELF shared object: picks
// the target machine for a CPU name, optimizes, emits an object and links
// it with ld.lld.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_LLVMCPUTARGET_H_
#define STRATA_COMPILER_CODEGEN_LLVMCPUTARGET_H_

#include <memory>
#include <string>
#include <vector>

#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

namespace llvm {
class Module;
} // namespace llvm

namespace strata {

// `cpu` is "host" (the compiling machine's CPU and features) or an LLVM CPU
// name such as "x86-64-v3" or "znver4".
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createCPUTargetMachine(const std::string &cpu);

// The width of `machine`'s vector registers in bits (512 with AVX-512, 256
// with AVX, else 128): the width kernels are tiled for.
unsigned getVectorBits(llvm::TargetMachine &machine);

// The vector width of the first CPU of a comma-separated --cpu list.
llvm::Expected<unsigned> getVectorBitsForCPUs(llvm::StringRef cpus);

// Optimizes `module` at O3 for `targetMachine` and links it into a shared
// object. No libc is linked: an undefined symbol is an error.
llvm::Expected<std::vector<uint8_t>>
compileToSharedObject(llvm::Module &module, llvm::TargetMachine &targetMachine);

// LLVM's O3 pipeline for `machine` (any target: the cuda target's PTX
// goes through it too).
void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_LLVMCPUTARGET_H_
