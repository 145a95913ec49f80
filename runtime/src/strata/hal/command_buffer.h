// Command buffers record work for a device queue. This interface validates
// every command at record time (so errors point at the recording call) and
// hands drivers resolved arguments through the *Impl hooks. One-shot
// command buffers may be submitted once; all must be finalized first.
#ifndef STRATA_HAL_COMMAND_BUFFER_H_
#define STRATA_HAL_COMMAND_BUFFER_H_

#include <cstdint>
#include <span>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/hal/abi_enums.h"
#include "strata/hal/buffer.h"
#include "strata/hal/executable.h"

namespace strata::hal {

// STRATA_HAL_COMMAND_BUFFER_MODE_* bits.
using CommandBufferModeBitfield = uint32_t;
// STRATA_HAL_COMMAND_CATEGORY_* bits.
using CommandCategoryBitfield = uint32_t;
// Bit i = queue i; STRATA_HAL_QUEUE_AFFINITY_ANY (-1) = any.
using QueueAffinity = int64_t;

// A dispatch argument as passed by callers (borrowed buffer; the recorded
// command retains it). `length` may be kWholeBuffer.
struct BufferBinding {
  Buffer *buffer = nullptr;
  uint64_t offset = 0;
  uint64_t length = kWholeBuffer;
};

// A binding after validation: retained, with the length resolved.
struct ResolvedBinding {
  RefPtr<Buffer> buffer;
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct WorkgroupCount {
  uint32_t x = 1;
  uint32_t y = 1;
  uint32_t z = 1;
};

// The grid limits of one dispatch (abi_enums.h): each count at most
// kMaxWorkgroupCountPerDimension, their product at most
// kMaxWorkgroupsPerDispatch.
inline constexpr uint32_t kMaxWorkgroupCountPerDimension =
    STRATA_HAL_MAX_WORKGROUP_COUNT_PER_DIMENSION;
inline constexpr uint64_t kMaxWorkgroupsPerDispatch =
    STRATA_HAL_MAX_WORKGROUPS_PER_DISPATCH;

// INVALID_ARGUMENT naming the counts and the limit they pass:
//   "workgroup count 100000x1x1 exceeds the limit of 65535 per dimension"
Status ValidateWorkgroupCount(WorkgroupCount count);

class CommandBuffer : public RefObject {
public:
  static const RefTypeDescriptor kRefType;

  CommandBufferModeBitfield mode() const { return mode_; }
  CommandCategoryBitfield categories() const { return categories_; }
  QueueAffinity queue_affinity() const { return queue_affinity_; }
  bool is_finalized() const { return finalized_; }
  // The implementation that records this command buffer, as the address of
  // a tag it owns: drivers check it before they downcast, instead of a
  // dynamic_cast on every submission.
  const void *implementation() const { return implementation_; }

  // Orders all earlier commands before all later ones.
  Status ExecutionBarrier();

  // Repeats the low `pattern_length` (1, 2 or 4) bytes of `pattern` over
  // [offset, offset + length) of `target`; offset and length must be
  // multiples of pattern_length.
  Status FillBuffer(Buffer *target, uint64_t offset, uint64_t length,
                    uint32_t pattern, uint32_t pattern_length);

  // Copies `length` bytes; overlapping ranges behave like memmove.
  Status CopyBuffer(Buffer *source, uint64_t source_offset, Buffer *target,
                    uint64_t target_offset, uint64_t length);

  // Copies host bytes into `target` when executed. The bytes are captured
  // now; `source` need not outlive the call.
  Status UpdateBuffer(std::span<const uint8_t> source, Buffer *target,
                      uint64_t target_offset);

  // Runs export `export_ordinal` over a grid of workgroups. `bindings` must
  // have exactly the export's binding count; `constants` are the push
  // constants every workgroup sees. The counts must pass
  // ValidateWorkgroupCount; a zero count in any dimension makes the
  // dispatch a no-op. `site` numbers the program's call site for profiles
  // (STRATA_HAL_DISPATCH_SITE_SHIFT in abi_enums.h; 0 = none).
  Status Dispatch(Executable *executable, uint32_t export_ordinal,
                  WorkgroupCount workgroup_count,
                  std::span<const uint32_t> constants,
                  std::span<const BufferBinding> bindings, uint32_t site = 0);

  // Ends recording; no command may be added afterwards.
  Status Finalize();

  // For drivers at submission: fails unless finalized, and for one-shot
  // command buffers on a second submission.
  Status BeginSubmission();

protected:
  CommandBuffer(const void *implementation, CommandBufferModeBitfield mode,
                CommandCategoryBitfield categories,
                QueueAffinity queue_affinity);
  // A recycled command buffer starts over as if just created.
  void Reinitialize(CommandBufferModeBitfield mode,
                    CommandCategoryBitfield categories,
                    QueueAffinity queue_affinity);

  // Called after validation, with every length resolved.
  virtual Status ExecutionBarrierImpl() = 0;
  virtual Status FillBufferImpl(Buffer *target, uint64_t offset,
                                uint64_t length, uint32_t pattern,
                                uint32_t pattern_length) = 0;
  virtual Status CopyBufferImpl(Buffer *source, uint64_t source_offset,
                                Buffer *target, uint64_t target_offset,
                                uint64_t length) = 0;
  virtual Status UpdateBufferImpl(std::span<const uint8_t> source,
                                  Buffer *target, uint64_t target_offset) = 0;
  virtual Status DispatchImpl(Executable *executable, uint32_t export_ordinal,
                              WorkgroupCount workgroup_count,
                              std::span<const uint32_t> constants,
                              std::span<ResolvedBinding> bindings,
                              uint32_t site) = 0;
  virtual Status FinalizeImpl() { return OkStatus(); }

private:
  Status CheckRecording(CommandCategoryBitfield category,
                        const char *command) const;

  const void *implementation_;
  CommandBufferModeBitfield mode_;
  CommandCategoryBitfield categories_;
  QueueAffinity queue_affinity_;
  bool finalized_ = false;
  bool submitted_ = false;
};

// Validates creation arguments shared by all drivers.
Status ValidateCommandBufferCreation(CommandBufferModeBitfield mode,
                                     CommandCategoryBitfield categories);

} // namespace strata::hal

#endif // STRATA_HAL_COMMAND_BUFFER_H_
