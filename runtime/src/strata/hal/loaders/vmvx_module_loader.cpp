#include "strata/hal/loaders/vmvx_module_loader.h"

#include <memory>
#include <mutex>
#include <vector>

#include "strata/base/abort_signal.h"
#include "strata/base/owned_bytes.h"
#include "strata/hal/loaders/vmvx_microkernels.h"
#include "strata/hal/local/local_executable.h"
#include "strata/hal/local/vmvx_abi.h"
#include "strata/vm/byte_buffer.h"
#include "strata/vm/bytecode_module.h"
#include "strata/vm/context.h"

namespace strata::hal {
namespace {

// Bindings of an export, from its calling convention: "0" + "r" x B +
// "IIIIII" + "_v". Anything else is not a dispatch entry point.
Result<uint32_t> DispatchBindingCount(const vm::ModuleExport &exported) {
  const vm::Signature &signature = exported.signature;
  const std::vector<vm::ValueType> &arguments = signature.argument_types();
  auto mismatch = [&]() {
    return InvalidArgumentError(
        "vmvx executable export '", exported.name, "' has calling convention '",
        signature.calling_convention(),
        "'; dispatch entry points take bindings (r...) then 6 workgroup "
        "values (IIIIII) and return nothing");
  };
  if (signature.is_variadic() || !signature.result_types().empty() ||
      arguments.size() < STRATA_HAL_VMVX_WORKGROUP_ARGUMENT_COUNT)
    return mismatch();
  size_t binding_count =
      arguments.size() - STRATA_HAL_VMVX_WORKGROUP_ARGUMENT_COUNT;
  for (size_t i = 0; i < arguments.size(); ++i) {
    vm::ValueType expected =
        i < binding_count ? vm::ValueType::kRef : vm::ValueType::kI64;
    if (arguments[i] != expected)
      return mismatch();
  }
  return static_cast<uint32_t>(binding_count);
}

// What one workgroup runs on: a context with the microkernels and the
// executable's module, its stack, and the exports looked up once.
struct WorkgroupContext {
  RefPtr<vm::Context> context;
  std::unique_ptr<vm::Stack> stack;
  std::vector<vm::Function> exports;
};

class VmvxExecutable final : public LocalExecutable {
public:
  VmvxExecutable(RefPtr<vm::Instance> instance,
                 RefPtr<vm::BytecodeModule> module,
                 RefPtr<vm::Module> microkernels,
                 std::vector<uint32_t> binding_counts)
      : instance_(std::move(instance)), module_(std::move(module)),
        microkernels_(std::move(microkernels)),
        binding_counts_(std::move(binding_counts)) {}

  std::string_view name() const override { return module_->name(); }
  uint32_t export_count() const override {
    return static_cast<uint32_t>(module_->exports().size());
  }
  std::string_view export_name(uint32_t ordinal) const override {
    return module_->exports()[ordinal].name;
  }
  uint32_t export_binding_count(uint32_t ordinal) const override {
    return binding_counts_[ordinal];
  }
  std::array<uint32_t, 3>
  export_workgroup_size(uint32_t ordinal) const override {
    return {1, 1, 1};
  }

  // Creates a context, which registers both modules: this is where the
  // executable's dependencies and imports are checked.
  Result<std::unique_ptr<WorkgroupContext>> CreateContext() const {
    auto workgroup = std::make_unique<WorkgroupContext>();
    workgroup->context = vm::Context::Create(instance_);
    STRATA_RETURN_IF_ERROR(workgroup->context->RegisterModule(microkernels_));
    STRATA_RETURN_IF_ERROR(
        workgroup->context->RegisterModule(RefPtr<vm::Module>(module_)));
    workgroup->context->Freeze();
    workgroup->stack = std::make_unique<vm::Stack>();
    for (uint32_t i = 0; i < export_count(); ++i)
      workgroup->exports.push_back(vm::Function{module_, nullptr, i});
    // The state pointer belongs to the context.
    for (size_t m = 0; m < workgroup->context->module_count(); ++m)
      if (&workgroup->context->module(m) == module_.get())
        for (vm::Function &function : workgroup->exports)
          function.state = workgroup->context->module_state(m);
    return workgroup;
  }

  // Keeps one context ready for the first dispatch.
  void Recycle(std::unique_ptr<WorkgroupContext> workgroup) const {
    std::lock_guard<std::mutex> lock(mutex_);
    free_contexts_.push_back(std::move(workgroup));
  }

