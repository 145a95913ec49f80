// The `hal` native module: how compiled host programs reach devices. It
// exports exactly the functions of hal_imports.def (names and calling
// conventions come from that table) over the HAL API.
//
//   auto module = modules::CreateHalModule({device});
//   context->RegisterModule(*module);  // before any module importing `hal`
//
// Behaviour worth knowing beyond the table's comments:
//  * Every ref argument is type-checked; a null or mistyped ref is an
//    INVALID_ARGUMENT naming the function and the argument. Only the wait
//    fence of queue.execute, the constants of executable.create and the
//    fences of fence.await may be null (a null fence counts as reached).
//  * i64 offsets and lengths must be >= 0; a length of -1 means "to the end
//    of the buffer" (hal::kWholeBuffer). Ranges whose end passes 2^64 and
//    shapes whose byte size does are errors naming the function, never
//    wrapped; allocations past the device allocator's memory limit are
//    RESOURCE_EXHAUSTED with the byte count and the limit.
//  * Calls of command_buffer.dispatch with constant workgroup counts past
//    the HAL limits, and fence.await on a fence from fence.create that
//    nothing can signal, are refused when the calling module is registered
//    (hal_import_contracts.def).
//  * hal.buffer_view.assert errors start with the program's message, e.g.
//    "argument 0 of @simple_mul: expected 4xf32, got 3xf32".
//  * hal.fence.await returns 0 once every fence is reached and
//    DEADLINE_EXCEEDED (4) as its result on timeout; a failed fence fails
//    the call with the fence's failure status. On a pending fence it yields
//    (vm::Stack::Yield) when the invocation is resumable (vm::Invocation,
//    vm::Loop, Context::Invoke), so a loop's thread is never blocked;
//    otherwise (e.g. in __init) it blocks the calling thread until the
//    fences are reached or the invocation's abort signal fires (its
//    DEADLINE_EXCEEDED or CANCELLED then fails the call).
//  * Flag and stage-mask arguments without defined bits are ignored.
#ifndef STRATA_MODULES_HAL_HAL_MODULE_H_
#define STRATA_MODULES_HAL_HAL_MODULE_H_

#include <vector>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/hal/abi_enums.h"
#include "strata/hal/device.h"
#include "strata/vm/module.h"

namespace strata::modules {

// The `hal` module, version STRATA_HAL_MODULE_VERSION, exposing `devices`
// (index = position) to the programs that import it.
Result<RefPtr<vm::Module>>
CreateHalModule(std::vector<RefPtr<hal::Device>> devices);

} // namespace strata::modules

#endif // STRATA_MODULES_HAL_HAL_MODULE_H_
