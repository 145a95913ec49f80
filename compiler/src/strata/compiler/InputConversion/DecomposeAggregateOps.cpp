//===- DecomposeAggregateOps.cpp - e.g. linalg.softmax into generics ------===//
//
// Ops such as linalg.softmax are not structured ops themselves; they expand
// into a few linalg ops (max-reduce, exp, sum-reduce, divide) that dispatch
// region formation and codegen handle like any other.
//
//===----------------------------------------------------------------------===//

#include "strata/compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"

namespace strata {
#define GEN_PASS_DEF_DECOMPOSEAGGREGATEOPSPASS
#include "strata/compiler/Passes.h.inc"
} // namespace strata

using namespace mlir;

namespace strata {
namespace {

struct DecomposeAggregateOpsPass
    : public impl::DecomposeAggregateOpsPassBase<DecomposeAggregateOpsPass> {
  void runOnOperation() override {
    SmallVector<linalg::AggregatedOpInterface> ops;
    getOperation().walk(
        [&](linalg::AggregatedOpInterface op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::AggregatedOpInterface op : ops) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> results = op.decomposeOperation(rewriter);
      if (failed(results)) {
        op->emitOpError("cannot be decomposed into linalg ops");
        return signalPassFailure();
      }
      rewriter.replaceOp(op, *results);
    }
  }
};

} // namespace
} // namespace strata
