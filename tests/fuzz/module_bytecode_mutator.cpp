#include "module_bytecode_mutator.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "mutation_util.h"
#include "strata/base/crc32.h"
#include "strata/schema/module_generated.h"
#include "strata/vm/bytecode.h"
#include "strata/vm/bytecode_decoder.h"

namespace strata::fuzz {
namespace {

namespace fb = strata::schema;

// A module file as plain values, read from and written back to a FlatBuffer.
struct TensorTypeModel {
  std::vector<int64_t> shape;
  uint32_t element_type = 0;
};
struct ExportModel {
  std::string name;
  uint32_t internal_ordinal = 0;
  std::vector<TensorTypeModel> argument_types, result_types;
  std::vector<std::pair<std::string, std::optional<std::string>>> attrs;
};
struct FunctionModel {
  std::string name, calling_convention;
  uint32_t offset = 0, length = 0;
  std::array<uint16_t, vm::kRegisterBankCount> registers = {};
  std::vector<fb::SourceLocationDef> locations;
};
struct RodataModel {
  std::optional<std::string> name;
  uint32_t alignment = 16;
  std::vector<uint8_t> data;
  uint32_t crc32 = 0;
};
struct DependencyModel {
  std::string name;
  uint32_t minimum_version = 0;
  bool is_optional = false;
};
struct ImportModel {
  std::string full_name, calling_convention;
  bool is_optional = false;
};
struct ModuleModel {
  std::string name;
  uint32_t version = 0, schema_version = 0, bytecode_version = 0;
  std::vector<DependencyModel> dependencies;
  std::vector<ImportModel> imports;
  std::vector<ExportModel> exports;
  std::vector<FunctionModel> functions;
  std::vector<RodataModel> rodata;
  std::array<uint32_t, vm::kRegisterBankCount> globals = {};
  std::vector<uint8_t> bytecode;
  std::vector<std::string> source_files;
};

std::string ToString(const flatbuffers::String *text) {
  return text ? std::string(text->c_str(), text->size()) : std::string();
}

std::vector<uint8_t> ToBytes(const flatbuffers::Vector<uint8_t> *bytes) {
  return bytes ? std::vector<uint8_t>(bytes->begin(), bytes->end())
               : std::vector<uint8_t>();
}

std::vector<TensorTypeModel> ReadTensorTypes(
    const flatbuffers::Vector<flatbuffers::Offset<fb::TensorTypeDef>> *types) {
  std::vector<TensorTypeModel> result;
  if (!types)
    return result;
  for (const fb::TensorTypeDef *type : *types) {
    TensorTypeModel model;
    if (const auto *shape = type->shape()) {
      // memcpy: the verifier does not promise 8-byte aligned elements.
      model.shape.resize(shape->size());
      for (size_t i = 0; i < model.shape.size(); ++i)
        std::memcpy(&model.shape[i], shape->Data() + i * sizeof(int64_t),
                    sizeof(int64_t));
    }
    model.element_type = type->element_type();
    result.push_back(std::move(model));
  }
  return result;
}

// Reads `bytes` as a size-prefixed module FlatBuffer; false unless it is one
// (any schema or bytecode version: those are mutated too).
bool ReadModule(const uint8_t *data, size_t size, ModuleModel &module) {
  if (size < 12 || size >= FLATBUFFERS_MAX_BUFFER_SIZE)
    return false;
  // An aligned copy, as the verifier checks alignment.
  std::vector<uint64_t> aligned((size + 7) / 8);
  std::memcpy(aligned.data(), data, size);
  const auto *bytes = reinterpret_cast<const uint8_t *>(aligned.data());
  if (!flatbuffers::BufferHasIdentifier(bytes, fb::ModuleDefIdentifier(),
                                        /*size_prefixed=*/true) ||
      flatbuffers::ReadScalar<uint32_t>(bytes) != size - sizeof(uint32_t))
    return false;
  flatbuffers::Verifier verifier(bytes, size);
  if (!fb::VerifySizePrefixedModuleDefBuffer(verifier))
    return false;
  const fb::ModuleDef *def = fb::GetSizePrefixedModuleDef(bytes);
  module.name = ToString(def->name());
  module.version = def->version();
  module.schema_version = def->schema_version();
  module.bytecode_version = def->bytecode_version();
  if (def->dependencies())
    for (const fb::DependencyDef *dependency : *def->dependencies())
      module.dependencies.push_back({ToString(dependency->name()),
                                     dependency->minimum_version(),
                                     dependency->is_optional()});
  if (def->imports())
    for (const fb::ImportDef *import : *def->imports())
      module.imports.push_back({ToString(import->full_name()),
                                ToString(import->calling_convention()),
                                import->is_optional()});
  if (def->exports())
    for (const fb::ExportDef *exported : *def->exports()) {
      ExportModel model;
      model.name = ToString(exported->name());
      model.internal_ordinal = exported->internal_ordinal();
      model.argument_types = ReadTensorTypes(exported->argument_types());
      model.result_types = ReadTensorTypes(exported->result_types());
      if (exported->attrs())
        for (const fb::AttrDef *attr : *exported->attrs())
          model.attrs.emplace_back(ToString(attr->key()),
                                   attr->value()
                                       ? std::optional(ToString(attr->value()))
                                       : std::nullopt);
      module.exports.push_back(std::move(model));
    }
  if (def->functions())
    for (const fb::FunctionDef *function : *def->functions()) {
      FunctionModel model;
      model.name = ToString(function->name());
      model.calling_convention = ToString(function->calling_convention());
      model.offset = function->bytecode_offset();
      model.length = function->bytecode_length();
      model.registers = {
          function->i32_register_count(), function->i64_register_count(),
          function->f32_register_count(), function->f64_register_count(),
          function->ref_register_count()};
      if (function->locations())
        for (const fb::SourceLocationDef *location : *function->locations())
          model.locations.push_back(*location);
      module.functions.push_back(std::move(model));
    }
  if (def->rodata())
    for (const fb::RodataDef *segment : *def->rodata())
      module.rodata.push_back(
          {segment->name() ? std::optional(ToString(segment->name()))
                           : std::nullopt,
           segment->alignment(), ToBytes(segment->data()), segment->crc32()});
  module.globals = {def->global_i32_count(), def->global_i64_count(),
                    def->global_f32_count(), def->global_f64_count(),
                    def->global_ref_count()};
  module.bytecode = ToBytes(def->bytecode());
  if (def->source_files())
    for (const flatbuffers::String *file : *def->source_files())
      module.source_files.push_back(ToString(file));
  return true;
}

flatbuffers::Offset<flatbuffers::Vector<flatbuffers::Offset<fb::TensorTypeDef>>>
WriteTensorTypes(flatbuffers::FlatBufferBuilder &fbb,
                 const std::vector<TensorTypeModel> &types) {
  if (types.empty())
    return 0;
  std::vector<flatbuffers::Offset<fb::TensorTypeDef>> offsets;
  for (const TensorTypeModel &type : types)
    offsets.push_back(fb::CreateTensorTypeDef(fbb, fbb.CreateVector(type.shape),
                                              type.element_type));
  return fbb.CreateVector(offsets);
}

// Writes `module` as the compiler does: size-prefixed, rodata and bytecode
// aligned for use in place.
std::vector<uint8_t> WriteModule(const ModuleModel &module) {
  flatbuffers::FlatBufferBuilder fbb(module.bytecode.size() + 4096);
  std::vector<flatbuffers::Offset<fb::RodataDef>> rodata;
  for (const RodataModel &segment : module.rodata) {
    // PreAlign rather than ForceVectorAlignment, which stops at 32 bytes
    // here (FLATBUFFERS_MAX_ALIGNMENT) where the compiler allows 64; the
    // runtime honours up to 4096.
    size_t alignment = segment.alignment;
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
      alignment = 1;
    fbb.PreAlign(segment.data.size(), std::min<size_t>(alignment, 4096));
    auto data = fbb.CreateVector(segment.data);
    auto name = segment.name ? fbb.CreateString(*segment.name)
                             : flatbuffers::Offset<flatbuffers::String>();
    rodata.push_back(
        fb::CreateRodataDef(fbb, name, segment.alignment, data, segment.crc32));
  }
  fbb.ForceVectorAlignment(module.bytecode.size(), 1, 16);
  auto bytecode = fbb.CreateVector(module.bytecode);
  std::vector<flatbuffers::Offset<fb::DependencyDef>> dependencies;
  for (const DependencyModel &dependency : module.dependencies)
    dependencies.push_back(fb::CreateDependencyDef(
        fbb, fbb.CreateString(dependency.name), dependency.minimum_version,
        dependency.is_optional));
  std::vector<flatbuffers::Offset<fb::ImportDef>> imports;
  for (const ImportModel &import : module.imports)
    imports.push_back(fb::CreateImportDef(
        fbb, fbb.CreateString(import.full_name),
        fbb.CreateString(import.calling_convention), import.is_optional));
  std::vector<flatbuffers::Offset<fb::ExportDef>> exports;
  for (const ExportModel &exported : module.exports) {
    std::vector<flatbuffers::Offset<fb::AttrDef>> attrs;
    for (const auto &[key, value] : exported.attrs)
      attrs.push_back(fb::CreateAttrDef(
          fbb, fbb.CreateString(key),
          value ? fbb.CreateString(*value)
                : flatbuffers::Offset<flatbuffers::String>()));
    auto argument_types = WriteTensorTypes(fbb, exported.argument_types);
    auto result_types = WriteTensorTypes(fbb, exported.result_types);
    exports.push_back(fb::CreateExportDef(
        fbb, fbb.CreateString(exported.name), exported.internal_ordinal,
        argument_types, result_types,
        attrs.empty() ? 0 : fbb.CreateVector(attrs)));
  }
  std::vector<flatbuffers::Offset<fb::FunctionDef>> functions;
  for (const FunctionModel &function : module.functions) {
    auto name = fbb.CreateString(function.name);
    auto calling_convention = fbb.CreateString(function.calling_convention);
    auto locations = function.locations.empty()
                         ? 0
                         : fbb.CreateVectorOfStructs(function.locations);
    functions.push_back(fb::CreateFunctionDef(
        fbb, name, calling_convention, function.offset, function.length,
        function.registers[0], function.registers[1], function.registers[2],
        function.registers[3], function.registers[4], locations));
  }
  std::vector<flatbuffers::Offset<flatbuffers::String>> source_files;
  for (const std::string &file : module.source_files)
    source_files.push_back(fbb.CreateString(file));
  auto root = fb::CreateModuleDef(
      fbb, fbb.CreateString(module.name), module.version, module.schema_version,
      module.bytecode_version, fbb.CreateVector(dependencies),
      fbb.CreateVector(imports), fbb.CreateVector(exports),
      fbb.CreateVector(functions), fbb.CreateVector(rodata), module.globals[0],
      module.globals[1], module.globals[2], module.globals[3],
      module.globals[4], bytecode,
      source_files.empty() ? 0 : fbb.CreateVector(source_files));
  fb::FinishSizePrefixedModuleDefBuffer(fbb, root);
  return std::vector<uint8_t>(fbb.GetBufferPointer(),
                              fbb.GetBufferPointer() + fbb.GetSize());
}

// One operand of a decoded instruction: its format character
// (bytecode_ops.def) and where its bytes start in the function.
struct Slot {
  char kind;
  uint32_t offset;
  // Entries of an 's' or 'l' list, remap pairs of a 'b'.
  uint16_t count = 0;
};

struct Instruction {
  uint32_t offset = 0;
  uint32_t length = 0;
  std::vector<Slot> slots;
};

void StoreU16(uint8_t *bytes, uint16_t value) {
  bytes[0] = uint8_t(value);
  bytes[1] = uint8_t(value >> 8);
}
void StoreU32(uint8_t *bytes, uint32_t value) {
  for (int i = 0; i < 4; ++i)
    bytes[i] = uint8_t(value >> (8 * i));
}
void StoreU64(uint8_t *bytes, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    bytes[i] = uint8_t(value >> (8 * i));
}

int BankOf(char kind) {
  switch (kind) {
  case 'i':
    return 0;
  case 'I':
    return 1;
  case 'f':
    return 2;
  case 'F':
    return 3;
  case 'r':
    return 4;
  default:
    return -1;
  }
}

// The instructions of `code` up to the first that does not decode (with
// the runtime's own decoder, so lengths agree with the verifier's).
std::vector<Instruction> DecodeFunction(std::span<const uint8_t> code) {
  std::vector<Instruction> instructions;
  uint32_t offset = 0;
  while (offset < code.size()) {
    vm::DecodedInstruction decoded;
    if (!vm::DecodeInstruction(code, offset, &decoded).ok())
      break;
    Instruction instruction{offset, decoded.length, {}};
    uint32_t position = offset + 1;
    for (const char *kind = decoded.info().format; *kind; ++kind) {
      Slot slot{*kind, position};
      if (BankOf(*kind) >= 0) {
        position += 2;
      } else if (*kind == 'K' || *kind == 'X') {
        position += 8;
      } else if (*kind == 's' || *kind == 'l') {
        slot.count = vm::LoadU16(&code[position]);
        position += 2 + 2 * slot.count;
      } else if (*kind == 'b') {
        slot.count = vm::LoadU16(&code[position + 4]);
        position += 6 + 4 * slot.count;
      } else {
        position += 4;
      }
      instruction.slots.push_back(slot);
    }
    if (position != offset + decoded.length)
      break; // The format walk above disagrees with the decoder.
    instructions.push_back(std::move(instruction));
    offset += decoded.length;
  }
  return instructions;
}

constexpr const char *kCallingConventions[] = {"0v_v",
                                               "0_v",
                                               "0i_i",
                                               "0I_I",
                                               "0f_f",
                                               "0F_F",
                                               "0r_r",
                                               "0rr_r",
                                               "0rrr_iI",
                                               "0rIrrCrD_v",
                                               "0CiD_v",
                                               "0CrID_r",
                                               "0",
                                               "",
                                               "1v_v",
                                               "0ii",
                                               "0v_",
                                               "_",
                                               "0iiiiiiiiiiiiiiii_i",
                                               "0r_rrrr",
                                               "0Cr_v",
                                               "0D_v",
                                               "0x_v"};

struct HalImport {
  const char *name;
  const char *calling_convention;
};
constexpr HalImport kHalImports[] = {
#define STRATA_HAL_IMPORT(identifier, name, calling_convention)                \
  {name, calling_convention},
#include "strata/modules/hal/hal_imports.def"
#undef STRATA_HAL_IMPORT
};

class ModuleMutator {
public:
  ModuleMutator(ModuleModel &module, FuzzRandom &random)
      : module_(module), random_(random) {}

