#include "strata/modules/hal/hal_module.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "strata/base/checked_math.h"
#include "strata/base/scratch_array.h"
#include "strata/hal/abi_enums.h"
#include "strata/hal/api.h"
#include "strata/vm/byte_buffer.h"
#include "strata/vm/call_contract.h"
#include "strata/vm/native_module.h"
#include "strata/vm/value.h"
#include "strata/vm/wait_source.h"

namespace strata::modules {
namespace {

using vm::Value;

// Each context gets its own handles to the devices; the module itself stays
// immutable and shareable.
class HalModuleState final : public vm::ModuleState {
public:
  explicit HalModuleState(std::vector<RefPtr<hal::Device>> devices)
      : devices(std::move(devices)) {}

  std::vector<RefPtr<hal::Device>> devices;
};

// What an argument is, for its error messages ("binding 3 offset"). Only
// formatted when an error needs it: calls are hot, and building a string per
// argument cost more than the dispatches of small models.
struct Role {
  Role(const char *text) : prefix(text) {}
  Role(std::string_view text) : prefix(text) {}
  Role(std::string_view prefix, size_t index, std::string_view suffix = {})
      : prefix(prefix), index(index), suffix(suffix) {}

  std::string str() const {
    return index ? StrCat(prefix, *index, suffix) : StrCat(prefix, suffix);
  }

  std::string_view prefix;
  std::optional<size_t> index;
  std::string_view suffix;
};

// One call of a hal function: reads the arguments in calling-convention
// order and sets the results. NativeModule::Call has already checked the
// argument types and variadic counts against the table, so the scalar
// readers need no checks; what remains is the ref types, nullness and value
// ranges, whose errors name the function and the argument's role.
class Call {
public:
  Call(std::string_view function, vm::Stack &stack, HalModuleState &state,
       std::span<const Value> arguments, std::span<Value> results)
      : function_(function), stack_(stack), state_(state),
        arguments_(arguments), results_(results) {}

  std::string_view function() const { return function_; }
  vm::Stack &stack() const { return stack_; }
  HalModuleState &state() const { return state_; }

  // "hal.buffer_view.create: byte offset", the prefix of argument errors.
  std::string Describe(const Role &role) const {
    return StrCat(function_, ": ", role.str());
  }

  const Value &Next() {
    assert(next_ < arguments_.size() && "read past the checked arguments");
    return arguments_[next_++];
  }
  int32_t I32() { return Next().i32(); }
  int64_t I64() { return Next().i64(); }
  // The tuple count in front of a variadic segment (never negative: the
  // signature check rejects that).
  size_t SegmentCount() { return static_cast<size_t>(I32()); }

  // A non-null ref of type T (borrowed from the arguments).
  template <typename T> Result<T *> Ref(const Role &role) {
    const Value &value = Next();
    if (T *typed = vm::TryCastRef<T>(value))
      return typed;
    return vm::CastRef<T>(value, Describe(role));
  }
  // Like Ref but null is allowed (and returned as nullptr).
  template <typename T> Result<T *> OptionalRef(const Role &role) {
    const Value &value = Next();
    if (T *typed = vm::TryCastRef<T>(value))
      return typed;
    if (value.type() == vm::ValueType::kRef && !value.ref())
      return static_cast<T *>(nullptr);
    return vm::CastOptionalRef<T>(value, Describe(role));
  }
  // A vm.buffer holding UTF-8 text.
  Result<std::string_view> String(const Role &role) {
    STRATA_ASSIGN_OR_RETURN(vm::ByteBuffer * text, Ref<vm::ByteBuffer>(role));
    return text->AsStringView();
  }

  // An i32 that must not be negative (ordinals, counts, capacities).
  Result<uint32_t> NonNegativeI32(const Role &role) {
    int32_t value = I32();
    if (value < 0)
      return InvalidArgumentError(Describe(role), " must be >= 0, got ", value);
    return static_cast<uint32_t>(value);
  }
  // An i64 byte offset or size: >= 0.
  Result<uint64_t> ByteOffset(const Role &role) {
    int64_t value = I64();
    if (value < 0)
      return InvalidArgumentError(Describe(role), " must be >= 0, got ", value);
    return static_cast<uint64_t>(value);
  }
  // An i64 byte length: >= 0, or -1 for "to the end of the buffer".
  Result<uint64_t> ByteLength(const Role &role) {
    int64_t value = I64();
    if (value == -1)
      return hal::kWholeBuffer;
    if (value < 0)
      return InvalidArgumentError(
          Describe(role), " must be >= 0 or -1 (whole buffer), got ", value);
    return static_cast<uint64_t>(value);
  }

