#include "strata/vm/scalar_ext_ops.h"

#include <bit>
#include <cmath>

#include "strata/vm/bytecode_decoder.h"
#include "strata/vm/scalar_ops.h"
#include "strata_runtime_config.h"

namespace strata::vm {
namespace {

template <typename Float> Float UnaryMath(uint32_t function, Float value) {
  switch (static_cast<UnaryMathFunction>(function)) {
#define STRATA_VM_MATH_UNARY(name, text, function)                             \
  case UnaryMathFunction::name:                                                \
    return function(value);
#include "strata/vm/math_functions.def"
  default:
    return std::numeric_limits<Float>::quiet_NaN();
  }
}

template <typename Float>
Float BinaryMath(uint32_t function, Float a, Float b) {
  switch (static_cast<BinaryMathFunction>(function)) {
#define STRATA_VM_MATH_BINARY(name, text, function)                            \
  case BinaryMathFunction::name:                                               \
    return function(a, b);
#include "strata/vm/math_functions.def"
  default:
    return std::numeric_limits<Float>::quiet_NaN();
  }
}

// Saturating float -> unsigned 64-bit conversion (NaN and negatives -> 0),
// the unsigned counterpart of SaturatingCast.
template <typename Float> uint64_t SaturatingCastU64(Float value) {
  if (std::isnan(value) || value <= Float(0))
    return 0;
  constexpr Float kLimit = static_cast<Float>(18446744073709551616.0);
  if (value >= kLimit)
    return UINT64_MAX;
  return static_cast<uint64_t>(value);
}

} // namespace

Status ExecuteScalarExtOp(Opcode opcode, const uint8_t *code, uint32_t *pc,
                          FrameRegisters &r) {
  auto u16 = [&]() {
    uint16_t value = LoadU16(code + *pc);
    *pc += 2;
    return value;
  };
  auto u32 = [&]() {
    uint32_t value = LoadU32(code + *pc);
    *pc += 4;
    return value;
  };
  switch (opcode) {
  case Opcode::MathF32: {
    uint16_t d = u16(), x = u16();
    r.f32[d] = UnaryMath<float>(u32(), r.f32[x]);
    return OkStatus();
  }
#if STRATA_VM_F64_MATH
  case Opcode::MathF64: {
    uint16_t d = u16(), x = u16();
    r.f64[d] = UnaryMath<double>(u32(), r.f64[x]);
    return OkStatus();
  }
#endif
  case Opcode::Math2F32: {
    uint16_t d = u16(), x = u16(), y = u16();
    r.f32[d] = BinaryMath<float>(u32(), r.f32[x], r.f32[y]);
    return OkStatus();
  }
#if STRATA_VM_F64_MATH
  case Opcode::Math2F64: {
    uint16_t d = u16(), x = u16(), y = u16();
    r.f64[d] = BinaryMath<double>(u32(), r.f64[x], r.f64[y]);
    return OkStatus();
  }
#endif
  case Opcode::FmaF32: {
    uint16_t d = u16(), a = u16(), b = u16(), c = u16();
    r.f32[d] = std::fma(r.f32[a], r.f32[b], r.f32[c]);
    return OkStatus();
  }
  case Opcode::FmaF64: {
    uint16_t d = u16(), a = u16(), b = u16(), c = u16();
    r.f64[d] = std::fma(r.f64[a], r.f64[b], r.f64[c]);
    return OkStatus();
  }
  case Opcode::CastSI64F32: {
    uint16_t d = u16(), x = u16();
    r.f32[d] = static_cast<float>(r.i64[x]);
    return OkStatus();
  }
  case Opcode::CastUI64F32: {
    uint16_t d = u16(), x = u16();
    r.f32[d] = static_cast<float>(static_cast<uint64_t>(r.i64[x]));
    return OkStatus();
  }
  case Opcode::CastUI64F64: {
    uint16_t d = u16(), x = u16();
    r.f64[d] = static_cast<double>(static_cast<uint64_t>(r.i64[x]));
    return OkStatus();
  }
  case Opcode::CastF32SI64: {
    uint16_t d = u16(), x = u16();
    r.i64[d] = SaturatingCast<int64_t, float>(r.f32[x]);
    return OkStatus();
  }
  case Opcode::CastF32UI64: {
    uint16_t d = u16(), x = u16();
    r.i64[d] = static_cast<int64_t>(SaturatingCastU64(r.f32[x]));
    return OkStatus();
  }
  case Opcode::CastF64UI64: {
    uint16_t d = u16(), x = u16();
    r.i64[d] = static_cast<int64_t>(SaturatingCastU64(r.f64[x]));
    return OkStatus();
  }
  case Opcode::BitcastF32I32: {
    uint16_t d = u16(), x = u16();
    r.i32[d] = std::bit_cast<int32_t>(r.f32[x]);
    return OkStatus();
  }
  case Opcode::BitcastI32F32: {
    uint16_t d = u16(), x = u16();
    r.f32[d] = std::bit_cast<float>(r.i32[x]);
    return OkStatus();
  }
  case Opcode::BitcastF64I64: {
    uint16_t d = u16(), x = u16();
    r.i64[d] = std::bit_cast<int64_t>(r.f64[x]);
    return OkStatus();
  }
  case Opcode::BitcastI64F64: {
    uint16_t d = u16(), x = u16();
    r.f64[d] = std::bit_cast<double>(r.i64[x]);
    return OkStatus();
  }
  case Opcode::ExtF16F32: {
    uint16_t d = u16(), x = u16();
    r.f32[d] = HalfToFloat(static_cast<uint16_t>(r.i32[x]));
    return OkStatus();
  }
  case Opcode::TruncF32F16: {
    uint16_t d = u16(), x = u16();
    r.i32[d] = FloatToHalf(r.f32[x]);
    return OkStatus();
  }
  default:
    return InternalError("opcode ", static_cast<int>(opcode),
                         " is not a math or cast op");
  }
}

} // namespace strata::vm