  // One mutation of a random kind; false when it found nothing to change.
  bool Mutate() {
    switch (random_.Below(20)) {
    case 0:
    case 1:
      return FlipBytes();
    case 2:
      return InsertOrEraseBytes();
    case 3:
    case 4:
      return ReplaceOpcode();
    case 5:
    case 6:
      return MutateRegisterOperand();
    case 7:
      return MutateBranch();
    case 8:
    case 9:
      return MutateIndexOperand();
    case 10:
      return MutateImmediate();
    case 11:
    case 12:
      return InsertCopyOrEraseInstruction();
    case 13:
      return MutateRegisterCounts();
    case 14:
      return MutateCallingConvention();
    case 15:
      return MutateImport();
    case 16:
      return MutateRodata();
    case 17:
      return MutateExport();
    case 18:
      return MutateFunctionRange();
    default:
      return MutateModuleFields();
    }
  }

  // Inserts `bytes` at `position` of function `index`: the function grows,
  // later functions move, and branches of the function that jump past the
  // position follow when `fix_branches` is set.
  void InsertBytes(size_t index, uint32_t position,
                   std::span<const uint8_t> bytes, bool fix_branches) {
    if (fix_branches)
      ShiftBranches(index, position, int64_t(bytes.size()));
    uint32_t absolute = Start(index) + position;
    module_.bytecode.insert(module_.bytecode.begin() + absolute, bytes.begin(),
                            bytes.end());
    Resize(index, absolute, int64_t(bytes.size()));
  }