  void ReturnI32(size_t index, int32_t value) {
    results_[index] = Value::I32(value);
  }
  void ReturnI64(size_t index, int64_t value) {
    results_[index] = Value::I64(value);
  }
  template <typename T> void ReturnRef(size_t index, RefPtr<T> ref) {
    results_[index] = Value::Ref(RefPtr<RefObject>(std::move(ref)));
  }

private:
  std::string_view function_;
  vm::Stack &stack_;
  HalModuleState &state_;
  std::span<const Value> arguments_;
  std::span<Value> results_;
  size_t next_ = 0;
};

// A dims segment (count + i64 extents) read into fixed storage: shapes are
// bounded by BufferView::kMaxRank, so no call allocates for them. Only the
// first `rank` dims are ever written or read (no zeroing of the rest, and
// read in place rather than returned by value: both had been a memset and
// a memcpy on every buffer view a call created or checked).
struct Shape {
  std::array<int64_t, hal::BufferView::kMaxRank> dims;
  size_t rank = 0;

  std::span<const int64_t> span() const { return {dims.data(), rank}; }
};

Status ReadShape(Call &call, Shape &shape) {
  size_t rank = call.SegmentCount();
  if (rank > hal::BufferView::kMaxRank)
    return InvalidArgumentError(call.Describe("shape"), " has rank ", rank,
                                ", more than the maximum of ",
                                hal::BufferView::kMaxRank);
  shape.rank = rank;
  for (size_t i = 0; i < rank; ++i)
    shape.dims[i] = call.I64();
  return OkStatus();
}

// Declarations of every implementation, straight from the table, so a
// missing one fails to link instead of silently dropping an export.
#define STRATA_HAL_IMPORT(identifier, full_name, calling_convention)           \
  Status identifier(Call &call);
#include "strata/modules/hal/hal_imports.def"
#undef STRATA_HAL_IMPORT

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

Status DevicesCount(Call &call) {
  call.ReturnI32(0, static_cast<int32_t>(call.state().devices.size()));
  return OkStatus();
}

Status DevicesGet(Call &call) {
  int32_t index = call.I32();
  const std::vector<RefPtr<hal::Device>> &devices = call.state().devices;
  if (index < 0 || static_cast<size_t>(index) >= devices.size())
    return OutOfRangeError(call.Describe("device index "), index,
                           " is out of range; the hal module was given ",
                           devices.size(), " device(s)");
  call.ReturnRef(0, devices[static_cast<size_t>(index)]);
  return OkStatus();
}

Status DeviceAllocator(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::Device * device,
                          call.Ref<hal::Device>("device"));
  RefPtr<hal::Allocator> allocator = device->allocator();
  if (!allocator)
    return FailedPreconditionError(call.Describe("device '"), device->id(),
                                   "' has no allocator");
  call.ReturnRef(0, std::move(allocator));
  return OkStatus();
}

Status DeviceQueryI64(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::Device * device,
                          call.Ref<hal::Device>("device"));
  STRATA_ASSIGN_OR_RETURN(std::string_view category, call.String("category"));
  STRATA_ASSIGN_OR_RETURN(std::string_view key, call.String("key"));
  Result<int64_t> value = device->QueryI64(category, key);
  if (!value.ok()) {
    // An unknown property is an answer ("not supported"), not a failure.
    if (value.status().code() != StatusCode::kNotFound)
      return value.status().Annotate(
          StrCat(call.function(), " (", category, ", ", key, ")"));
    call.ReturnI32(0, 0);
    call.ReturnI64(1, 0);
    return OkStatus();
  }
  call.ReturnI32(0, 1);
  call.ReturnI64(1, *value);
  return OkStatus();
}

