// Test modules that never end on their own, for the deadline and
// cancellation tests of the session and C APIs (built with the VM tests'
// ModuleBuilder, so no compiler is needed):
//   "hang" exports, each "0v_v":
//     spin         loops forever in bytecode;
//     await_never  creates a fence and awaits it (nothing signals it);
//     huge_grid    dispatches the HAL test library's add_f32 over a
//                  65535 x 65535 grid, submits it and awaits it;
//     vmvx_spin    dispatches a VMVX kernel that loops forever, 4
//                  workgroups, and awaits it.
//   "init_spin": its __init loops forever.
#ifndef STRATA_TESTS_RUNTIME_SESSION_HANG_MODULE_H_
#define STRATA_TESTS_RUNTIME_SESSION_HANG_MODULE_H_

#include <cstdint>
#include <span>
#include <vector>

namespace strata::session::testing {

// `library`: the bytes of the HAL test library (an elf-x86_64 executable
// whose export 0 is add_f32 over 3 bindings).
std::vector<uint8_t> BuildHangModule(std::span<const uint8_t> library);
std::vector<uint8_t> BuildInitSpinModule();

} // namespace strata::session::testing

#endif // STRATA_TESTS_RUNTIME_SESSION_HANG_MODULE_H_
