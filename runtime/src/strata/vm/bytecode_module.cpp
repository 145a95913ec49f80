#include "strata/vm/bytecode_module.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <unordered_set>

#include "strata/base/crc32.h"
#include "strata/base/file_contents.h"
#include "strata/schema/module_generated.h"
#include "strata/vm/bytecode.h"
#include "strata/vm/bytecode_interpreter.h"
#include "strata/vm/bytecode_module_state.h"
#include "strata/vm/bytecode_verifier.h"
#include "strata/vm/call_contract.h"

namespace strata::vm {
namespace {

std::string_view ToStringView(const flatbuffers::String *text) {
  return text ? std::string_view(text->c_str(), text->size())
              : std::string_view();
}

std::vector<TensorTypeInfo> ReadTensorTypes(
    const flatbuffers::Vector<flatbuffers::Offset<schema::TensorTypeDef>>
        *types) {
  std::vector<TensorTypeInfo> result;
  if (!types)
    return result;
  for (const schema::TensorTypeDef *type : *types) {
    TensorTypeInfo info;
    // Copied out with memcpy: the FlatBuffer verifier checks the vector's
    // bounds but not that its int64 elements are 8-byte aligned, which a
    // damaged file (or a poorly placed buffer) need not keep.
    if (const auto *shape = type->shape()) {
      info.shape.resize(shape->size());
      for (size_t i = 0; i < info.shape.size(); ++i) {
        int64_t dim;
        std::memcpy(&dim, shape->Data() + i * sizeof(int64_t), sizeof(dim));
        info.shape[i] = flatbuffers::EndianScalar(dim);
      }
    }
    info.element_type = type->element_type();
    if (type->name())
      info.name = std::string(ToStringView(type->name()));
    result.push_back(std::move(info));
  }
  return result;
}

// Largest rodata alignment (a power of two, capped) the module declares.
size_t RequiredBaseAlignment(const schema::ModuleDef &def) {
  constexpr size_t kMaxHonoredAlignment = 4096;
  size_t required = 1;
  if (!def.rodata())
    return required;
  for (const schema::RodataDef *segment : *def.rodata()) {
    size_t alignment = segment->alignment();
    if (alignment && (alignment & (alignment - 1)) == 0)
      required = std::max(required, std::min(alignment, kMaxHonoredAlignment));
  }
  return required;
}

// Checks every rodata segment that records a CRC-32 against its bytes, so a
// damaged executable or constant is rejected here rather than misbehaving
// (or crashing a loader) when first used.
Status VerifyRodataChecksums(const schema::ModuleDef &def) {
  if (!def.rodata())
    return OkStatus();
  for (uint32_t i = 0; i < def.rodata()->size(); ++i) {
    const schema::RodataDef *segment = def.rodata()->Get(i);
    uint32_t recorded = segment->crc32();
    if (recorded == 0)
      continue; // Not recorded.
    std::span<const uint8_t> data;
    if (segment->data())
      data = {segment->data()->data(), segment->data()->size()};
    uint32_t computed = Crc32(data);
    if (computed != recorded) {
      std::string_view name = ToStringView(segment->name());
      char values[64];
      std::snprintf(values, sizeof(values),
                    " (recorded 0x%08x, computed 0x%08x)", recorded, computed);
      return DataLossError("rodata segment ", i,
                           name.empty() ? "" : StrCat(" '", name, "'"),
                           " is damaged: CRC-32 mismatch", values);
    }
  }
  return OkStatus();
}

} // namespace

BytecodeModule::BytecodeModule(OwnedBytes bytes, const schema::ModuleDef *def)
    : Module(std::string(ToStringView(def->name())), def->version()),
      bytes_(std::move(bytes)), def_(def) {}

Result<RefPtr<BytecodeModule>> BytecodeModule::FromMemory(OwnedBytes bytes) {
  STRATA_ASSIGN_OR_RETURN(const schema::ModuleDef *def,
                          VerifyModuleFile(bytes.span()));
  // Rodata is aligned relative to the start of the file; that only holds in
  // memory when the file itself starts aligned (mmap always does; heap
  // buffers may not). Realign with one copy when needed.
  size_t alignment = RequiredBaseAlignment(*def);
  if (reinterpret_cast<uintptr_t>(bytes.data()) % alignment != 0) {
    bytes = OwnedBytes::CopyOf(bytes.span(), alignment);
    STRATA_ASSIGN_OR_RETURN(def, VerifyModuleFile(bytes.span()));
  }
  auto module =
      RefPtr<BytecodeModule>::Adopt(new BytecodeModule(std::move(bytes), def));
  STRATA_RETURN_IF_ERROR(module->BuildTables().Annotate(
      StrCat("loading module '", module->name(), "'")));
  return module;
}

Status BytecodeModule::BuildTables() {
  const schema::ModuleDef &def = *def_;
  if (name().empty())
    return InvalidArgumentError("module has an empty name");
  if (def.bytecode())
    bytecode_ = std::span<const uint8_t>(def.bytecode()->data(),
                                         def.bytecode()->size());
  global_counts_ = {def.global_i32_count(), def.global_i64_count(),
                    def.global_f32_count(), def.global_f64_count(),
                    def.global_ref_count()};
  // Globals live in the state; cap them so a corrupt count cannot
  // request gigabytes per context.
  constexpr uint32_t kMaxGlobalsPerBank = 1u << 20;
  for (uint32_t count :
       {global_counts_.i32, global_counts_.i64, global_counts_.f32,
        global_counts_.f64, global_counts_.ref}) {
    if (count > kMaxGlobalsPerBank)
      return InvalidArgumentError("module declares ", count,
                                  " globals in one bank (limit ",
                                  kMaxGlobalsPerBank, ")");
  }

  if (def.dependencies()) {
    for (const schema::DependencyDef *dependency : *def.dependencies())
      dependencies_.push_back(ModuleDependency{
          std::string(ToStringView(dependency->name())),
          dependency->minimum_version(), dependency->is_optional()});
  }

  if (def.imports()) {
    for (const schema::ImportDef *import : *def.imports()) {
      std::string_view full_name = ToStringView(import->full_name());
      if (full_name.find('.') == std::string_view::npos)
        return InvalidArgumentError("import '", full_name,
                                    "' is not of the form 'module.function'");
      Result<Signature> signature =
          Signature::Parse(ToStringView(import->calling_convention()));
      if (!signature.ok())
        return signature.status().Annotate("import '", full_name, "'");
      imports_.push_back(ModuleImport{std::string(full_name),
                                      std::move(signature).value(),
                                      import->is_optional()});
    }
  }

  if (def.functions()) {
    for (const schema::FunctionDef *function_def : *def.functions()) {
      BytecodeFunction function;
      function.name = ToStringView(function_def->name());
      function.def = function_def;
      Result<Signature> signature =
          Signature::Parse(ToStringView(function_def->calling_convention()));
      if (!signature.ok())
        return signature.status().Annotate(
            StrCat("function '", function.name, "'"));
      function.signature = std::move(signature).value();
      if (function.signature.is_variadic())
        return InvalidArgumentError("function '", function.name,
                                    "' has a variadic calling convention (",
                                    function.signature.calling_convention(),
                                    "); only native functions may");
      function.bytecode_offset = function_def->bytecode_offset();
      function.bytecode_length = function_def->bytecode_length();
      function.register_counts = {function_def->i32_register_count(),
                                  function_def->i64_register_count(),
                                  function_def->f32_register_count(),
                                  function_def->f64_register_count(),
                                  function_def->ref_register_count()};
      for (uint16_t count :
           {function.register_counts.i32, function.register_counts.i64,
            function.register_counts.f32, function.register_counts.f64,
            function.register_counts.ref}) {
        if (count > kMaxRegistersPerBank)
          return InvalidArgumentError("function '", function.name, "' has ",
                                      count, " registers in one bank (limit ",
                                      kMaxRegistersPerBank, ")");
      }
      if (function.name == kInitializerFunctionName &&
          (!function.signature.arguments().empty() ||
           !function.signature.results().empty()))
        return InvalidArgumentError(
            "'", kInitializerFunctionName,
            "' must take no arguments and return nothing, has ",
            function.signature.calling_convention());
      functions_.push_back(std::move(function));
    }
  }

  if (def.exports()) {
    std::unordered_set<std::string_view> names;
    for (const schema::ExportDef *export_def : *def.exports()) {
      std::string_view export_name = ToStringView(export_def->name());
      if (!names.insert(export_name).second)
        return InvalidArgumentError("export '", export_name,
                                    "' is declared twice");
      uint32_t ordinal = export_def->internal_ordinal();
      if (ordinal >= functions_.size())
        return InvalidArgumentError("export '", export_name,
                                    "' refers to function ", ordinal, " of ",
                                    functions_.size());
      ModuleExport module_export;
      module_export.name = std::string(export_name);
      module_export.signature = functions_[ordinal].signature;
      module_export.argument_types =
          ReadTensorTypes(export_def->argument_types());
      module_export.result_types = ReadTensorTypes(export_def->result_types());
      if (export_def->attrs()) {
        for (const schema::AttrDef *attr : *export_def->attrs())
          module_export.attributes.emplace_back(
              std::string(ToStringView(attr->key())),
              std::string(ToStringView(attr->value())));
      }
      exports_.push_back(std::move(module_export));
      export_functions_.push_back(ordinal);
    }
  }

  STRATA_RETURN_IF_ERROR(VerifyRodataChecksums(def));
  return VerifyModuleBytecode(def, bytecode_, functions_, imports_);
}

std::optional<uint32_t>
BytecodeModule::FindFunction(std::string_view name) const {
  for (size_t i = 0; i < functions_.size(); ++i) {
    if (functions_[i].name == name)
      return static_cast<uint32_t>(i);
  }
  return std::nullopt;
}

uint32_t BytecodeModule::rodata_count() const {
  return def_->rodata() ? def_->rodata()->size() : 0;
}

std::span<const uint8_t> BytecodeModule::rodata(uint32_t ordinal) const {
  const schema::RodataDef *segment = def_->rodata()->Get(ordinal);
  if (!segment->data())
    return {};
  return std::span<const uint8_t>(segment->data()->data(),
                                  segment->data()->size());
}

Result<std::unique_ptr<ModuleState>> BytecodeModule::CreateState() {
  auto state = std::make_unique<BytecodeModuleState>();
  state->globals_i32.resize(global_counts_.i32);
  state->globals_i64.resize(global_counts_.i64);
  state->globals_f32.resize(global_counts_.f32);
  state->globals_f64.resize(global_counts_.f64);
  state->globals_ref.resize(global_counts_.ref);
  state->imports.resize(imports_.size());
  // Created up front rather than on first use, so invocations running
  // concurrently on one context (allow_concurrent_invocations) only read
  // the state's tables.
  state->rodata_buffers.resize(rodata_count());
  for (uint32_t i = 0; i < rodata_count(); ++i)
    state->rodata_buffers[i] =
        ByteBuffer::WrapReadOnly(rodata(i), RefPtr<RefObject>::Retain(this));
  return std::unique_ptr<ModuleState>(std::move(state));
}

Status BytecodeModule::ResolveImport(ModuleState *state,
                                     uint32_t import_ordinal,
                                     const Function &target) {
  auto *bytecode_state = static_cast<BytecodeModuleState *>(state);
  if (import_ordinal >= bytecode_state->imports.size())
    return OutOfRangeError("import ordinal ", import_ordinal,
                           " out of range for module '", name(), "'");
  if (!target)
    return InvalidArgumentError("import '", imports_[import_ordinal].full_name,
                                "' resolved to a null function");
  if (!(target.signature() == imports_[import_ordinal].signature))
    return InvalidArgumentError("import '", imports_[import_ordinal].full_name,
                                "' resolved to a function with calling "
                                "convention ",
                                target.signature().calling_convention());
  bytecode_state->imports[import_ordinal] = target;
  return OkStatus();
}

Status BytecodeModule::Initialize(Stack &stack, ModuleState *state) {
  // The imports are resolved now, so the calls can be checked against what
  // their callees promise (call_contract.h) before anything runs.
  auto *bytecode_state = static_cast<BytecodeModuleState *>(state);
  std::vector<const CallContract *> contracts(imports_.size());
  for (size_t i = 0; i < imports_.size(); ++i)
    if (const Function &target = bytecode_state->imports[i])
      contracts[i] = target.info().contract;
  STRATA_RETURN_IF_ERROR(
      VerifyCallContracts(bytecode_, functions_, imports_, contracts));
  std::optional<uint32_t> initializer = FindFunction(kInitializerFunctionName);
  if (!initializer)
    return OkStatus();
  return ExecuteBytecodeFunction(stack, *this,
                                 *static_cast<BytecodeModuleState *>(state),
                                 *initializer, {}, {});
}

Status BytecodeModule::Call(Stack &stack, ModuleState *state,
                            uint32_t export_ordinal,
                            std::span<const Value> arguments,
                            std::span<Value> results, ArgumentCheck check) {
  if (export_ordinal >= exports_.size())
    return OutOfRangeError("export ordinal ", export_ordinal,
                           " out of range for module '", name(), "'");
  const ModuleExport &module_export = exports_[export_ordinal];
  if (check == ArgumentCheck::kCheck) {
    if (Status status = module_export.signature.CheckArguments(
            arguments, FunctionName{name(), module_export.name});
        !status.ok())
      return stack.AnnotateWithBacktrace(status);
  }
  if (results.size() != module_export.signature.result_types().size())
    return InvalidArgumentError("'", name(), ".", module_export.name, "' has ",
                                module_export.signature.result_types().size(),
                                " results, caller expects ", results.size());
  return ExecuteBytecodeFunction(
      stack, *this, *static_cast<BytecodeModuleState *>(state),
      export_functions_[export_ordinal], arguments, results);
}

std::string BytecodeModule::FormatSourceLocation(uint32_t function_ordinal,
                                                 uint32_t pc) const {
  if (function_ordinal >= functions_.size())
    return {};
  const auto *locations = functions_[function_ordinal].def->locations();
  if (!locations)
    return {};
  // The closest location at or before `pc`.
  const schema::SourceLocationDef *best = nullptr;
  for (const schema::SourceLocationDef *location : *locations) {
    if (location->bytecode_offset() <= pc &&
        (!best || location->bytecode_offset() > best->bytecode_offset()))
      best = location;
  }
  if (!best)
    return {};
  std::string_view file = "?";
  const auto *files = def_->source_files();
  if (files && best->file_index() < files->size())
    file = ToStringView(files->Get(best->file_index()));
  return StrCat(file, ":", best->line(), ":", best->column());
}

Result<RefPtr<BytecodeModule>>
LoadBytecodeModuleFromFile(const std::string &path) {
  STRATA_ASSIGN_OR_RETURN(OwnedBytes bytes,
                          MapFileContents(path, kMaxModuleFileSize));
  Result<RefPtr<BytecodeModule>> module =
      BytecodeModule::FromMemory(std::move(bytes));
  if (!module.ok())
    return module.status().Annotate("'", path, "'");
  return module;
}

} // namespace strata::vm