Status DeviceQueueExecute(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::Device * device,
                          call.Ref<hal::Device>("device"));
  hal::QueueAffinity affinity = call.I64();
  STRATA_ASSIGN_OR_RETURN(hal::Fence * wait_fence,
                          call.OptionalRef<hal::Fence>("wait fence"));
  STRATA_ASSIGN_OR_RETURN(hal::Fence * signal_fence,
                          call.Ref<hal::Fence>("signal fence"));
  size_t count = call.SegmentCount();
  ScratchArray<hal::CommandBuffer *, 4> command_buffers(count);
  for (size_t i = 0; i < count; ++i) {
    STRATA_ASSIGN_OR_RETURN(
        command_buffers[i],
        call.Ref<hal::CommandBuffer>(Role("command buffer ", i)));
  }
  // On failure the device also fails `signal_fence`, so a later await
  // reports the same error.
  return device->QueueExecute(affinity, wait_fence, signal_fence,
                              command_buffers.span());
}

//===----------------------------------------------------------------------===//
// Allocators and buffers
//===----------------------------------------------------------------------===//

Status AllocatorAllocate(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::Allocator * allocator,
                          call.Ref<hal::Allocator>("allocator"));
  call.I64(); // Queue affinity: allocators serve every queue.
  auto memory_type = static_cast<hal::MemoryTypeBitfield>(call.I32());
  auto usage = static_cast<hal::BufferUsageBitfield>(call.I32());
  STRATA_ASSIGN_OR_RETURN(uint64_t size, call.ByteOffset("allocation size"));
  Result<RefPtr<hal::Buffer>> buffer =
      allocator->AllocateBuffer(memory_type, usage, size);
  if (!buffer.ok())
    return buffer.status().Annotate(call.function());
  call.ReturnRef(0, std::move(buffer).value());
  return OkStatus();
}

Status AllocatorImport(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::Allocator * allocator,
                          call.Ref<hal::Allocator>("allocator"));
  call.I64(); // Queue affinity: every allocator's memory serves every queue.
  auto memory_type = static_cast<hal::MemoryTypeBitfield>(call.I32());
  auto usage = static_cast<hal::BufferUsageBitfield>(call.I32());
  STRATA_ASSIGN_OR_RETURN(vm::ByteBuffer * source,
                          call.Ref<vm::ByteBuffer>("source"));
  STRATA_ASSIGN_OR_RETURN(uint64_t offset, call.ByteOffset("source offset"));
  STRATA_ASSIGN_OR_RETURN(uint64_t length, call.ByteOffset("source length"));
  std::span<const uint8_t> bytes = source->data();
  if (!RangeInBounds(offset, length, bytes.size()))
    return OutOfRangeError(call.function(), ": ", length, " bytes at offset ",
                           offset, " are outside the ", bytes.size(),
                           "-byte source");
  // Local allocators wrap the bytes, holding a reference to their owner
  // until the buffer dies; device allocators copy them in.
  RefPtr<vm::ByteBuffer> owner = RefPtr<vm::ByteBuffer>::Retain(source);
  STRATA_ASSIGN_OR_RETURN(
      RefPtr<hal::Buffer> buffer,
      allocator->ImportHostBytes(memory_type, usage,
                                 bytes.subspan(size_t(offset), size_t(length)),
                                 [owner]() mutable { owner.reset(); }));
  call.ReturnRef(0, std::move(buffer));
  return OkStatus();
}

// The program's message for assert errors: it names what is checked ("argument
// 0 of @f"); `fallback` when the program passed none.
Result<std::string_view> ReadMessage(Call &call, std::string_view fallback) {
  STRATA_ASSIGN_OR_RETURN(vm::ByteBuffer * message,
                          call.OptionalRef<vm::ByteBuffer>("message"));
  return message ? message->AsStringView() : fallback;
}

// Describes a ref that is not of the expected type: "null", "a vm.buffer".
std::string DescribeRef(const Value &value) {
  if (!value.ref())
    return "null";
  return StrCat("a ", value.ref()->ref_type()->name);
}

Status BufferAssert(Call &call) {
  const Value &buffer_value = call.Next();
  STRATA_ASSIGN_OR_RETURN(std::string_view message,
                          ReadMessage(call, "buffer"));
  STRATA_ASSIGN_OR_RETURN(uint64_t minimum_length,
                          call.ByteOffset("minimum length"));
  auto *buffer = RefCast<hal::Buffer>(buffer_value.ref());
  if (!buffer)
    return InvalidArgumentError(message, ": expected a buffer of at least ",
                                minimum_length, " bytes, got ",
                                DescribeRef(buffer_value));
  if (buffer->byte_length() < minimum_length)
    return InvalidArgumentError(message, ": expected a buffer of at least ",
                                minimum_length, " bytes, got ",
                                buffer->byte_length(), " bytes");
  return OkStatus();
}

