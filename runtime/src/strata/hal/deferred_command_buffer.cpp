#include "strata/hal/deferred_command_buffer.h"

#include <algorithm>

namespace strata::hal {
namespace {
// A call records one command buffer per submission; these cover the calls
// in flight of a busy process. Each keeps its arrays' capacity.
constexpr size_t kPooledCommandBuffers = 32;

ObjectPool<DeferredCommandBuffer> &CommandBufferPool() {
  static auto *pool =
      new ObjectPool<DeferredCommandBuffer>(kPooledCommandBuffers);
  return *pool;
}
} // namespace

Result<RefPtr<DeferredCommandBuffer>>
DeferredCommandBuffer::Create(CommandBufferModeBitfield mode,
                              CommandCategoryBitfield categories,
                              QueueAffinity queue_affinity) {
  STRATA_RETURN_IF_ERROR(ValidateCommandBufferCreation(mode, categories));
  if (DeferredCommandBuffer *command_buffer = CommandBufferPool().Take()) {
    command_buffer->ReviveFromPool();
    command_buffer->Reinitialize(mode, categories, queue_affinity);
    return RefPtr<DeferredCommandBuffer>::Adopt(command_buffer);
  }
  return RefPtr<DeferredCommandBuffer>::Adopt(
      new DeferredCommandBuffer(mode, categories, queue_affinity));
}

void DeferredCommandBuffer::OnLastReference() const {
  auto *self = const_cast<DeferredCommandBuffer *>(this);
  self->commands_.clear();
  self->constants_.clear();
  self->bindings_.clear();
  CommandBufferPool().Park(self);
}

DeferredCommandBuffer::DeferredCommandBuffer(CommandBufferModeBitfield mode,
                                             CommandCategoryBitfield categories,
                                             QueueAffinity queue_affinity)
    : CommandBuffer(&kImplementation, mode, categories, queue_affinity) {
  // Room for a typical program's commands without regrowing.
  commands_.reserve(16);
}

Status DeferredCommandBuffer::ExecutionBarrierImpl() {
  commands_.emplace_back(BarrierCommand{});
  return OkStatus();
}

Status DeferredCommandBuffer::FillBufferImpl(Buffer *target, uint64_t offset,
                                             uint64_t length, uint32_t pattern,
                                             uint32_t pattern_length) {
  commands_.emplace_back(FillCommand{RefPtr<Buffer>::Retain(target), offset,
                                     length, pattern, pattern_length});
  return OkStatus();
}

Status DeferredCommandBuffer::CopyBufferImpl(Buffer *source,
                                             uint64_t source_offset,
                                             Buffer *target,
                                             uint64_t target_offset,
                                             uint64_t length) {
  commands_.emplace_back(
      CopyCommand{RefPtr<Buffer>::Retain(source), source_offset,
                  RefPtr<Buffer>::Retain(target), target_offset, length});
  return OkStatus();
}

Status DeferredCommandBuffer::UpdateBufferImpl(std::span<const uint8_t> source,
                                               Buffer *target,
                                               uint64_t target_offset) {
  commands_.emplace_back(
      UpdateCommand{RefPtr<Buffer>::Retain(target), target_offset,
                    std::vector<uint8_t>(source.begin(), source.end())});
  return OkStatus();
}

Status DeferredCommandBuffer::DispatchImpl(Executable *executable,
                                           uint32_t export_ordinal,
                                           WorkgroupCount workgroup_count,
                                           std::span<const uint32_t> constants,
                                           std::span<ResolvedBinding> bindings,
                                           uint32_t site) {
  DispatchCommand command;
  command.executable = RefPtr<Executable>::Retain(executable);
  command.export_ordinal = export_ordinal;
  command.workgroup_count = workgroup_count;
  // The arrays start big enough for a typical program, so they are
  // allocated once per command buffer rather than regrown.
  constexpr size_t kInitialArraySize = 256;
  command.constants_begin = constants_.size();
  command.constant_count = constants.size();
  if (constants_.empty() && !constants.empty())
    constants_.reserve(std::max(kInitialArraySize, constants.size()));
  constants_.insert(constants_.end(), constants.begin(), constants.end());
  command.bindings_begin = bindings_.size();
  command.binding_count = bindings.size();
  if (bindings_.empty())
    bindings_.reserve(std::max(kInitialArraySize, bindings.size()));
  for (ResolvedBinding &binding : bindings)
    bindings_.push_back(std::move(binding));
  command.site = site;
  commands_.emplace_back(std::move(command));
  return OkStatus();
}

} // namespace strata::hal
