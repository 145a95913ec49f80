//===- LoweringConfig.h - code generation decisions, made once -*- C++ -*-===//
//
// Each executable's code generation decisions are made once, after
// outlining, and recorded as a #flow.lowering_config on its entry function:
// the workgroup split and the kernel tiles of each multiply-add op. Codegen
// reads them back and fails when it cannot honour them; it never chooses
// again.
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_CODEGEN_LOWERINGCONFIG_H_
#define STRATA_COMPILER_CODEGEN_LOWERINGCONFIG_H_

#include "strata/compiler/Codegen/BufferizeExecutable.h"
#include "strata/compiler/Codegen/ContractionStrategy.h"
#include "strata/compiler/Codegen/WorkgroupTiling.h"
#include "strata/compiler/Dialect/Flow/FlowDialect.h"

namespace strata {

// Chooses the configuration of `executable` for `vectorBits`-wide vector
// registers, records it on the entry function and sets the executable's
// workgroup count. The split is tried on a copy first, and the kernels are
// chosen on that copy as codegen will see them (split, generalized and
// fused), so codegen can honour both.
mlir::LogicalResult
configureExecutable(flow::ExecutableOp executable, unsigned vectorBits,
                    PipelineRunner runPipeline,
                    WorkgroupGrid grid = WorkgroupGrid::cpuCores);

// Whether an executable's entry has dynamically shaped tensors or index
// arguments (push constants); such executables run as loops in one
// workgroup for now.
bool hasDynamicShapes(mlir::func::FuncOp entry);

// The configuration recorded on `entry`, or null.
flow::LoweringConfigAttr getLoweringConfig(mlir::func::FuncOp entry);

// The workgroup split `config` records for a grid of `count` workgroups,
// or nullopt when it records none.
std::optional<WorkgroupTiling>
getWorkgroupTiling(flow::LoweringConfigAttr config, int64_t count);

flow::KernelConfigAttr getKernelConfigAttr(mlir::MLIRContext *context,
                                           const ContractionTiles &tiles);
ContractionTiles getContractionTiles(flow::KernelConfigAttr config);

} // namespace strata

#endif // STRATA_COMPILER_CODEGEN_LOWERINGCONFIG_H_
