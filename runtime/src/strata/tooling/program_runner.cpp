#include "strata/tooling/program_runner.h"

#include <cmath>

#include "strata/hal/buffer_view.h"
#include "strata/tooling/tensor_text.h"

namespace strata::tooling {

std::string DeviceUri(const ProgramOptions &options) {
  std::string uri = options.device;
  auto append = [&](std::string_view key, std::string_view value) {
    uri += uri.find('?') == std::string::npos ? "?" : "&";
    uri += StrCat(key, "=", value);
  };
  if (!options.loader.empty())
    append("loader", options.loader);
  if (options.workers >= 0)
    append("workers", std::to_string(options.workers));
  return uri;
}

// Whether `allocator` keeps device-local memory apart from the host's (a
// GPU): its device-local buffers then have no host pointer.
static Result<bool> HasSeparateDeviceMemory(hal::Allocator &allocator) {
  STRATA_ASSIGN_OR_RETURN(
      RefPtr<hal::Buffer> probe,
      allocator.AllocateBuffer(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL,
                               STRATA_HAL_BUFFER_USAGE_DEFAULT, 1));
  return probe->host_data() == nullptr;
}

// A copy of `view` in device-local memory, written through the device's
// queue: kernels then read their arguments at the device memory's speed,
// not across the host bus, as an application that uploads its inputs once
// would see them.
static Result<RefPtr<hal::BufferView>>
CopyToDeviceMemory(hal::Device &device, hal::Allocator &allocator,
                   hal::BufferView &view) {
  STRATA_ASSIGN_OR_RETURN(
      RefPtr<hal::Buffer> buffer,
      allocator.AllocateBuffer(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL,
                               STRATA_HAL_BUFFER_USAGE_DEFAULT,
                               view.byte_length()));
  STRATA_ASSIGN_OR_RETURN(hal::MappedRange source,
                          view.buffer()->MapRange(0, view.byte_length()));
  STRATA_RETURN_IF_ERROR(device.QueueWrite(STRATA_HAL_QUEUE_AFFINITY_ANY,
                                           /*wait_fence=*/nullptr,
                                           /*signal_fence=*/nullptr,
                                           source.bytes(), buffer.get(), 0));
  return hal::BufferView::Create(std::move(buffer), view.shape(),
                                 view.element_type(), view.encoding_type());
}

Status CopyResultsToHost(Program &program, std::vector<vm::Value> &results) {
  RefPtr<hal::Allocator> allocator = program.session->device_allocator();
  for (vm::Value &result : results) {
    auto *view = result.is_ref() && result.ref()
                     ? RefCast<hal::BufferView>(result.ref())
                     : nullptr;
    if (!view || view->buffer()->host_data())
      continue;
    STRATA_ASSIGN_OR_RETURN(
        RefPtr<hal::Buffer> buffer,
        allocator->AllocateBuffer(STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
                                  STRATA_HAL_BUFFER_USAGE_DEFAULT,
                                  view->byte_length()));
    STRATA_ASSIGN_OR_RETURN(hal::MappedRange target,
                            buffer->MapRange(0, view->byte_length()));
    STRATA_RETURN_IF_ERROR(program.device->QueueRead(
        STRATA_HAL_QUEUE_AFFINITY_ANY, /*wait_fence=*/nullptr,
        /*signal_fence=*/nullptr, view->buffer().get(), 0, target.bytes()));
    STRATA_ASSIGN_OR_RETURN(
        RefPtr<hal::BufferView> copy,
        hal::BufferView::Create(std::move(buffer), view->shape(),
                                view->element_type(), view->encoding_type()));
    result = vm::Value::Ref(std::move(copy));
  }
  return OkStatus();
}

// The inputs in argument order. Each may start with the name its argument
// has in the module's reflection ("input=@x.npy", the ONNX graph input's
// name): then all must, each argument named once; otherwise they are
// positional, as given.
static Result<std::vector<std::string>>
OrderNamedInputs(const vm::Function &function,
                 const std::vector<std::string> &inputs) {
  const std::vector<vm::TensorTypeInfo> &arguments =
      function.info().argument_types;
  auto argumentNamed = [&](std::string_view name) -> int64_t {
    for (size_t i = 0; i < arguments.size(); ++i)
      if (!arguments[i].name.empty() && arguments[i].name == name)
        return int64_t(i);
    return -1;
  };
  std::vector<std::string> ordered(arguments.size());
  std::vector<bool> given(arguments.size(), false);
  size_t named = 0;
  for (const std::string &input : inputs) {
    size_t equals = input.find('=');
    int64_t index =
        equals == std::string::npos
            ? -1
            : argumentNamed(std::string_view(input).substr(0, equals));
    if (index < 0)
      continue;
    if (given[index])
      return InvalidArgumentError("input '", arguments[index].name,
                                  "' is given twice");
    given[index] = true;
    ordered[index] = input.substr(equals + 1);
    ++named;
  }
  if (named == 0)
    return inputs;
  if (named != inputs.size())
    return InvalidArgumentError(
        "inputs must all be named or all be positional; ", named, " of ",
        inputs.size(), " name an argument of ", function.FullName());
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (given[i])
      continue;
    if (arguments[i].name.empty())
      return InvalidArgumentError("input ", i,
                                  " has no name to give it by; give every "
                                  "input by position");
    return InvalidArgumentError("input '", arguments[i].name, "' is not given");
  }
  return ordered;
}