  // Function `index`'s code as it stands.
  std::span<uint8_t> Code(size_t index) {
    uint32_t start = Start(index);
    uint32_t end = uint32_t(
        std::min<uint64_t>(uint64_t(start) + module_.functions[index].length,
                           module_.bytecode.size()));
    return std::span<uint8_t>(module_.bytecode.data() + start, end - start);
  }

  // A function with at least one instruction, and its instructions.
  bool PickFunction(size_t *index, std::vector<Instruction> *instructions) {
    if (module_.functions.empty())
      return false;
    // Some functions may be empty or damaged: try a few.
    for (int attempt = 0; attempt < 4; ++attempt) {
      *index = random_.Below(module_.functions.size());
      *instructions = DecodeFunction(Code(*index));
      if (!instructions->empty())
        return true;
    }
    return false;
  }

  // An operand slot of one of `kinds` in a random function, and that
  // function's index.
  bool PickSlot(const char *kinds, size_t *index, Slot *slot) {
    std::vector<Instruction> instructions;
    if (!PickFunction(index, &instructions))
      return false;
    std::vector<const Slot *> slots;
    for (const Instruction &instruction : instructions)
      for (const Slot &candidate : instruction.slots)
        if (std::strchr(kinds, candidate.kind))
          slots.push_back(&candidate);
    if (slots.empty())
      return false;
    *slot = *random_.Pick(slots);
    return true;
  }

private:
  uint32_t Start(size_t index) {
    return uint32_t(std::min<uint64_t>(module_.functions[index].offset,
                                       module_.bytecode.size()));
  }

