// Test support: assembles bytecode following bytecode_ops.def and builds
// module files (schema/module.fbs) in memory.
//
//   ModuleBuilder builder("test");
//   FunctionBuilder &add = builder.AddFunction("add", "0ii_i", {.i32 = 3});
//   add.Op(Opcode::AddI32).Reg(2).Reg(0).Reg(1);
//   add.Op(Opcode::Return).List({RegI32(2)});
//   builder.AddExport("add", add.ordinal());
//   std::vector<uint8_t> bytes = builder.Build();
//
// Operand methods must follow the op's format string; mismatches are
// reported as test failures. Raw() appends arbitrary bytes for malformed
// modules.
#ifndef STRATA_TESTS_RUNTIME_VM_MODULE_BUILDER_H_
#define STRATA_TESTS_RUNTIME_VM_MODULE_BUILDER_H_

#include <cstdint>
#include <deque>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/base/owned_bytes.h"
#include "strata/vm/bytecode.h"
#include "strata/vm/bytecode_module.h"
#include "strata/vm/module.h"
#include "strata/vm/stack.h"

namespace strata::vm::testing {

inline uint16_t RegI32(uint16_t ordinal) {
  return MakeTypedRegister(RegisterBank::kI32, ordinal);
}
inline uint16_t RegI64(uint16_t ordinal) {
  return MakeTypedRegister(RegisterBank::kI64, ordinal);
}
inline uint16_t RegF32(uint16_t ordinal) {
  return MakeTypedRegister(RegisterBank::kF32, ordinal);
}
inline uint16_t RegF64(uint16_t ordinal) {
  return MakeTypedRegister(RegisterBank::kF64, ordinal);
}
inline uint16_t RegRef(uint16_t ordinal) {
  return MakeTypedRegister(RegisterBank::kRef, ordinal);
}

// A branch destination inside one function, bound later with Bind().
struct Label {
  int id = -1;
};

using Remap = std::pair<uint16_t, uint16_t>; // (source, target) typed regs

class FunctionBuilder {
public:
  FunctionBuilder(uint32_t ordinal, std::string name,
                  std::string calling_convention, RegisterCounts counts)
      : ordinal_(ordinal), name_(std::move(name)),
        calling_convention_(std::move(calling_convention)), counts_(counts) {}

  uint32_t ordinal() const { return ordinal_; }
  // Current offset (where the next instruction starts).
  uint32_t offset() const { return static_cast<uint32_t>(code_.size()); }

  // Starts an instruction.
  FunctionBuilder &Op(Opcode opcode);
  // Plain register operand (i I f F r).
  FunctionBuilder &Reg(uint16_t ordinal);
  FunctionBuilder &I32(int32_t value);        // k
  FunctionBuilder &I64(int64_t value);        // K
  FunctionBuilder &F32(float value);          // x
  FunctionBuilder &F64(double value);         // X
  FunctionBuilder &MathFunction(uint32_t id); // m or n
  FunctionBuilder &Global(uint32_t ordinal);
  FunctionBuilder &Rodata(uint32_t ordinal);
  FunctionBuilder &Function(uint32_t function_ordinal); // c
  FunctionBuilder &Import(uint32_t import_ordinal);     // c
  FunctionBuilder &Segments(std::initializer_list<uint16_t> sizes);
  FunctionBuilder &List(std::initializer_list<uint16_t> typed_registers);
  FunctionBuilder &List(const std::vector<uint16_t> &typed_registers);
  FunctionBuilder &Branch(Label target,
                          std::initializer_list<Remap> remaps = {});
  // Branch to a raw offset (for malformed modules).
  FunctionBuilder &BranchTo(uint32_t offset,
                            std::initializer_list<Remap> remaps = {});

  Label NewLabel();
  void Bind(Label label);

  // Appends raw bytes outside of any instruction check.
  FunctionBuilder &Raw(std::initializer_list<uint8_t> bytes);
  // Drops the last `count` bytes (truncated instructions).
  void Truncate(size_t count);

  // Overrides of the FunctionDef fields for malformed modules.
  std::optional<uint32_t> override_bytecode_offset;
  std::optional<uint32_t> override_bytecode_length;

  // Attaches a source location to the next instruction.
  void Locate(uint32_t line, uint32_t column, uint32_t file_index = 0);

private:
  friend class ModuleBuilder;

  void ExpectOperand(std::string_view kinds);
  void FinishInstruction();
  void Put16(uint16_t value);
  void Put32(uint32_t value);
  void Put64(uint64_t value);
  std::vector<uint8_t> ResolvedCode() const;

  uint32_t ordinal_;
  std::string name_;
  std::string calling_convention_;
  RegisterCounts counts_;
  std::vector<uint8_t> code_;
  const char *pending_format_ = "";
  Opcode pending_opcode_ = Opcode::kCount;
  std::vector<int64_t> label_offsets_;
  // (position of the u32 target in code_, label id)
  std::vector<std::pair<size_t, int>> fixups_;
  struct Location {
    uint32_t offset, line, column, file_index;
  };
  std::vector<Location> locations_;
};

class ModuleBuilder {
public:
  explicit ModuleBuilder(std::string name, uint32_t version = 1)
      : name_(std::move(name)), version_(version) {}

  // The reference stays valid while the builder lives.
  FunctionBuilder &AddFunction(std::string name, std::string calling_convention,
                               RegisterCounts counts);
  void AddExport(std::string name, uint32_t function_ordinal,
                 std::vector<TensorTypeInfo> argument_types = {},
                 std::vector<TensorTypeInfo> result_types = {});
  uint32_t AddImport(std::string full_name, std::string calling_convention,
                     bool is_optional = false);
  void AddDependency(std::string name, uint32_t minimum_version,
                     bool is_optional = false);
  uint32_t AddRodata(std::string name, std::string_view data,
                     uint32_t alignment = 16);
  // Records `crc32` for rodata segment `ordinal` (0 = none, the default).
  void SetRodataCrc32(uint32_t ordinal, uint32_t crc32) {
    rodata_.at(ordinal).crc32 = crc32;
  }
  void SetGlobalCounts(GlobalCounts counts) { globals_ = counts; }
  uint32_t AddSourceFile(std::string path) {
    source_files_.push_back(std::move(path));
    return static_cast<uint32_t>(source_files_.size() - 1);
  }

  uint32_t schema_version = kSchemaVersion;
  uint32_t bytecode_version = kBytecodeVersion;

  std::vector<uint8_t> Build() const;
  OwnedBytes BuildOwned() const { return OwnedBytes::FromVector(Build()); }

private:
  struct ExportEntry {
    std::string name;
    uint32_t function_ordinal;
    std::vector<TensorTypeInfo> argument_types, result_types;
  };
  struct ImportEntry {
    std::string full_name, calling_convention;
    bool is_optional;
  };
  struct RodataEntry {
    std::string name, data;
    uint32_t alignment;
    uint32_t crc32 = 0;
  };

  std::string name_;
  uint32_t version_;
  std::deque<FunctionBuilder> functions_;
  std::vector<ExportEntry> exports_;
  std::vector<ImportEntry> imports_;
  std::vector<ModuleDependency> dependencies_;
  std::vector<RodataEntry> rodata_;
  GlobalCounts globals_;
  std::vector<std::string> source_files_;
};

} // namespace strata::vm::testing

#endif // STRATA_TESTS_RUNTIME_VM_MODULE_BUILDER_H_