Status BufferLength(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::Buffer * buffer,
                          call.Ref<hal::Buffer>("buffer"));
  call.ReturnI64(0, static_cast<int64_t>(buffer->byte_length()));
  return OkStatus();
}

Status BufferLoad(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::Buffer * buffer,
                          call.Ref<hal::Buffer>("buffer"));
  STRATA_ASSIGN_OR_RETURN(uint64_t offset, call.ByteOffset("byte offset"));
  int32_t length = call.I32();
  if (length != 1 && length != 2 && length != 4 && length != 8)
    return InvalidArgumentError(call.Describe("byte length"),
                                " must be 1, 2, 4 or 8, got ", length);
  std::array<uint8_t, 8> bytes = {};
  Status read = buffer->ReadData(
      offset, std::span<uint8_t>(bytes.data(), static_cast<size_t>(length)));
  if (!read.ok())
    return read.Annotate(call.function());
  uint64_t value = 0;
  for (int32_t i = length - 1; i >= 0; --i)
    value = (value << 8) | bytes[static_cast<size_t>(i)];
  call.ReturnI64(0, static_cast<int64_t>(value));
  return OkStatus();
}

//===----------------------------------------------------------------------===//
// Buffer views
//===----------------------------------------------------------------------===//

Status BufferViewCreate(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::Buffer * buffer,
                          call.Ref<hal::Buffer>("buffer"));
  STRATA_ASSIGN_OR_RETURN(uint64_t offset, call.ByteOffset("byte offset"));
  STRATA_ASSIGN_OR_RETURN(uint64_t length, call.ByteLength("byte length"));
  auto element_type = static_cast<hal::ElementType>(call.I32());
  auto encoding_type = static_cast<hal::EncodingType>(call.I32());
  Shape shape;
  STRATA_RETURN_IF_ERROR(ReadShape(call, shape));
  Result<RefPtr<hal::BufferView>> view = hal::BufferView::Create(
      RefPtr<hal::Buffer>::Retain(buffer), offset, length, shape.span(),
      element_type, encoding_type);
  if (!view.ok())
    return view.status().Annotate(call.function());
  call.ReturnRef(0, std::move(view).value());
  return OkStatus();
}

// The check compiled programs run on every tensor argument; its error is
// what a user sees when they pass the wrong input, so it leads with the
// program's message and says what was expected and what came instead.
Status BufferViewAssert(Call &call) {
  const Value &view_value = call.Next();
  STRATA_ASSIGN_OR_RETURN(std::string_view message,
                          ReadMessage(call, "buffer view"));
  auto element_type = static_cast<hal::ElementType>(call.I32());
  auto encoding_type = static_cast<hal::EncodingType>(call.I32());
  Shape shape;
  STRATA_RETURN_IF_ERROR(ReadShape(call, shape));
  auto *view = RefCast<hal::BufferView>(view_value.ref());
  if (!view && view_value.ref())
    return InvalidArgumentError(
        message, ": expected a buffer view ",
        hal::FormatShapeAndElementType(shape.span(), element_type), ", got ",
        DescribeRef(view_value));
  return hal::CheckBufferView(view, message, element_type, encoding_type,
                              shape.span());
}

Status BufferViewBuffer(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::BufferView * view,
                          call.Ref<hal::BufferView>("buffer view"));
  call.ReturnRef(0, view->buffer());
  return OkStatus();
}

Status BufferViewElementType(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::BufferView * view,
                          call.Ref<hal::BufferView>("buffer view"));
  call.ReturnI32(0, static_cast<int32_t>(view->element_type()));
  return OkStatus();
}

Status BufferViewRank(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::BufferView * view,
                          call.Ref<hal::BufferView>("buffer view"));
  call.ReturnI32(0, static_cast<int32_t>(view->rank()));
  return OkStatus();
}

