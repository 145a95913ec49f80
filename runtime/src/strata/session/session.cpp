#include "strata/session/session.h"

#include <unistd.h>

#include "strata/base/file_contents.h"
#include "strata/hal/buffer_view.h"
#include "strata/modules/hal/hal_module.h"
#include "strata/vm/bytecode_module.h"

namespace strata::session {

const RefTypeDescriptor Session::kRefType = {"strata.session"};

Session::Session(RefPtr<Instance> instance, RefPtr<hal::Device> device,
                 RefPtr<vm::Context> context, int64_t default_timeout_ns)
    : RefObject(&kRefType), instance_(std::move(instance)),
      device_(std::move(device)), context_(std::move(context)),
      default_timeout_ns_(default_timeout_ns) {}

Result<RefPtr<Session>> Session::Create(RefPtr<Instance> instance,
                                        RefPtr<hal::Device> device,
                                        SessionOptions options) {
  if (!instance || !device)
    return InvalidArgumentError("a session needs an instance and a device");
  if (options.default_timeout_ns < 0)
    return InvalidArgumentError("session default timeout must be >= 0, got ",
                                options.default_timeout_ns, " ns");
  if (options.device_memory_limit) {
    RefPtr<hal::Allocator> allocator = device->allocator();
    if (!allocator)
      return FailedPreconditionError("device '", device->id(),
                                     "' has no allocator to limit");
    STRATA_RETURN_IF_ERROR(
        allocator->SetMemoryLimit(options.device_memory_limit));
  }
  RefPtr<vm::Context> context =
      vm::Context::Create(instance->vm_instance(), options.context_options);
  auto session = RefPtr<Session>::Adopt(
      new Session(std::move(instance), device, std::move(context),
                  options.default_timeout_ns));
  if (options.add_hal_module) {
    STRATA_ASSIGN_OR_RETURN(RefPtr<vm::Module> hal_module,
                            modules::CreateHalModule({device}));
    STRATA_RETURN_IF_ERROR(session->AppendModule(std::move(hal_module)));
  }
  session->first_appended_module_ = session->context_->module_count();
  return session;
}

RefPtr<hal::Allocator> Session::device_allocator() const {
  return device_->allocator();
}

Status Session::Trim() { return device_->Trim(); }

Status Session::AppendModule(RefPtr<vm::Module> module) {
  if (!module)
    return InvalidArgumentError("cannot append a null module");
  RefPtr<AbortSignal> abort_signal;
  if (default_timeout_ns_ > 0)
    abort_signal =
        AbortSignal::Create(StrCat("function '", module->name(), ".__init'"),
                            Deadline::AfterNs(default_timeout_ns_));
  return context_->RegisterModule(std::move(module), std::move(abort_signal));
}

RefPtr<AbortSignal> Session::MakeAbortSignal(const vm::Function &function,
                                             const CallOptions &options) const {
  Deadline deadline = Deadline::Infinite();
  if (options.deadline)
    deadline = *options.deadline;
  else if (default_timeout_ns_ > 0)
    deadline = Deadline::AfterNs(default_timeout_ns_);
  if (deadline.is_infinite() && !options.cancellation)
    return nullptr;
  return AbortSignal::Create(StrCat("function '", function.Name(), "'"),
                             deadline, options.cancellation);
}

Status Session::AppendBytecodeModuleFromMemory(OwnedBytes bytes) {
  STRATA_ASSIGN_OR_RETURN(RefPtr<vm::BytecodeModule> module,
                          vm::BytecodeModule::FromMemory(std::move(bytes)));
  return AppendModule(std::move(module));
}

Status Session::AppendBytecodeModuleFromFile(const std::string &path) {
  auto module = vm::LoadBytecodeModuleFromFile(path);
  if (!module.ok())
    return module.status().Annotate(path);
  return AppendModule(std::move(*module)).Annotate(path);
}

Status Session::AppendBytecodeModuleFromStdin() {
  STRATA_ASSIGN_OR_RETURN(
      OwnedBytes bytes,
      ReadFdContents(STDIN_FILENO, "<stdin>", vm::kMaxModuleFileSize));
  return AppendBytecodeModuleFromMemory(std::move(bytes)).Annotate("<stdin>");
}

Result<vm::Function> Session::LookupFunction(std::string_view name) const {
  if (name.find('.') == std::string_view::npos)
    return context_->LookupFunction(StrCat("module.", name));
  return context_->LookupFunction(name);
}

std::vector<vm::Function> Session::ListFunctions() const {
  std::vector<vm::Function> functions;
  for (size_t m = first_appended_module_; m < context_->module_count(); ++m) {
    vm::Module &module = context_->module(m);
    std::span<const vm::ModuleExport> exports = module.exports();
    for (uint32_t ordinal = 0; ordinal < exports.size(); ++ordinal) {
      if (exports[ordinal].name.starts_with("__"))
        continue;
      functions.push_back({RefPtr<vm::Module>::Retain(&module),
                           context_->module_state(m), ordinal});
    }
  }
  return functions;
}

Status CheckCallInputs(const vm::Function &function,
                       std::span<const vm::Value> inputs) {
  const vm::FunctionName name = function.Name();
  const vm::ModuleExport &info = function.info();
  const auto &types = info.signature.argument_types();
  if (inputs.size() != types.size())
    return InvalidArgumentError("function '", name, "' takes ", types.size(),
                                " argument", types.size() == 1 ? "" : "s",
                                ", got ", inputs.size());
  STRATA_RETURN_IF_ERROR(info.signature.CheckArguments(inputs, name));
  // Tensor reflection covers the buffer view arguments, in order.
  size_t tensor_index = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (types[i] != vm::ValueType::kRef ||
        tensor_index >= info.argument_types.size())
      continue;
    const vm::TensorTypeInfo &expected = info.argument_types[tensor_index++];
    auto *view = RefCast<hal::BufferView>(inputs[i].ref());
    if (!view)
      return InvalidArgumentError(
          "function '", name, "' argument ", i, ": expected a tensor ",
          expected.ToString(), ", got ",
          inputs[i].ref() ? inputs[i].ref()->ref_type()->name : "null");
    bool shape_matches = view->rank() == expected.shape.size();
    for (size_t d = 0; shape_matches && d < view->rank(); ++d)
      shape_matches =
          expected.shape[d] < 0 || expected.shape[d] == view->dim(d);
    if (!shape_matches || view->element_type() != expected.element_type)
      return InvalidArgumentError("function '", name, "' argument ", i,
                                  ": expected ", expected.ToString(), ", got ",
                                  view->FormatShape());
  }
  return OkStatus();
}

