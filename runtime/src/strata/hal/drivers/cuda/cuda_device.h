// A cuda device: one GPU's primary context and one non-blocking stream.
// Queue operations are synchronous for now: each waits for its wait fence
// on the host, issues its work on the stream, waits for the stream and
// then signals its signal fence (or fails it with the error). Command
// buffers are recorded as DeferredCommandBuffers and replayed onto the
// stream at QueueExecute: fills as cuMemsetD8/16/32Async, copies as
// cuMemcpyAsync (unified addressing), updates as cuMemcpyHtoDAsync,
// dispatches as cuLaunchKernel; barriers need nothing on one in-order
// stream. Thread-safe: operations from several threads share the stream,
// each waiting for all work issued before its own completes.
#ifndef STRATA_HAL_DRIVERS_CUDA_CUDA_DEVICE_H_
#define STRATA_HAL_DRIVERS_CUDA_CUDA_DEVICE_H_

#include <atomic>
#include <memory>
#include <mutex>
#include <string>

#include "strata/hal/deferred_command_buffer.h"
#include "strata/hal/device.h"
#include "strata/hal/drivers/cuda/cuda_context.h"

namespace strata::hal::cuda {

inline constexpr std::string_view kCudaDeviceId = "cuda";

class CudaDevice final : public Device {
public:
  // A device on GPU `ordinal` over `symbols` (LoadCudaSymbols(), or a
  // table of fakes in tests; cuInit must have been called).
  static Result<RefPtr<CudaDevice>>
  Create(std::shared_ptr<const CudaSymbols> symbols, int ordinal);
  ~CudaDevice() override;

  std::string_view id() const override { return kCudaDeviceId; }
  RefPtr<Allocator> allocator() const override;
  void SetAllocator(RefPtr<Allocator> allocator) override;
  Status Trim() override;
  Result<int64_t> QueryI64(std::string_view category,
                           std::string_view key) override;

  Result<RefPtr<CommandBuffer>> CreateCommandBuffer(
      CommandBufferModeBitfield mode, CommandCategoryBitfield categories,
      QueueAffinity queue_affinity, uint32_t binding_capacity) override;
  Result<RefPtr<Semaphore>> CreateSemaphore(uint64_t initial_value) override;

  bool CanLoadExecutableFormat(std::string_view format) const override;
  Result<RefPtr<Executable>>
  CreateExecutable(std::string_view format, std::span<const uint8_t> bytes,
                   std::span<const uint32_t> constants) override;

  Result<RefPtr<Buffer>> QueueAlloca(QueueAffinity queue_affinity,
                                     Fence *wait_fence, Fence *signal_fence,
                                     MemoryTypeBitfield memory_type,
                                     BufferUsageBitfield usage,
                                     uint64_t byte_length) override;
  Status QueueDealloca(QueueAffinity queue_affinity, Fence *wait_fence,
                       Fence *signal_fence, Buffer *buffer) override;
  Status QueueRead(QueueAffinity queue_affinity, Fence *wait_fence,
                   Fence *signal_fence, Buffer *source, uint64_t source_offset,
                   std::span<uint8_t> target) override;
  Status QueueWrite(QueueAffinity queue_affinity, Fence *wait_fence,
                    Fence *signal_fence, std::span<const uint8_t> source,
                    Buffer *target, uint64_t target_offset) override;
  Status QueueExecute(QueueAffinity queue_affinity, Fence *wait_fence,
                      Fence *signal_fence,
                      std::span<CommandBuffer *const> command_buffers) override;
  Status QueueFlush(QueueAffinity queue_affinity) override;

  // Per-dispatch timing (on_dispatch, CUDA events around each dispatch);
  // a trace file is UNIMPLEMENTED.
  Status ProfilingBegin(const ProfilingOptions &options) override;
  Status ProfilingFlush() override { return OkStatus(); }
  Status ProfilingEnd() override;

  std::string DumpInfo() const override;

  const std::shared_ptr<CudaContext> &context() const { return context_; }

private:
  CudaDevice(std::shared_ptr<CudaContext> context, RefPtr<Allocator> allocator);

  // Waits for `wait_fence`, runs `work` with the context current, then
  // signals `signal_fence`; on failure fails the signal fence with the
  // status (annotated with `operation`) and returns it.
  template <typename Work>
  Status RunQueueOperation(const char *operation, Fence *wait_fence,
                           Fence *signal_fence, Work &&work);

  // Issues every command of `command_buffer` on the stream.
  Status Replay(const DeferredCommandBuffer &command_buffer);
  Status ReplayFill(const FillCommand &fill);
  Status ReplayCopy(const CopyCommand &copy);
  Status ReplayUpdate(const UpdateCommand &update);
  Status ReplayDispatch(const DeferredCommandBuffer &command_buffer,
                        const DispatchCommand &dispatch);
  // Launches the kernel, timed with events while profiling.
  Status Launch(const DispatchCommand &dispatch, Executable &executable,
                void **parameters);

  std::shared_ptr<CudaContext> context_;
  ExecutableCache executable_cache_;
  mutable std::mutex allocator_mutex_;
  RefPtr<Allocator> allocator_;
  // Profiling state; dispatches are timed one at a time under it.
  std::mutex profiling_mutex_;
  std::atomic<bool> profiling_{false};
  ProfilingOptions profiling_options_;
  CUevent start_event_ = nullptr;
  CUevent end_event_ = nullptr;
};

} // namespace strata::hal::cuda

#endif // STRATA_HAL_DRIVERS_CUDA_CUDA_DEVICE_H_
