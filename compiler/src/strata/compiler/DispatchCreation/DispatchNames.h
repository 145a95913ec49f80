//===- DispatchNames.h - what a dispatch computes, in a user's words ------===//
//
// Profiles name every dispatch after the model ops it holds, e.g.
// "conv2d_relu:/layer1/layer1.0/conv1/Conv": the kinds of its meaningful ops
// (the root first: a contraction, convolution, pooling, reduction or copy;
// then the elementwise ops fused into it), then ':' and the model node the
// root came from, the first NameLoc of its location (the ONNX importer
// names every op after its node). Programs without names get the kinds
// alone. Contractions also get a FLOP count, 2 per multiply-add, when their
// loop bounds are static.
//
// Outlining records both on each flow.dispatch, so executables merged by
// deduplication still tell their call sites apart, and on each executable.
// The host program numbers the call sites (the site travels in the dispatch
// flags, runtime/src/strata/hal/abi_enums.h) and the module file lists them
// (DispatchSiteDef in schema/module.fbs).
//
//===----------------------------------------------------------------------===//
#ifndef STRATA_COMPILER_DISPATCHCREATION_DISPATCHNAMES_H_
#define STRATA_COMPILER_DISPATCHCREATION_DISPATCHNAMES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/StringRef.h"

namespace strata {

// On flow.dispatch and flow.executable: the display name (a string).
inline constexpr llvm::StringLiteral kDispatchNameAttr = "strata.dispatch_name";
// On flow.dispatch and flow.executable: floating-point or integer
// operations per dispatch (i64), absent when unknown.
inline constexpr llvm::StringLiteral kDispatchFlopsAttr =
    "strata.dispatch_flops";
// On the host module and then the vm.module: one dictionary per call site
// (`name`, `executable`, optional `flops`), indexed by site number - 1.
inline constexpr llvm::StringLiteral kDispatchSitesAttr =
    "strata.dispatch_sites";
// On a linalg op rewritten from another (a convolution as im2col + product):
// the kind the op stands for in dispatch names.
inline constexpr llvm::StringLiteral kOpKindAttr = "strata.op_kind";

struct DispatchDescription {
  // "kinds:node" or "kinds".
  std::string name;
  std::optional<int64_t> flops;
};

// Describes the ops of a dispatch region's (or an executable function's)
// body.
DispatchDescription describeDispatch(mlir::Block &body);

// Sets kDispatchNameAttr and kDispatchFlopsAttr on `op`.
void setDispatchDescription(mlir::Operation *op,
                            const DispatchDescription &description);

} // namespace strata

#endif // STRATA_COMPILER_DISPATCHCREATION_DISPATCHNAMES_H_