Status BufferViewDim(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::BufferView * view,
                          call.Ref<hal::BufferView>("buffer view"));
  int32_t index = call.I32();
  if (index < 0 || static_cast<size_t>(index) >= view->rank())
    return OutOfRangeError(call.Describe("dimension index "), index,
                           " is out of range for a buffer view of shape ",
                           view->FormatShape());
  call.ReturnI64(0, view->dim(static_cast<size_t>(index)));
  return OkStatus();
}

//===----------------------------------------------------------------------===//
// Command buffers
//===----------------------------------------------------------------------===//

Status CommandBufferCreate(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::Device * device,
                          call.Ref<hal::Device>("device"));
  auto modes = static_cast<hal::CommandBufferModeBitfield>(call.I32());
  auto categories = static_cast<hal::CommandCategoryBitfield>(call.I32());
  hal::QueueAffinity affinity = call.I64();
  STRATA_ASSIGN_OR_RETURN(uint32_t binding_capacity,
                          call.NonNegativeI32("binding capacity"));
  Result<RefPtr<hal::CommandBuffer>> command_buffer =
      device->CreateCommandBuffer(modes, categories, affinity,
                                  binding_capacity);
  if (!command_buffer.ok())
    return command_buffer.status().Annotate(call.function());
  call.ReturnRef(0, std::move(command_buffer).value());
  return OkStatus();
}

Status CommandBufferFinalize(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::CommandBuffer * command_buffer,
                          call.Ref<hal::CommandBuffer>("command buffer"));
  return command_buffer->Finalize();
}

Status CommandBufferExecutionBarrier(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::CommandBuffer * command_buffer,
                          call.Ref<hal::CommandBuffer>("command buffer"));
  // Source/target stage masks and flags: the HAL barrier is a full one, so
  // they only narrow what it already covers.
  call.I32();
  call.I32();
  call.I32();
  return command_buffer->ExecutionBarrier();
}

Status CommandBufferFillBuffer(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::CommandBuffer * command_buffer,
                          call.Ref<hal::CommandBuffer>("command buffer"));
  STRATA_ASSIGN_OR_RETURN(hal::Buffer * target,
                          call.Ref<hal::Buffer>("target buffer"));
  STRATA_ASSIGN_OR_RETURN(uint64_t offset, call.ByteOffset("target offset"));
  STRATA_ASSIGN_OR_RETURN(uint64_t length, call.ByteLength("length"));
  auto pattern = static_cast<uint32_t>(call.I32());
  STRATA_ASSIGN_OR_RETURN(uint32_t pattern_length,
                          call.NonNegativeI32("pattern length"));
  return command_buffer
      ->FillBuffer(target, offset, length, pattern, pattern_length)
      .Annotate(call.function());
}

Status CommandBufferCopyBuffer(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::CommandBuffer * command_buffer,
                          call.Ref<hal::CommandBuffer>("command buffer"));
  STRATA_ASSIGN_OR_RETURN(hal::Buffer * source,
                          call.Ref<hal::Buffer>("source buffer"));
  STRATA_ASSIGN_OR_RETURN(uint64_t source_offset,
                          call.ByteOffset("source offset"));
  STRATA_ASSIGN_OR_RETURN(hal::Buffer * target,
                          call.Ref<hal::Buffer>("target buffer"));
  STRATA_ASSIGN_OR_RETURN(uint64_t target_offset,
                          call.ByteOffset("target offset"));
  STRATA_ASSIGN_OR_RETURN(uint64_t length, call.ByteLength("length"));
  return command_buffer
      ->CopyBuffer(source, source_offset, target, target_offset, length)
      .Annotate(call.function());
}