  // Adjusts function ranges after `delta` bytes were inserted (or removed)
  // at `absolute` inside function `index`.
  void Resize(size_t index, uint32_t absolute, int64_t delta) {
    for (size_t i = 0; i < module_.functions.size(); ++i) {
      FunctionModel &function = module_.functions[i];
      if (i == index ||
          (function.offset < absolute &&
           uint64_t(function.offset) + function.length > absolute)) {
        function.length =
            uint32_t(std::max<int64_t>(0, function.length + delta));
      } else if (function.offset >= absolute) {
        function.offset =
            uint32_t(std::max<int64_t>(absolute, function.offset + delta));
      }
    }
  }

  // Branch targets of function `index` past `position` move by `delta`.
  void ShiftBranches(size_t index, uint32_t position, int64_t delta) {
    std::span<uint8_t> code = Code(index);
    for (const Instruction &instruction : DecodeFunction(code))
      for (const Slot &slot : instruction.slots) {
        if (slot.kind != 'b')
          continue;
        uint32_t target = vm::LoadU32(&code[slot.offset]);
        if (target > position)
          StoreU32(&code[slot.offset],
                   uint32_t(std::max<int64_t>(position, target + delta)));
      }
  }

  void EraseBytes(size_t index, uint32_t position, uint32_t length,
                  bool fix_branches) {
    if (fix_branches)
      ShiftBranches(index, position, -int64_t(length));
    uint32_t absolute = Start(index) + position;
    auto begin = module_.bytecode.begin() + absolute;
    module_.bytecode.erase(begin, begin + length);
    Resize(index, absolute, -int64_t(length));
  }

  bool FlipBytes() {
    if (module_.functions.empty())
      return false;
    std::span<uint8_t> code = Code(random_.Below(module_.functions.size()));
    if (code.empty())
      return false;
    for (size_t n = 1 + random_.Below(3); n > 0; --n) {
      uint8_t &byte = code[random_.Below(code.size())];
      byte = random_.OneIn(2) ? uint8_t(byte ^ (1u << random_.Below(8)))
                              : uint8_t(random_.Bits());
    }
    return true;
  }

  bool InsertOrEraseBytes() {
    if (module_.functions.empty())
      return false;
    size_t index = random_.Below(module_.functions.size());
    std::span<uint8_t> code = Code(index);
    uint32_t position = uint32_t(random_.Below(code.size() + 1));
    if (random_.OneIn(2) && position < code.size()) {
      uint32_t length = uint32_t(
          std::min<size_t>(1 + random_.Below(8), code.size() - position));
      EraseBytes(index, position, length, false);
      return true;
    }
    std::vector<uint8_t> bytes(1 + random_.Below(8));
    for (uint8_t &byte : bytes)
      byte = uint8_t(random_.Bits());
    InsertBytes(index, position, bytes, false);
    return true;
  }

  bool ReplaceOpcode() {
    size_t index;
    std::vector<Instruction> instructions;
    if (!PickFunction(&index, &instructions))
      return false;
    uint8_t &opcode = Code(index)[random_.Pick(instructions).offset];
    const char *format = vm::kOpcodeInfos[opcode].format;
    // Mostly an opcode with the same operands (the verifier's type checks
    // then decide), else any, now and then one past the last.
    std::vector<uint8_t> same;
    for (uint32_t i = 0; i < vm::kOpcodeCount; ++i)
      if (std::strcmp(vm::kOpcodeInfos[i].format, format) == 0)
        same.push_back(uint8_t(i));
    if (random_.OneIn(8))
      opcode =
          uint8_t(vm::kOpcodeCount + random_.Below(256 - vm::kOpcodeCount));
    else if (random_.OneIn(2))
      opcode = uint8_t(random_.Below(vm::kOpcodeCount));
    else
      opcode = random_.Pick(same);
    return true;
  }

  // A register ordinal for a bank with `count` registers: mostly another
  // valid one, else one past the end or far out of range.
  uint16_t SomeOrdinal(uint16_t count, uint16_t mask) {
    static constexpr uint16_t kHostile[] = {0x1FFF, 0x2000, 0x7FFF, 0xFFFF};
    if (random_.OneIn(3))
      return uint16_t((random_.OneIn(2) ? count : random_.Pick(kHostile)) &
                      mask);
    return uint16_t(random_.Below(std::max<uint16_t>(count, 1)));
  }

