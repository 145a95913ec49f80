#include "strata/vm/module.h"

#include <cstdio>

#include "strata/vm/bytecode.h"

namespace strata::vm {

const RefTypeDescriptor Module::kRefType = {"vm.module"};

std::string ElementTypeName(uint32_t element_type) {
  // Mirrors strata/hal/element_type.h: (numerical type << 24) | bit count.
  // Decoded here because the VM sits below the HAL.
  uint32_t numerical_type = element_type >> 24;
  uint32_t bits = element_type & 0xFFu;
  if ((element_type & 0x00FFFF00u) == 0 && bits != 0) {
    switch (numerical_type) {
    case 0x11: // signed (and signless) integer
      return StrCat("i", bits);
    case 0x12:
      return StrCat("ui", bits);
    case 0x14:
      return bits == 8 ? std::string("i1") : StrCat("bool", bits);
    case 0x21:
      return StrCat("f", bits);
    case 0x22:
      return StrCat("bf", bits);
    default:
      break;
    }
  }
  char text[32];
  std::snprintf(text, sizeof(text), "type_0x%08x", element_type);
  return text;
}

std::string TensorTypeInfo::ToString() const {
  std::string text;
  for (int64_t dimension : shape)
    text += dimension < 0 ? std::string("?x") : StrCat(dimension, "x");
  return text + ElementTypeName(element_type);
}

std::string ModuleExport::FormatTensorTypes() const {
  if (argument_types.empty() && result_types.empty())
    return {};
  auto join = [](const std::vector<TensorTypeInfo> &types) {
    std::string text = "(";
    for (size_t i = 0; i < types.size(); ++i) {
      if (i)
        text += ", ";
      if (!types[i].name.empty())
        text += types[i].name + ": ";
      text += types[i].ToString();
    }
    return text + ")";
  };
  return join(argument_types) + " -> " + join(result_types);
}

const ModuleExport &Function::info() const {
  return module->exports()[export_ordinal];
}

FunctionName Function::Name() const {
  if (!module)
    return {"", "<null function>"};
  return {module->name(), info().name};
}

std::string Function::FullName() const { return StrCat(Name()); }

std::optional<uint32_t> Module::FindExport(std::string_view name) const {
  for (size_t i = 0; i < exports_.size(); ++i) {
    if (exports_[i].name == name)
      return static_cast<uint32_t>(i);
  }
  return std::nullopt;
}

Status Module::ResolveImport(ModuleState *state, uint32_t import_ordinal,
                             const Function &target) {
  return UnimplementedError("module '", name_, "' cannot resolve imports");
}

Status Module::Initialize(Stack &stack, ModuleState *state) {
  std::optional<uint32_t> initializer = FindExport(kInitializerFunctionName);
  if (!initializer)
    return OkStatus();
  const Signature &signature = exports_[*initializer].signature;
  if (!signature.arguments().empty() || !signature.results().empty())
    return InvalidArgumentError("'", name_, ".", kInitializerFunctionName,
                                "' must take no arguments and return nothing");
  return Call(stack, state, *initializer, {}, {}, ArgumentCheck::kCheck);
}

} // namespace strata::vm