Status Session::Call(const vm::Function &function,
                     std::span<const vm::Value> inputs,
                     std::vector<vm::Value> *outputs,
                     const CallOptions &options) {
  STRATA_RETURN_IF_ERROR(CheckCallInputs(function, inputs));
  return CallDirect(function, inputs, outputs, options);
}

Status Session::CallByName(std::string_view name,
                           std::span<const vm::Value> inputs,
                           std::vector<vm::Value> *outputs,
                           const CallOptions &options) {
  STRATA_ASSIGN_OR_RETURN(vm::Function function, LookupFunction(name));
  return Call(function, inputs, outputs, options);
}

namespace {

bool ShapeMatches(const vm::TensorTypeInfo &expected,
                  const hal::BufferView &view) {
  if (view.rank() != expected.shape.size() ||
      view.element_type() != expected.element_type)
    return false;
  for (size_t d = 0; d < view.rank(); ++d)
    if (expected.shape[d] >= 0 && expected.shape[d] != view.dim(d))
      return false;
  return true;
}

bool SameTensorType(const hal::BufferView &a, const hal::BufferView &b) {
  if (a.rank() != b.rank() || a.element_type() != b.element_type())
    return false;
  for (size_t d = 0; d < a.rank(); ++d)
    if (a.dim(d) != b.dim(d))
      return false;
  return true;
}

} // namespace