  uint16_t MutateTypedRegister(const FunctionModel &function, uint16_t reg) {
    if (random_.OneIn(3)) // Another bank, or one that does not exist.
      return uint16_t((reg & vm::kTypedRegisterOrdinalMask) |
                      (random_.Below(8) << 13));
    uint8_t bank = vm::TypedRegisterBank(reg);
    uint16_t count =
        bank < vm::kRegisterBankCount ? function.registers[bank] : 0;
    return uint16_t(
        (reg & ~vm::kTypedRegisterOrdinalMask) |
        (SomeOrdinal(count, 0xFFFF) & vm::kTypedRegisterOrdinalMask));
  }

  bool MutateRegisterOperand() {
    size_t index;
    std::vector<Instruction> instructions;
    if (!PickFunction(&index, &instructions))
      return false;
    const FunctionModel &function = module_.functions[index];
    std::span<uint8_t> code = Code(index);
    // Every register operand of the function: plain ones, typed ones in
    // lists and branch remaps.
    struct RegisterSlot {
      uint32_t offset;
      int bank; // -1: a typed register.
    };
    std::vector<RegisterSlot> registers;
    for (const Instruction &instruction : instructions)
      for (const Slot &slot : instruction.slots) {
        if (BankOf(slot.kind) >= 0)
          registers.push_back({slot.offset, BankOf(slot.kind)});
        else if (slot.kind == 'l')
          for (uint16_t i = 0; i < slot.count; ++i)
            registers.push_back({slot.offset + 2 + 2u * i, -1});
        else if (slot.kind == 'b')
          for (uint16_t i = 0; i < 2 * slot.count; ++i)
            registers.push_back({slot.offset + 6 + 2u * i, -1});
      }
    if (registers.empty())
      return false;
    const RegisterSlot &slot = random_.Pick(registers);
    uint16_t reg = vm::LoadU16(&code[slot.offset]);
    StoreU16(&code[slot.offset],
             slot.bank < 0
                 ? MutateTypedRegister(function, reg)
                 : SomeOrdinal(function.registers[slot.bank], 0xFFFF));
    return true;
  }

  bool MutateBranch() {
    size_t index;
    std::vector<Instruction> instructions;
    if (!PickFunction(&index, &instructions))
      return false;
    std::vector<const Slot *> branches;
    for (const Instruction &instruction : instructions)
      for (const Slot &slot : instruction.slots)
        if (slot.kind == 'b')
          branches.push_back(&slot);
    if (branches.empty())
      return false;
    const Slot &slot = *random_.Pick(branches);
    std::span<uint8_t> code = Code(index);
    if (random_.OneIn(4)) {
      // A remap count that no longer matches the pairs that follow.
      StoreU16(&code[slot.offset + 4],
               uint16_t(random_.HostileInt(slot.count)));
      return true;
    }
    const Instruction &other = random_.Pick(instructions);
    uint32_t target;
    switch (random_.Below(6)) {
    case 0:
      target = other.offset + 1; // Inside an instruction.
      break;
    case 1:
      target = uint32_t(code.size());
      break;
    case 2:
      target = uint32_t(random_.HostileInt(code.size()));
      break;
    default:
      target = other.offset; // Another instruction: maybe a loop.
      break;
    }
    StoreU32(&code[slot.offset], target);
    return true;
  }

  bool MutateIndexOperand() {
    size_t index;
    Slot slot;
    if (!PickSlot("gdmnc", &index, &slot))
      return false;
    uint32_t value;
    if (random_.OneIn(4)) {
      value =
          uint32_t(random_.HostileInt(vm::LoadU32(&Code(index)[slot.offset])));
    } else {
      switch (slot.kind) {
      case 'g':
        value = uint32_t(random_.Below(
            *std::max_element(module_.globals.begin(), module_.globals.end()) +
            2));
        break;
      case 'd':
        value = uint32_t(random_.Below(module_.rodata.size() + 2));
        break;
      case 'm':
        value = uint32_t(random_.Below(vm::kUnaryMathFunctionCount + 2));
        break;
      case 'n':
        value = uint32_t(random_.Below(vm::kBinaryMathFunctionCount + 2));
        break;
      default: // 'c': another function or import, or one past the end.
        value = random_.OneIn(2)
                    ? uint32_t(random_.Below(module_.functions.size() + 1))
                    : vm::kCalleeImportBit |
                          uint32_t(random_.Below(module_.imports.size() + 1));
        break;
      }
    }
    StoreU32(&Code(index)[slot.offset], value);
    return true;
  }

  bool MutateImmediate() {
    size_t index;
    Slot slot;
    if (!PickSlot("kKxXsl", &index, &slot))
      return false;
    uint8_t *bytes = &Code(index)[slot.offset];
    switch (slot.kind) {
    case 'k':
      StoreU32(bytes,
               uint32_t(random_.HostileInt(int32_t(vm::LoadU32(bytes)))));
      break;
    case 'K':
      StoreU64(bytes,
               uint64_t(random_.HostileInt(int64_t(vm::LoadU64(bytes)))));
      break;
    case 'x': {
      float value;
      std::memcpy(&value, bytes, sizeof(value));
      value = float(random_.HostileFloat(value));
      std::memcpy(bytes, &value, sizeof(value));
      break;
    }
    case 'X': {
      double value;
      std::memcpy(&value, bytes, sizeof(value));
      value = random_.HostileFloat(value);
      std::memcpy(bytes, &value, sizeof(value));
      break;
    }
    default: // 's', 'l': a count that no longer matches its entries.
      StoreU16(bytes, uint16_t(random_.HostileInt(slot.count)));
      break;
    }
    return true;
  }

