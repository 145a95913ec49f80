// The bytecode interpreter. Internal to the VM: BytecodeModule calls it for
// exports and for its initializer.
//
// Semantics beyond bytecode_ops.def (the instruction set contract):
//  * Integer arithmetic wraps (two's complement); div/rem by zero is an
//    INVALID_ARGUMENT error; INT_MIN / -1 wraps to INT_MIN (rem gives 0).
//  * Shift amounts are taken modulo the bit width.
//  * Float min/max propagate NaN and order -0 below +0; float comparisons
//    are ordered (false when either side is NaN).
//  * Float-to-int casts truncate toward zero and saturate; NaN gives 0.
//  * list/buffer ops on a null ref or a ref of another type, negative
//    sizes, indices or offsets, and out-of-range accesses are errors;
//    stores to read-only buffers (rodata) are FAILED_PRECONDITION.
//  * `fail` with a code that is not an error code (0, or not a known
//    StatusCode) fails with UNKNOWN.
//  * Refs in a frame's registers are released when the frame pops.
#ifndef STRATA_VM_BYTECODE_INTERPRETER_H_
#define STRATA_VM_BYTECODE_INTERPRETER_H_

#include <cstdint>
#include <span>

#include "strata/base/status.h"
#include "strata/vm/bytecode_module.h"
#include "strata/vm/bytecode_module_state.h"
#include "strata/vm/stack.h"
#include "strata/vm/value.h"

namespace strata::vm {

// Runs internal function `function_ordinal` of `module` to completion.
// `arguments` must match its signature and `results` must have one slot per
// result (callers check). On failure the status carries a backtrace and
// every frame pushed here is popped.
Status ExecuteBytecodeFunction(Stack &stack, BytecodeModule &module,
                               BytecodeModuleState &state,
                               uint32_t function_ordinal,
                               std::span<const Value> arguments,
                               std::span<Value> results);

// Continues an invocation whose frames above `base_depth` are suspended
// bytecode frames (a native callee yielded; see Stack::Yield): the top
// frame retries its call, and each activation that returns hands its
// results to the call its caller stopped at. `results` receive the results
// of the outermost activation. DEFERRED leaves the frames for another
// resume; failures pop every frame above `base_depth`.
Status ResumeBytecodeFrames(Stack &stack, uint32_t base_depth,
                            std::span<Value> results);

} // namespace strata::vm

#endif // STRATA_VM_BYTECODE_INTERPRETER_H_
