//===- NVPTXTarget.cpp ----------------------------------------------------===//
#include "strata/compiler/Codegen/CUDA/NVPTXTarget.h"

#include "strata/compiler/Codegen/LLVMCPUTarget.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Triple.h"

// Debian's libLLVM holds every target; only the host's is initialized by
// the usual helpers.
extern "C" void LLVMInitializeNVPTXTargetInfo();
extern "C" void LLVMInitializeNVPTXTarget();
extern "C" void LLVMInitializeNVPTXTargetMC();
extern "C" void LLVMInitializeNVPTXAsmPrinter();

namespace strata {

llvm::Expected<unsigned> parseCudaArch(llvm::StringRef arch) {
  unsigned capability = 0;
  llvm::StringRef digits = arch;
  if (!digits.consume_front("sm_") || digits.getAsInteger(10, capability) ||
      capability < 50 || capability > 1210)
    return llvm::createStringError(
        "unknown CUDA architecture '" + arch.str() +
        "': name a compute capability as sm_XY (sm_80, sm_86, sm_90, ...)");
  return capability;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createNVPTXTargetMachine(llvm::StringRef arch) {
  llvm::Expected<unsigned> capability = parseCudaArch(arch);
  if (!capability)
    return capability.takeError();
  LLVMInitializeNVPTXTargetInfo();
  LLVMInitializeNVPTXTarget();
  LLVMInitializeNVPTXTargetMC();
  LLVMInitializeNVPTXAsmPrinter();
  llvm::Triple triple("nvptx64-nvidia-cuda");
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no LLVM target for " + triple.str() + ": " +
                                   error);
  // PTX ISA 7.8 is the oldest that knows sm_90; every CUDA 12+ driver reads
  // it.
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, arch, "+ptx78", options, std::nullopt, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return llvm::createStringError("cannot create an NVPTX target machine "
                                   "for " +
                                   arch.str());
  return machine;
}

llvm::Expected<std::string> compileToPTX(llvm::Module &module,
                                         llvm::TargetMachine &machine) {
  module.setDataLayout(machine.createDataLayout());
  module.setTargetTriple(machine.getTargetTriple());
  optimizeModule(module, machine);
  llvm::SmallString<0> ptx;
  {
    llvm::raw_svector_ostream stream(ptx);
    llvm::legacy::PassManager passes;
    if (machine.addPassesToEmitFile(passes, stream, nullptr,
                                    llvm::CodeGenFileType::AssemblyFile))
      return llvm::createStringError("the NVPTX target cannot emit PTX");
    passes.run(module);
  }
  return std::string(ptx.str());
}

} // namespace strata
