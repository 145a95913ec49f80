//===- ConvertMemRefCopyToLinalg.cpp - copies as loops, not libcalls ------===//
//
// memref.copy between strided views lowers to a call of the `memrefCopy`
// runtime function, which executables (no libc, no MLIR runtime) do not
// have. As linalg.copy it becomes plain loops like every other kernel.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace strata {
#define GEN_PASS_DEF_CONVERTMEMREFCOPYTOLINALGPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

struct ConvertMemRefCopyToLinalgPass
    : public impl::ConvertMemRefCopyToLinalgPassBase<
          ConvertMemRefCopyToLinalgPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation().walk([&](memref::CopyOp copy) { copies.push_back(copy); });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp copy : copies) {
      rewriter.setInsertionPoint(copy);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(copy, copy.getSource(),
                                                  copy.getTarget());
    }
  }
};

} // namespace
} // namespace strata
