#include "strata/vm/ref_ops.h"

#include <bit>
#include <cstring>

#include "strata/vm/byte_buffer.h"
#include "strata/vm/bytecode_decoder.h"
#include "strata/vm/list.h"

namespace strata::vm {
namespace {

Result<List *> ListOperand(const RefPtr<RefObject> &ref) {
  if (!ref)
    return InvalidArgumentError("list op on a null ref");
  List *list = RefCast<List>(ref.get());
  if (!list)
    return InvalidArgumentError("list op on a ", ref->ref_type()->name,
                                ", expected vm.list");
  return list;
}

Result<ByteBuffer *> BufferOperand(const RefPtr<RefObject> &ref) {
  if (!ref)
    return InvalidArgumentError("buffer op on a null ref");
  ByteBuffer *buffer = RefCast<ByteBuffer>(ref.get());
  if (!buffer)
    return InvalidArgumentError("buffer op on a ", ref->ref_type()->name,
                                ", expected vm.buffer");
  return buffer;
}

Result<uint64_t> NonNegative(int64_t value, const char *what) {
  if (value < 0)
    return OutOfRangeError("negative ", what, " ", value);
  return static_cast<uint64_t>(value);
}

// Little-endian scalar access to buffer bytes.
template <typename T> T LoadScalar(const uint8_t *bytes) {
  if constexpr (std::is_floating_point_v<T>) {
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    return std::bit_cast<T>(LoadLittleEndian<Bits>(bytes));
  } else {
    return static_cast<T>(LoadLittleEndian<std::make_unsigned_t<T>>(bytes));
  }
}

template <typename T> void StoreScalar(uint8_t *bytes, T value) {
  using Bits = std::conditional_t<
      sizeof(T) == 1, uint8_t,
      std::conditional_t<
          sizeof(T) == 2, uint16_t,
          std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>>>;
  Bits bits = std::bit_cast<Bits>(value);
  for (size_t i = 0; i < sizeof(T); ++i)
    bytes[i] = static_cast<uint8_t>(bits >> (8 * i));
}

template <typename T>
Result<T> LoadFromBuffer(const RefPtr<RefObject> &ref, int64_t offset) {
  STRATA_ASSIGN_OR_RETURN(ByteBuffer * buffer, BufferOperand(ref));
  STRATA_ASSIGN_OR_RETURN(uint64_t start, NonNegative(offset, "offset"));
  STRATA_ASSIGN_OR_RETURN(std::span<const uint8_t> bytes,
                          buffer->ReadRange(start, sizeof(T)));
  return LoadScalar<T>(bytes.data());
}

template <typename T>
Status StoreToBuffer(const RefPtr<RefObject> &ref, int64_t offset, T value) {
  STRATA_ASSIGN_OR_RETURN(ByteBuffer * buffer, BufferOperand(ref));
  STRATA_ASSIGN_OR_RETURN(uint64_t start, NonNegative(offset, "offset"));
  STRATA_ASSIGN_OR_RETURN(std::span<uint8_t> bytes,
                          buffer->WriteRange(start, sizeof(T)));
  StoreScalar<T>(bytes.data(), value);
  return OkStatus();
}

Status CopyBuffer(const RefPtr<RefObject> &target_ref, int64_t target_offset,
                  const RefPtr<RefObject> &source_ref, int64_t source_offset,
                  int64_t length) {
  STRATA_ASSIGN_OR_RETURN(ByteBuffer * target, BufferOperand(target_ref));
  STRATA_ASSIGN_OR_RETURN(ByteBuffer * source, BufferOperand(source_ref));
  STRATA_ASSIGN_OR_RETURN(uint64_t byte_count, NonNegative(length, "length"));
  STRATA_ASSIGN_OR_RETURN(uint64_t target_start,
                          NonNegative(target_offset, "offset"));
  STRATA_ASSIGN_OR_RETURN(uint64_t source_start,
                          NonNegative(source_offset, "offset"));
  STRATA_ASSIGN_OR_RETURN(std::span<const uint8_t> from,
                          source->ReadRange(source_start, byte_count));
  STRATA_ASSIGN_OR_RETURN(std::span<uint8_t> to,
                          target->WriteRange(target_start, byte_count));
  if (byte_count)
    std::memmove(to.data(), from.data(), byte_count);
  return OkStatus();
}

} // namespace

Status ExecuteRefOp(Opcode opcode, const uint8_t *code, uint32_t *pc,
                    FrameRegisters &r) {
  auto reg = [&]() {
    uint16_t value = LoadU16(code + *pc);
    *pc += 2;
    return value;
  };
  switch (opcode) {
  // --- lists ---
  case Opcode::ListAlloc: {
    uint16_t d = reg();
    STRATA_ASSIGN_OR_RETURN(uint64_t capacity,
                            NonNegative(r.i32[reg()], "list capacity"));
    r.ref[d] = List::Create(capacity);
    return OkStatus();
  }
  case Opcode::ListSize: {
    uint16_t d = reg();
    STRATA_ASSIGN_OR_RETURN(List * list, ListOperand(r.ref[reg()]));
    r.i32[d] = static_cast<int32_t>(list->size());
    return OkStatus();
  }
  case Opcode::ListResize: {
    STRATA_ASSIGN_OR_RETURN(List * list, ListOperand(r.ref[reg()]));
    STRATA_ASSIGN_OR_RETURN(uint64_t size,
                            NonNegative(r.i32[reg()], "list size"));
    return list->Resize(size);
  }
  case Opcode::ListGetI32: {
    uint16_t d = reg();
    STRATA_ASSIGN_OR_RETURN(List * list, ListOperand(r.ref[reg()]));
    STRATA_ASSIGN_OR_RETURN(uint64_t index,
                            NonNegative(r.i32[reg()], "list index"));
    STRATA_ASSIGN_OR_RETURN(r.i32[d], list->GetI32(index));
    return OkStatus();
  }
  case Opcode::ListGetI64: {
    uint16_t d = reg();
    STRATA_ASSIGN_OR_RETURN(List * list, ListOperand(r.ref[reg()]));
    STRATA_ASSIGN_OR_RETURN(uint64_t index,
                            NonNegative(r.i32[reg()], "list index"));
    STRATA_ASSIGN_OR_RETURN(r.i64[d], list->GetI64(index));
    return OkStatus();
  }
  case Opcode::ListGetRef: {
    uint16_t d = reg();
    STRATA_ASSIGN_OR_RETURN(List * list, ListOperand(r.ref[reg()]));
    STRATA_ASSIGN_OR_RETURN(uint64_t index,
                            NonNegative(r.i32[reg()], "list index"));
    STRATA_ASSIGN_OR_RETURN(r.ref[d], list->GetRef(index));
    return OkStatus();
  }
  case Opcode::ListSetI32: {
    STRATA_ASSIGN_OR_RETURN(List * list, ListOperand(r.ref[reg()]));
    STRATA_ASSIGN_OR_RETURN(uint64_t index,
                            NonNegative(r.i32[reg()], "list index"));
    return list->Set(index, Value::I32(r.i32[reg()]));
  }
  case Opcode::ListSetI64: {
    STRATA_ASSIGN_OR_RETURN(List * list, ListOperand(r.ref[reg()]));
    STRATA_ASSIGN_OR_RETURN(uint64_t index,
                            NonNegative(r.i32[reg()], "list index"));
    return list->Set(index, Value::I64(r.i64[reg()]));
  }
  case Opcode::ListSetRef: {
    STRATA_ASSIGN_OR_RETURN(List * list, ListOperand(r.ref[reg()]));
    STRATA_ASSIGN_OR_RETURN(uint64_t index,
                            NonNegative(r.i32[reg()], "list index"));
    return list->Set(index, Value::Ref(r.ref[reg()]));
  }

  // --- byte buffers ---
  case Opcode::BufferAlloc: {
    uint16_t d = reg();
    STRATA_ASSIGN_OR_RETURN(uint64_t length,
                            NonNegative(r.i64[reg()], "buffer length"));
    STRATA_ASSIGN_OR_RETURN(r.ref[d], ByteBuffer::Allocate(length));
    return OkStatus();
  }
  case Opcode::BufferLength: {
    uint16_t d = reg();
    STRATA_ASSIGN_OR_RETURN(ByteBuffer * buffer, BufferOperand(r.ref[reg()]));
    r.i64[d] = static_cast<int64_t>(buffer->length());
    return OkStatus();
  }
  case Opcode::BufferLoadI8U: {
    uint16_t d = reg(), b = reg(), o = reg();
    STRATA_ASSIGN_OR_RETURN(uint8_t value,
                            LoadFromBuffer<uint8_t>(r.ref[b], r.i64[o]));
    r.i32[d] = value;
    return OkStatus();
  }
  case Opcode::BufferLoadI32: {
    uint16_t d = reg(), b = reg(), o = reg();
    STRATA_ASSIGN_OR_RETURN(r.i32[d],
                            LoadFromBuffer<int32_t>(r.ref[b], r.i64[o]));
    return OkStatus();
  }
  case Opcode::BufferLoadI64: {
    uint16_t d = reg(), b = reg(), o = reg();
    STRATA_ASSIGN_OR_RETURN(r.i64[d],
                            LoadFromBuffer<int64_t>(r.ref[b], r.i64[o]));
    return OkStatus();
  }
  case Opcode::BufferLoadF32: {
    uint16_t d = reg(), b = reg(), o = reg();
    STRATA_ASSIGN_OR_RETURN(r.f32[d],
                            LoadFromBuffer<float>(r.ref[b], r.i64[o]));
    return OkStatus();
  }
  case Opcode::BufferLoadI8S: {
    uint16_t d = reg(), b = reg(), o = reg();
    STRATA_ASSIGN_OR_RETURN(int8_t value,
                            LoadFromBuffer<int8_t>(r.ref[b], r.i64[o]));
    r.i32[d] = value;
    return OkStatus();
  }
  case Opcode::BufferLoadI16U: {
    uint16_t d = reg(), b = reg(), o = reg();
    STRATA_ASSIGN_OR_RETURN(uint16_t value,
                            LoadFromBuffer<uint16_t>(r.ref[b], r.i64[o]));
    r.i32[d] = value;
    return OkStatus();
  }
  case Opcode::BufferLoadI16S: {
    uint16_t d = reg(), b = reg(), o = reg();
    STRATA_ASSIGN_OR_RETURN(int16_t value,
                            LoadFromBuffer<int16_t>(r.ref[b], r.i64[o]));
    r.i32[d] = value;
    return OkStatus();
  }
  case Opcode::BufferLoadF64: {
    uint16_t d = reg(), b = reg(), o = reg();
    STRATA_ASSIGN_OR_RETURN(r.f64[d],
                            LoadFromBuffer<double>(r.ref[b], r.i64[o]));
    return OkStatus();
  }
  case Opcode::BufferStoreI16: {
    uint16_t b = reg(), o = reg(), v = reg();
    return StoreToBuffer<uint16_t>(r.ref[b], r.i64[o],
                                   static_cast<uint16_t>(r.i32[v]));
  }
  case Opcode::BufferStoreF64: {
    uint16_t b = reg(), o = reg(), v = reg();
    return StoreToBuffer<double>(r.ref[b], r.i64[o], r.f64[v]);
  }
  case Opcode::BufferStoreI8: {
    uint16_t b = reg(), o = reg(), v = reg();
    return StoreToBuffer<uint8_t>(r.ref[b], r.i64[o],
                                  static_cast<uint8_t>(r.i32[v]));
  }
  case Opcode::BufferStoreI32: {
    uint16_t b = reg(), o = reg(), v = reg();
    return StoreToBuffer<int32_t>(r.ref[b], r.i64[o], r.i32[v]);
  }
  case Opcode::BufferStoreI64: {
    uint16_t b = reg(), o = reg(), v = reg();
    return StoreToBuffer<int64_t>(r.ref[b], r.i64[o], r.i64[v]);
  }
  case Opcode::BufferStoreF32: {
    uint16_t b = reg(), o = reg(), v = reg();
    return StoreToBuffer<float>(r.ref[b], r.i64[o], r.f32[v]);
  }
  case Opcode::BufferCopy: {
    uint16_t t = reg(), to = reg(), s = reg(), so = reg(), n = reg();
    return CopyBuffer(r.ref[t], r.i64[to], r.ref[s], r.i64[so], r.i64[n]);
  }
  default:
    return InternalError("opcode ", static_cast<int>(opcode),
                         " has no implementation");
  }
}

} // namespace strata::vm