Result<Program> LoadProgram(const ProgramOptions &options) {
  if (options.modules.empty())
    return InvalidArgumentError("no module given (--module=FILE.smod)");
  if (options.function.empty())
    return InvalidArgumentError("no function given (--function=NAME)");
  // Up to about 30 years; NaN fails both comparisons.
  if (!(options.timeout_seconds >= 0 && options.timeout_seconds <= 1e9))
    return InvalidArgumentError("--timeout expects seconds >= 0 (0: no "
                                "limit), got ",
                                options.timeout_seconds);
  session::SessionOptions session_options;
  session_options.default_timeout_ns =
      int64_t(std::ceil(options.timeout_seconds * 1e9));
  Program program;
  STRATA_ASSIGN_OR_RETURN(program.instance, session::Instance::Create());
  std::string uri = DeviceUri(options);
  auto device = program.instance->CreateDevice(uri);
  if (!device.ok())
    return device.status().Annotate("device '", uri, "'");
  program.device = std::move(*device);
  session_options.device_memory_limit = options.device_memory_limit;
  STRATA_ASSIGN_OR_RETURN(program.session, session::Session::Create(
                                               program.instance, program.device,
                                               std::move(session_options)));
  for (const std::string &module : options.modules) {
    if (module == "-")
      STRATA_RETURN_IF_ERROR(program.session->AppendBytecodeModuleFromStdin());
    else
      STRATA_RETURN_IF_ERROR(
          program.session->AppendBytecodeModuleFromFile(module));
  }
  STRATA_ASSIGN_OR_RETURN(program.function,
                          program.session->LookupFunction(options.function));
  RefPtr<hal::Allocator> allocator_ref = program.session->device_allocator();
  hal::Allocator &allocator = *allocator_ref;
  STRATA_ASSIGN_OR_RETURN(bool upload, HasSeparateDeviceMemory(allocator));
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> inputs,
                          OrderNamedInputs(program.function, options.inputs));
  for (size_t i = 0; i < inputs.size(); ++i) {
    auto view = ParseTensorArgument(inputs[i], allocator);
    if (upload && view.ok())
      view = CopyToDeviceMemory(*program.device, allocator, **view);
    if (!view.ok())
      return view.status().Annotate("input ", i);
    program.inputs.push_back(vm::Value::Ref(std::move(*view)));
  }
  return program;
}

Result<std::string> FormatDeviceList() {
  STRATA_ASSIGN_OR_RETURN(RefPtr<session::Instance> instance,
                          session::Instance::Create());
  std::string text;
  for (const hal::DriverRegistry::DeviceEntry &device :
       instance->driver_registry().EnumerateDevices())
    text += StrCat(device.uri, "  ", device.info.name, "\n");
  return text;
}

void AddProgramFlags(FlagParser &flags, ProgramOptions &options) {
  flags.AddStringList("module", &options.modules,
                      "module file to load (repeatable, in order; - = stdin)");
  flags.AddString("function", &options.function,
                  "function to call: NAME or MODULE.NAME");
  flags.AddString("device", &options.device,
                  "device: local-sync (default), local-task, cuda or a driver "
                  "URI (local-task://0?workers=4, cuda://1; --list-devices "
                  "shows them)");
  flags.AddString("loader", &options.loader,
                  "executable loaders for local devices, in order: embedded, "
                  "system, vmvx (default: all three)");
  flags.AddInt("workers", &options.workers,
               "worker threads of local-task (default: one per core)");
  flags.AddStringList("input", &options.inputs,
                      "argument: SHAPExTYPE=VALUES (2x2xf32=1 2 3 4) or "
                      "@file.npy (repeatable, in order), or either after "
                      "NAME= (the argument's name in the module, as "
                      "strata-dump shows it; then every input is named)");
  flags.AddByteSize("device-memory-limit", &options.device_memory_limit,
                    "most bytes live in the device's allocator at once "
                    "(inputs, results, the program's buffers), e.g. 512M or "
                    "2G (default: physical memory); past it calls fail with "
                    "RESOURCE_EXHAUSTED");
  flags.AddDouble("timeout", &options.timeout_seconds,
                  "SECONDS: each module's __init at load and each call fail "
                  "with DEADLINE_EXCEEDED past it (default 0: no limit)");
}

Result<std::string> FormatValue(const vm::Value &value) {
  switch (value.type()) {
  case vm::ValueType::kI32:
    return StrCat("i32=", value.i32());
  case vm::ValueType::kI64:
    return StrCat("i64=", value.i64());
  case vm::ValueType::kF32:
    return StrCat("f32=", value.f32());
  case vm::ValueType::kF64:
    return StrCat("f64=", value.f64());
  case vm::ValueType::kRef:
    if (auto *view = RefCast<hal::BufferView>(value.ref()))
      return FormatBufferView(*view);
    if (!value.ref())
      return std::string("(null)");
    return StrCat("(", value.ref()->ref_type()->name, ")");
  case vm::ValueType::kNone:
    break;
  }
  return std::string("(none)");
}

} // namespace strata::tooling
