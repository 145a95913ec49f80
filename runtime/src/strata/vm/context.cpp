#include "strata/vm/context.h"

#include "strata/vm/invocation.h"

namespace strata::vm {

const RefTypeDescriptor Context::kRefType = {"vm.context"};

Context::Context(RefPtr<Instance> instance, ContextOptions options)
    : RefObject(&kRefType), instance_(std::move(instance)), options_(options) {}

RefPtr<Context> Context::Create(RefPtr<Instance> instance,
                                ContextOptions options) {
  if (!instance)
    instance = Instance::Create();
  return RefPtr<Context>::Adopt(new Context(std::move(instance), options));
}

Context::~Context() {
  // Later modules' states hold functions of earlier ones: free in reverse.
  while (!entries_.empty()) {
    entries_.back().state.reset();
    entries_.pop_back();
  }
}

const Context::Entry *Context::FindEntry(std::string_view name) const {
  for (const Entry &entry : entries_) {
    if (entry.module->name() == name)
      return &entry;
  }
  return nullptr;
}

Module *Context::FindModule(std::string_view name) const {
  const Entry *entry = FindEntry(name);
  return entry ? entry->module.get() : nullptr;
}

Status Context::CheckDependencies(const Module &module) const {
  for (const ModuleDependency &dependency : module.dependencies()) {
    if (dependency.is_optional)
      continue;
    const Entry *entry = FindEntry(dependency.name);
    if (!entry)
      return NotFoundError("module '", module.name(), "' requires '",
                           dependency.name, "' >= ", dependency.minimum_version,
                           " but no module '", dependency.name,
                           "' is registered");
    if (entry->module->version() < dependency.minimum_version)
      return FailedPreconditionError(
          "module '", module.name(), "' requires '", dependency.name,
          "' >= ", dependency.minimum_version, " but '", dependency.name,
          "' version ", entry->module->version(),
          " is registered (module built for ", dependency.name, " version ",
          dependency.minimum_version, ", runtime supports ", dependency.name,
          " version ", entry->module->version(), ")");
  }
  return OkStatus();
}

Status Context::ResolveImports(Module &module, ModuleState *state) const {
  std::span<const ModuleImport> imports = module.imports();
  for (uint32_t ordinal = 0; ordinal < imports.size(); ++ordinal) {
    const ModuleImport &import = imports[ordinal];
    std::string_view full_name = import.full_name;
    size_t dot = full_name.find('.');
    std::string_view module_name =
        dot == std::string_view::npos ? full_name : full_name.substr(0, dot);
    std::string_view export_name = dot == std::string_view::npos
                                       ? std::string_view()
                                       : full_name.substr(dot + 1);
    const Entry *entry = FindEntry(module_name);
    std::optional<uint32_t> export_ordinal;
    if (entry)
      export_ordinal = entry->module->FindExport(export_name);
    if (!export_ordinal) {
      if (import.is_optional)
        continue;
      return NotFoundError(
          "module '", module.name(), "' imports '", full_name, "' (",
          import.signature.calling_convention(), ") but ",
          entry ? StrCat("'", module_name, "' does not export '", export_name,
                         "'")
                : StrCat("no module '", module_name, "' is registered"));
    }
    const ModuleExport &target_export =
        entry->module->exports()[*export_ordinal];
    if (!(target_export.signature == import.signature))
      return InvalidArgumentError(
          "module '", module.name(), "' imports '", full_name,
          "' with calling convention ", import.signature.calling_convention(),
          " but it has ", target_export.signature.calling_convention());
    Function target{entry->module, entry->state.get(), *export_ordinal};
    STRATA_RETURN_IF_ERROR(module.ResolveImport(state, ordinal, target));
  }
  return OkStatus();
}

Status Context::RegisterModule(RefPtr<Module> module,
                               RefPtr<AbortSignal> abort_signal) {
  if (!module)
    return InvalidArgumentError("cannot register a null module");
  if (frozen_)
    return FailedPreconditionError("context is frozen; cannot register '",
                                   module->name(), "'");
  if (FindEntry(module->name()))
    return AlreadyExistsError("a module named '", module->name(),
                              "' is already registered");
  STRATA_RETURN_IF_ERROR(CheckDependencies(*module));
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<ModuleState> state,
                          module->CreateState());
  STRATA_RETURN_IF_ERROR(ResolveImports(*module, state.get()));
  if (!abort_signal)
    abort_signal = RefPtr<AbortSignal>::Retain(AbortSignal::Current());
  Stack stack(options_.stack_options);
  stack.set_abort_signal(abort_signal.get());
  ScopedAbortSignal current_signal(abort_signal.get());
  Status initialized = abort_signal ? abort_signal->Check() : OkStatus();
  if (initialized.ok())
    initialized = module->Initialize(stack, state.get());
  STRATA_RETURN_IF_ERROR(initialized.Annotate(
      StrCat("initializing module '", module->name(), "'")));
  entries_.push_back(Entry{std::move(module), std::move(state)});
  return OkStatus();
}

