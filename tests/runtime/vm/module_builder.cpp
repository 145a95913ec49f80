#include "module_builder.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include <gtest/gtest.h>

#include "strata/schema/module_generated.h"

namespace strata::vm::testing {

void FunctionBuilder::FinishInstruction() {
  if (*pending_format_)
    ADD_FAILURE() << "instruction '"
                  << kOpcodeInfos[static_cast<int>(pending_opcode_)].mnemonic
                  << "' in '" << name_ << "' is missing operands '"
                  << pending_format_ << "'";
  pending_format_ = "";
}

void FunctionBuilder::ExpectOperand(std::string_view kinds) {
  if (!*pending_format_ || kinds.find(*pending_format_) == kinds.npos) {
    ADD_FAILURE() << "operand of kind '" << kinds << "' does not fit the "
                  << "format of the current instruction in '" << name_
                  << "' (next expected: '" << pending_format_ << "')";
    return;
  }
  ++pending_format_;
}

void FunctionBuilder::Put16(uint16_t value) {
  code_.push_back(static_cast<uint8_t>(value));
  code_.push_back(static_cast<uint8_t>(value >> 8));
}
void FunctionBuilder::Put32(uint32_t value) {
  for (int i = 0; i < 4; ++i)
    code_.push_back(static_cast<uint8_t>(value >> (8 * i)));
}
void FunctionBuilder::Put64(uint64_t value) {
  for (int i = 0; i < 8; ++i)
    code_.push_back(static_cast<uint8_t>(value >> (8 * i)));
}

FunctionBuilder &FunctionBuilder::Op(Opcode opcode) {
  FinishInstruction();
  pending_opcode_ = opcode;
  pending_format_ = kOpcodeInfos[static_cast<int>(opcode)].format;
  code_.push_back(static_cast<uint8_t>(opcode));
  return *this;
}

FunctionBuilder &FunctionBuilder::Reg(uint16_t ordinal) {
  ExpectOperand("iIfFr");
  Put16(ordinal);
  return *this;
}
FunctionBuilder &FunctionBuilder::I32(int32_t value) {
  ExpectOperand("k");
  Put32(static_cast<uint32_t>(value));
  return *this;
}
FunctionBuilder &FunctionBuilder::MathFunction(uint32_t id) {
  ExpectOperand("mn");
  Put32(id);
  return *this;
}
FunctionBuilder &FunctionBuilder::I64(int64_t value) {
  ExpectOperand("K");
  Put64(static_cast<uint64_t>(value));
  return *this;
}
FunctionBuilder &FunctionBuilder::F32(float value) {
  ExpectOperand("x");
  Put32(std::bit_cast<uint32_t>(value));
  return *this;
}
FunctionBuilder &FunctionBuilder::F64(double value) {
  ExpectOperand("X");
  Put64(std::bit_cast<uint64_t>(value));
  return *this;
}
FunctionBuilder &FunctionBuilder::Global(uint32_t ordinal) {
  ExpectOperand("g");
  Put32(ordinal);
  return *this;
}
FunctionBuilder &FunctionBuilder::Rodata(uint32_t ordinal) {
  ExpectOperand("d");
  Put32(ordinal);
  return *this;
}
FunctionBuilder &FunctionBuilder::Function(uint32_t function_ordinal) {
  ExpectOperand("c");
  Put32(function_ordinal);
  return *this;
}
FunctionBuilder &FunctionBuilder::Import(uint32_t import_ordinal) {
  ExpectOperand("c");
  Put32(import_ordinal | kCalleeImportBit);
  return *this;
}
FunctionBuilder &
FunctionBuilder::Segments(std::initializer_list<uint16_t> sizes) {
  ExpectOperand("s");
  Put16(static_cast<uint16_t>(sizes.size()));
  for (uint16_t size : sizes)
    Put16(size);
  return *this;
}
FunctionBuilder &
FunctionBuilder::List(std::initializer_list<uint16_t> typed_registers) {
  return List(std::vector<uint16_t>(typed_registers));
}
FunctionBuilder &
FunctionBuilder::List(const std::vector<uint16_t> &typed_registers) {
  ExpectOperand("l");
  Put16(static_cast<uint16_t>(typed_registers.size()));
  for (uint16_t reg : typed_registers)
    Put16(reg);
  return *this;
}

FunctionBuilder &FunctionBuilder::Branch(Label target,
                                         std::initializer_list<Remap> remaps) {
  ExpectOperand("b");
  fixups_.emplace_back(code_.size(), target.id);
  Put32(0);
  Put16(static_cast<uint16_t>(remaps.size()));
  for (auto [source, destination] : remaps) {
    Put16(source);
    Put16(destination);
  }
  return *this;
}

FunctionBuilder &
FunctionBuilder::BranchTo(uint32_t offset,
                          std::initializer_list<Remap> remaps) {
  ExpectOperand("b");
  Put32(offset);
  Put16(static_cast<uint16_t>(remaps.size()));
  for (auto [source, destination] : remaps) {
    Put16(source);
    Put16(destination);
  }
  return *this;
}

void FunctionBuilder::Locate(uint32_t line, uint32_t column,
                             uint32_t file_index) {
  FinishInstruction();
  locations_.push_back(Location{offset(), line, column, file_index});
}

Label FunctionBuilder::NewLabel() {
  label_offsets_.push_back(-1);
  return Label{static_cast<int>(label_offsets_.size() - 1)};
}

void FunctionBuilder::Bind(Label label) {
  FinishInstruction();
  label_offsets_.at(label.id) = static_cast<int64_t>(code_.size());
}

FunctionBuilder &FunctionBuilder::Raw(std::initializer_list<uint8_t> bytes) {
  FinishInstruction();
  code_.insert(code_.end(), bytes.begin(), bytes.end());
  return *this;
}

void FunctionBuilder::Truncate(size_t count) {
  pending_format_ = "";
  code_.resize(code_.size() - std::min(count, code_.size()));
}

std::vector<uint8_t> FunctionBuilder::ResolvedCode() const {
  std::vector<uint8_t> code = code_;
  for (auto [position, label] : fixups_) {
    int64_t target = label_offsets_.at(label);
    EXPECT_GE(target, 0) << "unbound label in '" << name_ << "'";
    uint32_t value = static_cast<uint32_t>(target);
    for (int i = 0; i < 4; ++i)
      code[position + i] = static_cast<uint8_t>(value >> (8 * i));
  }
  return code;
}

FunctionBuilder &ModuleBuilder::AddFunction(std::string name,
                                            std::string calling_convention,
                                            RegisterCounts counts) {
  uint32_t ordinal = static_cast<uint32_t>(functions_.size());
  return functions_.emplace_back(ordinal, std::move(name),
                                 std::move(calling_convention), counts);
}

void ModuleBuilder::AddExport(std::string name, uint32_t function_ordinal,
                              std::vector<TensorTypeInfo> argument_types,
                              std::vector<TensorTypeInfo> result_types) {
  exports_.push_back(ExportEntry{std::move(name), function_ordinal,
                                 std::move(argument_types),
                                 std::move(result_types)});
}

uint32_t ModuleBuilder::AddImport(std::string full_name,
                                  std::string calling_convention,
                                  bool is_optional) {
  imports_.push_back(ImportEntry{std::move(full_name),
                                 std::move(calling_convention), is_optional});
  return static_cast<uint32_t>(imports_.size() - 1);
}

void ModuleBuilder::AddDependency(std::string name, uint32_t minimum_version,
                                  bool is_optional) {
  dependencies_.push_back(
      ModuleDependency{std::move(name), minimum_version, is_optional});
}

uint32_t ModuleBuilder::AddRodata(std::string name, std::string_view data,
                                  uint32_t alignment) {
  rodata_.push_back(RodataEntry{std::move(name), std::string(data), alignment});
  return static_cast<uint32_t>(rodata_.size() - 1);
}

std::vector<uint8_t> ModuleBuilder::Build() const {
  namespace fb = flatbuffers;
  fb::FlatBufferBuilder fbb;

  std::vector<uint8_t> bytecode;
  std::vector<fb::Offset<schema::FunctionDef>> functions;
  for (const FunctionBuilder &function : functions_) {
    const_cast<FunctionBuilder &>(function).FinishInstruction();
    std::vector<uint8_t> code = function.ResolvedCode();
    uint32_t offset = static_cast<uint32_t>(bytecode.size());
    bytecode.insert(bytecode.end(), code.begin(), code.end());
    const RegisterCounts &counts = function.counts_;
    std::vector<schema::SourceLocationDef> locations;
    for (const auto &location : function.locations_)
      locations.emplace_back(location.offset, location.line, location.column,
                             location.file_index);
    functions.push_back(schema::CreateFunctionDefDirect(
        fbb, function.name_.c_str(), function.calling_convention_.c_str(),
        function.override_bytecode_offset.value_or(offset),
        function.override_bytecode_length.value_or(
            static_cast<uint32_t>(code.size())),
        counts.i32, counts.i64, counts.f32, counts.f64, counts.ref,
        locations.empty() ? nullptr : &locations));
  }

  std::vector<fb::Offset<schema::ExportDef>> exports;
  for (const ExportEntry &entry : exports_) {
    auto tensor_types = [&](const std::vector<TensorTypeInfo> &types) {
      std::vector<fb::Offset<schema::TensorTypeDef>> defs;
      for (const TensorTypeInfo &type : types)
        defs.push_back(schema::CreateTensorTypeDefDirect(fbb, &type.shape,
                                                         type.element_type));
      return defs;
    };
    auto arguments = tensor_types(entry.argument_types);
    auto results = tensor_types(entry.result_types);
    exports.push_back(schema::CreateExportDefDirect(
        fbb, entry.name.c_str(), entry.function_ordinal,
        arguments.empty() ? nullptr : &arguments,
        results.empty() ? nullptr : &results));
  }

  std::vector<fb::Offset<schema::ImportDef>> imports;
  for (const ImportEntry &entry : imports_)
    imports.push_back(schema::CreateImportDefDirect(
        fbb, entry.full_name.c_str(), entry.calling_convention.c_str(),
        entry.is_optional));

  std::vector<fb::Offset<schema::DependencyDef>> dependencies;
  for (const ModuleDependency &entry : dependencies_)
    dependencies.push_back(schema::CreateDependencyDefDirect(
        fbb, entry.name.c_str(), entry.minimum_version, entry.is_optional));

  std::vector<fb::Offset<schema::RodataDef>> rodata;
  for (const RodataEntry &entry : rodata_) {
    auto name = fbb.CreateString(entry.name);
    // FlatBuffers can only force alignments up to FLATBUFFERS_MAX_ALIGNMENT;
    // the declared alignment is recorded as given.
    fbb.ForceVectorAlignment(
        entry.data.size(), 1,
        std::min<size_t>(entry.alignment, FLATBUFFERS_MAX_ALIGNMENT));
    auto data =
        fbb.CreateVector(reinterpret_cast<const uint8_t *>(entry.data.data()),
                         entry.data.size());
    rodata.push_back(
        schema::CreateRodataDef(fbb, name, entry.alignment, data, entry.crc32));
  }

  std::vector<fb::Offset<fb::String>> source_files;
  for (const std::string &path : source_files_)
    source_files.push_back(fbb.CreateString(path));
  auto module = schema::CreateModuleDefDirect(
      fbb, name_.c_str(), version_, schema_version, bytecode_version,
      &dependencies, &imports, &exports, &functions, &rodata, globals_.i32,
      globals_.i64, globals_.f32, globals_.f64, globals_.ref, &bytecode,
      source_files.empty() ? nullptr : &source_files);
  schema::FinishSizePrefixedModuleDefBuffer(fbb, module);
  return std::vector<uint8_t>(fbb.GetBufferPointer(),
                              fbb.GetBufferPointer() + fbb.GetSize());
}

} // namespace strata::vm::testing
