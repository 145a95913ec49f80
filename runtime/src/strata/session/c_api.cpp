// The C API (strata/runtime.h) over the C++ session API. Handles own one
// reference each; statuses carry a copy of the message.
#include "strata/runtime.h"

#include <cstring>
#include <deque>
#include <functional>
#include <memory>
#include <new>

#include "strata/hal/buffer_view.h"
#include "strata/hal/element_type.h"
#include "strata/session/session.h"

struct strata_status_s {
  strata_status_code_t code;
  std::string message;
};
struct strata_instance_s {
  strata::RefPtr<strata::session::Instance> instance;
};
struct strata_device_s {
  strata::RefPtr<strata::hal::Device> device;
};
struct strata_session_s {
  strata::RefPtr<strata::session::Session> session;
  // What strata_session_function_name returns, "module.function" of each of
  // session->ListFunctions(). A deque: appending a module only adds names,
  // and those already handed out stay where they are.
  std::deque<std::string> function_names;
};
struct strata_function_s {
  strata::vm::Function function;
  // What strata_function_name returns.
  std::string name;
};
struct strata_buffer_view_s {
  strata::RefPtr<strata::hal::BufferView> view;
};
struct strata_loop_s {
  strata::vm::Loop loop;
};
struct strata_cancellation_s {
  strata::RefPtr<strata::CancellationToken> token;
};

namespace {

using namespace strata;

static_assert(int(STRATA_STATUS_DATA_LOSS) == int(StatusCode::kDataLoss));
static_assert(STRATA_ELEMENT_TYPE_BOOL_8 == STRATA_HAL_ELEMENT_TYPE_BOOL_8);
static_assert(STRATA_ELEMENT_TYPE_SINT_32 == STRATA_HAL_ELEMENT_TYPE_SINT_32);
static_assert(STRATA_ELEMENT_TYPE_UINT_64 == STRATA_HAL_ELEMENT_TYPE_UINT_64);
static_assert(STRATA_ELEMENT_TYPE_FLOAT_16 == STRATA_HAL_ELEMENT_TYPE_FLOAT_16);
static_assert(STRATA_ELEMENT_TYPE_FLOAT_32 == STRATA_HAL_ELEMENT_TYPE_FLOAT_32);
static_assert(STRATA_ELEMENT_TYPE_FLOAT_64 == STRATA_HAL_ELEMENT_TYPE_FLOAT_64);
static_assert(STRATA_ELEMENT_TYPE_BFLOAT_16 ==
              STRATA_HAL_ELEMENT_TYPE_BFLOAT_16);

strata_status_t ToC(const Status &status) {
  if (status.ok())
    return nullptr;
  auto *result = new (std::nothrow) strata_status_s;
  if (!result) {
    // Out of memory while reporting: a static status would be freed by
    // the caller, so abort is the only honest option left.
    std::abort();
  }
  result->code = strata_status_code_t(status.code());
  result->message = std::string(status.message());
  return result;
}

strata_status_t NullArgument(const char *name) {
  return ToC(InvalidArgumentError("argument '", name, "' is null"));
}

session::CallOptions ToCallOptions(const strata_call_options_t *options) {
  session::CallOptions call_options;
  if (!options)
    return call_options;
  if (options->timeout_ms > 0)
    call_options.deadline = Deadline::AfterMs(options->timeout_ms);
  else if (options->timeout_ms < 0)
    call_options.deadline = Deadline::Infinite();
  if (options->cancellation)
    call_options.cancellation = options->cancellation->token;
  return call_options;
}

strata_status_t GetTensorInfo(const strata_function_t *function, size_t index,
                              bool input, strata_tensor_info_t *out_info) {
  if (!function || !out_info)
    return NullArgument(!function ? "function" : "out_info");
  const vm::ModuleExport &info = function->function.info();
  const std::vector<vm::TensorTypeInfo> &types =
      input ? info.argument_types : info.result_types;
  const char *what = input ? "input" : "output";
  if (types.empty())
    return ToC(FailedPreconditionError("function '", function->name,
                                       "' has no tensor reflection (its ", what,
                                       "s are not all tensors)"));
  if (index >= types.size())
    return ToC(InvalidArgumentError("function '", function->name, "' has ",
                                    types.size(), " ", what, "s; there is no ",
                                    what, " ", index));
  const vm::TensorTypeInfo &type = types[index];
  out_info->name = type.name.c_str();
  out_info->element_type = type.element_type;
  out_info->rank = type.shape.size();
  out_info->dims = type.shape.data();
  return nullptr;
}

// Names the functions a module just appended added (they come last in
// ListFunctions) for strata_session_function_name.
void ListNewFunctions(strata_session_t *session) {
  std::vector<vm::Function> functions = session->session->ListFunctions();
  for (size_t i = session->function_names.size(); i < functions.size(); ++i)
    session->function_names.push_back(functions[i].FullName());
}

// The status of appending a module; on success its functions are listed.
strata_status_t Appended(strata_session_t *session, const Status &status) {
  if (status.ok())
    ListNewFunctions(session);
  return ToC(status);
}

// Calls a C release callback when destroyed (strata_buffer_view_import).
class ReleaseOnDestruction {
public:
  ReleaseOnDestruction(strata_release_fn_t release, void *user_data,
                       const void *data, size_t size)
      : release(release), user_data(user_data), data(data), size(size) {}
  ReleaseOnDestruction(const ReleaseOnDestruction &) = delete;
  ReleaseOnDestruction &operator=(const ReleaseOnDestruction &) = delete;
  ~ReleaseOnDestruction() {
    if (release)
      release(user_data, data, size);
  }

private:
  strata_release_fn_t release;
  void *user_data;
  const void *data;
  size_t size;
};

// The arguments of a tensor made from the caller's bytes
// (strata_buffer_view_create/import): none null that is needed, a rank the
// views take, and exactly the bytes the shape and element type need.
strata_status_t CheckTensorArguments(strata_session_t *session,
                                     const int64_t *shape, size_t rank,
                                     strata_element_type_t element_type,
                                     const void *data, size_t byte_length,
                                     strata_buffer_view_t **out_view) {
  if (!session || (!shape && rank) || (!data && byte_length) || !out_view)
    return NullArgument(!session           ? "session"
                        : !out_view        ? "out_view"
                        : (!shape && rank) ? "shape"
                                           : "data");
  if (rank > hal::BufferView::kMaxRank)
    return ToC(InvalidArgumentError("rank ", rank, " exceeds the maximum ",
                                    hal::BufferView::kMaxRank));
  auto expected = hal::BufferView::ComputeByteLength(
      std::span<const int64_t>(shape, rank), element_type);
  if (!expected.ok())
    return ToC(expected.status());
  if (*expected != byte_length)
    return ToC(InvalidArgumentError("tensor data has ", byte_length,
                                    " bytes but the shape and element type "
                                    "need ",
                                    *expected));
  return nullptr;
}

} // namespace