  // A well-formed instruction of a random opcode whose operands mostly lie
  // in range for `function`.
  std::vector<uint8_t>
  SynthesizeInstruction(const FunctionModel &function,
                        const std::vector<Instruction> &instructions) {
    uint32_t opcodes =
        std::min(vm::kOpcodeCount,
                 vm::FirstOpcodeAfterVersion(module_.bytecode_version));
    uint8_t opcode = uint8_t(random_.Below(std::max(opcodes, 1u)));
    std::vector<uint8_t> bytes = {opcode};
    auto push = [&](uint64_t value, int width) {
      for (int i = 0; i < width; ++i)
        bytes.push_back(uint8_t(value >> (8 * i)));
    };
    auto typed_register = [&]() {
      uint8_t bank = uint8_t(random_.Below(vm::kRegisterBankCount));
      return vm::MakeTypedRegister(
          static_cast<vm::RegisterBank>(bank),
          SomeOrdinal(function.registers[bank], vm::kTypedRegisterOrdinalMask));
    };
    for (const char *kind = vm::kOpcodeInfos[opcode].format; *kind; ++kind) {
      switch (*kind) {
      case 'k':
      case 'x':
        push(uint64_t(random_.HostileInt(0)), 4);
        break;
      case 'K':
      case 'X':
        push(uint64_t(random_.HostileInt(0)), 8);
        break;
      case 'g':
        push(random_.Below(4), 4);
        break;
      case 'd':
        push(random_.Below(module_.rodata.size() + 1), 4);
        break;
      case 'm':
        push(random_.Below(vm::kUnaryMathFunctionCount), 4);
        break;
      case 'n':
        push(random_.Below(vm::kBinaryMathFunctionCount), 4);
        break;
      case 'c':
        push(random_.OneIn(2)
                 ? random_.Below(module_.functions.size())
                 : vm::kCalleeImportBit | random_.Below(module_.imports.size()),
             4);
        break;
      case 's': {
        size_t count = random_.Below(3);
        push(count, 2);
        for (size_t i = 0; i < count; ++i)
          push(random_.Below(3), 2);
        break;
      }
      case 'l': {
        size_t count = random_.Below(4);
        push(count, 2);
        for (size_t i = 0; i < count; ++i)
          push(typed_register(), 2);
        break;
      }
      case 'b': {
        push(random_.Pick(instructions).offset, 4);
        size_t count = random_.Below(2);
        push(count, 2);
        for (size_t i = 0; i < 2 * count; ++i)
          push(typed_register(), 2);
        break;
      }
      default: {
        int bank = BankOf(*kind);
        push(SomeOrdinal(bank >= 0 ? function.registers[bank] : 0, 0xFFFF), 2);
        break;
      }
      }
    }
    return bytes;
  }

  // Whole instructions in or out, with the function's branches kept
  // pointing at the instructions they pointed at.
  bool InsertCopyOrEraseInstruction() {
    size_t index;
    std::vector<Instruction> instructions;
    if (!PickFunction(&index, &instructions))
      return false;
    const Instruction &chosen = random_.Pick(instructions);
    switch (random_.Below(4)) {
    case 0:
      EraseBytes(index, chosen.offset, chosen.length, true);
      return true;
    case 1: { // The same instruction again, right after itself or anywhere.
      std::span<uint8_t> code = Code(index);
      std::vector<uint8_t> copy(code.begin() + chosen.offset,
                                code.begin() + chosen.offset + chosen.length);
      uint32_t position = random_.OneIn(2) ? chosen.offset + chosen.length
                                           : random_.Pick(instructions).offset;
      InsertBytes(index, position, copy, true);
      return true;
    }
    case 2: { // One of another function (its registers may not exist here).
      size_t other = random_.Below(module_.functions.size());
      std::span<uint8_t> other_code = Code(other);
      std::vector<Instruction> other_instructions = DecodeFunction(other_code);
      if (other_instructions.empty())
        return false;
      const Instruction &taken = random_.Pick(other_instructions);
      std::vector<uint8_t> copy(other_code.begin() + taken.offset,
                                other_code.begin() + taken.offset +
                                    taken.length);
      InsertBytes(index, chosen.offset, copy, true);
      return true;
    }
    default: {
      std::vector<uint8_t> bytes =
          SynthesizeInstruction(module_.functions[index], instructions);
      InsertBytes(index, chosen.offset, bytes, true);
      return true;
    }
    }
  }

  bool MutateRegisterCounts() {
    if (module_.functions.empty())
      return false;
    FunctionModel &function =
        module_.functions[random_.Below(module_.functions.size())];
    uint16_t &count = function.registers[random_.Below(vm::kRegisterBankCount)];
    static constexpr uint16_t kHostile[] = {0, 1, 0x1FFF, 0x2000, 0xFFFF};
    switch (random_.Below(3)) {
    case 0:
      count = uint16_t(count - 1);
      break;
    case 1:
      count = uint16_t(count + 1 + random_.Below(4));
      break;
    default:
      count = random_.Pick(kHostile);
      break;
    }
    return true;
  }