Result<Function> Context::LookupFunction(std::string_view full_name) const {
  size_t dot = full_name.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == full_name.size())
    return InvalidArgumentError("function name '", full_name,
                                "' is not of the form 'module.function'");
  std::string_view module_name = full_name.substr(0, dot);
  std::string_view function_name = full_name.substr(dot + 1);
  const Entry *entry = FindEntry(module_name);
  if (!entry)
    return NotFoundError("function '", full_name, "' not found: no module '",
                         module_name, "' is registered");
  std::optional<uint32_t> ordinal = entry->module->FindExport(function_name);
  if (!ordinal)
    return NotFoundError("function '", full_name, "' not found: module '",
                         module_name, "' does not export '", function_name,
                         "'");
  return Function{entry->module, entry->state.get(), *ordinal};
}

Status Context::CheckInvocation(const Function &function,
                                std::span<const Value> arguments) const {
  if (!function)
    return InvalidArgumentError("cannot invoke a null function");
  bool is_ours = false;
  for (const Entry &entry : entries_) {
    if (entry.module.get() == function.module.get() &&
        entry.state.get() == function.state) {
      is_ours = true;
      break;
    }
  }
  if (!is_ours)
    return InvalidArgumentError("function '", function.Name(),
                                "' does not belong to this context");
  if (function.export_ordinal >= function.module->exports().size())
    return OutOfRangeError("export ordinal ", function.export_ordinal,
                           " out of range");
  return function.signature().CheckArguments(arguments, function.Name());
}

Status Context::AcquireInvocation(const Function &function) {
  std::lock_guard<std::mutex> lock(invocation_mutex_);
  if (invocations_in_flight_ > 0 && !options_.allow_concurrent_invocations)
    return FailedPreconditionError(
        "cannot invoke '", function.Name(), "': an invocation of '",
        invocation_in_flight_name_,
        "' is still in flight on this context (contexts created without "
        "allow_concurrent_invocations run one invocation at a time)");
  if (invocations_in_flight_++ == 0)
    invocation_in_flight_name_ = function.Name();
  return OkStatus();
}

void Context::ReleaseInvocation() {
  std::lock_guard<std::mutex> lock(invocation_mutex_);
  --invocations_in_flight_;
}

Status Context::Invoke(const Function &function,
                       std::span<const Value> arguments,
                       std::vector<Value> *results,
                       RefPtr<AbortSignal> abort_signal) {
  std::unique_ptr<Stack> stack = AcquireStack();
  Status status =
      Invoke(*stack, function, arguments, results, std::move(abort_signal));
  ReleaseStack(std::move(stack));
  return status;
}

std::unique_ptr<Stack> Context::AcquireStack() {
  {
    std::lock_guard<std::mutex> lock(stack_pool_mutex_);
    if (!stack_pool_.empty()) {
      std::unique_ptr<Stack> stack = std::move(stack_pool_.back());
      stack_pool_.pop_back();
      return stack;
    }
  }
  return std::make_unique<Stack>(options_.stack_options);
}

void Context::ReleaseStack(std::unique_ptr<Stack> stack) {
  // One per thread that calls concurrently is what a pool needs; more
  // would only hold memory.
  constexpr size_t kMaxPooledStacks = 8;
  if (stack->depth() != 0)
    return;
  stack->Reset();
  std::lock_guard<std::mutex> lock(stack_pool_mutex_);
  if (stack_pool_.size() < kMaxPooledStacks)
    stack_pool_.push_back(std::move(stack));
}

Status Context::Invoke(Stack &stack, const Function &function,
                       std::span<const Value> arguments,
                       std::vector<Value> *results,
                       RefPtr<AbortSignal> abort_signal) {
  Invocation invocation(*this, &stack, std::move(abort_signal));
  // Reuse the caller's results vector, unless the arguments live in it (a
  // call fed its previous results).
  if (results && !(arguments.data() >= results->data() &&
                   arguments.data() < results->data() + results->capacity()))
    invocation.set_result_storage(std::move(*results));
  Status status = invocation.Begin(function, arguments);
  while (status.code() == StatusCode::kDeferred) {
    status = invocation.Wait(Deadline::Infinite());
    if (status.ok())
      status = invocation.Resume();
  }
  if (!status.ok()) {
    invocation.Abort();
    return status;
  }
  STRATA_ASSIGN_OR_RETURN(std::vector<Value> call_results, invocation.End());
  if (results)
    *results = std::move(call_results);
  return OkStatus();
}

} // namespace strata::vm
