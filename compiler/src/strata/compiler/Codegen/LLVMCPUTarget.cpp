//===- LLVMCPUTarget.cpp --------------------------------------------------===//
#include "strata/compiler/Codegen/LLVMCPUTarget.h"

#include "strata/compiler/Codegen/ExecutableHelpers.h"

#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/TargetParser/X86TargetParser.h"

namespace strata {

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createCPUTargetMachine(const std::string &cpu) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  llvm::Triple triple("x86_64-unknown-linux-gnu");
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no LLVM target for " + triple.str() + ": " +
                                   error);

  std::string cpuName = cpu;
  std::string features;
  if (cpu == "host") {
    cpuName = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures featureList;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      featureList.AddFeature(feature.first(), feature.second);
    features = featureList.getString();
  } else if (cpu != "generic" &&
             llvm::X86::parseArchX86(cpu, /*Only64Bit=*/true) ==
                 llvm::X86::CK_None) {
    // Asked before creating anything: LLVM warns on stderr about unknown
    // names and aborts on CPUs without 64-bit mode.
    return llvm::createStringError(
        "unknown CPU '" + cpu +
        "': name host, an x86-64 level (x86-64, x86-64-v2, x86-64-v3, "
        "x86-64-v4) or a 64-bit x86 CPU LLVM knows (znver4, "
        "sapphirerapids, ...)");
  }
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpuName, features, options, llvm::Reloc::PIC_,
      llvm::CodeModel::Small, llvm::CodeGenOptLevel::Aggressive));
  if (!machine)
    return llvm::createStringError("cannot create a target machine for " +
                                   cpuName);
  return machine;
}

// Lets LLVM reorder float sums and products and fuse multiply-adds: a
// reduction (a dot product along a contiguous axis) then vectorizes into
// partial sums. Results differ from strict left-to-right order by rounding
// only, as in every optimized ML runtime.
static void allowFloatReassociation(llvm::Module &module) {
  for (llvm::Function &function : module)
    for (llvm::Instruction &instruction : llvm::instructions(function))
      if (llvm::isa<llvm::FPMathOperator>(instruction) &&
          (instruction.getOpcode() == llvm::Instruction::FAdd ||
           instruction.getOpcode() == llvm::Instruction::FSub ||
           instruction.getOpcode() == llvm::Instruction::FMul)) {
        instruction.setHasAllowReassoc(true);
        instruction.setHasAllowContract(true);
      }
}

// LLVM vectorizes loops (elementwise ops, a contraction's epilogue, pools)
// 256 bits wide on AVX-512 CPUs unless told otherwise, for the clock cost
// older cores paid for 512-bit instructions. The kernels use 512-bit
// registers throughout already, so those loops use them too: a ReLU or
// SiLU epilogue ran at half the width its contraction did.
static void preferFullVectorWidth(llvm::Module &module,
                                  llvm::TargetMachine &machine) {
  if (!machine.getTargetTriple().isX86())
    return;
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
  if (!subtarget || !subtarget->checkFeatures("+avx512f"))
    return;
  for (llvm::Function &function : module)
    if (!function.isDeclaration())
      function.addFnAttr("prefer-vector-width", "512");
}

void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine) {
  preferFullVectorWidth(module, machine);
  llvm::LoopAnalysisManager loopAM;
  llvm::FunctionAnalysisManager functionAM;
  llvm::CGSCCAnalysisManager cgsccAM;
  llvm::ModuleAnalysisManager moduleAM;
  llvm::PassBuilder builder(&machine);
  builder.registerModuleAnalyses(moduleAM);
  builder.registerCGSCCAnalyses(cgsccAM);
  builder.registerFunctionAnalyses(functionAM);
  builder.registerLoopAnalyses(loopAM);
  builder.crossRegisterProxies(loopAM, functionAM, cgsccAM, moduleAM);
  llvm::ModulePassManager passes =
      builder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  passes.run(module, moduleAM);
}

// Removes a temporary file when it goes out of scope.
struct ScopedTempFile {
  llvm::SmallString<128> path;
  ~ScopedTempFile() {
    if (!path.empty())
      llvm::sys::fs::remove(path);
  }
};

llvm::Expected<std::vector<uint8_t>>
compileToSharedObject(llvm::Module &module, llvm::TargetMachine &machine) {
  module.setDataLayout(machine.createDataLayout());
  module.setTargetTriple(machine.getTargetTriple());
  allowFloatReassociation(module);
  optimizeModule(module, machine);

  llvm::SmallVector<char, 0> object;
  {
    llvm::raw_svector_ostream stream(object);
    llvm::legacy::PassManager passes;
    if (machine.addPassesToEmitFile(passes, stream, nullptr,
                                    llvm::CodeGenFileType::ObjectFile))
      return llvm::createStringError("the target cannot emit object files");
    passes.run(module);
  }
  if (llvm::Error error =
          checkExecutableImports(llvm::StringRef(object.data(), object.size())))
    return error;
  llvm::Expected<std::string> helpers = getExecutableHelpersArchivePath();
  if (!helpers)
    return helpers.takeError();

  ScopedTempFile objectFile, libraryFile;
  int fd = -1;
  if (auto ec = llvm::sys::fs::createTemporaryFile("strata-executable", "o", fd,
                                                   objectFile.path))
    return llvm::errorCodeToError(ec);
  {
    llvm::raw_fd_ostream stream(fd, /*shouldClose=*/true);
    stream.write(object.data(), object.size());
  }
  if (auto ec = llvm::sys::fs::createTemporaryFile("strata-executable", "so",
                                                   libraryFile.path))
    return llvm::errorCodeToError(ec);

  llvm::StringRef lld = STRATA_LLD_PATH;
  // The helper archive comes after the object: ld.lld links the members
  // that define what the object calls, and --gc-sections drops the helpers
  // of those members nothing calls.
  llvm::SmallVector<llvm::StringRef> args = {lld,
                                             "-shared",
                                             "--no-undefined",
                                             "-z",
                                             "noexecstack",
                                             "-z",
                                             "relro",
                                             "-z",
                                             "now",
                                             "--build-id=none",
                                             "--gc-sections",
                                             "-s",
                                             "-o",
                                             libraryFile.path,
                                             objectFile.path,
                                             *helpers};
  std::string linkError;
  int rc =
      llvm::sys::ExecuteAndWait(lld, args, std::nullopt, {}, 0, 0, &linkError);
  if (rc != 0)
    return llvm::createStringError("linking the executable with " + lld.str() +
                                   " failed (exit " + std::to_string(rc) + ")" +
                                   (linkError.empty() ? "" : ": " + linkError));

  auto buffer = llvm::MemoryBuffer::getFile(libraryFile.path);
  if (!buffer)
    return llvm::errorCodeToError(buffer.getError());
  llvm::StringRef bytes = (*buffer)->getBuffer();
  return std::vector<uint8_t>(bytes.begin(), bytes.end());
}

unsigned getVectorBits(llvm::TargetMachine &machine) {
  const llvm::MCSubtargetInfo *subtarget = machine.getMCSubtargetInfo();
  if (subtarget->checkFeatures("+avx512f"))
    return 512;
  if (subtarget->checkFeatures("+avx"))
    return 256;
  return 128;
}

llvm::Expected<unsigned> getVectorBitsForCPUs(llvm::StringRef cpus) {
  llvm::StringRef first = cpus.split(',').first.trim();
  auto machine = createCPUTargetMachine(first.str());
  if (!machine)
    return machine.takeError();
  return getVectorBits(**machine);
}

} // namespace strata
