// BytecodeModule: a module loaded from a module file (.smod), a FlatBuffer
// of schema/module.fbs. Loading verifies everything once: the FlatBuffer
// structure, identifier and versions, then every function's bytecode
// (bytecode_verifier.h). Modules that fail never run, so the interpreter
// trusts what it reads.
//
// Calling convention of bytecode functions: a function's arguments arrive
// in the first registers of each bank, in order per bank. For "0iIri_f" the
// arguments land in i0, I0, r0, i1 (the result is whatever `ret` lists).
// Bytecode functions cannot have variadic signatures.
#ifndef STRATA_VM_BYTECODE_MODULE_H_
#define STRATA_VM_BYTECODE_MODULE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/base/owned_bytes.h"
#include "strata/vm/module.h"
#include "strata/vm/stack.h"

namespace strata::schema {
struct ModuleDef;
struct FunctionDef;
} // namespace strata::schema

namespace strata::vm {

// One function of the module, with its parsed signature.
struct BytecodeFunction {
  std::string_view name;
  Signature signature;
  // Range in ModuleDef.bytecode.
  uint32_t bytecode_offset = 0;
  uint32_t bytecode_length = 0;
  RegisterCounts register_counts;
  const schema::FunctionDef *def = nullptr;
};

// The largest module file the runtime loads (the largest FlatBuffer,
// FLATBUFFERS_MAX_BUFFER_SIZE - 1); larger files are RESOURCE_EXHAUSTED
// before anything is read.
inline constexpr size_t kMaxModuleFileSize = (size_t(1) << 31) - 2;

struct GlobalCounts {
  uint32_t i32 = 0;
  uint32_t i64 = 0;
  uint32_t f32 = 0;
  uint32_t f64 = 0;
  uint32_t ref = 0;
};

class BytecodeModule final : public Module {
public:
  const BytecodeModule *AsBytecodeModule() const override { return this; }

  // Verifies and loads a module file. Always takes ownership of `bytes`:
  // on failure they are released before returning. When `bytes` start at an
  // address too poorly aligned for the rodata alignments the module
  // declares (up to 4096), they are copied once into aligned storage.
  static Result<RefPtr<BytecodeModule>> FromMemory(OwnedBytes bytes);

  // The whole module file.
  std::span<const uint8_t> contents() const { return bytes_.span(); }
  const schema::ModuleDef &def() const { return *def_; }
  // ModuleDef.bytecode.
  std::span<const uint8_t> bytecode() const { return bytecode_; }
  std::span<const BytecodeFunction> functions() const { return functions_; }
  // The instructions of function `ordinal` (ordinal must be in range).
  std::span<const uint8_t> FunctionCode(uint32_t ordinal) const {
    const BytecodeFunction &function = functions_[ordinal];
    return bytecode_.subspan(function.bytecode_offset,
                             function.bytecode_length);
  }
  std::optional<uint32_t> FindFunction(std::string_view name) const;
  // Internal function behind each export.
  uint32_t export_function_ordinal(uint32_t export_ordinal) const {
    return export_functions_[export_ordinal];
  }

  uint32_t rodata_count() const;
  std::span<const uint8_t> rodata(uint32_t ordinal) const;
  const GlobalCounts &global_counts() const { return global_counts_; }

  Result<std::unique_ptr<ModuleState>> CreateState() override;
  Status ResolveImport(ModuleState *state, uint32_t import_ordinal,
                       const Function &target) override;
  // Runs the function named "__init" (exported or not) if there is one.
  Status Initialize(Stack &stack, ModuleState *state) override;
  Status Call(Stack &stack, ModuleState *state, uint32_t export_ordinal,
              std::span<const Value> arguments, std::span<Value> results,
              ArgumentCheck check) override;
  std::string FormatSourceLocation(uint32_t function_ordinal,
                                   uint32_t pc) const override;

private:
  BytecodeModule(OwnedBytes bytes, const schema::ModuleDef *def);
  Status BuildTables();

  OwnedBytes bytes_;
  const schema::ModuleDef *def_;
  std::span<const uint8_t> bytecode_;
  std::vector<BytecodeFunction> functions_;
  std::vector<uint32_t> export_functions_;
  GlobalCounts global_counts_;
};

// Memory-maps `path` and loads it.
Result<RefPtr<BytecodeModule>>
LoadBytecodeModuleFromFile(const std::string &path);

} // namespace strata::vm

#endif // STRATA_VM_BYTECODE_MODULE_H_
