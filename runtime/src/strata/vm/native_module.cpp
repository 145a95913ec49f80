#include "strata/vm/native_module.h"

#include <string_view>

namespace strata::vm {

NativeModule::NativeModule(const NativeModuleDescriptor &descriptor)
    : Module(descriptor.name ? descriptor.name : "", descriptor.version),
      descriptor_(descriptor) {}

Result<RefPtr<NativeModule>>
NativeModule::Create(const NativeModuleDescriptor &descriptor,
                     StateFactory create_state) {
  auto module = RefPtr<NativeModule>::Adopt(new NativeModule(descriptor));
  module->create_state_ = std::move(create_state);
  STRATA_RETURN_IF_ERROR(module->InitializeTables());
  return module;
}

Status NativeModule::InitializeTables() {
  if (tables_initialized_)
    return OkStatus();
  if (name().empty())
    return InvalidArgumentError("native module without a name");
  std::string prefix = name() + ".";
  for (const NativeFunctionDef &def : descriptor_.functions) {
    if (!def.name || !def.calling_convention || !def.function)
      return InvalidArgumentError("native module '", name(),
                                  "' has an incomplete function entry");
    std::string_view export_name = def.name;
    if (export_name.starts_with(prefix))
      export_name.remove_prefix(prefix.size());
    if (export_name.empty())
      return InvalidArgumentError("native module '", name(),
                                  "' has a function without a name");
    if (FindExport(export_name))
      return AlreadyExistsError("native module '", name(), "' exports '",
                                export_name, "' twice");
    Result<Signature> signature = Signature::Parse(def.calling_convention);
    if (!signature.ok())
      return signature.status().Annotate(
          StrCat("native function '", name(), ".", export_name, "'"));
    if (def.contract)
      STRATA_RETURN_IF_ERROR(
          CheckCallContract(*def.contract, *signature)
              .Annotate("native function '", name(), ".", export_name, "'"));
    ModuleExport module_export;
    module_export.name = std::string(export_name);
    module_export.signature = std::move(signature).value();
    module_export.contract = def.contract;
    exports_.push_back(std::move(module_export));
  }
  for (const NativeImportDef &def : descriptor_.imports) {
    if (!def.full_name || !def.calling_convention)
      return InvalidArgumentError("native module '", name(),
                                  "' has an incomplete import entry");
    Result<Signature> signature = Signature::Parse(def.calling_convention);
    if (!signature.ok())
      return signature.status().Annotate(
          StrCat("import '", def.full_name, "' of '", name(), "'"));
    imports_.push_back(ModuleImport{def.full_name, std::move(signature).value(),
                                    def.is_optional});
  }
  for (const NativeDependencyDef &def : descriptor_.dependencies) {
    if (!def.name)
      return InvalidArgumentError("native module '", name(),
                                  "' has a dependency without a name");
    dependencies_.push_back(
        ModuleDependency{def.name, def.minimum_version, def.is_optional});
  }
  tables_initialized_ = true;
  return OkStatus();
}

Result<std::unique_ptr<ModuleState>> NativeModule::CreateState() {
  if (!tables_initialized_)
    return FailedPreconditionError("native module '", name(),
                                   "' used before InitializeTables()");
  if (!create_state_)
    return std::unique_ptr<ModuleState>(new NativeModuleState());
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<ModuleState> state, create_state_());
  if (!state)
    return InternalError("state factory of native module '", name(),
                         "' returned null");
  return state;
}

Status NativeModule::ResolveImport(ModuleState *state, uint32_t import_ordinal,
                                   const Function &target) {
  if (import_ordinal >= imports_.size())
    return OutOfRangeError("import ordinal ", import_ordinal,
                           " out of range for module '", name(), "'");
  NativeModuleState *native_state =
      state ? state->AsNativeModuleState() : nullptr;
  if (!native_state)
    return FailedPreconditionError(
        "native module '", name(),
        "' imports functions; its state must derive from NativeModuleState");
  native_state->imports_.resize(imports_.size());
  native_state->imports_[import_ordinal] = target;
  return OkStatus();
}

Status NativeModule::Call(Stack &stack, ModuleState *state,
                          uint32_t export_ordinal,
                          std::span<const Value> arguments,
                          std::span<Value> results, ArgumentCheck check) {
  if (export_ordinal >= exports_.size())
    return OutOfRangeError("export ordinal ", export_ordinal,
                           " out of range for module '", name(), "'");
  const ModuleExport &module_export = exports_[export_ordinal];
  const Signature &signature = module_export.signature;
  // Checks are cheap next to what native functions do, and they let every
  // native function trust its argument types.
  const FunctionName function_name{name(), module_export.name};
  if (check == ArgumentCheck::kCheck) {
    if (Status status = signature.CheckArguments(arguments, function_name);
        !status.ok())
      return stack.AnnotateWithBacktrace(status);
  }
  if (results.size() != signature.result_types().size())
    return InvalidArgumentError("'", name(), ".", module_export.name, "' has ",
                                signature.result_types().size(),
                                " results, caller expects ", results.size());

  STRATA_RETURN_IF_ERROR(stack
                             .PushFrame(FrameKind::kNative, this, state,
                                        export_ordinal, module_export.name)
                             .status());
  // Pre-set results to their types so functions that leave a ref result
  // unset return null rather than "none".
  for (size_t i = 0; i < results.size(); ++i) {
    if (signature.result_types()[i] == ValueType::kRef)
      results[i] = Value::NullRef();
    else
      results[i] = Value();
  }
  NativeFunction function = descriptor_.functions[export_ordinal].function;
  Status status = function(stack, state, arguments, results);
  // A wait outcome belongs to the one retried call.
  stack.TakeWaitResult().reset();
  if (status.code() == StatusCode::kDeferred) {
    // A yield (Stack::Yield): the call is retried after the wait, so the
    // frame goes and the results stay unset. DEFERRED from anywhere else
    // is a bug in the function.
    stack.PopFrame();
    if (stack.pending_wait())
      return status;
    return stack.AnnotateWithBacktrace(
        InternalError("'", name(), ".", module_export.name,
                      "' returned DEFERRED without yielding"));
  }
  if (status.ok())
    status = signature.CheckResults(results, function_name);
  // Only a failure gets the backtrace (and the copy of its status).
  if (!status.ok())
    status = stack.AnnotateWithBacktrace(status);
  stack.PopFrame();
  return status;
}

} // namespace strata::vm
