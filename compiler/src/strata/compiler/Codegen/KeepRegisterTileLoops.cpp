//===- KeepRegisterTileLoops.cpp - no LLVM unrolling of register tiles ----===//
//
// The kernel strategies size a register tile for the vector register file:
// its accumulators, the factors read each step and nothing more. A loop
// that carries such a tile (vector iter_args) or runs its FMAs is marked
// so that LLVM's unroller leaves it as it is. Partially unrolled, its
// next step's factors are loaded early and the tile no longer fits: on a
// Zen 4 core, whose scheduling model lets LLVM unroll loops of up to 512
// micro-ops, a blocked 3x3 convolution spilled an accumulator to the
// stack and reloaded it each step (2.0 -> 3.4 ms). The decision is the
// strategy's, recorded once; LLVM's cost model does not revisit it.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMAttrs.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace strata {
#define GEN_PASS_DEF_KEEPREGISTERTILELOOPSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

// Whether `loop` carries vector values from step to step or runs vector
// FMAs in its own body (not in a nested loop).
bool isRegisterTileLoop(scf::ForOp loop) {
  if (llvm::any_of(loop.getRegionIterArgs(), [](BlockArgument arg) {
        return isa<VectorType>(arg.getType());
      }))
    return true;
  return llvm::any_of(loop.getBody()->getOperations(),
                      [](Operation &op) { return isa<vector::FMAOp>(op); });
}

struct KeepRegisterTileLoopsPass
    : public impl::KeepRegisterTileLoopsPassBase<KeepRegisterTileLoopsPass> {
  void runOnOperation() override {
    MLIRContext *context = &getContext();
    auto unroll = LLVM::LoopUnrollAttr::get(
        context, /*disable=*/BoolAttr::get(context, true), /*count=*/{},
        /*runtimeDisable=*/{}, /*full=*/{}, /*followupUnrolled=*/{},
        /*followupRemainder=*/{}, /*followupAll=*/{});
    auto noUnroll = LLVM::LoopAnnotationAttr::get(
        context, /*disableNonforced=*/{}, /*vectorize=*/{}, /*interleave=*/{},
        unroll, /*unrollAndJam=*/{}, /*licm=*/{}, /*distribute=*/{},
        /*pipeline=*/{}, /*peeled=*/{}, /*unswitch=*/{}, /*mustProgress=*/{},
        /*isVectorized=*/{}, /*startLoc=*/{}, /*endLoc=*/{},
        /*parallelAccesses=*/{});
    getOperation().walk([&](scf::ForOp loop) {
      // (convert-scf-to-cf moves the annotation to the loop's back edge.)
      if (isRegisterTileLoop(loop))
        loop->setAttr("loop_annotation", noUnroll);
    });
  }
};

} // namespace
} // namespace strata
