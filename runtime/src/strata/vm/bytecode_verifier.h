// Load-time verification of module files. After both checks pass, every
// instruction of every function decodes inside its function, names only
// registers, globals, rodata segments, functions and imports that exist,
// passes argument and result registers whose banks match the callee's
// calling convention, and branches only to instruction starts; execution
// cannot run off the end of a function. The interpreter relies on this.
#ifndef STRATA_VM_BYTECODE_VERIFIER_H_
#define STRATA_VM_BYTECODE_VERIFIER_H_

#include <cstdint>
#include <span>

#include "strata/base/status.h"
#include "strata/vm/bytecode_module.h"

namespace strata::vm {

// Checks the size (at most kMaxModuleFileSize, else RESOURCE_EXHAUSTED),
// FlatBuffer structure, file identifier, schema_version and
// bytecode_version; returns the root table (pointing into `bytes`).
Result<const schema::ModuleDef *>
VerifyModuleFile(std::span<const uint8_t> bytes);

// Checks every function's instructions against the module's tables.
// `functions` and `imports` are the module's parsed tables.
Status VerifyModuleBytecode(const schema::ModuleDef &def,
                            std::span<const uint8_t> bytecode,
                            std::span<const BytecodeFunction> functions,
                            std::span<const ModuleImport> imports);

} // namespace strata::vm

#endif // STRATA_VM_BYTECODE_VERIFIER_H_