  Status
  IssueWorkgroup(uint32_t ordinal,
                 const strata_hal_executable_dispatch_state_v0_t &dispatch,
                 const strata_hal_executable_workgroup_state_v0_t &workgroup)
      const override {
    if (ordinal >= export_count())
      return InvalidArgumentError("export ordinal ", ordinal,
                                  " out of range; executable '", name(),
                                  "' has ", export_count(), " exports");
    if (dispatch.binding_count != binding_counts_[ordinal])
      return InvalidArgumentError(
          "executable '", name(), "' export '", export_name(ordinal),
          "' takes ", binding_counts_[ordinal], " bindings, dispatch has ",
          dispatch.binding_count);
    std::unique_ptr<WorkgroupContext> context;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_contexts_.empty()) {
        context = std::move(free_contexts_.back());
        free_contexts_.pop_back();
      }
    }
    if (!context) {
      STRATA_ASSIGN_OR_RETURN(context, CreateContext());
    }

    std::vector<vm::Value> arguments;
    arguments.reserve(dispatch.binding_count +
                      STRATA_HAL_VMVX_WORKGROUP_ARGUMENT_COUNT);
    for (uint32_t i = 0; i < dispatch.binding_count; ++i)
      arguments.push_back(vm::Value::Ref(vm::ByteBuffer::WrapWritable(
          std::span<uint8_t>(static_cast<uint8_t *>(dispatch.binding_ptrs[i]),
                             dispatch.binding_lengths[i]))));
    for (uint32_t value :
         {workgroup.workgroup_id_x, workgroup.workgroup_id_y,
          workgroup.workgroup_id_z, dispatch.workgroup_count_x,
          dispatch.workgroup_count_y, dispatch.workgroup_count_z})
      arguments.push_back(vm::Value::I64(value));
    std::vector<vm::Value> results;
    Status status = context->context->Invoke(
        *context->stack, context->exports[ordinal], arguments, &results);
    // The refs to binding memory must not outlive the dispatch.
    arguments.clear();
    Recycle(std::move(context));
    // The dispatching call's deadline or cancellation stopped the workgroup
    // (its VM stack polls the signal): that status, not a kernel failure.
    const AbortSignal *abort_signal = AbortSignal::Current();
    if (!status.ok() && abort_signal && !abort_signal->Check().ok())
      return status.Annotate(
          "executable '", name(), "' export '", export_name(ordinal),
          "' stopped in workgroup (", workgroup.workgroup_id_x, ", ",
          workgroup.workgroup_id_y, ", ", workgroup.workgroup_id_z, ")");
    if (!status.ok())
      return InternalError("executable '", name(), "' export '",
                           export_name(ordinal), "' failed in workgroup (",
                           workgroup.workgroup_id_x, ", ",
                           workgroup.workgroup_id_y, ", ",
                           workgroup.workgroup_id_z, "): ", status.ToString());
    return OkStatus();
  }

private:
  RefPtr<vm::Instance> instance_;
  RefPtr<vm::BytecodeModule> module_;
  RefPtr<vm::Module> microkernels_;
  std::vector<uint32_t> binding_counts_;
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<WorkgroupContext>> free_contexts_;
};

} // namespace

VmvxModuleLoader::VmvxModuleLoader() : instance_(vm::Instance::Create()) {}

std::vector<std::string> VmvxModuleLoader::SupportedFormats() const {
  return {STRATA_HAL_EXECUTABLE_FORMAT_VMVX};
}

bool VmvxModuleLoader::CanLoad(std::string_view format) const {
  return format == STRATA_HAL_EXECUTABLE_FORMAT_VMVX;
}

Result<RefPtr<Executable>>
VmvxModuleLoader::Load(std::string_view format, std::span<const uint8_t> bytes,
                       std::span<const uint32_t> constants) {
  if (!CanLoad(format))
    return InvalidArgumentError("vmvx loader cannot load format '", format,
                                "'");
  if (!constants.empty())
    return InvalidArgumentError("vmvx executables take no specialization "
                                "constants, got ",
                                constants.size());
  auto module = vm::BytecodeModule::FromMemory(OwnedBytes::CopyOf(bytes));
  if (!module.ok())
    return InvalidArgumentError("vmvx executable: ", module.status().message());
  std::vector<uint32_t> binding_counts;
  for (const vm::ModuleExport &exported : (*module)->exports()) {
    STRATA_ASSIGN_OR_RETURN(uint32_t count, DispatchBindingCount(exported));
    binding_counts.push_back(count);
  }
  STRATA_ASSIGN_OR_RETURN(RefPtr<vm::Module> microkernels,
                          CreateVmvxMicrokernelModule());
  auto executable = MakeRef<VmvxExecutable>(instance_, std::move(*module),
                                            std::move(microkernels),
                                            std::move(binding_counts));
  auto first = executable->CreateContext();
  if (!first.ok())
    return InvalidArgumentError("vmvx executable '", executable->name(),
                                "': ", first.status().message());
  executable->Recycle(std::move(*first));
  return RefPtr<Executable>(std::move(executable));
}

} // namespace strata::hal