  std::string MutateConvention(const std::string &convention) {
    static constexpr char kChars[] = "0iIfFrvCD_x";
    std::string result = convention;
    switch (random_.Below(4)) {
    case 0:
      return random_.Pick(kCallingConventions);
    case 1:
      return random_.Pick(kHalImports).calling_convention;
    case 2:
      if (!module_.functions.empty())
        return random_.Pick(module_.functions).calling_convention;
      return result;
    default: {
      size_t position = random_.Below(result.size() + 1);
      char c = kChars[random_.Below(sizeof(kChars) - 1)];
      if (position < result.size() && random_.OneIn(2))
        result[position] = c;
      else if (position < result.size() && random_.OneIn(2))
        result.erase(position, 1);
      else
        result.insert(result.begin() + position, c);
      return result;
    }
    }
  }

  bool MutateCallingConvention() {
    if (!module_.imports.empty() && random_.OneIn(3)) {
      ImportModel &import =
          module_.imports[random_.Below(module_.imports.size())];
      import.calling_convention = MutateConvention(import.calling_convention);
      return true;
    }
    if (module_.functions.empty())
      return false;
    FunctionModel &function =
        module_.functions[random_.Below(module_.functions.size())];
    function.calling_convention = MutateConvention(function.calling_convention);
    return true;
  }

  bool MutateImport() {
    if (random_.OneIn(6) || module_.imports.empty()) {
      const HalImport &hal = random_.Pick(kHalImports);
      module_.imports.push_back(
          {hal.name, hal.calling_convention, random_.OneIn(2)});
      return true;
    }
    ImportModel &import =
        module_.imports[random_.Below(module_.imports.size())];
    switch (random_.Below(5)) {
    case 0:
      import.is_optional = !import.is_optional;
      return true;
    case 1: { // Another hal function, mostly with the wrong convention.
      const HalImport &hal = random_.Pick(kHalImports);
      import.full_name = hal.name;
      if (random_.OneIn(4))
        import.calling_convention = hal.calling_convention;
      return true;
    }
    case 2: // The module itself.
      import.full_name =
          module_.name + "." +
          (module_.functions.empty() ? std::string("f")
                                     : random_.Pick(module_.functions).name);
      return true;
    case 3: {
      static constexpr const char *kNames[] = {"",
                                               ".",
                                               "hal",
                                               "hal.",
                                               ".devices.count",
                                               "hal.nope",
                                               "nope.function",
                                               "vmvx.matmul.f32",
                                               "hal.devices.count.extra"};
      import.full_name = random_.Pick(kNames);
      return true;
    }
    default:
      module_.imports.erase(module_.imports.begin() +
                            random_.Below(module_.imports.size()));
      return true;
    }
  }

  bool MutateRodata() {
    if (module_.rodata.empty())
      return false;
    RodataModel &segment = module_.rodata[random_.Below(module_.rodata.size())];
    bool is_elf = segment.data.size() >= 4 && segment.data[0] == 0x7f &&
                  segment.data[1] == 'E' && segment.data[2] == 'L' &&
                  segment.data[3] == 'F';
    switch (random_.Below(4)) {
    case 0: {
      static constexpr uint32_t kAlignments[] = {
          0, 1, 3, 8, 16, 64, 4096, 1u << 20, 0xFFFFFFFF};
      segment.alignment = random_.Pick(kAlignments);
      return true;
    }
    case 1: // Sizes: executables stay byte-identical (trusted) mostly.
      if (is_elf && !random_.OneIn(8))
        return false;
      segment.data.resize(random_.OneIn(3) ? 0
                          : random_.OneIn(2)
                              ? segment.data.size() / 2
                              : segment.data.size() + 1 + random_.Below(64));
      break;
    default: // Contents of constants.
      if (is_elf || segment.data.empty())
        return false;
      for (size_t n = 1 + random_.Below(4); n > 0; --n)
        segment.data[random_.Below(segment.data.size())] =
            uint8_t(random_.Bits());
      break;
    }
    // Mostly a checksum that matches, so the change gets past the load.
    if (!random_.OneIn(8))
      segment.crc32 = Crc32(segment.data);
    return true;
  }

  void MutateTensorType(TensorTypeModel &type) {
    switch (random_.Below(4)) {
    case 0:
      type.element_type = uint32_t(random_.HostileInt(type.element_type));
      return;
    case 1:
      if (random_.OneIn(2) || type.shape.empty())
        type.shape.push_back(random_.OneIn(2) ? 1 : random_.HostileInt(1));
      else
        type.shape.pop_back();
      return;
    case 2:
      type.shape.assign(random_.OneIn(2) ? 17 : 300, 1);
      return;
    default:
      if (!type.shape.empty()) {
        int64_t &dim = type.shape[random_.Below(type.shape.size())];
        dim = random_.HostileInt(dim);
      }
      return;
    }
  }

  bool MutateExport() {
    if (module_.exports.empty())
      return false;
    ExportModel &exported =
        module_.exports[random_.Below(module_.exports.size())];
    switch (random_.Below(5)) {
    case 0:
      exported.internal_ordinal = uint32_t(
          random_.OneIn(2) ? random_.Below(module_.functions.size() + 1)
                           : random_.HostileInt(exported.internal_ordinal));
      return true;
    case 1:
      if (exported.argument_types.empty())
        exported.argument_types.emplace_back();
      MutateTensorType(
          exported
              .argument_types[random_.Below(exported.argument_types.size())]);
      return true;
    case 2:
      if (exported.result_types.empty())
        exported.result_types.emplace_back();
      MutateTensorType(
          exported.result_types[random_.Below(exported.result_types.size())]);
      return true;
    case 3: {
      static constexpr const char *kNames[] = {"", "__init", "main", "__x"};
      exported.name = random_.OneIn(2) ? std::string(random_.Pick(kNames))
                                       : random_.Pick(module_.exports).name;
      return true;
    }
    default:
      if (random_.OneIn(2) && !exported.argument_types.empty())
        exported.argument_types.pop_back();
      else
        exported.argument_types.push_back(
            exported.argument_types.empty()
                ? TensorTypeModel{{1}, 0x20000020}
                : random_.Pick(exported.argument_types));
      return true;
    }
  }