Status CommandBufferDispatch(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::CommandBuffer * command_buffer,
                          call.Ref<hal::CommandBuffer>("command buffer"));
  STRATA_ASSIGN_OR_RETURN(hal::Executable * executable,
                          call.Ref<hal::Executable>("executable"));
  STRATA_ASSIGN_OR_RETURN(uint32_t export_ordinal,
                          call.NonNegativeI32("export ordinal"));
  hal::WorkgroupCount workgroup_count;
  STRATA_ASSIGN_OR_RETURN(workgroup_count.x,
                          call.NonNegativeI32("workgroup count x"));
  STRATA_ASSIGN_OR_RETURN(workgroup_count.y,
                          call.NonNegativeI32("workgroup count y"));
  STRATA_ASSIGN_OR_RETURN(workgroup_count.z,
                          call.NonNegativeI32("workgroup count z"));
  // Dispatch flags: only the call site is defined (abi_enums.h).
  uint32_t site =
      uint32_t(uint64_t(call.I64()) >> STRATA_HAL_DISPATCH_SITE_SHIFT);

  size_t constant_count = call.SegmentCount();
  ScratchArray<uint32_t, 64> constants(constant_count);
  for (uint32_t &constant : constants)
    constant = static_cast<uint32_t>(call.I32());

  size_t binding_count = call.SegmentCount();
  ScratchArray<hal::BufferBinding, 64> bindings(binding_count);
  for (size_t i = 0; i < binding_count; ++i) {
    hal::BufferBinding &binding = bindings[i];
    STRATA_ASSIGN_OR_RETURN(
        binding.buffer, call.Ref<hal::Buffer>(Role("binding ", i, " buffer")));
    STRATA_ASSIGN_OR_RETURN(binding.offset,
                            call.ByteOffset(Role("binding ", i, " offset")));
    STRATA_ASSIGN_OR_RETURN(binding.length,
                            call.ByteLength(Role("binding ", i, " length")));
  }
  return command_buffer
      ->Dispatch(executable, export_ordinal, workgroup_count, constants.span(),
                 bindings.span(), site)
      .Annotate(call.function());
}

//===----------------------------------------------------------------------===//
// Executables
//===----------------------------------------------------------------------===//

Status ExecutableCreate(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::Device * device,
                          call.Ref<hal::Device>("device"));
  call.I64(); // Queue affinity: executables are usable on every queue.
  STRATA_ASSIGN_OR_RETURN(std::string_view format, call.String("format"));
  STRATA_ASSIGN_OR_RETURN(vm::ByteBuffer * data,
                          call.Ref<vm::ByteBuffer>("executable data"));
  STRATA_ASSIGN_OR_RETURN(vm::ByteBuffer * constant_bytes,
                          call.OptionalRef<vm::ByteBuffer>("constants"));
  // Constants arrive as raw bytes (possibly a rodata view of any
  // alignment); copy them into u32s rather than reinterpret the pointer.
  std::vector<uint32_t> constants;
  if (constant_bytes) {
    if (constant_bytes->length() % sizeof(uint32_t) != 0)
      return InvalidArgumentError(call.Describe("constants"),
                                  " must be a whole number of 32-bit "
                                  "values, got ",
                                  constant_bytes->length(), " bytes");
    constants.resize(constant_bytes->length() / sizeof(uint32_t));
    if (!constants.empty())
      std::memcpy(constants.data(), constant_bytes->data().data(),
                  constant_bytes->length());
  }
  // Loaders copy what they need during the call (the system library loader
  // writes the bytes to a memfd), so `data` need not outlive it.
  Result<RefPtr<hal::Executable>> executable =
      device->CreateExecutable(format, data->data(), constants);
  if (!executable.ok())
    return executable.status().Annotate(call.function(), ": loading a '",
                                        format, "' executable of ",
                                        data->length(), " bytes");
  call.ReturnRef(0, std::move(executable).value());
  return OkStatus();
}

//===----------------------------------------------------------------------===//
// Fences
//===----------------------------------------------------------------------===//

Status FenceCreate(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::Device * device,
                          call.Ref<hal::Device>("device"));
  call.I32(); // Flags: none are defined.
  STRATA_ASSIGN_OR_RETURN(RefPtr<hal::Fence> fence, device->CreateFence());
  call.ReturnRef(0, std::move(fence));
  return OkStatus();
}

Status FenceSignal(Call &call) {
  STRATA_ASSIGN_OR_RETURN(hal::Fence * fence, call.Ref<hal::Fence>("fence"));
  return fence->Signal();
}

// The timepoints of the fences one hal.fence.await waits for, as a VM wait
// source: a yielding await suspends the invocation on it.
class FenceWaitSource final : public vm::WaitSource {
public:
  explicit FenceWaitSource(std::vector<hal::SemaphoreTimepoint> timepoints)
      : timepoints_(std::move(timepoints)) {}