extern "C" {

strata_status_code_t strata_status_code(strata_status_t status) {
  return status ? status->code : STRATA_STATUS_OK;
}

const char *strata_status_message(strata_status_t status) {
  return status ? status->message.c_str() : "";
}

void strata_status_free(strata_status_t status) { delete status; }

strata_status_t strata_instance_create(strata_instance_t **out_instance) {
  if (!out_instance)
    return NullArgument("out_instance");
  auto instance = session::Instance::Create();
  if (!instance.ok())
    return ToC(instance.status());
  *out_instance = new strata_instance_s{std::move(*instance)};
  return nullptr;
}

void strata_instance_release(strata_instance_t *instance) { delete instance; }

strata_status_t strata_device_create(strata_instance_t *instance,
                                     const char *uri,
                                     strata_device_t **out_device) {
  if (!instance || !uri || !out_device)
    return NullArgument(!instance ? "instance" : !uri ? "uri" : "out_device");
  auto device = instance->instance->CreateDevice(uri);
  if (!device.ok())
    return ToC(device.status().Annotate("device '", uri, "'"));
  *out_device = new strata_device_s{std::move(*device)};
  return nullptr;
}

void strata_device_release(strata_device_t *device) { delete device; }

strata_status_t strata_device_set_memory_limit(strata_device_t *device,
                                               uint64_t bytes) {
  if (!device)
    return NullArgument("device");
  RefPtr<hal::Allocator> allocator = device->device->allocator();
  if (!allocator)
    return ToC(FailedPreconditionError("device '", device->device->id(),
                                       "' has no allocator to limit"));
  return ToC(allocator->SetMemoryLimit(bytes));
}

uint64_t strata_device_memory_limit(const strata_device_t *device) {
  if (!device)
    return 0;
  RefPtr<hal::Allocator> allocator = device->device->allocator();
  return allocator ? allocator->memory_limit() : 0;
}

strata_status_t strata_session_create(strata_instance_t *instance,
                                      strata_device_t *device,
                                      strata_session_t **out_session) {
  return strata_session_create_with_options(instance, device, nullptr,
                                            out_session);
}

strata_status_t strata_session_create_with_options(
    strata_instance_t *instance, strata_device_t *device,
    const strata_session_options_t *options, strata_session_t **out_session) {
  if (!instance || !device || !out_session)
    return NullArgument(!instance ? "instance"
                        : !device ? "device"
                                  : "out_session");
  session::SessionOptions session_options;
  if (options) {
    session_options.context_options.allow_concurrent_invocations =
        options->allow_concurrent_calls != 0;
    if (options->default_timeout_ms < 0)
      return ToC(InvalidArgumentError("default_timeout_ms must be >= 0, got ",
                                      options->default_timeout_ms));
    if (options->default_timeout_ms > INT64_MAX / 1000000)
      return ToC(InvalidArgumentError("default_timeout_ms of ",
                                      options->default_timeout_ms,
                                      " is too large"));
    session_options.default_timeout_ns = options->default_timeout_ms * 1000000;
  }
  auto session = session::Session::Create(instance->instance, device->device,
                                          std::move(session_options));
  if (!session.ok())
    return ToC(session.status());
  *out_session = new strata_session_s{std::move(*session), {}};
  return nullptr;
}

void strata_session_release(strata_session_t *session) { delete session; }

strata_status_t
strata_session_append_module_from_file(strata_session_t *session,
                                       const char *path) {
  if (!session || !path)
    return NullArgument(!session ? "session" : "path");
  return Appended(session,
                  session->session->AppendBytecodeModuleFromFile(path));
}

strata_status_t strata_session_append_module_from_memory(
    strata_session_t *session, const void *data, size_t size,
    strata_release_fn_t release, void *user_data) {
  // Ownership passes first, so `release` runs exactly once on every path.
  OwnedBytes bytes =
      OwnedBytes::Wrap({static_cast<const uint8_t *>(data), data ? size : 0},
                       [release, user_data, data, size]() {
                         if (release)
                           release(user_data, data, size);
                       });
  if (!session || !data)
    return NullArgument(!session ? "session" : "data");
  return Appended(session, session->session->AppendBytecodeModuleFromMemory(
                               std::move(bytes)));
}

strata_status_t
strata_session_append_module_from_stdin(strata_session_t *session) {
  if (!session)
    return NullArgument("session");
  return Appended(session, session->session->AppendBytecodeModuleFromStdin());
}

strata_status_t strata_session_trim(strata_session_t *session) {
  if (!session)
    return NullArgument("session");
  return ToC(session->session->Trim());
}

strata_status_t
strata_session_lookup_function(strata_session_t *session, const char *name,
                               strata_function_t **out_function) {
  if (!session || !name || !out_function)
    return NullArgument(!session ? "session" : !name ? "name" : "out_function");
  auto function = session->session->LookupFunction(name);
  if (!function.ok())
    return ToC(function.status());
  std::string full_name = function->FullName();
  *out_function =
      new strata_function_s{std::move(*function), std::move(full_name)};
  return nullptr;
}

void strata_function_release(strata_function_t *function) { delete function; }

size_t strata_session_function_count(const strata_session_t *session) {
  return session ? session->function_names.size() : 0;
}

strata_status_t strata_session_function_name(const strata_session_t *session,
                                             size_t index,
                                             const char **out_name) {
  if (!session || !out_name)
    return NullArgument(!session ? "session" : "out_name");
  size_t count = session->function_names.size();
  if (index >= count)
    return ToC(InvalidArgumentError("the session has ", count, " function",
                                    count == 1 ? "" : "s",
                                    "; there is no function ", index));
  *out_name = session->function_names[index].c_str();
  return nullptr;
}

size_t strata_function_input_count(const strata_function_t *function) {
  return function ? function->function.info().signature.argument_types().size()
                  : 0;
}

size_t strata_function_output_count(const strata_function_t *function) {
  return function ? function->function.info().signature.result_types().size()
                  : 0;
}

const char *strata_function_name(const strata_function_t *function) {
  return function ? function->name.c_str() : "";
}

strata_status_t strata_function_input_info(const strata_function_t *function,
                                           size_t index,
                                           strata_tensor_info_t *out_info) {
  return GetTensorInfo(function, index, /*input=*/true, out_info);
}

strata_status_t strata_function_output_info(const strata_function_t *function,
                                            size_t index,
                                            strata_tensor_info_t *out_info) {
  return GetTensorInfo(function, index, /*input=*/false, out_info);
}

strata_status_t strata_buffer_view_create(strata_session_t *session,
                                          const int64_t *shape, size_t rank,
                                          strata_element_type_t element_type,
                                          const void *data, size_t byte_length,
                                          strata_buffer_view_t **out_view) {
  if (strata_status_t status = CheckTensorArguments(
          session, shape, rank, element_type, data, byte_length, out_view))
    return status;
  std::span<const int64_t> dims(shape, rank);
  auto allocator = session->session->device_allocator();
  auto view = hal::BufferView::Allocate(
      *allocator, dims, element_type,
      STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL | STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
      STRATA_HAL_BUFFER_USAGE_DEFAULT,
      {static_cast<const uint8_t *>(data), byte_length});
  if (!view.ok())
    return ToC(view.status());
  *out_view = new strata_buffer_view_s{std::move(*view)};
  return nullptr;
}

strata_status_t strata_buffer_view_import(strata_session_t *session,
                                          const int64_t *shape, size_t rank,
                                          strata_element_type_t element_type,
                                          const void *data, size_t byte_length,
                                          strata_release_fn_t release,
                                          void *user_data,
                                          strata_buffer_view_t **out_view) {
  // `release` runs when the last copy of this callback is gone: the buffer
  // that wraps the bytes died, the allocator copied them in, or any path
  // out of here failed. Exactly once, whichever.
  auto releaser = std::make_shared<ReleaseOnDestruction>(release, user_data,
                                                         data, byte_length);
  std::function<void()> keep_bytes = [releaser]() {};
  releaser.reset();
  // Executables may assume their bindings are as aligned as the allocator's
  // own buffers (a cache line): other memory is copied.
  if (reinterpret_cast<uintptr_t>(data) % 64 != 0)
    return strata_buffer_view_create(session, shape, rank, element_type, data,
                                     byte_length, out_view);
  if (strata_status_t status = CheckTensorArguments(
          session, shape, rank, element_type, data, byte_length, out_view))
    return status;
  if (!data)
    return NullArgument("data");
  std::span<const int64_t> dims(shape, rank);
  auto allocator = session->session->device_allocator();
  auto buffer = allocator->ImportHostBytes(
      STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL | STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
      STRATA_HAL_BUFFER_USAGE_DEFAULT,
      {static_cast<const uint8_t *>(data), byte_length}, std::move(keep_bytes));
  if (!buffer.ok())
    return ToC(buffer.status());
  auto view = hal::BufferView::Create(std::move(*buffer), dims, element_type);
  if (!view.ok())
    return ToC(view.status());
  *out_view = new strata_buffer_view_s{std::move(*view)};
  return nullptr;
}

void strata_buffer_view_release(strata_buffer_view_t *view) { delete view; }

size_t strata_buffer_view_rank(const strata_buffer_view_t *view) {
  return view ? view->view->rank() : 0;
}

int64_t strata_buffer_view_dim(const strata_buffer_view_t *view, size_t index) {
  return view && index < view->view->rank() ? view->view->dim(index) : 0;
}

strata_element_type_t
strata_buffer_view_element_type(const strata_buffer_view_t *view) {
  return view ? view->view->element_type() : 0;
}

size_t strata_buffer_view_byte_length(const strata_buffer_view_t *view) {
  return view ? size_t(view->view->byte_length()) : 0;
}

strata_status_t strata_buffer_view_read(const strata_buffer_view_t *view,
                                        void *target, size_t byte_length) {
  if (!view || (!target && byte_length))
    return NullArgument(!view ? "view" : "target");
  if (byte_length != view->view->byte_length())
    return ToC(InvalidArgumentError(
        "reading ", byte_length, " bytes from a tensor of ",
        view->view->byte_length(), " bytes (", view->view->FormatShape(), ")"));
  const auto &buffer = view->view->buffer();
  return ToC(
      buffer->ReadData(0, {static_cast<uint8_t *>(target), byte_length}));
}

strata_status_t
strata_buffer_view_exclusive_host_data(strata_buffer_view_t *view,
                                       void **out_data) {
  if (!view || !out_data)
    return NullArgument(!view ? "view" : "out_data");
  const hal::BufferView &tensor = *view->view;
  hal::Buffer &buffer = *tensor.buffer();
  hal::Buffer &allocation = *buffer.allocated_buffer();
  // Only this handle holds the view, only the view its buffer, and only
  // that buffer (a subspan) the allocation: nothing else in the runtime can
  // reach the bytes. References are only ever added through one already
  // held, so a count of one cannot grow behind the caller's back.
  bool exclusive = tensor.ref_count() == 1 && buffer.ref_count() == 1 &&
                   (&allocation == &buffer || allocation.ref_count() == 1);
  // Imported host bytes (a module's constants, strata_buffer_view_import)
  // belong to whoever supplied them; only an allocator's own host memory is
  // handed out.
  bool allocated_host_memory =
      !allocation.wraps_external_memory() &&
      (allocation.memory_type() & STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE) &&
      buffer.host_data() != nullptr;
  *out_data = exclusive && allocated_host_memory ? buffer.host_data() : nullptr;
  return nullptr;
}

strata_status_t strata_cancellation_create(strata_cancellation_t **out_token) {
  if (!out_token)
    return NullArgument("out_token");
  *out_token = new strata_cancellation_s{CancellationToken::Create()};
  return nullptr;
}

void strata_cancellation_cancel(strata_cancellation_t *token) {
  if (token)
    token->token->Cancel();
}

int strata_cancellation_is_cancelled(const strata_cancellation_t *token) {
  return token && token->token->is_cancelled() ? 1 : 0;
}

void strata_cancellation_release(strata_cancellation_t *token) { delete token; }

strata_status_t strata_session_call(strata_session_t *session,
                                    const strata_function_t *function,
                                    strata_buffer_view_t *const *inputs,
                                    size_t input_count,
                                    strata_buffer_view_t **outputs,
                                    size_t output_capacity,
                                    size_t *out_output_count) {
  return strata_session_call_with_options(session, function, inputs,
                                          input_count, outputs, output_capacity,
                                          out_output_count, nullptr);
}

strata_status_t strata_session_call_with_options(
    strata_session_t *session, const strata_function_t *function,
    strata_buffer_view_t *const *inputs, size_t input_count,
    strata_buffer_view_t **outputs, size_t output_capacity,
    size_t *out_output_count, const strata_call_options_t *options) {
  if (!session || !function || (!inputs && input_count) || !out_output_count ||
      (!outputs && output_capacity))
    return NullArgument(!session                   ? "session"
                        : !function                ? "function"
                        : !out_output_count        ? "out_output_count"
                        : (!inputs && input_count) ? "inputs"
                                                   : "outputs");
  std::vector<vm::Value> arguments;
  arguments.reserve(input_count);
  for (size_t i = 0; i < input_count; ++i) {
    if (!inputs[i])
      return ToC(InvalidArgumentError("input ", i, " is null"));
    arguments.push_back(vm::Value::Ref(inputs[i]->view));
  }
  std::vector<vm::Value> results;
  Status status = session->session->Call(function->function, arguments,
                                         &results, ToCallOptions(options));
  if (!status.ok())
    return ToC(status);
  std::string name = function->function.FullName();
  if (results.size() > output_capacity)
    return ToC(InvalidArgumentError(
        "function '", name, "' returns ", results.size(),
        " results but the output array holds ", output_capacity));
  for (size_t i = 0; i < results.size(); ++i)
    if (!RefCast<hal::BufferView>(results[i].ref()))
      return ToC(UnimplementedError("function '", name, "' result ", i,
                                    " is not a tensor; the C API returns "
                                    "tensors only"));
  for (size_t i = 0; i < results.size(); ++i)
    outputs[i] = new strata_buffer_view_s{RefPtr<hal::BufferView>::Retain(
        RefCast<hal::BufferView>(results[i].ref()))};
  *out_output_count = results.size();
  return nullptr;
}

strata_status_t strata_session_call_into(strata_session_t *session,
                                         const strata_function_t *function,
                                         strata_buffer_view_t *const *inputs,
                                         size_t input_count,
                                         strata_buffer_view_t *const *outputs,
                                         size_t output_count) {
  return strata_session_call_into_with_options(
      session, function, inputs, input_count, outputs, output_count, nullptr);
}

strata_status_t strata_session_call_into_with_options(
    strata_session_t *session, const strata_function_t *function,
    strata_buffer_view_t *const *inputs, size_t input_count,
    strata_buffer_view_t *const *outputs, size_t output_count,
    const strata_call_options_t *options) {
  if (!session || !function || (!inputs && input_count) ||
      (!outputs && output_count))
    return NullArgument(!session                   ? "session"
                        : !function                ? "function"
                        : (!inputs && input_count) ? "inputs"
                                                   : "outputs");
  std::vector<vm::Value> arguments;
  arguments.reserve(input_count);
  for (size_t i = 0; i < input_count; ++i) {
    if (!inputs[i])
      return ToC(InvalidArgumentError("input ", i, " is null"));
    arguments.push_back(vm::Value::Ref(inputs[i]->view));
  }
  std::vector<hal::BufferView *> targets(output_count);
  for (size_t i = 0; i < output_count; ++i)
    targets[i] = outputs[i] ? outputs[i]->view.get() : nullptr;
  return ToC(session->session->CallIntoOutputs(
      function->function, arguments, targets, ToCallOptions(options)));
}

strata_status_t strata_loop_create(strata_loop_t **out_loop) {
  if (!out_loop)
    return NullArgument("out_loop");
  *out_loop = new strata_loop_s;
  return nullptr;
}

void strata_loop_release(strata_loop_t *loop) { delete loop; }

strata_status_t strata_loop_drain(strata_loop_t *loop, int64_t timeout_ms) {
  if (!loop)
    return NullArgument("loop");
  return ToC(loop->loop.Drain(timeout_ms < 0 ? Deadline::Infinite()
                                             : Deadline::AfterMs(timeout_ms)));
}

size_t strata_loop_pending_count(const strata_loop_t *loop) {
  return loop ? loop->loop.pending_count() : 0;
}

strata_status_t strata_session_call_async(
    strata_session_t *session, const strata_function_t *function,
    strata_buffer_view_t *const *inputs, size_t input_count,
    strata_loop_t *loop, strata_call_callback_fn_t callback, void *user_data) {
  return strata_session_call_async_with_options(session, function, inputs,
                                                input_count, loop, callback,
                                                user_data, nullptr);
}

strata_status_t strata_session_call_async_with_options(
    strata_session_t *session, const strata_function_t *function,
    strata_buffer_view_t *const *inputs, size_t input_count,
    strata_loop_t *loop, strata_call_callback_fn_t callback, void *user_data,
    const strata_call_options_t *options) {
  if (!loop || !callback)
    return NullArgument(!loop ? "loop" : "callback");
  // Every other outcome reaches the callback, as C values.
  vm::InvokeCallback completion =
      [callback, user_data](Status status, std::vector<vm::Value> results) {
        for (size_t i = 0; status.ok() && i < results.size(); ++i)
          if (!RefCast<hal::BufferView>(results[i].ref()))
            status = UnimplementedError("result ", i,
                                        " is not a tensor; the C API returns "
                                        "tensors only");
        if (!status.ok()) {
          strata_status_t c_status = ToC(status);
          callback(user_data, c_status, nullptr, 0);
          strata_status_free(c_status);
          return;
        }
        std::vector<strata_buffer_view_t *> outputs(results.size());
        for (size_t i = 0; i < results.size(); ++i)
          outputs[i] = new strata_buffer_view_s{RefPtr<hal::BufferView>::Retain(
              RefCast<hal::BufferView>(results[i].ref()))};
        callback(user_data, nullptr, outputs.data(), outputs.size());
      };
  Status invalid;
  if (!session || !function)
    invalid = InvalidArgumentError(
        "argument '", !session ? "session" : "function", "' is null");
  else if (!inputs && input_count)
    invalid = InvalidArgumentError("argument 'inputs' is null");
  std::vector<vm::Value> arguments;
  arguments.reserve(input_count);
  for (size_t i = 0; invalid.ok() && i < input_count; ++i) {
    if (!inputs[i])
      invalid = InvalidArgumentError("input ", i, " is null");
    else
      arguments.push_back(vm::Value::Ref(inputs[i]->view));
  }
  if (!invalid.ok()) {
    session::FailOnLoop(loop->loop, std::move(invalid), std::move(completion));
    return nullptr;
  }
  session->session->CallAsync(function->function, std::move(arguments),
                              loop->loop, std::move(completion),
                              ToCallOptions(options));
  return nullptr;
}

} // extern "C"