  bool MutateFunctionRange() {
    if (module_.functions.empty())
      return false;
    FunctionModel &function =
        module_.functions[random_.Below(module_.functions.size())];
    uint32_t &field = random_.OneIn(2) ? function.offset : function.length;
    switch (random_.Below(3)) {
    case 0:
      field = uint32_t(field + random_.Below(9) - 4);
      break;
    case 1: // Another function's start: overlapping code.
      field = random_.Pick(module_.functions).offset;
      break;
    default:
      field = uint32_t(random_.HostileInt(field));
      break;
    }
    return true;
  }

  bool MutateModuleFields() {
    switch (random_.Below(5)) {
    case 0: {
      uint32_t &count = module_.globals[random_.Below(vm::kRegisterBankCount)];
      static constexpr uint32_t kHostile[] = {0, 1, 1u << 20, (1u << 20) + 1,
                                              0xFFFFFFFF};
      count = random_.OneIn(2) ? count + 1 : random_.Pick(kHostile);
      return true;
    }
    case 1: // Mostly 1, which refuses version 2's instructions.
      module_.bytecode_version =
          random_.OneIn(4) ? uint32_t(random_.HostileInt(2)) : 1;
      return true;
    case 2:
      if (module_.dependencies.empty() || random_.OneIn(3)) {
        module_.dependencies.push_back({random_.OneIn(2) ? "hal" : module_.name,
                                        uint32_t(random_.Below(3)),
                                        random_.OneIn(2)});
      } else {
        DependencyModel &dependency =
            module_.dependencies[random_.Below(module_.dependencies.size())];
        dependency.minimum_version =
            uint32_t(random_.HostileInt(dependency.minimum_version));
        dependency.is_optional = random_.OneIn(2);
      }
      return true;
    case 3: // Duplicate functions and exports under one name.
      if (module_.functions.empty())
        return false;
      module_.functions.push_back(random_.Pick(module_.functions));
      return true;
    default:
      if (module_.functions.empty())
        return false;
      module_.functions.erase(module_.functions.begin() +
                              random_.Below(module_.functions.size()));
      return true;
    }
  }

  ModuleModel &module_;
  FuzzRandom &random_;
};

// Writes `module` into `out` if it fits; returns its size or 0.
size_t WriteInto(const ModuleModel &module, uint8_t *out, size_t max_size) {
  std::vector<uint8_t> bytes = WriteModule(module);
  if (bytes.size() > std::min(max_size, kMaxMutatedModuleBytes))
    return 0;
  std::memcpy(out, bytes.data(), bytes.size());
  return bytes.size();
}

} // namespace

size_t MutateModuleBytecode(uint8_t *data, size_t size, size_t max_size,
                            unsigned seed) {
  FuzzRandom random(seed);
  ModuleModel module;
  // An occasional byte-level step also reaches the FlatBuffer's structure.
  if (random.OneIn(32) || !ReadModule(data, size, module))
    return LLVMFuzzerMutate(data, size, max_size);
  ModuleMutator mutator(module, random);
  bool mutated = false;
  for (int attempt = 0; attempt < 8 && !mutated; ++attempt)
    mutated = mutator.Mutate();
  size_t new_size = mutated ? WriteInto(module, data, max_size) : 0;
  return new_size ? new_size : LLVMFuzzerMutate(data, size, max_size);
}

size_t CrossOverModuleBytecode(const uint8_t *data1, size_t size1,
                               const uint8_t *data2, size_t size2, uint8_t *out,
                               size_t max_out_size, unsigned seed) {
  FuzzRandom random(seed);
  ModuleModel module, other;
  if (!ReadModule(data1, size1, module) || !ReadModule(data2, size2, other) ||
      module.functions.empty() || other.functions.empty())
    return 0;
  ModuleMutator mutator(module, random);
  ModuleMutator other_mutator(other, random);
  size_t index = random.Below(module.functions.size());
  size_t taken = random.Below(other.functions.size());
  std::span<uint8_t> code = other_mutator.Code(taken);
  if (random.OneIn(2)) {
    // The other function's body, registers and signature at the end of the
    // bytecode in place of this one's.
    FunctionModel &function = module.functions[index];
    function.offset = uint32_t(module.bytecode.size());
    function.length = uint32_t(code.size());
    function.registers = other.functions[taken].registers;
    function.calling_convention = other.functions[taken].calling_convention;
    module.bytecode.insert(module.bytecode.end(), code.begin(), code.end());
  } else {
    // A run of the other function's instructions at an instruction boundary.
    std::vector<Instruction> instructions = DecodeFunction(code);
    std::vector<Instruction> here = DecodeFunction(mutator.Code(index));
    if (instructions.empty() || here.empty())
      return 0;
    size_t first = random.Below(instructions.size());
    size_t last = std::min(instructions.size() - 1, first + random.Below(8));
    std::vector<uint8_t> run(code.begin() + instructions[first].offset,
                             code.begin() + instructions[last].offset +
                                 instructions[last].length);
    mutator.InsertBytes(index, random.Pick(here).offset, run, true);
  }
  return WriteInto(module, out, max_out_size);
}

} // namespace strata::fuzz
