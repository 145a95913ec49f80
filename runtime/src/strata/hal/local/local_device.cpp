#include "strata/hal/local/local_device.h"

#include "strata/base/scratch_array.h"
#include "strata/hal/local/cpu_features.h"

namespace strata::hal {
namespace {

// Matches `text` against `pattern` where '*' matches any run of characters.
bool GlobMatch(std::string_view pattern, std::string_view text) {
  if (pattern.empty())
    return text.empty();
  if (pattern[0] == '*') {
    for (size_t i = 0; i <= text.size(); ++i)
      if (GlobMatch(pattern.substr(1), text.substr(i)))
        return true;
    return false;
  }
  return !text.empty() && pattern[0] == text[0] &&
         GlobMatch(pattern.substr(1), text.substr(1));
}

} // namespace

Result<RefPtr<LocalDevice>> LocalDevice::Create(LocalDeviceParams params) {
  if (params.id.empty())
    return InvalidArgumentError("local device needs an id");
  if (!params.grid_runner)
    return InvalidArgumentError("local device '", params.id,
                                "' needs a grid runner");
  if (!params.allocator)
    params.allocator = HeapAllocator::Create(params.id);
  return RefPtr<LocalDevice>::Adopt(new LocalDevice(std::move(params)));
}

LocalDevice::LocalDevice(LocalDeviceParams params)
    : id_(std::move(params.id)), executable_cache_(std::move(params.loaders)),
      grid_runner_(std::move(params.grid_runner)),
      allocator_(std::move(params.allocator)) {
  if (params.async_queue)
    queue_ = std::make_unique<LocalQueue>();
}

RefPtr<Allocator> LocalDevice::allocator() const {
  std::lock_guard<std::mutex> lock(allocator_mutex_);
  return allocator_;
}

void LocalDevice::SetAllocator(RefPtr<Allocator> allocator) {
  if (!allocator)
    return;
  std::lock_guard<std::mutex> lock(allocator_mutex_);
  allocator_ = std::move(allocator);
}

Status LocalDevice::Trim() { return allocator()->Trim(); }

Result<int64_t> LocalDevice::QueryI64(std::string_view category,
                                      std::string_view key) {
  if (category == "hal.executable.format")
    return executable_cache_.CanPrepareFormat(key) ? 1 : 0;
  if (category == "hal.device" && key == "concurrency")
    return 1;
  if (category == "hal.dispatch" && key == "concurrency")
    return int64_t(grid_runner_->concurrency());
  if (category == "hal.device.id")
    return GlobMatch(key, id_) ? 1 : 0;
  // Executables run on this CPU: it answers for their instruction set.
  // "hal.cpu.features" takes a comma-separated list and fails naming every
  // missing feature (what a module's `__init` asks); ".present" answers 0/1
  // instead (how it picks among CPU variants).
  if (category == "hal.cpu.features") {
    STRATA_RETURN_IF_ERROR(CheckHostCpuFeatures(key));
    return 1;
  }
  if (category == "hal.cpu.features.present")
    return CheckHostCpuFeatures(key).ok() ? 1 : 0;
  if (category == "hal.cpu.feature")
    if (std::optional<bool> present = HostHasCpuFeature(key))
      return *present ? 1 : 0;
  return NotFoundError("device '", id_, "' has no value for query '", category,
                       "' :: '", key, "'");
}

Result<RefPtr<CommandBuffer>> LocalDevice::CreateCommandBuffer(
    CommandBufferModeBitfield mode, CommandCategoryBitfield categories,
    QueueAffinity queue_affinity, uint32_t binding_capacity) {
  // Indirect bindings (binding tables) are not supported; direct bindings
  // need no capacity.
  STRATA_ASSIGN_OR_RETURN(
      RefPtr<DeferredCommandBuffer> command_buffer,
      DeferredCommandBuffer::Create(mode, categories, queue_affinity));
  return RefPtr<CommandBuffer>(std::move(command_buffer));
}

Result<RefPtr<Semaphore>> LocalDevice::CreateSemaphore(uint64_t initial_value) {
  return RefPtr<Semaphore>(HostSemaphore::Create(initial_value));
}

bool LocalDevice::CanLoadExecutableFormat(std::string_view format) const {
  return executable_cache_.CanPrepareFormat(format);
}

Result<RefPtr<Executable>>
LocalDevice::CreateExecutable(std::string_view format,
                              std::span<const uint8_t> bytes,
                              std::span<const uint32_t> constants) {
  return executable_cache_.PrepareExecutable(format, bytes, constants);
}

template <typename Work>
Status LocalDevice::RunQueueOperation(const char *operation,
                                      std::initializer_list<TraceArg> args,
                                      Fence *wait_fence, Fence *signal_fence,
                                      Work &&work) {
  Status status;
  // The calling thread's abort signal ends a wait for a fence that is never
  // reached.
  if (wait_fence)
    status = wait_fence->Wait(Deadline::Infinite(), AbortSignal::Current());
  if (status.ok())
    status = profiler_.Span("queue", operation, args, work);
  if (!status.ok()) {
    status = status.Annotate(operation);
    if (signal_fence)
      signal_fence->Fail(status);
    return status;
  }
  if (signal_fence)
    STRATA_RETURN_IF_ERROR(signal_fence->Signal());
  return OkStatus();
}

Result<RefPtr<Buffer>>
LocalDevice::QueueAlloca(QueueAffinity queue_affinity, Fence *wait_fence,
                         Fence *signal_fence, MemoryTypeBitfield memory_type,
                         BufferUsageBitfield usage, uint64_t byte_length) {
  RefPtr<Buffer> buffer;
  STRATA_RETURN_IF_ERROR(RunQueueOperation(
      "queue_alloca", {{"byte_length", byte_length}}, wait_fence, signal_fence,
      [&]() -> Status {
        STRATA_ASSIGN_OR_RETURN(buffer, allocator()->AllocateBuffer(
                                            memory_type, usage, byte_length));
        return OkStatus();
      }));
  return buffer;
}

Status LocalDevice::QueueDealloca(QueueAffinity queue_affinity,
                                  Fence *wait_fence, Fence *signal_fence,
                                  Buffer *buffer) {
  return RunQueueOperation(
      "queue_dealloca",
      {{"byte_length", buffer ? buffer->byte_length() : uint64_t(0)}},
      wait_fence, signal_fence, [&]() -> Status {
        if (!buffer)
          return InvalidArgumentError("null buffer");
        return OkStatus();
      });
}

Status LocalDevice::QueueRead(QueueAffinity queue_affinity, Fence *wait_fence,
                              Fence *signal_fence, Buffer *source,
                              uint64_t source_offset,
                              std::span<uint8_t> target) {
  return RunQueueOperation("queue_read",
                           {{"byte_length", uint64_t(target.size())},
                            {"source_offset", source_offset}},
                           wait_fence, signal_fence, [&]() -> Status {
                             if (!source)
                               return InvalidArgumentError("null source");
                             return source->ReadData(source_offset, target);
                           });
}

Status LocalDevice::QueueWrite(QueueAffinity queue_affinity, Fence *wait_fence,
                               Fence *signal_fence,
                               std::span<const uint8_t> source, Buffer *target,
                               uint64_t target_offset) {
  return RunQueueOperation("queue_write",
                           {{"byte_length", uint64_t(source.size())},
                            {"target_offset", target_offset}},
                           wait_fence, signal_fence, [&]() -> Status {
                             if (!target)
                               return InvalidArgumentError("null target");
                             return target->WriteData(target_offset, source);
                           });
}

namespace {

// Checks a submission before any of it runs, so a bad one has no effect;
// fills `deferred` (one per command buffer) with them, retained.
Status PrepareSubmission(std::span<CommandBuffer *const> command_buffers,
                         std::span<RefPtr<DeferredCommandBuffer>> deferred) {
  for (size_t i = 0; i < command_buffers.size(); ++i) {
    auto *command_buffer =
        DeferredCommandBuffer::FromCommandBuffer(command_buffers[i]);
    if (!command_buffer)
      return InvalidArgumentError("command buffer ", i,
                                  command_buffers[i]
                                      ? " was not created by a local device"
                                      : " is null");
    if (!command_buffer->is_finalized())
      return FailedPreconditionError(
          "command buffer ", i, " must be finalized before it is submitted");
    deferred[i] = RefPtr<DeferredCommandBuffer>::Retain(command_buffer);
  }
  for (size_t i = 0; i < deferred.size(); ++i)
    STRATA_RETURN_IF_ERROR(
        deferred[i]->BeginSubmission().Annotate("command buffer ", i));
  return OkStatus();
}

} // namespace

Status LocalDevice::ReplayAll(
    std::span<const RefPtr<DeferredCommandBuffer>> command_buffers) {
  for (size_t i = 0; i < command_buffers.size(); ++i)
    STRATA_RETURN_IF_ERROR(
        ReplayCommandBuffer(*command_buffers[i], *grid_runner_, &profiler_)
            .Annotate("command buffer ", i));
  return OkStatus();
}

Status LocalDevice::ProfiledReplayAll(
    std::span<const RefPtr<DeferredCommandBuffer>> command_buffers) {
  if (!profiler_.is_active())
    return ReplayAll(command_buffers);
  uint64_t command_count = 0;
  for (const RefPtr<DeferredCommandBuffer> &command_buffer : command_buffers)
    command_count += command_buffer->commands().size();
  return profiler_.Span(
      "queue", "queue_execute",
      {{"command_buffer_count", uint64_t(command_buffers.size())},
       {"command_count", command_count}},
      [&] { return ReplayAll(command_buffers); });
}

Status
LocalDevice::QueueExecute(QueueAffinity queue_affinity, Fence *wait_fence,
                          Fence *signal_fence,
                          std::span<CommandBuffer *const> command_buffers) {
  if (queue_) {
    ScratchArray<RefPtr<DeferredCommandBuffer>, 4> prepared(
        command_buffers.size());
    if (Status status = PrepareSubmission(command_buffers, prepared.span());
        !status.ok()) {
      status = status.Annotate("queue_execute");
      if (signal_fence)
        signal_fence->Fail(status);
      return status;
    }
    // The usual synchronous call: run now, nothing packaged for the queue.
    if (queue_->TryRunInline(
            wait_fence, signal_fence,
            [&] { return ProfiledReplayAll(prepared.span()); },
            "queue_execute"))
      return OkStatus();
    std::vector<RefPtr<DeferredCommandBuffer>> deferred(prepared.begin(),
                                                        prepared.end());
    queue_->Submit(
        RefPtr<Fence>::Retain(wait_fence), RefPtr<Fence>::Retain(signal_fence),
        [this, command_buffers = std::move(deferred)] {
          return ProfiledReplayAll(command_buffers);
        },
        "queue_execute");
    return OkStatus();
  }
  // Counted only for the trace (invalid command buffers count as empty;
  // PrepareSubmission rejects them).
  uint64_t command_count = 0;
  if (profiler_.is_active())
    for (CommandBuffer *command_buffer : command_buffers)
      if (auto *deferred =
              DeferredCommandBuffer::FromCommandBuffer(command_buffer))
        command_count += deferred->commands().size();
  return RunQueueOperation(
      "queue_execute",
      {{"command_buffer_count", uint64_t(command_buffers.size())},
       {"command_count", command_count}},
      wait_fence, signal_fence, [&]() -> Status {
        ScratchArray<RefPtr<DeferredCommandBuffer>, 4> deferred(
            command_buffers.size());
        STRATA_RETURN_IF_ERROR(
            PrepareSubmission(command_buffers, deferred.span()));
        return ReplayAll(deferred.span());
      });
}

Status LocalDevice::QueueFlush(QueueAffinity queue_affinity) {
  // Work runs at submission (or as soon as its wait is reached on the
  // queue thread); nothing waits for a flush. Still a span, so a trace shows
  // where the program flushed.
  return profiler_.Span("queue", "queue_flush", {}, [] { return OkStatus(); });
}

std::string LocalDevice::DumpInfo() const {
  // StrCat, not a stream: iostreams would pull the C++ library's locale
  // machinery (~400 KB) into every static embedding.
  RefPtr<Allocator> current_allocator = allocator();
  AllocatorStatistics stats = current_allocator->statistics();
  std::string text = StrCat(
      "device: ", id_, "\n",
      queue_ ? "  queues: 1 (command buffers run inline when the queue is "
               "idle, else on a queue thread)\n"
             : "  queues: 1 (work runs inline on the submitting thread)\n",
      "  dispatch concurrency: ", grid_runner_->concurrency(), "\n",
      "  allocator: ", current_allocator->name(), " (live ", stats.bytes_live,
      " bytes, peak ", stats.bytes_peak, " bytes, ", stats.allocation_count,
      " allocations, cached ", stats.bytes_cached, " bytes)\n",
      "  executable loaders:");
  for (const auto &loader : executable_cache_.loaders()) {
    text += StrCat(" ", loader->name(), " [");
    std::vector<std::string> formats = loader->SupportedFormats();
    for (size_t i = 0; i < formats.size(); ++i)
      text += StrCat(i ? ", " : "", formats[i]);
    text += "]";
  }
  text += "\n";
  return text;
}

} // namespace strata::hal
