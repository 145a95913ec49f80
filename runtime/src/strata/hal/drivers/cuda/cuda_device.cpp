#include "strata/hal/drivers/cuda/cuda_device.h"

#include "strata/base/abort_signal.h"
#include "strata/base/scratch_array.h"
#include "strata/hal/drivers/cuda/cuda_allocator.h"
#include "strata/hal/drivers/cuda/cuda_executable.h"

namespace strata::hal::cuda {
namespace {

// Matches `text` against `pattern` where '*' matches any run of characters
// (as local devices answer "hal.device.id").
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

std::vector<std::unique_ptr<ExecutableLoader>>
CreateLoaders(const std::shared_ptr<CudaContext> &context) {
  std::vector<std::unique_ptr<ExecutableLoader>> loaders;
  loaders.push_back(std::make_unique<CudaExecutableLoader>(context));
  return loaders;
}

} // namespace

Result<RefPtr<CudaDevice>>
CudaDevice::Create(std::shared_ptr<const CudaSymbols> symbols, int ordinal) {
  STRATA_ASSIGN_OR_RETURN(std::shared_ptr<CudaContext> context,
                          CudaContext::Create(std::move(symbols), ordinal));
  RefPtr<Allocator> allocator =
      CudaAllocator::Create(StrCat(kCudaDeviceId, ":", ordinal), context);
  return RefPtr<CudaDevice>::Adopt(
      new CudaDevice(std::move(context), std::move(allocator)));
}

CudaDevice::CudaDevice(std::shared_ptr<CudaContext> context,
                       RefPtr<Allocator> allocator)
    : context_(std::move(context)), executable_cache_(CreateLoaders(context_)),
      allocator_(std::move(allocator)) {}

CudaDevice::~CudaDevice() { ProfilingEnd().IgnoreError(); }

RefPtr<Allocator> CudaDevice::allocator() const {
  std::lock_guard<std::mutex> lock(allocator_mutex_);
  return allocator_;
}

void CudaDevice::SetAllocator(RefPtr<Allocator> allocator) {
  if (!allocator)
    return;
  std::lock_guard<std::mutex> lock(allocator_mutex_);
  allocator_ = std::move(allocator);
}

Status CudaDevice::Trim() { return allocator()->Trim(); }

Result<int64_t> CudaDevice::QueryI64(std::string_view category,
                                     std::string_view key) {
  if (category == "hal.executable.format")
    return executable_cache_.CanPrepareFormat(key) ? 1 : 0;
  if (category == "hal.device" && key == "concurrency")
    return 1;
  if (category == "hal.dispatch" && key == "concurrency")
    return int64_t(context_->properties().multiprocessor_count);
  if (category == "hal.device.id")
    return GlobMatch(key, kCudaDeviceId) ? 1 : 0;
  return NotFoundError("device '", kCudaDeviceId, "' has no value for query '",
                       category, "' :: '", key, "'");
}

Result<RefPtr<CommandBuffer>> CudaDevice::CreateCommandBuffer(
    CommandBufferModeBitfield mode, CommandCategoryBitfield categories,
    QueueAffinity queue_affinity, uint32_t binding_capacity) {
  STRATA_ASSIGN_OR_RETURN(
      RefPtr<DeferredCommandBuffer> command_buffer,
      DeferredCommandBuffer::Create(mode, categories, queue_affinity));
  return RefPtr<CommandBuffer>(std::move(command_buffer));
}

Result<RefPtr<Semaphore>> CudaDevice::CreateSemaphore(uint64_t initial_value) {
  // Queue operations finish before they return: host semaphores suffice.
  return RefPtr<Semaphore>(HostSemaphore::Create(initial_value));
}

bool CudaDevice::CanLoadExecutableFormat(std::string_view format) const {
  return executable_cache_.CanPrepareFormat(format);
}

Result<RefPtr<Executable>>
CudaDevice::CreateExecutable(std::string_view format,
                             std::span<const uint8_t> bytes,
                             std::span<const uint32_t> constants) {
  return executable_cache_.PrepareExecutable(format, bytes, constants);
}

template <typename Work>
Status CudaDevice::RunQueueOperation(const char *operation, Fence *wait_fence,
                                     Fence *signal_fence, Work &&work) {
  Status status;
  // The calling thread's abort signal ends a wait for a fence that is never
  // reached.
  if (wait_fence)
    status = wait_fence->Wait(Deadline::Infinite(), AbortSignal::Current());
  if (status.ok())
    status = context_->MakeCurrent();
  if (status.ok()) {
    status = work();
    // Whatever was issued must be done before the operation returns, also
    // when a later step failed: buffers it uses may die right after.
    Status synchronized = context_->Synchronize();
    if (status.ok())
      status = std::move(synchronized);
  }
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
CudaDevice::QueueAlloca(QueueAffinity queue_affinity, Fence *wait_fence,
                        Fence *signal_fence, MemoryTypeBitfield memory_type,
                        BufferUsageBitfield usage, uint64_t byte_length) {
  RefPtr<Buffer> buffer;
  STRATA_RETURN_IF_ERROR(RunQueueOperation(
      "queue_alloca", wait_fence, signal_fence, [&]() -> Status {
        STRATA_ASSIGN_OR_RETURN(buffer, allocator()->AllocateBuffer(
                                            memory_type, usage, byte_length));
        return OkStatus();
      }));
  return buffer;
}

Status CudaDevice::QueueDealloca(QueueAffinity queue_affinity,
                                 Fence *wait_fence, Fence *signal_fence,
                                 Buffer *buffer) {
  // The memory goes when the last reference does (stream-ordered).
  return RunQueueOperation("queue_dealloca", wait_fence, signal_fence,
                           [&]() -> Status {
                             if (!buffer)
                               return InvalidArgumentError("null buffer");
                             return OkStatus();
                           });
}

Status CudaDevice::QueueRead(QueueAffinity queue_affinity, Fence *wait_fence,
                             Fence *signal_fence, Buffer *source,
                             uint64_t source_offset,
                             std::span<uint8_t> target) {
  return RunQueueOperation(
      "queue_read", wait_fence, signal_fence, [&]() -> Status {
        if (!source)
          return InvalidArgumentError("null source");
        // Host memory (pinned or wrapped) is read in place: the stream is
        // idle between synchronous operations.
        if (source->host_data())
          return source->ReadData(source_offset, target);
        STRATA_RETURN_IF_ERROR(ResolveByteRange(source->byte_length(),
                                                source_offset, target.size(),
                                                "read source")
                                   .status());
        STRATA_ASSIGN_OR_RETURN(CUdeviceptr address,
                                CudaDeviceAddress(source, "read source"));
        if (target.empty())
          return OkStatus();
        return STRATA_CUDA_CALL(context_->symbols(), cuMemcpyDtoHAsync_v2,
                                target.data(), address + source_offset,
                                target.size(), context_->stream());
      });
}

Status CudaDevice::QueueWrite(QueueAffinity queue_affinity, Fence *wait_fence,
                              Fence *signal_fence,
                              std::span<const uint8_t> source, Buffer *target,
                              uint64_t target_offset) {
  return RunQueueOperation(
      "queue_write", wait_fence, signal_fence, [&]() -> Status {
        if (!target)
          return InvalidArgumentError("null target");
        if (target->host_data())
          return target->WriteData(target_offset, source);
        STRATA_RETURN_IF_ERROR(ResolveByteRange(target->byte_length(),
                                                target_offset, source.size(),
                                                "write target")
                                   .status());
        STRATA_ASSIGN_OR_RETURN(CUdeviceptr address,
                                CudaDeviceAddress(target, "write target"));
        if (source.empty())
          return OkStatus();
        return STRATA_CUDA_CALL(context_->symbols(), cuMemcpyHtoDAsync_v2,
                                address + target_offset, source.data(),
                                source.size(), context_->stream());
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
                                      ? " was not created by a cuda device"
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

Status
CudaDevice::QueueExecute(QueueAffinity queue_affinity, Fence *wait_fence,
                         Fence *signal_fence,
                         std::span<CommandBuffer *const> command_buffers) {
  return RunQueueOperation(
      "queue_execute", wait_fence, signal_fence, [&]() -> Status {
        ScratchArray<RefPtr<DeferredCommandBuffer>, 4> deferred(
            command_buffers.size());
        STRATA_RETURN_IF_ERROR(
            PrepareSubmission(command_buffers, deferred.span()));
        for (size_t i = 0; i < deferred.size(); ++i)
          STRATA_RETURN_IF_ERROR(
              Replay(*deferred[i]).Annotate("command buffer ", i));
        return OkStatus();
      });
}

Status CudaDevice::QueueFlush(QueueAffinity queue_affinity) {
  // Work is issued and finished at submission.
  return OkStatus();
}

Status CudaDevice::Replay(const DeferredCommandBuffer &command_buffer) {
  const AbortSignal *abort_signal = AbortSignal::Current();
  const std::vector<Command> &commands = command_buffer.commands();
  for (size_t i = 0; i < commands.size(); ++i) {
    if (abort_signal)
      STRATA_RETURN_IF_ERROR(abort_signal->Check());
    const Command &command = commands[i];
    Status status;
    if (const auto *fill = std::get_if<FillCommand>(&command))
      status = ReplayFill(*fill);
    else if (const auto *copy = std::get_if<CopyCommand>(&command))
      status = ReplayCopy(*copy);
    else if (const auto *update = std::get_if<UpdateCommand>(&command))
      status = ReplayUpdate(*update);
    else if (const auto *dispatch = std::get_if<DispatchCommand>(&command))
      status = ReplayDispatch(command_buffer, *dispatch);
    // A barrier needs nothing: the stream runs commands in order.
    STRATA_RETURN_IF_ERROR(status.Annotate("command ", i));
  }
  return OkStatus();
}

Status CudaDevice::ReplayFill(const FillCommand &fill) {
  STRATA_ASSIGN_OR_RETURN(CUdeviceptr address,
                          CudaDeviceAddress(fill.target.get(), "fill target"));
  if (fill.length == 0)
    return OkStatus();
  address += fill.offset;
  const CudaSymbols &symbols = context_->symbols();
  CUstream stream = context_->stream();
  // The base class checked offset and length are multiples of the pattern.
  switch (fill.pattern_length) {
  case 1:
    return STRATA_CUDA_CALL(symbols, cuMemsetD8Async, address,
                            static_cast<unsigned char>(fill.pattern),
                            size_t(fill.length), stream);
  case 2:
    return STRATA_CUDA_CALL(symbols, cuMemsetD16Async, address,
                            static_cast<unsigned short>(fill.pattern),
                            size_t(fill.length / 2), stream);
  case 4:
    return STRATA_CUDA_CALL(symbols, cuMemsetD32Async, address,
                            static_cast<unsigned int>(fill.pattern),
                            size_t(fill.length / 4), stream);
  default:
    return InvalidArgumentError("fill pattern length ", fill.pattern_length,
                                " is not 1, 2 or 4");
  }
}

Status CudaDevice::ReplayCopy(const CopyCommand &copy) {
  STRATA_ASSIGN_OR_RETURN(CUdeviceptr source,
                          CudaDeviceAddress(copy.source.get(), "copy source"));
  STRATA_ASSIGN_OR_RETURN(CUdeviceptr target,
                          CudaDeviceAddress(copy.target.get(), "copy target"));
  if (copy.length == 0)
    return OkStatus();
  // Unified addressing: one call for device and mapped host memory alike.
  return STRATA_CUDA_CALL(
      context_->symbols(), cuMemcpyAsync, target + copy.target_offset,
      source + copy.source_offset, size_t(copy.length), context_->stream());
}

Status CudaDevice::ReplayUpdate(const UpdateCommand &update) {
  STRATA_ASSIGN_OR_RETURN(
      CUdeviceptr target,
      CudaDeviceAddress(update.target.get(), "update target"));
  if (update.data.empty())
    return OkStatus();
  // The bytes live in the command buffer, which outlives the operation.
  return STRATA_CUDA_CALL(context_->symbols(), cuMemcpyHtoDAsync_v2,
                          target + update.offset, update.data.data(),
                          update.data.size(), context_->stream());
}

Status CudaDevice::ReplayDispatch(const DeferredCommandBuffer &command_buffer,
                                  const DispatchCommand &dispatch) {
  Executable &executable = *dispatch.executable;
  if (executable.family() != CudaExecutable::Family())
    return InvalidArgumentError("dispatch of '",
                                executable.export_name(dispatch.export_ordinal),
                                "': the executable was not loaded by a cuda "
                                "device");
  const auto &info = static_cast<CudaExecutable &>(executable)
                         .export_info(dispatch.export_ordinal);
  std::span<const uint32_t> constants = command_buffer.constants(dispatch);
  std::span<const ResolvedBinding> bindings = command_buffer.bindings(dispatch);
  if (constants.size() != info.push_constant_count)
    return InvalidArgumentError(
        "dispatch of '", info.name, "': ", constants.size(),
        " push constants given, the kernel takes ", info.push_constant_count);
  const WorkgroupCount &count = dispatch.workgroup_count;
  if (count.x == 0 || count.y == 0 || count.z == 0)
    return OkStatus();
  // Kernel parameters: one u64 address per binding, then one u32 per push
  // constant, each passed by pointer.
  ScratchArray<uint64_t, 16> addresses(bindings.size());
  ScratchArray<void *, 32> parameters(bindings.size() + constants.size());
  for (size_t i = 0; i < bindings.size(); ++i) {
    STRATA_ASSIGN_OR_RETURN(
        CUdeviceptr base,
        CudaDeviceAddress(bindings[i].buffer.get(),
                          StrCat("dispatch of '", info.name, "' binding ", i)));
    addresses[i] = base + bindings[i].offset;
    parameters[i] = &addresses[i];
  }
  for (size_t i = 0; i < constants.size(); ++i)
    parameters[bindings.size() + i] = const_cast<uint32_t *>(&constants[i]);
  return Launch(dispatch, executable, parameters.data())
      .Annotate("dispatch of '", info.name, "'");
}

Status CudaDevice::Launch(const DispatchCommand &dispatch,
                          Executable &executable, void **parameters) {
  const auto &info = static_cast<CudaExecutable &>(executable)
                         .export_info(dispatch.export_ordinal);
  const CudaSymbols &symbols = context_->symbols();
  CUstream stream = context_->stream();
  const WorkgroupCount &count = dispatch.workgroup_count;
  // CUDA's grid holds at most 2^31 - 1 blocks along x, 65535 along y, z.
  uint64_t blocks_x = uint64_t(count.x) * info.blocks_per_workgroup;
  if (blocks_x > 0x7fffffffu || count.y > 65535u || count.z > 65535u)
    return InvalidArgumentError(
        "workgroup count ", count.x, "x", count.y, "x", count.z, " with ",
        info.blocks_per_workgroup,
        " blocks per workgroup is past CUDA's grid limits (2^31-1 x 65535 x "
        "65535)");
  auto launch = [&] {
    return STRATA_CUDA_CALL(
        symbols, cuLaunchKernel, info.function, uint32_t(blocks_x), count.y,
        count.z, info.block_size[0], info.block_size[1], info.block_size[2], 0u,
        stream, parameters, nullptr);
  };
  if (!profiling_.load(std::memory_order_acquire))
    return launch();
  std::lock_guard<std::mutex> lock(profiling_mutex_);
  if (!profiling_.load(std::memory_order_relaxed))
    return launch();
  STRATA_RETURN_IF_ERROR(
      STRATA_CUDA_CALL(symbols, cuEventRecord, start_event_, stream));
  STRATA_RETURN_IF_ERROR(launch());
  STRATA_RETURN_IF_ERROR(
      STRATA_CUDA_CALL(symbols, cuEventRecord, end_event_, stream));
  STRATA_RETURN_IF_ERROR(
      STRATA_CUDA_CALL(symbols, cuEventSynchronize, end_event_));
  float milliseconds = 0;
  STRATA_RETURN_IF_ERROR(STRATA_CUDA_CALL(
      symbols, cuEventElapsedTime_v2, &milliseconds, start_event_, end_event_));
  if (profiling_options_.on_dispatch) {
    DispatchProfile profile;
    profile.executable = executable.name();
    profile.export_name = info.name;
    profile.site = dispatch.site;
    profile.duration_ns = int64_t(double(milliseconds) * 1e6);
    profiling_options_.on_dispatch(profile);
  }
  return OkStatus();
}

Status CudaDevice::ProfilingBegin(const ProfilingOptions &options) {
  if (!options.file_path.empty())
    return UnimplementedError(
        "the cuda device cannot write trace files yet ('", options.file_path,
        "'); per-dispatch timing (strata-bench --per-dispatch) works");
  std::lock_guard<std::mutex> lock(profiling_mutex_);
  if (profiling_.load(std::memory_order_relaxed))
    return FailedPreconditionError("a profiling capture is already active");
  const CudaSymbols &symbols = context_->symbols();
  STRATA_RETURN_IF_ERROR(context_->MakeCurrent());
  if (!start_event_)
    STRATA_RETURN_IF_ERROR(STRATA_CUDA_CALL(symbols, cuEventCreate,
                                            &start_event_, CU_EVENT_DEFAULT));
  if (!end_event_)
    STRATA_RETURN_IF_ERROR(STRATA_CUDA_CALL(symbols, cuEventCreate, &end_event_,
                                            CU_EVENT_DEFAULT));
  profiling_options_ = options;
  profiling_.store(true, std::memory_order_release);
  return OkStatus();
}

Status CudaDevice::ProfilingEnd() {
  std::lock_guard<std::mutex> lock(profiling_mutex_);
  profiling_.store(false, std::memory_order_release);
  profiling_options_ = ProfilingOptions();
  if (!start_event_ && !end_event_)
    return OkStatus();
  const CudaSymbols &symbols = context_->symbols();
  STRATA_RETURN_IF_ERROR(context_->MakeCurrent());
  for (CUevent *event : {&start_event_, &end_event_}) {
    if (*event)
      symbols.cuEventDestroy_v2(*event);
    *event = nullptr;
  }
  return OkStatus();
}

std::string CudaDevice::DumpInfo() const {
  RefPtr<Allocator> current_allocator = allocator();
  AllocatorStatistics stats = current_allocator->statistics();
  std::string text =
      StrCat("device: ", kCudaDeviceId, "\n",
             FormatCudaDeviceProperties(context_->properties()),
             "  queues: 1 (one CUDA stream; queue operations wait for it)\n",
             "  allocator: ", current_allocator->name(), " (live ",
             stats.bytes_live, " bytes, peak ", stats.bytes_peak, " bytes, ",
             stats.allocation_count, " allocations, cached ",
             stats.bytes_cached, " bytes)\n", "  executable formats:");
  for (const std::string &format : executable_cache_.SupportedFormats())
    text += StrCat(" ", format);
  text += "\n";
  return text;
}

} // namespace strata::hal::cuda
