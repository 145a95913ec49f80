#include "strata/hal/local/local_replay.h"

#include "strata/base/abort_signal.h"
#include "strata/base/scratch_array.h"
#include "strata/base/wait.h"

#include <cstring>

namespace strata::hal {
namespace {

Result<uint8_t *> HostPointer(Buffer *buffer, uint64_t offset,
                              const char *what) {
  uint8_t *data = buffer->host_data();
  if (!data)
    return InvalidArgumentError(what, " buffer is not host-accessible; local "
                                      "devices need host memory");
  return data + offset;
}

Status ReplayFill(const FillCommand &command) {
  STRATA_ASSIGN_OR_RETURN(
      uint8_t * data,
      HostPointer(command.target.get(), command.offset, "fill target"));
  switch (command.pattern_length) {
  case 1:
    std::memset(data, int(command.pattern), command.length);
    break;
  case 2: {
    uint16_t pattern = uint16_t(command.pattern);
    for (uint64_t i = 0; i < command.length; i += 2)
      std::memcpy(data + i, &pattern, 2);
    break;
  }
  case 4:
    for (uint64_t i = 0; i < command.length; i += 4)
      std::memcpy(data + i, &command.pattern, 4);
    break;
  default:
    return InternalError("invalid recorded fill pattern length");
  }
  return OkStatus();
}

Status ReplayCopy(const CopyCommand &command) {
  STRATA_ASSIGN_OR_RETURN(
      uint8_t * source,
      HostPointer(command.source.get(), command.source_offset, "copy source"));
  STRATA_ASSIGN_OR_RETURN(
      uint8_t * target,
      HostPointer(command.target.get(), command.target_offset, "copy target"));
  if (command.length)
    std::memmove(target, source, command.length);
  return OkStatus();
}

Status ReplayUpdate(const UpdateCommand &command) {
  STRATA_ASSIGN_OR_RETURN(
      uint8_t * target,
      HostPointer(command.target.get(), command.offset, "update target"));
  if (!command.data.empty())
    std::memcpy(target, command.data.data(), command.data.size());
  return OkStatus();
}

Status ReplayDispatch(const DeferredCommandBuffer &command_buffer,
                      const DispatchCommand &command,
                      LocalGridRunner &grid_runner, LocalProfiler *profiler) {
  const WorkgroupCount &count = command.workgroup_count;
  if (count.x == 0 || count.y == 0 || count.z == 0)
    return OkStatus();
  // Every executable shares the hal.executable ref type, and only
  // executables from local loaders can run here.
  const LocalExecutable *executable =
      LocalExecutable::FromExecutable(command.executable.get());
  if (!executable)
    return InvalidArgumentError("executable '", command.executable->name(),
                                "' was not loaded for a local device");

  std::span<const ResolvedBinding> bindings = command_buffer.bindings(command);
  std::span<const uint32_t> constants = command_buffer.constants(command);
  ScratchArray<void *, 64> binding_ptrs(bindings.size());
  ScratchArray<size_t, 64> binding_lengths(bindings.size());
  for (size_t i = 0; i < bindings.size(); ++i) {
    const ResolvedBinding &binding = bindings[i];
    STRATA_ASSIGN_OR_RETURN(
        binding_ptrs[i],
        HostPointer(binding.buffer.get(), binding.offset, "binding"));
    binding_lengths[i] = size_t(binding.length);
  }

  std::array<uint32_t, 3> workgroup_size =
      executable->export_workgroup_size(command.export_ordinal);
  strata_hal_executable_dispatch_state_v0_t dispatch = {};
  dispatch.workgroup_count_x = count.x;
  dispatch.workgroup_count_y = count.y;
  dispatch.workgroup_count_z = count.z;
  dispatch.workgroup_size_x = workgroup_size[0];
  dispatch.workgroup_size_y = workgroup_size[1];
  dispatch.workgroup_size_z = workgroup_size[2];
  dispatch.constant_count = uint32_t(constants.size());
  dispatch.binding_count = uint32_t(bindings.size());
  dispatch.constants = constants.data();
  dispatch.binding_ptrs = binding_ptrs.data();
  dispatch.binding_lengths = binding_lengths.data();
  if (!profiler || !profiler->is_active())
    return grid_runner.RunGrid(*executable, command.export_ordinal, dispatch);
  int64_t start_ns = NowNs();
  Status status =
      grid_runner.RunGrid(*executable, command.export_ordinal, dispatch);
  profiler->RecordDispatch(executable->export_name(command.export_ordinal),
                           executable->name(), command.site, count.x, count.y,
                           count.z, start_ns, NowNs());
  return status;
}

} // namespace

Status InlineGridRunner::RunGrid(
    const LocalExecutable &executable, uint32_t export_ordinal,
    const strata_hal_executable_dispatch_state_v0_t &dispatch) {
  strata_hal_executable_workgroup_state_v0_t workgroup = {};
  workgroup.processor_id = 0;
  AbortPoller abort_poller(AbortSignal::Current());
  for (uint32_t z = 0; z < dispatch.workgroup_count_z; ++z) {
    workgroup.workgroup_id_z = z;
    for (uint32_t y = 0; y < dispatch.workgroup_count_y; ++y) {
      workgroup.workgroup_id_y = y;
      for (uint32_t x = 0; x < dispatch.workgroup_count_x; ++x) {
        workgroup.workgroup_id_x = x;
        STRATA_RETURN_IF_ERROR(abort_poller.Poll());
        STRATA_RETURN_IF_ERROR(
            executable.IssueWorkgroup(export_ordinal, dispatch, workgroup));
      }
    }
  }
  return OkStatus();
}

Status ReplayCommandBuffer(const DeferredCommandBuffer &command_buffer,
                           LocalGridRunner &grid_runner,
                           LocalProfiler *profiler) {
  const std::vector<Command> &commands = command_buffer.commands();
  const AbortSignal *abort_signal = AbortSignal::Current();
  for (size_t i = 0; i < commands.size(); ++i) {
    const Command &command = commands[i];
    Status status = abort_signal ? abort_signal->Check() : OkStatus();
    if (!status.ok())
      return status;
    if (std::holds_alternative<BarrierCommand>(command)) {
      // Commands already run in order here.
    } else if (auto *fill = std::get_if<FillCommand>(&command)) {
      status = profiler ? profiler->Span("command", "fill_buffer",
                                         {{"byte_length", fill->length},
                                          {"pattern_length",
                                           uint64_t(fill->pattern_length)}},
                                         [&] { return ReplayFill(*fill); })
                        : ReplayFill(*fill);
    } else if (auto *copy = std::get_if<CopyCommand>(&command)) {
      status = profiler ? profiler->Span("command", "copy_buffer",
                                         {{"byte_length", copy->length}},
                                         [&] { return ReplayCopy(*copy); })
                        : ReplayCopy(*copy);
    } else if (auto *update = std::get_if<UpdateCommand>(&command)) {
      status =
          profiler
              ? profiler->Span("command", "update_buffer",
                               {{"byte_length", uint64_t(update->data.size())}},
                               [&] { return ReplayUpdate(*update); })
              : ReplayUpdate(*update);
    } else if (auto *dispatch = std::get_if<DispatchCommand>(&command)) {
      status = ReplayDispatch(command_buffer, *dispatch, grid_runner, profiler);
    }
    if (!status.ok())
      return status.Annotate("command ", i);
  }
  return OkStatus();
}

} // namespace strata::hal
