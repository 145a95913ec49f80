//===- Passes.td - Strata compiler passes ------------------*- tablegen -*-===//
#ifndef STRATA_COMPILER_PASSES
#define STRATA_COMPILER_PASSES

include "mlir/Pass/PassBase.td"

def DecomposeAggregateOpsPass : Pass<"strata-decompose-aggregate-ops",
                                     "mlir::func::FuncOp"> {
  let summary = "Expands aggregate ops such as linalg.softmax into linalg ops";
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TieArgumentDimsPass : Pass<"strata-tie-argument-dims",
                               "mlir::func::FuncOp"> {
  let summary = "Records which dynamic argument dims the program equates "
                "(to a static size or an earlier argument's dim)";
}

def OutlineConditionalsPass : Pass<"strata-outline-conditionals",
                                   "mlir::ModuleOp"> {
  let summary = "Moves each branch of the host program's run-time "
                "conditionals into a private function it calls";
  let description = [{
    Each branch of an `scf.if` directly in a function (or in a branch of
    one) that computes more than a choice among values defined above
    becomes a private function taking the tensors it reads from above;
    scalars it reads from above are recomputed inside it. Later phases see
    straight-line functions and calls in branches.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def FuseElementwiseOpsPass : Pass<"strata-fuse-elementwise-ops",
                                  "mlir::func::FuncOp"> {
  let summary = "Fuses elementwise linalg producers into their consumers, "
                "except transcendental math a consumer reads across a loop";
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::tensor::TensorDialect"];
}

def BlockChannelsPass : Pass<"strata-block-channels", "mlir::func::FuncOp"> {
  let summary = "Puts convolution chains in a blocked channel layout "
                "(NCHW[b]c), packing constants at compile time";
  let description = [{
    Convolutions, depthwise convolutions and the pooling ops between them
    whose channels divide by `block` run on [N, C/block, H, W, block]
    tensors; linalg.pack/unpack ops carry values into and out of the layout,
    travel through elementwise ops and pads, cancel where they meet, and are
    lowered to transposes where they remain.
  }];
  let options = [
    Option<"block", "block", "int64_t", /*default=*/"16",
           "Channels per block (the vector width in f32 lanes; below 2 the "
           "pass does nothing)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def PackMatmulWeightsPass
    : Pass<"strata-pack-matmul-weights", "mlir::func::FuncOp"> {
  let summary = "Packs the constant matrix of a matmul into panels of its "
                "kernel's register tile width at compile time";
  let description = [{
    A linalg.matmul by a constant [K, N] f32 matrix becomes a contraction
    over the matrix packed into [N/nr, K, nr] panels (nr: the kernel's
    register tile width, 8 vectors of `vector-bits` for one row, the
    matrix kernel's tile for more), computed at compile time, so that each
    register tile streams one contiguous panel instead of a short piece of
    every row (each in another page, out of the prefetchers' reach).
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "The cpu target's vector width (0: the pass does nothing)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def ConvertConvToIm2ColPass : Pass<"strata-convert-conv-to-im2col",
                                   "mlir::func::FuncOp"> {
  let summary = "Rewrites NCHW convolutions with several filter taps as an "
                "im2col gather and a matrix product";
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def SplitAccumulatorInitsPass : Pass<"strata-split-accumulator-inits",
                                     "mlir::func::FuncOp"> {
  let summary = "Makes a sum into a value a sum from zero followed by an "
                "elementwise add of the value";
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def TransposesAsReshapesPass : Pass<"strata-transposes-as-reshapes",
                                    "mlir::func::FuncOp"> {
  let summary = "Rewrites transposes that move only dimensions of size 1 "
                "as reshapes (views on the host)";
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def FormDispatchRegionsPass : Pass<"strata-form-dispatch-regions",
                                   "mlir::func::FuncOp"> {
  let summary = "Groups linalg ops and their fusable producers into "
                "flow.dispatch.region ops";
  let description = [{
    Every linalg op roots a region unless it was pulled into a consumer's
    region. Producers that are cheap to recompute (tensor.empty, splat
    constants, linalg.fill) are cloned into each region that uses them, and
    elementwise producers with one use are moved into their consumer's
    region, so no math is left outside a region.
  }];
  let dependentDialects = ["::strata::flow::FlowDialect"];
}

def FusePadsIntoConsumersPass
    : Pass<"strata-fuse-pads-into-consumers", "mlir::func::FuncOp"> {
  let summary = "Moves a pad dispatch into its consumer's region when each "
                "workgroup can pad its own small slice";
  let description = [{
    A region holding only a static constant pad (of a copy of a value no
    dispatch can write padded) whose result only the root of another
    region reads joins that region when the root's workgroup split reads
    the padded operand along one unpadded dimension and each workgroup's
    slice of it is at most 64 KiB (or, unsplit, all of it is): each
    workgroup then pads its slice into a stack temporary right before it
    reads it, saving a dispatch and a pass over memory.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "The cpu target's vector width, which decides the workgroup "
           "split (0: the pass does nothing)">,
  ];
  let dependentDialects = ["::strata::flow::FlowDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MergeSmallDispatchRegionsPass
    : Pass<"strata-merge-small-dispatch-regions", "mlir::func::FuncOp"> {
  let summary = "Merges a small dispatch region into the small region before "
                "it whose results it reads";
  let description = [{
    A region that would run as one workgroup and reads results of the
    one-workgroup region just before it (every other value it reads being
    available before that one) joins it: one dispatch runs both in order,
    and the values only the second read stay inside it. Saves the runtime's
    per-dispatch cost on chains of small dispatches (unrolled recurrences).
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"0",
           "The cpu target's vector width, which decides the workgroup "
           "split (0: the pass does nothing)">,
  ];
  let dependentDialects = ["::strata::flow::FlowDialect"];
}

def OutlineDispatchRegionsPass : Pass<"strata-outline-dispatch-regions",
                                      "mlir::ModuleOp"> {
  let summary = "Turns each dispatch region into a flow.executable and a "
                "flow.dispatch";
  let dependentDialects = ["::strata::flow::FlowDialect",
                           "::mlir::func::FuncDialect"];
}

def ConfigureExecutablesPass : Pass<"strata-configure-executables",
                                    "mlir::ModuleOp"> {
  let summary = "Chooses each executable's workgroup grid and kernel tiles "
                "once and records them";
  let description = [{
    For each flow.executable: splits its work over a workgroup grid and
    chooses the tiles of its multiply-add kernels for the target's vector
    width, records both as a #flow.lowering_config on the entry function,
    and sets the grid as the workgroup count of the executable and of its
    dispatches. Codegen honours the configuration or fails.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"512",
           "Width of the target's vector registers in bits">,
    Option<"workgroupGrid", "workgroup-grid", "std::string",
           /*default=*/"\"cpu\"",
           "What runs the workgroups: cpu (a few cores: at most 64 wide "
           "tiles) or gpu (thread blocks: up to 4096 narrow tiles)">,
  ];
  let dependentDialects = ["::strata::flow::FlowDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def DeduplicateExecutablesPass : Pass<"strata-deduplicate-executables",
                                      "mlir::ModuleOp"> {
  let summary = "Merges executables that differ only in their names";
  let description = [{
    Executables whose entry functions are equal but for their names, with
    the same workgroup grid, become one: the first is kept and every
    dispatch of the others is pointed at it.
  }];
  let dependentDialects = ["::strata::flow::FlowDialect"];
}

def ConvertToHostProgramPass : Pass<"strata-convert-to-host-program",
                                    "mlir::ModuleOp"> {
  let summary = "Rewrites host functions from tensors to hal buffers, "
                "command buffers and buffer views";
  let description = [{
    Public functions take and return !hal.buffer_view; each argument is
    checked against its declared type. Dispatch results get buffers from
    the device allocator; dispatches are recorded into one command buffer
    with barriers between dependent dispatches, submitted once and awaited
    before results are returned.
  }];
  let dependentDialects = ["::strata::hal::HALDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::cf::ControlFlowDialect"];
}

def EpiloguesInPlacePass
    : Pass<"strata-epilogues-in-place", "mlir::func::FuncOp"> {
  let summary = "Lets elementwise epilogues overwrite the value they read";
  let description = [{
    An all-parallel linalg.generic whose init it never reads takes as its
    init an input of the same type and indexing that a linalg op of the
    same block produces for it alone. Bufferized, the producer and its
    epilogue then share one buffer (the dispatch's output, after
    empty-tensor elimination) instead of a temporary per tile.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def ConvertMemRefCopyToLinalgPass
    : Pass<"strata-memref-copy-to-linalg", "mlir::func::FuncOp"> {
  let summary = "Rewrites memref.copy as linalg.copy so it lowers to loops";
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def VectorizableLoopOrderPass
    : Pass<"strata-vectorizable-loop-order", "mlir::func::FuncOp"> {
  let summary = "Moves reduction loops outward so a contiguous parallel loop "
                "is innermost";
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def VectorizeShortRowsPass
    : Pass<"strata-vectorize-short-rows", "mlir::func::FuncOp"> {
  let summary = "Vectorizes elementwise ops whose innermost row is a few "
                "vectors long (a blocked channel layout's channels), and "
                "transposes into and out of that layout";
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect"];
}

def TileAndVectorizeContractionsPass
    : Pass<"strata-tile-and-vectorize-contractions", "mlir::func::FuncOp"> {
  let summary = "Tiles f32 contractions for the caches and into register "
                "tiles, and vectorizes the register tiles into FMAs";
  let options = [
    Option<"vectorBits", "vector-bits", "unsigned", /*default=*/"512",
           "Width of the target's vector registers in bits">,
    Option<"lowerVectors", "lower-vectors", "bool", /*default=*/"true",
           "Lower the vector contractions to FMAs (off: stop at "
           "vector.contract, for tests)">,
  ];
  let dependentDialects = ["::mlir::vector::VectorDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def ExpandMathPass : Pass<"strata-expand-math", "mlir::func::FuncOp"> {
  let summary = "Expands math functions into code that needs no libm";
  let dependentDialects = ["::mlir::math::MathDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::vector::VectorDialect",
                           "::mlir::x86vector::X86VectorDialect"];
}

def KeepRegisterTileLoopsPass
    : Pass<"strata-keep-register-tile-loops", "mlir::func::FuncOp"> {
  let summary = "Marks the loops that carry a kernel's register tile so that "
                "LLVM does not unroll them past the register file";
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def LowerExecutablesPass : Pass<"strata-lower-executables", "mlir::ModuleOp"> {
  let summary = "Compiles every flow.executable for the CPU target into a "
                "hal.executable.binary";
  let options = [
    Option<"cpu", "cpu", "std::string", /*default=*/"\"host\"",
           "Target CPU (host, x86-64, x86-64-v3, znver4, ...), or a "
           "comma-separated list: one variant per CPU, the best the running "
           "CPU supports loaded">,
    Option<"printLoweredIR", "print-lowered-ir", "bool", "false",
           "Print each executable's LLVM-dialect form to stdout">,
    Option<"printLibraryIR", "print-library-ir", "bool", "false",
           "Print each executable's LLVM IR with its library entry points "
           "(before optimization) to stdout">,
    Option<"progress", "progress", "bool", "false",
           "Report each tenth of the executables compiled on stderr">,
  ];
  let dependentDialects = ["::strata::hal::HALDialect"];
}

def LowerExecutablesToVMVXPass
    : Pass<"strata-lower-executables-vmvx", "mlir::ModuleOp"> {
  let summary = "Compiles every flow.executable for the vmvx target (VM "
                "bytecode calling runtime microkernels) into a "
                "hal.executable.binary";
  let options = [
    Option<"printLoweredIR", "print-lowered-ir", "bool", "false",
           "Print each executable's vm.module to stdout">,
  ];
  let dependentDialects = ["::strata::hal::HALDialect",
                           "::strata::vm::VMDialect"];
}

def CloneExecutablesPerTargetPass
    : Pass<"strata-clone-executables-per-target", "mlir::ModuleOp"> {
  let summary = "Marks every flow.executable for the first target and clones "
                "it for each other one (--target=cpu,cuda)";
  let options = [
    Option<"targets", "targets", "std::string", /*default=*/"\"cpu\"",
           "Comma-separated targets, the first one preferred">,
  ];
}

def LowerExecutablesToCUDAPass
    : Pass<"strata-lower-executables-cuda", "mlir::ModuleOp"> {
  let summary = "Compiles every flow.executable for the cuda target (PTX, "
                "one thread block per workgroup) into a hal.executable.binary";
  let options = [
    Option<"cudaArch", "cuda-arch", "std::string", /*default=*/"\"sm_80\"",
           "The oldest GPU the PTX runs on, as sm_XY (sm_80, sm_90, ...)">,
    Option<"printLoweredIR", "print-lowered-ir", "bool", "false",
           "Print each executable's LLVM-dialect kernel to stdout">,
  ];
  let dependentDialects = ["::strata::hal::HALDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def CUDAExpandFloatRemainderPass
    : Pass<"strata-cuda-expand-float-remainder", "mlir::func::FuncOp"> {
  let summary = "Expands scalar arith.remf into exact long division (fmod "
                "without libdevice)";
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::scf::SCFDialect"];
}

def CUDATileContractionsPass
    : Pass<"strata-cuda-tile-contractions", "mlir::func::FuncOp"> {
  let summary = "Writes a dispatch's f32 contraction as a thread-block kernel "
                "with shared-memory tiles and per-thread register tiles";
  let description = [{
    For a cuda kernel on buffers whose work is one contraction (C += A * B,
    any batch loops, inputs f32 or extended to it), optionally after a fill
    of C and before elementwise epilogues on C: each thread block computes
    64 x 128 tiles of C, staging 16-deep slices of A and B in shared memory
    and holding a 4 x 8 tile of accumulators per thread; the fill becomes
    the accumulators' start and the epilogues run on them before the one
    store. Blocks split the columns (`strata.cuda.blocks_per_workgroup` on
    the function). Kernels of any other shape are left to the per-element
    lowering.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect",
                           "::mlir::NVVM::NVVMDialect",
                           "::mlir::affine::AffineDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def CUDADistributeToThreadsPass
    : Pass<"strata-cuda-distribute-to-threads", "mlir::ModuleOp"> {
  let summary = "Spreads each workgroup's outermost parallel loops over the "
                "threads of its thread block";
  let description = [{
    For the public functions of a module (a cuda kernel on buffers): each
    outermost scf.parallel becomes a loop over the flattened iterations
    strided by the block's thread count, other writes run on thread 0, a
    barrier follows each such phase, and allocas outside the loops move to
    shared memory.
  }];
  let dependentDialects = ["::mlir::NVVM::NVVMDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect"];
}

def VMVXLowerContractionsPass
    : Pass<"strata-vmvx-lower-contractions", "mlir::ModuleOp"> {
  let summary = "Rewrites f32 contractions on buffers into calls of the "
                "vmvx.matmul.f32 microkernel";
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def VMVXConvertKernelToVMPass
    : Pass<"strata-vmvx-convert-kernel-to-vm", "mlir::ModuleOp"> {
  let summary = "Converts a lowered vmvx kernel module (cf, arith, math, "
                "memref on buffers) into a vm.module of dispatch functions";
  let dependentDialects = ["::strata::vm::VMDialect"];
}

def ConvertHostToVMPass : Pass<"strata-convert-host-to-vm", "mlir::ModuleOp"> {
  let summary = "Lowers the host program into one vm.module";
  let description = [{
    hal ops become calls of `hal` module imports, executables become rodata
    plus a global created in `__init`, and func/arith become vm ops.
  }];
  let options = [
    Option<"moduleName", "module-name", "std::string", "\"module\"",
           "Name of the VM module">,
  ];
  let dependentDialects = ["::strata::vm::VMDialect"];
}

def HoistDeviceQueriesPass
    : Pass<"strata-hoist-device-queries", "mlir::ModuleOp"> {
  let summary = "Looks each device up once, in __init";
  let description = [{
    `hal.devices.get` calls with a constant ordinal become loads of a global
    that `__init` (created if the module has none) fills first. Allocator
    queries stay per call: a device's allocator may be replaced later.
  }];
  let dependentDialects = ["::strata::vm::VMDialect"];
}

#endif // STRATA_COMPILER_PASSES