  Status Query() override {
    for (const hal::SemaphoreTimepoint &timepoint : timepoints_) {
      STRATA_ASSIGN_OR_RETURN(uint64_t value, timepoint.semaphore->Query());
      if (value < timepoint.value)
        return Status(StatusCode::kDeferred, "fence pending");
    }
    return OkStatus();
  }
  Status Wait(Deadline deadline) override {
    return hal::WaitSemaphores(hal::WaitMode::kAll, timepoints_, deadline);
  }
  void Subscribe(WaitNotifier *notifier) override {
    for (const hal::SemaphoreTimepoint &timepoint : timepoints_)
      timepoint.semaphore->AddNotifier(notifier);
  }
  void Unsubscribe(WaitNotifier *notifier) override {
    for (const hal::SemaphoreTimepoint &timepoint : timepoints_)
      timepoint.semaphore->RemoveNotifier(notifier);
  }

private:
  std::vector<hal::SemaphoreTimepoint> timepoints_;
};

// The first failure among `fences`, or OK.
Status FirstFenceFailure(std::span<hal::Fence *const> fences) {
  for (hal::Fence *fence : fences) {
    Status fence_status = fence->Query();
    if (!fence_status.ok() && fence_status.code() != StatusCode::kDeferred)
      return fence_status;
  }
  return OkStatus();
}

Status FenceAwait(Call &call) {
  int32_t timeout_ms = call.I32();
  size_t count = call.SegmentCount();
  // All timepoints under one deadline, so a fence failing while another is
  // still pending ends the wait at once. One timepoint per semaphore (the
  // highest), so a wait source subscribes each semaphore once.
  ScratchVector<hal::SemaphoreTimepoint, 4> timepoints;
  ScratchVector<hal::Fence *, 4> fences;
  for (size_t i = 0; i < count; ++i) {
    STRATA_ASSIGN_OR_RETURN(hal::Fence * fence,
                            call.OptionalRef<hal::Fence>(Role("fence ", i)));
    if (!fence)
      continue; // A null fence has nothing to wait for.
    fences.push_back(fence);
    fence->VisitTimepoints(
        [&](std::span<const hal::SemaphoreTimepoint> fence_timepoints) {
          for (const hal::SemaphoreTimepoint &timepoint : fence_timepoints) {
            bool merged = false;
            for (hal::SemaphoreTimepoint &existing : timepoints) {
              if (existing.semaphore == timepoint.semaphore) {
                existing.value = std::max(existing.value, timepoint.value);
                merged = true;
              }
            }
            if (!merged)
              timepoints.push_back(timepoint);
          }
        });
  }
  vm::Stack &stack = call.stack();
  // A retry after this call yielded: the wait is over.
  if (std::optional<Status> waited = stack.TakeWaitResult()) {
    if (waited->code() == StatusCode::kDeadlineExceeded) {
      STRATA_RETURN_IF_ERROR(FirstFenceFailure(fences.span()));
      call.ReturnI32(0, static_cast<int32_t>(StatusCode::kDeadlineExceeded));
      return OkStatus();
    }
    STRATA_RETURN_IF_ERROR(*waited);
  }
  Status status = hal::WaitSemaphores(hal::WaitMode::kAll, timepoints.span(),
                                      hal::Deadline::Immediate());
  if (status.code() == StatusCode::kDeadlineExceeded && timeout_ms != 0) {
    // Pending: suspend the invocation when it can be resumed later, else
    // block this thread.
    hal::Deadline deadline = hal::Deadline::AfterMs(timeout_ms);
    STRATA_RETURN_IF_ERROR(FirstFenceFailure(fences.span()));
    if (stack.CanYield())
      return stack.Yield(
          MakeRef<FenceWaitSource>(std::vector<hal::SemaphoreTimepoint>(
              timepoints.begin(), timepoints.end())),
          deadline);
    // Blocking: the invocation's deadline or cancellation ends the wait.
    status = hal::WaitSemaphores(hal::WaitMode::kAll, timepoints.span(),
                                 deadline, stack.abort_signal());
  }
  if (status.code() == StatusCode::kDeadlineExceeded) {
    // Either the time ran out, some work failed with that code or the
    // invocation's deadline passed; only the first is the caller's to
    // handle through the result.
    if (const AbortSignal *abort_signal = stack.abort_signal())
      STRATA_RETURN_IF_ERROR(abort_signal->Check());
    STRATA_RETURN_IF_ERROR(FirstFenceFailure(fences.span()));
    call.ReturnI32(0, static_cast<int32_t>(StatusCode::kDeadlineExceeded));
    return OkStatus();
  }
  STRATA_RETURN_IF_ERROR(status);
  call.ReturnI32(0, 0);
  return OkStatus();
}

