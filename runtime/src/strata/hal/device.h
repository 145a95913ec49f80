// A device: one instance of a driver's hardware (or, for local drivers, the
// host CPU). Creates the objects that run on it and executes queue
// operations ordered by fences: each waits for its wait fence, then runs,
// then signals its signal fence (failing it when the operation fails).
#ifndef STRATA_HAL_DEVICE_H_
#define STRATA_HAL_DEVICE_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/hal/allocator.h"
#include "strata/hal/buffer.h"
#include "strata/hal/command_buffer.h"
#include "strata/hal/executable.h"
#include "strata/hal/semaphore.h"

namespace strata::hal {

// One dispatch a profiling capture saw (ProfilingOptions::on_dispatch).
struct DispatchProfile {
  std::string_view executable;
  std::string_view export_name;
  // The program's call site (CommandBuffer::Dispatch); 0 = none.
  uint32_t site = 0;
  int64_t duration_ns = 0;
};

struct ProfilingOptions {
  // Where the capture is written (local devices: Chrome-trace JSON). May be
  // empty when `on_dispatch` is set: the capture then only reports
  // dispatches.
  std::string file_path;
  // Display names of the program's dispatch sites, site N at index N - 1
  // (the tools read them from the module file's dispatch_sites): a
  // dispatch's span is named after its site, or else after its export.
  std::vector<std::string> dispatch_site_names;
  // Called after each dispatch ran, one call at a time (from whichever
  // thread ran it); the views are valid during the call only.
  std::function<void(const DispatchProfile &)> on_dispatch;
};

class Device : public RefObject {
public:
  static const RefTypeDescriptor kRefType;

  // "local-sync", ...
  virtual std::string_view id() const = 0;

  // The device allocator; buffers for this device come from it.
  virtual RefPtr<Allocator> allocator() const = 0;
  // Replaces the allocator (e.g. with a tracking wrapper). Buffers already
  // allocated keep their own allocator.
  virtual void SetAllocator(RefPtr<Allocator> allocator) = 0;

  // Releases cached resources (allocator pools, ...).
  virtual Status Trim() = 0;

  // Device properties as integers. Known (category, key) pairs:
  //   ("hal.executable.format", <format>) -> 1 if loadable, else 0
  //   ("hal.device", "concurrency")       -> queues that run in parallel
  //   ("hal.dispatch", "concurrency")     -> workgroups run in parallel
  //   ("hal.device.id", <pattern>)        -> 1 if id() matches (`*` globs)
  // Anything else is NOT_FOUND (the `hal` module reports ok=0 for it).
  virtual Result<int64_t> QueryI64(std::string_view category,
                                   std::string_view key) = 0;

  virtual Result<RefPtr<CommandBuffer>> CreateCommandBuffer(
      CommandBufferModeBitfield mode, CommandCategoryBitfield categories,
      QueueAffinity queue_affinity, uint32_t binding_capacity) = 0;

  virtual Result<RefPtr<Semaphore>> CreateSemaphore(uint64_t initial_value) = 0;

  // A fence over a new semaphore at value 0 with the timepoint 1: what
  // `hal.fence.create` returns (signal it once to reach it).
  Result<RefPtr<Fence>> CreateFence();

  // Loads an executable through the device's executable cache.
  virtual bool CanLoadExecutableFormat(std::string_view format) const = 0;
  virtual Result<RefPtr<Executable>>
  CreateExecutable(std::string_view format, std::span<const uint8_t> bytes,
                   std::span<const uint32_t> constants = {}) = 0;

  // Queue operations. `wait_fence` and `signal_fence` are borrowed and may be
  // null (no wait / nothing to signal). On failure the signal fence's
  // semaphores are failed with the returned status.

  // Allocates a buffer once `wait_fence` is reached.
  virtual Result<RefPtr<Buffer>>
  QueueAlloca(QueueAffinity queue_affinity, Fence *wait_fence,
              Fence *signal_fence, MemoryTypeBitfield memory_type,
              BufferUsageBitfield usage, uint64_t byte_length) = 0;
  // Marks `buffer` as no longer used by the queue after `wait_fence`; the
  // memory is freed when the last reference is dropped.
  virtual Status QueueDealloca(QueueAffinity queue_affinity, Fence *wait_fence,
                               Fence *signal_fence, Buffer *buffer) = 0;
  // Copies buffer bytes to host memory / host bytes to a buffer.
  virtual Status QueueRead(QueueAffinity queue_affinity, Fence *wait_fence,
                           Fence *signal_fence, Buffer *source,
                           uint64_t source_offset,
                           std::span<uint8_t> target) = 0;
  virtual Status QueueWrite(QueueAffinity queue_affinity, Fence *wait_fence,
                            Fence *signal_fence,
                            std::span<const uint8_t> source, Buffer *target,
                            uint64_t target_offset) = 0;
  // Runs finalized command buffers in order.
  virtual Status
  QueueExecute(QueueAffinity queue_affinity, Fence *wait_fence,
               Fence *signal_fence,
               std::span<CommandBuffer *const> command_buffers) = 0;
  // Starts any queued work that has not started yet.
  virtual Status QueueFlush(QueueAffinity queue_affinity) = 0;

  // Profiling captures: between begin and end the device records what it
  // runs; flush writes what was captured so far. Local devices write a
  // Chrome-trace JSON file with one span per dispatch, queue operation and
  // transfer command (local_profiler.h).
  virtual Status ProfilingBegin(const ProfilingOptions &options) = 0;
  virtual Status ProfilingFlush() = 0;
  virtual Status ProfilingEnd() = 0;

  // Multi-line human-readable description (id, allocator, formats, ...).
  virtual std::string DumpInfo() const = 0;

protected:
  Device() : RefObject(&kRefType) {}
};

} // namespace strata::hal

#endif // STRATA_HAL_DEVICE_H_
