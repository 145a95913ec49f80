//===- LowerExecutablesToCUDA.cpp - flow.executable to PTX ----------------===//
//
// The cuda target: for each flow.executable, bufferizes it like every
// target (BufferizeExecutable.h), turns linalg into parallel loops that
// DistributeToThreads spreads over one thread block per workgroup, lowers
// to the LLVM dialect with NVVM's special registers, and compiles the
// kernel to PTX with LLVM's NVPTX backend. The PTX, its kernel names and
// block sizes make the executable of format
// STRATA_HAL_EXECUTABLE_FORMAT_CUDA_PTX (cuda_executable_format.h) that
// the runtime's cuda driver loads with cuModuleLoadData.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Codegen/BufferizeExecutable.h"
#include "strata/compiler/Codegen/CUDA/NVPTXTarget.h"
#include "strata/compiler/Codegen/CUDA/ThreadBlocks.h"
#include "strata/compiler/Codegen/ExecutableTargets.h"
#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "strata/hal/drivers/cuda/cuda_executable_format.h"
#include "llvm/IR/Module.h"

#include <cstring>

namespace strata {
#define GEN_PASS_DEF_LOWEREXECUTABLESTOCUDAPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Buffer code to the LLVM dialect. Kept as text so `strata-opt` users can
// reproduce any step.
constexpr const char *kToLLVMPipeline =
    "func.func(strata-memref-copy-to-linalg,convert-linalg-to-parallel-loops,"
    "strata-expand-math,strata-cuda-expand-float-remainder),"
    "strata-cuda-distribute-to-threads,"
    // Integer powers become small functions (no libdevice either).
    "convert-math-to-funcs,"
    "lower-affine,convert-scf-to-cf,expand-strided-metadata,lower-affine,"
    "arith-expand,convert-vector-to-llvm,"
    "finalize-memref-to-llvm,convert-math-to-llvm,convert-arith-to-llvm,"
    "convert-cf-to-llvm,"
    "convert-func-to-llvm{use-bare-ptr-memref-call-conv=1},"
    "convert-index-to-llvm,convert-ub-to-llvm,reconcile-unrealized-casts,"
    "canonicalize";

// The workgroup id and count of the entry (its last two arguments) become
// the thread block's position in the grid, x fastest, x divided by the
// blocks of each workgroup.
void mapWorkgroupsToBlocks(func::FuncOp entry, unsigned bindingCount,
                           int64_t blocksPerWorkgroup) {
  OpBuilder builder(entry.getContext());
  builder.setInsertionPointToStart(&entry.getBody().front());
  Location loc = entry.getLoc();
  Type i32 = builder.getI32Type();
  auto toIndex = [&](Value value) -> Value {
    return arith::IndexCastUIOp::create(builder, loc, builder.getIndexType(),
                                        value);
  };
  Value blocks =
      arith::ConstantIndexOp::create(builder, loc, blocksPerWorkgroup);
  auto perWorkgroup = [&](Value value) -> Value {
    return builder.createOrFold<arith::DivUIOp>(loc, value, blocks);
  };
  Value idX =
      perWorkgroup(toIndex(NVVM::BlockIdXOp::create(builder, loc, i32)));
  Value idY = toIndex(NVVM::BlockIdYOp::create(builder, loc, i32));
  Value idZ = toIndex(NVVM::BlockIdZOp::create(builder, loc, i32));
  Value countX =
      perWorkgroup(toIndex(NVVM::GridDimXOp::create(builder, loc, i32)));
  Value countY = toIndex(NVVM::GridDimYOp::create(builder, loc, i32));
  Value countZ = toIndex(NVVM::GridDimZOp::create(builder, loc, i32));
  auto mul = [&](Value a, Value b) -> Value {
    return arith::MulIOp::create(builder, loc, a, b);
  };
  auto add = [&](Value a, Value b) -> Value {
    return arith::AddIOp::create(builder, loc, a, b);
  };
  Value id = add(idX, mul(countX, add(idY, mul(countY, idZ))));
  Value count = mul(countX, mul(countY, countZ));
  entry.getArgument(bindingCount).replaceAllUsesWith(id);
  entry.getArgument(bindingCount + 1).replaceAllUsesWith(count);
  (void)entry.eraseArguments(llvm::BitVector(entry.getNumArguments(), false)
                                 .set(bindingCount, bindingCount + 2));
}

// NVPTX has no library to call for integer division, remainder or float
// conversion wider than 64 bits (LLVM would abort): refuse them here.
LogicalResult checkNoWideLibraryCalls(ModuleOp module) {
  auto isWide = [](Type type) {
    auto integer = dyn_cast<IntegerType>(getElementTypeOrSelf(type));
    return integer && integer.getWidth() > 64;
  };
  WalkResult result = module.walk([&](Operation *op) {
    if (!isa<LLVM::SDivOp, LLVM::UDivOp, LLVM::SRemOp, LLVM::URemOp,
             LLVM::FPToSIOp, LLVM::FPToUIOp, LLVM::SIToFPOp, LLVM::UIToFPOp>(
            op))
      return WalkResult::advance();
    if (llvm::none_of(op->getOperandTypes(), isWide) &&
        llvm::none_of(op->getResultTypes(), isWide))
      return WalkResult::advance();
    op->emitOpError("on integers wider than 64 bits is not supported by the "
                    "cuda target");
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

// PTX identifiers are letters, digits and '_' (and '$', which we avoid).
std::string getKernelName(StringRef name) {
  std::string kernel;
  for (char c : name)
    kernel += llvm::isAlnum(c) ? c : '_';
  if (kernel.empty() || llvm::isDigit(kernel.front()))
    kernel.insert(0, "k_");
  return kernel;
}

void appendU32(std::string &bytes, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    bytes.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}

// The executable's bytes in the layout of cuda_executable_format.h: one
// export.
std::string packExecutable(StringRef kernelName, unsigned bindingCount,
                           StringRef ptx, unsigned capability,
                           int64_t blocksPerWorkgroup) {
  uint32_t headerSize = sizeof(strata_cuda_executable_header_t);
  uint32_t nameOffset = headerSize + sizeof(strata_cuda_export_t);
  uint32_t ptxOffset = nameOffset + kernelName.size();
  std::string bytes;
  char magic[8] = {};
  std::memcpy(magic, STRATA_CUDA_EXECUTABLE_MAGIC,
              sizeof(STRATA_CUDA_EXECUTABLE_MAGIC));
  bytes.append(magic, sizeof(magic));
  appendU32(bytes, STRATA_CUDA_EXECUTABLE_VERSION);
  appendU32(bytes, /*export_count=*/1);
  appendU32(bytes, ptxOffset);
  appendU32(bytes, ptx.size() + 1);
  appendU32(bytes, capability);
  appendU32(bytes, /*reserved=*/0);
  appendU32(bytes, nameOffset);
  appendU32(bytes, kernelName.size());
  appendU32(bytes, bindingCount);
  appendU32(bytes, /*push_constant_count=*/0);
  appendU32(bytes, kCudaThreadsPerBlock);
  appendU32(bytes, 1);
  appendU32(bytes, 1);
  appendU32(bytes, blocksPerWorkgroup);
  bytes.append(kernelName.data(), kernelName.size());
  bytes.append(ptx.data(), ptx.size());
  bytes.push_back('\0');
  return bytes;
}

struct LowerExecutablesToCUDAPass
    : public impl::LowerExecutablesToCUDAPassBase<LowerExecutablesToCUDAPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    getBufferizationDependentDialects(registry);
    OpPassManager pipeline(ModuleOp::getOperationName());
    if (succeeded(parsePassPipeline(kToLLVMPipeline, pipeline)))
      pipeline.getDependentDialects(registry);
  }

  LogicalResult lowerExecutable(flow::ExecutableOp executable,
                                llvm::TargetMachine &machine,
                                unsigned capability);

  void runOnOperation() override {
    llvm::Expected<unsigned> capability = parseCudaArch(cudaArch);
    if (!capability) {
      getOperation().emitError(llvm::toString(capability.takeError()));
      return signalPassFailure();
    }
    auto machine = createNVPTXTargetMachine(cudaArch);
    if (!machine) {
      getOperation().emitError("cannot target ")
          << cudaArch << ": " << llvm::toString(machine.takeError());
      return signalPassFailure();
    }
    for (auto executable :
         llvm::to_vector(getOperation().getOps<flow::ExecutableOp>()))
      if (!isForAnotherTarget(executable, "cuda") &&
          failed(lowerExecutable(executable, **machine, *capability)))
        return signalPassFailure();
  }
};

LogicalResult
LowerExecutablesToCUDAPass::lowerExecutable(flow::ExecutableOp executable,
                                            llvm::TargetMachine &machine,
                                            unsigned capability) {
  // The CPU's vector width only shapes tiles the GPU kernels do not use.
  FailureOr<BufferizedExecutable> bufferized =
      bufferizeExecutable(executable, /*vectorBits=*/128,
                          [&](OpPassManager &pipeline, ModuleOp module) {
                            return runPipeline(pipeline, module);
                          });
  if (failed(bufferized))
    return failure();
  if (bufferized->constantCount != 0)
    return executable.emitOpError(
        "has dynamic shapes; the cuda target compiles static shapes only so "
        "far (--target=cpu runs them, or pin the shapes: --input-shape / "
        "--dim)");
  ModuleOp inner = executable.getInnerModule();
  func::FuncOp entry = bufferized->entry;
  unsigned bindingCount = bufferized->bindingCount;
  std::string kernelName = getKernelName(entry.getSymName());
  entry.setSymName(kernelName);
  entry->removeAttr(flow::LoweringConfigAttr::getAttrName());
  // Bindings never overlap where one of them is written (see the cpu
  // target).
  for (unsigned i = 0; i < bindingCount; ++i)
    entry.setArgAttr(i, LLVM::LLVMDialect::getNoAliasAttrName(),
                     UnitAttr::get(executable.getContext()));
  // Contractions become thread-block kernels first: they choose how many
  // blocks share a workgroup.
  OpPassManager tiling(ModuleOp::getOperationName());
  tiling.nest<func::FuncOp>().addPass(createCUDATileContractionsPass());
  if (failed(runPipeline(tiling, inner)))
    return failure();
  int64_t blocksPerWorkgroup = 1;
  if (auto blocks = entry->getAttrOfType<IntegerAttr>(kBlocksPerWorkgroupAttr))
    blocksPerWorkgroup = blocks.getInt();
  entry->removeAttr(kBlocksPerWorkgroupAttr);
  mapWorkgroupsToBlocks(entry, bindingCount, blocksPerWorkgroup);

  OpPassManager toLLVM(ModuleOp::getOperationName());
  if (failed(parsePassPipeline(kToLLVMPipeline, toLLVM)) ||
      failed(runPipeline(toLLVM, inner)))
    return executable.emitOpError("failed to lower to the LLVM dialect for "
                                  "the cuda target");
  if (failed(checkNoWideLibraryCalls(inner)))
    return failure();
  auto kernel = inner.lookupSymbol<LLVM::LLVMFuncOp>(kernelName);
  if (!kernel)
    return executable.emitOpError("lost its entry point ") << kernelName;
  Builder builder(executable.getContext());
  kernel->setAttr(NVVM::NVVMDialect::getKernelFuncAttrName(),
                  builder.getUnitAttr());
  kernel->setAttr(NVVM::NVVMDialect::getMaxntidAttrName(),
                  builder.getDenseI32ArrayAttr(
                      {static_cast<int32_t>(kCudaThreadsPerBlock), 1, 1}));
  if (printLoweredIR) {
    llvm::outs() << "// -----// executable @" << executable.getSymName()
                 << " for " << cudaArch << " //----- //\n";
    inner.print(llvm::outs());
    llvm::outs() << "\n";
  }

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(inner, llvmContext, executable.getSymName());
  if (!llvmModule)
    return executable.emitOpError("failed to translate to LLVM IR");
  llvm::Expected<std::string> ptx = compileToPTX(*llvmModule, machine);
  if (!ptx)
    return executable.emitOpError("PTX generation for ")
           << cudaArch << " failed: " << llvm::toString(ptx.takeError());

  std::string bytes = packExecutable(kernelName, bindingCount, *ptx, capability,
                                     blocksPerWorkgroup);
  OpBuilder opBuilder(executable);
  hal::ExecutableBinaryOp::create(
      opBuilder, executable.getLoc(), executable.getSymName(),
      STRATA_HAL_EXECUTABLE_FORMAT_CUDA_PTX,
      ArrayRef<char>(bytes.data(), bytes.size()), bindingCount,
      /*requiredCpuFeatures=*/{}, getVariantOf(executable));
  executable.erase();
  return success();
}

} // namespace
} // namespace strata
