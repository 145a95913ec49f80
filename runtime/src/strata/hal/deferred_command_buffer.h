// A command buffer that records commands into a list for a driver to replay
// at submission. All local drivers use it; the list is the shared format
// their replay code (local/local_replay.h) walks.
#ifndef STRATA_HAL_DEFERRED_COMMAND_BUFFER_H_
#define STRATA_HAL_DEFERRED_COMMAND_BUFFER_H_

#include <variant>
#include <vector>

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

struct DispatchCommand {
  RefPtr<Executable> executable;
  uint32_t export_ordinal;
  WorkgroupCount workgroup_count;
  std::vector<uint32_t> constants;
  std::vector<ResolvedBinding> bindings;
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

  // The recorded commands, in order. Each retains its resources.
  const std::vector<Command> &commands() const { return commands_; }

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
  using CommandBuffer::CommandBuffer;

  std::vector<Command> commands_;
};

} // namespace strata::hal

#endif // STRATA_HAL_DEFERRED_COMMAND_BUFFER_H_
