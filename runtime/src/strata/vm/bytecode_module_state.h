// Per-context state of a bytecode module: its globals, resolved imports and
// rodata buffers. Internal to the VM (interpreter and BytecodeModule).
#ifndef STRATA_VM_BYTECODE_MODULE_STATE_H_
#define STRATA_VM_BYTECODE_MODULE_STATE_H_

#include <cstdint>
#include <vector>

#include "strata/vm/byte_buffer.h"
#include "strata/vm/module.h"

namespace strata::vm {

class BytecodeModuleState final : public ModuleState {
public:
  std::vector<int32_t> globals_i32;
  std::vector<int64_t> globals_i64;
  std::vector<float> globals_f32;
  std::vector<double> globals_f64;
  std::vector<RefPtr<RefObject>> globals_ref;
  // One per import; null when an optional import did not resolve.
  std::vector<Function> imports;
  // vm.buffer views of the rodata segments (created with the state).
  std::vector<RefPtr<ByteBuffer>> rodata_buffers;
};

} // namespace strata::vm

#endif // STRATA_VM_BYTECODE_MODULE_STATE_H_