//===----------------------------------------------------------------------===//
// The module
//===----------------------------------------------------------------------===//

// Adapters from the VM's native function signature to the implementations.
#define STRATA_HAL_IMPORT(identifier, full_name, calling_convention)           \
  Status identifier##Entry(vm::Stack &stack, vm::ModuleState *state,           \
                           std::span<const Value> arguments,                   \
                           std::span<Value> results) {                         \
    Call call(full_name, stack, *static_cast<HalModuleState *>(state),         \
              arguments, results);                                             \
    return identifier(call);                                                   \
  }
#include "strata/modules/hal/hal_imports.def"
#undef STRATA_HAL_IMPORT

// The contract of each function for the module verifier, from
// hal_import_contracts.def (empty for functions without a row).
constexpr vm::CallContract ContractOf(std::string_view identifier) {
  vm::CallContract contract;
#define STRATA_HAL_BOUNDED_COUNTS(function, first, count, max_each,            \
                                  max_product, name, each_unit, product_unit)  \
  if (identifier == #function)                                                 \
    contract.bounded_counts = {first, count,     max_each,    max_product,     \
                               name,  each_unit, product_unit};
#define STRATA_HAL_CREATES_WAITABLE(function, result)                          \
  if (identifier == #function)                                                 \
    contract.creates_waitable_result = result;
#define STRATA_HAL_AWAITS(function, argument)                                  \
  if (identifier == #function)                                                 \
    contract.awaits_argument = argument;
#include "strata/modules/hal/hal_import_contracts.def"
#undef STRATA_HAL_BOUNDED_COUNTS
#undef STRATA_HAL_CREATES_WAITABLE
#undef STRATA_HAL_AWAITS
  return contract;
}

// Every row must name a function of hal_imports.def (a typo would silently
// drop the check otherwise).
#define STRATA_HAL_BOUNDED_COUNTS(function, ...)                               \
  static_assert(sizeof(&function) != 0);
#define STRATA_HAL_CREATES_WAITABLE(function, ...)                             \
  static_assert(sizeof(&function) != 0);
#define STRATA_HAL_AWAITS(function, ...) static_assert(sizeof(&function) != 0);
#include "strata/modules/hal/hal_import_contracts.def"
#undef STRATA_HAL_BOUNDED_COUNTS
#undef STRATA_HAL_CREATES_WAITABLE
#undef STRATA_HAL_AWAITS

#define STRATA_HAL_IMPORT(identifier, full_name, calling_convention)           \
  constexpr vm::CallContract identifier##Contract = ContractOf(#identifier);
#include "strata/modules/hal/hal_imports.def"
#undef STRATA_HAL_IMPORT

const vm::NativeFunctionDef kFunctions[] = {
#define STRATA_HAL_IMPORT(identifier, full_name, calling_convention)           \
  {full_name, calling_convention, identifier##Entry,                           \
   identifier##Contract.empty() ? nullptr : &identifier##Contract},
#include "strata/modules/hal/hal_imports.def"
#undef STRATA_HAL_IMPORT
};

const vm::NativeModuleDescriptor kDescriptor = {
    .name = "hal",
    .version = STRATA_HAL_MODULE_VERSION,
    .functions = kFunctions,
};

} // namespace

Result<RefPtr<vm::Module>>
CreateHalModule(std::vector<RefPtr<hal::Device>> devices) {
  for (size_t i = 0; i < devices.size(); ++i) {
    if (!devices[i])
      return InvalidArgumentError("hal module: device ", i, " is null");
  }
  STRATA_ASSIGN_OR_RETURN(
      RefPtr<vm::NativeModule> module,
      vm::NativeModule::Create(kDescriptor,
                               [devices = std::move(devices)]()
                                   -> Result<std::unique_ptr<vm::ModuleState>> {
                                 return std::unique_ptr<vm::ModuleState>(
                                     std::make_unique<HalModuleState>(devices));
                               }));
  return RefPtr<vm::Module>(std::move(module));
}

} // namespace strata::modules
