// A device on the host CPU, shared by the local drivers. Queue operations
// run inline on the calling thread: wait for the wait fence, do the work,
// signal the signal fence (or fail it with the error). With `async_queue`
// (local-task), queue_execute validates and hands the command buffers to the
// device's queue (local_queue.h): they run once the wait fence is reached,
// inline when the queue is idle and the wait is over, else on its queue
// thread after queue_execute returned; only the signal fence reports their
// failures. Dispatch grids
// go to the driver's LocalGridRunner, the one point where local drivers differ.
// Thread-safe: queue operations from several threads (e.g. sessions sharing
// the device) run concurrently, each ordered only by its own fences.
#ifndef STRATA_HAL_LOCAL_LOCAL_DEVICE_H_
#define STRATA_HAL_LOCAL_LOCAL_DEVICE_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "strata/hal/device.h"
#include "strata/hal/local/local_profiler.h"
#include "strata/hal/local/local_queue.h"
#include "strata/hal/local/local_replay.h"

namespace strata::hal {

struct LocalDeviceParams {
  // Device id ("local-sync").
  std::string id;
  // Tried in order for each executable format.
  std::vector<std::unique_ptr<ExecutableLoader>> loaders;
  // Runs dispatch grids.
  std::unique_ptr<LocalGridRunner> grid_runner;
  // Null = a new HeapAllocator named after the device.
  RefPtr<Allocator> allocator;
  // queue_execute runs on a queue thread instead of the caller's.
  bool async_queue = false;
};

class LocalDevice final : public Device {
public:
  static Result<RefPtr<LocalDevice>> Create(LocalDeviceParams params);

  std::string_view id() const override { return id_; }
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

  // Spans of dispatches, queue operations and transfer commands in a
  // Chrome-trace JSON file (local_profiler.h).
  Status ProfilingBegin(const ProfilingOptions &options) override {
    return profiler_.Begin(options);
  }
  Status ProfilingFlush() override { return profiler_.Flush(); }
  Status ProfilingEnd() override { return profiler_.End(); }

  std::string DumpInfo() const override;

private:
  explicit LocalDevice(LocalDeviceParams params);

  // Waits for `wait_fence`, runs `work` (a span named `operation` with
  // `args` while profiling), then signals `signal_fence`; on any failure
  // fails the signal fence with it and returns it.
  template <typename Work>
  Status RunQueueOperation(const char *operation,
                           std::initializer_list<TraceArg> args,
                           Fence *wait_fence, Fence *signal_fence, Work &&work);

  Status
  ReplayAll(std::span<const RefPtr<DeferredCommandBuffer>> command_buffers);
  // ReplayAll as a queue_execute span (the queue thread's work).
  Status ProfiledReplayAll(
      std::span<const RefPtr<DeferredCommandBuffer>> command_buffers);

  std::string id_;
  ExecutableCache executable_cache_;
  std::unique_ptr<LocalGridRunner> grid_runner_;
  LocalProfiler profiler_;
  mutable std::mutex allocator_mutex_;
  RefPtr<Allocator> allocator_;
  // Last: destroyed (joined) first, while what its work uses still lives.
  std::unique_ptr<LocalQueue> queue_;
};

} // namespace strata::hal

#endif // STRATA_HAL_LOCAL_LOCAL_DEVICE_H_
