// A command buffer that records commands into a list for a driver to replay
// at submission. All local drivers use it; the list is the shared format
// their replay code (local/local_replay.h) walks.
#ifndef STRATA_HAL_DEFERRED_COMMAND_BUFFER_H_
#define STRATA_HAL_DEFERRED_COMMAND_BUFFER_H_

#include <variant>
#include <vector>

#include "strata/base/object_pool.h"
#include "strata/hal/command_buffer.h"

namespace strata::hal {

struct BarrierCommand {};

struct FillCommand {
  RefPtr<Buffer> target;
  uint64_t offset;
  uint64_t length;
  uint32_t pattern;
  uint32_t pattern_length;
};

struct CopyCommand {
  RefPtr<Buffer> source;
  uint64_t source_offset;
  RefPtr<Buffer> target;
  uint64_t target_offset;
  uint64_t length;
};

struct UpdateCommand {
  RefPtr<Buffer> target;
  uint64_t offset;
  std::vector<uint8_t> data;
};

// Its constants and bindings are ranges of the command buffer's arrays
// (DeferredCommandBuffer::constants/bindings), so recording a dispatch
// allocates nothing once those arrays have grown.
struct DispatchCommand {
  RefPtr<Executable> executable;
  uint32_t export_ordinal;
  WorkgroupCount workgroup_count;
  size_t constants_begin = 0;
  size_t constant_count = 0;
  size_t bindings_begin = 0;
  size_t binding_count = 0;
  // The program's call site (CommandBuffer::Dispatch); 0 = none.
  uint32_t site = 0;
};

using Command = std::variant<BarrierCommand, FillCommand, CopyCommand,
                             UpdateCommand, DispatchCommand>;

class DeferredCommandBuffer final : public CommandBuffer {
public:
  static Result<RefPtr<DeferredCommandBuffer>>
  Create(CommandBufferModeBitfield mode, CommandCategoryBitfield categories,
         QueueAffinity queue_affinity);

  // `command_buffer` as a DeferredCommandBuffer when it is one, else null.
  static DeferredCommandBuffer *
  FromCommandBuffer(CommandBuffer *command_buffer) {
    return command_buffer &&
                   command_buffer->implementation() == &kImplementation
               ? static_cast<DeferredCommandBuffer *>(command_buffer)
               : nullptr;
  }

  // The recorded commands, in order. Each retains its resources.
  const std::vector<Command> &commands() const { return commands_; }
  // A recorded dispatch's push constants and (retained) bindings.
  std::span<const uint32_t> constants(const DispatchCommand &dispatch) const {
    return std::span(constants_)
        .subspan(dispatch.constants_begin, dispatch.constant_count);
  }
  std::span<const ResolvedBinding>
  bindings(const DispatchCommand &dispatch) const {
    return std::span(bindings_).subspan(dispatch.bindings_begin,
                                        dispatch.binding_count);
  }

protected:
  Status ExecutionBarrierImpl() override;
  Status FillBufferImpl(Buffer *target, uint64_t offset, uint64_t length,
                        uint32_t pattern, uint32_t pattern_length) override;
  Status CopyBufferImpl(Buffer *source, uint64_t source_offset, Buffer *target,
                        uint64_t target_offset, uint64_t length) override;
  Status UpdateBufferImpl(std::span<const uint8_t> source, Buffer *target,
                          uint64_t target_offset) override;
  Status DispatchImpl(Executable *executable, uint32_t export_ordinal,
                      WorkgroupCount workgroup_count,
                      std::span<const uint32_t> constants,
                      std::span<ResolvedBinding> bindings,
                      uint32_t site) override;

private:
  static constexpr char kImplementation = 0;
  friend class ObjectPool<DeferredCommandBuffer>;
  DeferredCommandBuffer(CommandBufferModeBitfield mode,
                        CommandCategoryBitfield categories,
                        QueueAffinity queue_affinity);
  // Emptied (its resources released, its arrays' capacity kept) and parked
  // in the command buffer pool for the next Create.
  void OnLastReference() const override;

  std::vector<Command> commands_;
  // Every dispatch's constants and bindings, back to back.
  std::vector<uint32_t> constants_;
  std::vector<ResolvedBinding> bindings_;
};

} // namespace strata::hal

#endif // STRATA_HAL_DEFERRED_COMMAND_BUFFER_H_
