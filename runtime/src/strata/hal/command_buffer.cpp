#include "strata/hal/command_buffer.h"

#include <vector>

#include "strata/base/scratch_array.h"

namespace strata::hal {
namespace {

const char *CategoryName(CommandCategoryBitfield category) {
  return category == STRATA_HAL_COMMAND_CATEGORY_DISPATCH ? "DISPATCH"
                                                          : "TRANSFER";
}

} // namespace

Status ValidateWorkgroupCount(WorkgroupCount count) {
  for (uint32_t dimension : {count.x, count.y, count.z}) {
    if (dimension > kMaxWorkgroupCountPerDimension)
      return InvalidArgumentError("workgroup count ", count.x, "x", count.y,
                                  "x", count.z, " exceeds the limit of ",
                                  kMaxWorkgroupCountPerDimension,
                                  " per dimension");
  }
  static_assert(kMaxWorkgroupCountPerDimension < (1u << 21),
                "the product of three checked counts must fit 64 bits");
  uint64_t total = uint64_t(count.x) * count.y * count.z;
  if (total > kMaxWorkgroupsPerDispatch)
    return InvalidArgumentError(
        "workgroup count ", count.x, "x", count.y, "x", count.z, " (", total,
        " workgroups) exceeds the limit of ", kMaxWorkgroupsPerDispatch,
        " workgroups per dispatch");
  return OkStatus();
}

Status ValidateCommandBufferCreation(CommandBufferModeBitfield mode,
                                     CommandCategoryBitfield categories) {
  constexpr CommandCategoryBitfield kAllCategories =
      STRATA_HAL_COMMAND_CATEGORY_TRANSFER |
      STRATA_HAL_COMMAND_CATEGORY_DISPATCH;
  if (categories == 0)
    return InvalidArgumentError(
        "command buffer needs at least one command category (TRANSFER=1, "
        "DISPATCH=2)");
  if (categories & ~kAllCategories)
    return InvalidArgumentError("unknown command categories 0x",
                                Hex{categories & ~kAllCategories});
  if (mode &
      ~CommandBufferModeBitfield(STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT))
    return InvalidArgumentError("unknown command buffer mode bits 0x",
                                Hex{mode});
  return OkStatus();
}

CommandBuffer::CommandBuffer(const void *implementation,
                             CommandBufferModeBitfield mode,
                             CommandCategoryBitfield categories,
                             QueueAffinity queue_affinity)
    : RefObject(&kRefType), implementation_(implementation), mode_(mode),
      categories_(categories), queue_affinity_(queue_affinity) {}

void CommandBuffer::Reinitialize(CommandBufferModeBitfield mode,
                                 CommandCategoryBitfield categories,
                                 QueueAffinity queue_affinity) {
  mode_ = mode;
  categories_ = categories;
  queue_affinity_ = queue_affinity;
  finalized_ = false;
  submitted_ = false;
}

Status CommandBuffer::CheckRecording(CommandCategoryBitfield category,
                                     const char *command) const {
  if (finalized_)
    return FailedPreconditionError(
        command, ": command buffer is finalized; no more commands can be "
                 "recorded");
  if (category && !(categories_ & category))
    return InvalidArgumentError(command,
                                ": command buffer was created without the ",
                                CategoryName(category), " category");
  return OkStatus();
}

Status CommandBuffer::ExecutionBarrier() {
  STRATA_RETURN_IF_ERROR(CheckRecording(0, "execution_barrier"));
  return ExecutionBarrierImpl();
}

Status CommandBuffer::FillBuffer(Buffer *target, uint64_t offset,
                                 uint64_t length, uint32_t pattern,
                                 uint32_t pattern_length) {
  STRATA_RETURN_IF_ERROR(
      CheckRecording(STRATA_HAL_COMMAND_CATEGORY_TRANSFER, "fill_buffer"));
  if (!target)
    return InvalidArgumentError("fill_buffer: null target buffer");
  if (pattern_length != 1 && pattern_length != 2 && pattern_length != 4)
    return InvalidArgumentError("fill_buffer: pattern length must be 1, 2 or "
                                "4 bytes, got ",
                                pattern_length);
  STRATA_ASSIGN_OR_RETURN(uint64_t resolved,
                          ResolveByteRange(target->byte_length(), offset,
                                           length, "fill_buffer target"));
  if (offset % pattern_length || resolved % pattern_length)
    return InvalidArgumentError(
        "fill_buffer: offset ", offset, " and length ", resolved,
        " must be multiples of the pattern length ", pattern_length);
  if (pattern_length < 4)
    pattern &= (1u << (8 * pattern_length)) - 1;
  return FillBufferImpl(target, offset, resolved, pattern, pattern_length);
}

Status CommandBuffer::CopyBuffer(Buffer *source, uint64_t source_offset,
                                 Buffer *target, uint64_t target_offset,
                                 uint64_t length) {
  STRATA_RETURN_IF_ERROR(
      CheckRecording(STRATA_HAL_COMMAND_CATEGORY_TRANSFER, "copy_buffer"));
  if (!source || !target)
    return InvalidArgumentError("copy_buffer: null ",
                                source ? "target" : "source", " buffer");
  STRATA_ASSIGN_OR_RETURN(uint64_t resolved,
                          ResolveByteRange(source->byte_length(), source_offset,
                                           length, "copy_buffer source"));
  STRATA_RETURN_IF_ERROR(ResolveByteRange(target->byte_length(), target_offset,
                                          resolved, "copy_buffer target")
                             .status());
  return CopyBufferImpl(source, source_offset, target, target_offset, resolved);
}

Status CommandBuffer::UpdateBuffer(std::span<const uint8_t> source,
                                   Buffer *target, uint64_t target_offset) {
  STRATA_RETURN_IF_ERROR(
      CheckRecording(STRATA_HAL_COMMAND_CATEGORY_TRANSFER, "update_buffer"));
  if (!target)
    return InvalidArgumentError("update_buffer: null target buffer");
  STRATA_RETURN_IF_ERROR(ResolveByteRange(target->byte_length(), target_offset,
                                          source.size(), "update_buffer target")
                             .status());
  return UpdateBufferImpl(source, target, target_offset);
}

Status CommandBuffer::Dispatch(Executable *executable, uint32_t export_ordinal,
                               WorkgroupCount workgroup_count,
                               std::span<const uint32_t> constants,
                               std::span<const BufferBinding> bindings,
                               uint32_t site) {
  STRATA_RETURN_IF_ERROR(
      CheckRecording(STRATA_HAL_COMMAND_CATEGORY_DISPATCH, "dispatch"));
  if (!executable)
    return InvalidArgumentError("dispatch: null executable");
  if (export_ordinal >= executable->export_count())
    return InvalidArgumentError("dispatch: export ordinal ", export_ordinal,
                                " out of range; executable '",
                                executable->name(), "' has ",
                                executable->export_count(), " exports");
  std::string_view export_name = executable->export_name(export_ordinal);
  if (Status status = ValidateWorkgroupCount(workgroup_count); !status.ok())
    return status.Annotate("dispatch of '", export_name, "'");
  uint32_t expected_bindings = executable->export_binding_count(export_ordinal);
  if (bindings.size() != expected_bindings)
    return InvalidArgumentError("dispatch of '", export_name, "': expects ",
                                expected_bindings, " bindings, got ",
                                bindings.size());
  ScratchArray<ResolvedBinding, 64> resolved(bindings.size());
  for (size_t i = 0; i < bindings.size(); ++i) {
    const BufferBinding &binding = bindings[i];
    if (!binding.buffer)
      return InvalidArgumentError("dispatch of '", export_name, "': binding ",
                                  i, " has a null buffer");
    // The message names the binding only when the range is bad (this runs
    // for every binding of every dispatch).
    auto length = ResolveByteRange(binding.buffer->byte_length(),
                                   binding.offset, binding.length, "binding");
    if (!length.ok())
      return ResolveByteRange(binding.buffer->byte_length(), binding.offset,
                              binding.length, StrCat("binding ", i))
          .status()
          .Annotate("dispatch of '", export_name, "'");
    resolved[i].buffer = RefPtr<Buffer>::Retain(binding.buffer);
    resolved[i].offset = binding.offset;
    resolved[i].length = *length;
  }
  return DispatchImpl(executable, export_ordinal, workgroup_count, constants,
                      resolved.span(), site);
}

Status CommandBuffer::Finalize() {
  if (finalized_)
    return FailedPreconditionError("command buffer is already finalized");
  STRATA_RETURN_IF_ERROR(FinalizeImpl());
  finalized_ = true;
  return OkStatus();
}

Status CommandBuffer::BeginSubmission() {
  if (!finalized_)
    return FailedPreconditionError(
        "command buffer must be finalized before it is submitted");
  if ((mode_ & STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT) && submitted_)
    return FailedPreconditionError(
        "one-shot command buffer was already submitted");
  submitted_ = true;
  return OkStatus();
}

} // namespace strata::hal