Status Session::CallIntoOutputs(const vm::Function &function,
                                std::span<const vm::Value> inputs,
                                std::span<hal::BufferView *const> outputs,
                                const CallOptions &options) {
  const vm::FunctionName name = function.Name();
  const vm::ModuleExport &info = function.info();
  const auto &result_types = info.signature.result_types();
  if (outputs.size() != result_types.size())
    return InvalidArgumentError(
        "function '", name, "' has ", result_types.size(), " result",
        result_types.size() == 1 ? "" : "s", ", got ", outputs.size(),
        " output buffer view", outputs.size() == 1 ? "" : "s");
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (result_types[i] != vm::ValueType::kRef)
      return InvalidArgumentError("function '", name, "' output ", i,
                                  " is not a tensor (",
                                  vm::ValueTypeName(result_types[i]),
                                  ") and cannot be written to a buffer view");
    if (!outputs[i])
      return InvalidArgumentError("function '", name, "' output ", i,
                                  " is null");
    // Early check against the reflection, before any work is done.
    if (i < info.result_types.size() &&
        !ShapeMatches(info.result_types[i], *outputs[i]))
      return InvalidArgumentError(
          "function '", name, "' output ", i, ": expected ",
          info.result_types[i].ToString(), ", got ", outputs[i]->FormatShape());
  }
  std::vector<vm::Value> results;
  STRATA_RETURN_IF_ERROR(Call(function, inputs, &results, options));
  // Check every result before writing any output.
  std::vector<hal::BufferView *> views(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    views[i] = RefCast<hal::BufferView>(results[i].ref());
    if (!views[i])
      return InvalidArgumentError("function '", name, "' output ", i,
                                  ": the result is not a tensor");
    if (!SameTensorType(*views[i], *outputs[i]))
      return InvalidArgumentError("function '", name, "' output ", i,
                                  ": expected ", views[i]->FormatShape(),
                                  ", got ", outputs[i]->FormatShape());
  }
  // Map every source first, so a failure leaves all outputs untouched.
  std::vector<hal::MappedRange> sources(results.size());
  for (size_t i = 0; i < results.size(); ++i) {
    hal::Buffer &source = *views[i]->buffer();
    hal::Buffer &target = *outputs[i]->buffer();
    // A callee that wrote into the output has nothing to copy.
    if (source.allocated_buffer() == target.allocated_buffer() &&
        source.byte_offset() == target.byte_offset())
      continue;
    Result<hal::MappedRange> mapped =
        source.MapRange(0, views[i]->byte_length());
    if (!mapped.ok())
      return mapped.status().Annotate(
          StrCat("function '", name, "' output ", i));
    sources[i] = std::move(mapped).value();
  }
  for (size_t i = 0; i < results.size(); ++i) {
    if (sources[i].buffer)
      STRATA_RETURN_IF_ERROR(
          outputs[i]->buffer()->WriteData(0, sources[i].bytes()));
  }
  return OkStatus();
}

Status Session::CallDirect(const vm::Function &function,
                           std::span<const vm::Value> inputs,
                           std::vector<vm::Value> *outputs,
                           const CallOptions &options) {
  outputs->clear();
  return context_->Invoke(function, inputs, outputs,
                          MakeAbortSignal(function, options));
}

void FailOnLoop(vm::Loop &loop, Status failure, vm::InvokeCallback callback) {
  // A task without a context cannot begin: the loop completes it with an
  // error during Drain, and the callback reports `failure` instead.
  loop.InvokeAsync(
      nullptr, vm::Function(), {},
      [failure = std::move(failure),
       callback = std::move(callback)](Status, std::vector<vm::Value>) mutable {
        if (callback)
          callback(std::move(failure), {});
      });
}

void Session::CallAsync(const vm::Function &function,
                        std::vector<vm::Value> inputs, vm::Loop &loop,
                        vm::InvokeCallback callback,
                        const CallOptions &options) {
  // The session (not only its context, which the loop keeps) lives until
  // the callback has run, so a caller may release it meanwhile.
  vm::InvokeCallback retaining =
      [session = RefPtr<Session>::Retain(this), callback = std::move(callback)](
          Status status, std::vector<vm::Value> results) {
        if (callback)
          callback(std::move(status), std::move(results));
      };
  Status checked = CheckCallInputs(function, inputs);
  if (!checked.ok()) {
    FailOnLoop(loop, std::move(checked), std::move(retaining));
    return;
  }
  loop.InvokeAsync(context_, function, std::move(inputs), std::move(retaining),
                   MakeAbortSignal(function, options));
}

} // namespace strata::session
