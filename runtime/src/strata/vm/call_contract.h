// What a function states about some of its arguments and results so that
// the module verifier can refuse, before anything runs, calls it can prove
// wrong. The VM knows nothing of what the callee does: a native module
// attaches a contract to an export (NativeFunctionDef::contract; the `hal`
// module's come from modules/hal/hal_import_contracts.def), and once a
// bytecode module's imports are resolved its calls of those exports are
// checked (VerifyCallContracts in bytecode_verifier.h).
//
// Arguments are indexed as in the calling convention, a variadic segment
// counting as one: in "0rriiiiICiDCrIID_v" argument 3 is the first `i` after
// the two refs and argument 8 the segment `CrIID`.
#ifndef STRATA_VM_CALL_CONTRACT_H_
#define STRATA_VM_CALL_CONTRACT_H_

#include <cstdint>
#include <span>

#include "strata/base/status.h"
#include "strata/vm/signature.h"

namespace strata::vm {

struct BytecodeFunction;
struct ModuleImport;

struct CallContract {
  // Consecutive i32 arguments that are counts with limits, e.g. the
  // workgroup counts of a dispatch. Where the verifier can see constants in
  // them, each must be in [0, max_each] and, when all are known, their
  // product at most max_product.
  struct BoundedCounts {
    uint8_t first_argument = 0;
    uint8_t count = 0; // 0: the contract has no bounded counts.
    uint64_t max_each = 0;
    uint64_t max_product = 0;
    // For errors: "workgroup count 100000x1x1 exceeds the limit of 65535
    // per dimension" / "... of 16777216 workgroups per dispatch".
    const char *name = "";         // "workgroup count"
    const char *each_unit = "";    // "per dimension"
    const char *product_unit = ""; // "workgroups per dispatch"
  };
  BoundedCounts bounded_counts;

  // The result (index) that is a new waitable object, e.g. a fence, that
  // stays unreached until a call it is passed to completes it; -1 = none.
  int8_t creates_waitable_result = -1;
  // The variadic segment argument (index) whose refs the call waits on;
  // -1 = none. A wait on a waitable created in the same function and not
  // passed to any other call, stored or returned before the wait can never
  // end: the verifier refuses it.
  int8_t awaits_argument = -1;

  constexpr bool empty() const {
    return bounded_counts.count == 0 && creates_waitable_result < 0 &&
           awaits_argument < 0;
  }
};

// Checks that `contract` fits `signature`: bounded counts are i32
// arguments, the waitable a ref result, the awaited argument a variadic
// segment. NativeModule checks every contract of its table this way.
Status CheckCallContract(const CallContract &contract,
                         const Signature &signature);

// Checks every call of an import in `functions` (verified bytecode) against
// `contracts[i]`, the contract of the export import i resolved to (null for
// none), with what the function's data flow shows just before the call: the
// constants in i32 registers, and which waitables the function created that
// have not escaped yet. INVALID_ARGUMENT naming the function, the bytecode
// offset and the call:
//   invalid bytecode in function 'main' at +0x0040: call to
//   'hal.command_buffer.dispatch': workgroup count 100000x1x1 exceeds the
//   limit of 65535 per dimension
Status VerifyCallContracts(std::span<const uint8_t> bytecode,
                           std::span<const BytecodeFunction> functions,
                           std::span<const ModuleImport> imports,
                           std::span<const CallContract *const> contracts);

} // namespace strata::vm

#endif // STRATA_VM_CALL_CONTRACT_H_
