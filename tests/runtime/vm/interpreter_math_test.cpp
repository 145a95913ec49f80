// Semantics of the math, cast, bitcast and narrow buffer ops of bytecode
// version 2 (what VMVX executables use), checked against the C++ library.
#include <bit>
#include <cmath>
#include <limits>

#include "strata/vm/scalar_ops.h"
#include "vm_test_util.h"

namespace strata::vm::testing {
namespace {

Value RunOk(Opcode opcode, std::vector<Value> arguments,
            std::optional<uint32_t> function = {}) {
  Result<Value> result = RunSingleOp(opcode, std::move(arguments), function);
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? std::move(result).value() : Value();
}

uint32_t Id(UnaryMathFunction function) {
  return static_cast<uint32_t>(function);
}
uint32_t Id(BinaryMathFunction function) {
  return static_cast<uint32_t>(function);
}

TEST(InterpreterMathTest, UnaryFunctionsF32) {
  const float x = 0.625f;
  EXPECT_FLOAT_EQ(
      RunOk(Opcode::MathF32, {Value::F32(x)}, Id(UnaryMathFunction::Exp)).f32(),
      std::exp(x));
  EXPECT_FLOAT_EQ(
      RunOk(Opcode::MathF32, {Value::F32(x)}, Id(UnaryMathFunction::Log)).f32(),
      std::log(x));
  EXPECT_FLOAT_EQ(
      RunOk(Opcode::MathF32, {Value::F32(x)}, Id(UnaryMathFunction::Tanh))
          .f32(),
      std::tanh(x));
  EXPECT_FLOAT_EQ(
      RunOk(Opcode::MathF32, {Value::F32(x)}, Id(UnaryMathFunction::Erf)).f32(),
      std::erf(x));
  EXPECT_EQ(
      RunOk(Opcode::MathF32, {Value::F32(-2.5f)}, Id(UnaryMathFunction::Floor))
          .f32(),
      -3.0f);
  EXPECT_EQ(
      RunOk(Opcode::MathF32, {Value::F32(-2.5f)}, Id(UnaryMathFunction::Round))
          .f32(),
      -3.0f); // halfway away from zero
  EXPECT_EQ(RunOk(Opcode::MathF32, {Value::F32(-2.5f)},
                  Id(UnaryMathFunction::RoundEven))
                .f32(),
            -2.0f); // halfway to even
  EXPECT_TRUE(std::isnan(
      RunOk(Opcode::MathF32, {Value::F32(-1.0f)}, Id(UnaryMathFunction::Log))
          .f32()));
}

TEST(InterpreterMathTest, UnaryFunctionsF64KeepDoublePrecision) {
  const double x = 0.1;
  EXPECT_DOUBLE_EQ(
      RunOk(Opcode::MathF64, {Value::F64(x)}, Id(UnaryMathFunction::Exp)).f64(),
      std::exp(x));
  EXPECT_DOUBLE_EQ(
      RunOk(Opcode::MathF64, {Value::F64(x)}, Id(UnaryMathFunction::Sin)).f64(),
      std::sin(x));
}

TEST(InterpreterMathTest, BinaryFunctionsAndFma) {
  EXPECT_EQ(RunOk(Opcode::Math2F32, {Value::F32(2.0f), Value::F32(10.0f)},
                  Id(BinaryMathFunction::Pow))
                .f32(),
            1024.0f);
  EXPECT_EQ(RunOk(Opcode::Math2F64, {Value::F64(1.0), Value::F64(-0.0)},
                  Id(BinaryMathFunction::CopySign))
                .f64(),
            -1.0);
  EXPECT_EQ(RunOk(Opcode::Math2F32, {Value::F32(7.5f), Value::F32(2.0f)},
                  Id(BinaryMathFunction::Fmod))
                .f32(),
            1.5f);
  EXPECT_EQ(RunOk(Opcode::FmaF32,
                  {Value::F32(2.0f), Value::F32(3.0f), Value::F32(1.0f)})
                .f32(),
            7.0f);
}

TEST(InterpreterMathTest, Casts) {
  EXPECT_EQ(RunOk(Opcode::CastSI64F32, {Value::I64(-3)}).f32(), -3.0f);
  EXPECT_EQ(RunOk(Opcode::CastUI64F32, {Value::I64(-1)}).f32(),
            18446744073709551616.0f);
  EXPECT_EQ(RunOk(Opcode::CastUI64F64, {Value::I64(int64_t(1) << 63)}).f64(),
            9223372036854775808.0);
  EXPECT_EQ(RunOk(Opcode::CastF32SI64, {Value::F32(-2.75f)}).i64(), -2);
  EXPECT_EQ(RunOk(Opcode::CastF32SI64, {Value::F32(1e30f)}).i64(),
            std::numeric_limits<int64_t>::max()); // saturates
  EXPECT_EQ(RunOk(Opcode::CastF32UI64, {Value::F32(-5.0f)}).i64(), 0);
  EXPECT_EQ(RunOk(Opcode::CastF64UI64, {Value::F64(1e300)}).i64(), -1);
  EXPECT_EQ(RunOk(Opcode::CastF64UI64, {Value::F64(std::nan(""))}).i64(), 0);
}

TEST(InterpreterMathTest, Bitcasts) {
  EXPECT_EQ(RunOk(Opcode::BitcastF32I32, {Value::F32(1.0f)}).i32(), 0x3F800000);
  EXPECT_EQ(RunOk(Opcode::BitcastI32F32, {Value::I32(0x40000000)}).f32(), 2.0f);
  EXPECT_EQ(RunOk(Opcode::BitcastF64I64, {Value::F64(-0.0)}).i64(),
            std::numeric_limits<int64_t>::min());
  EXPECT_EQ(
      RunOk(Opcode::BitcastI64F64, {Value::I64(0x3FF0000000000000)}).f64(),
      1.0);
}

// Reference conversions through the compiler's _Float16, independent of
// the interpreter's bit manipulation.
TEST(InterpreterMathTest, HalfConversionsMatchTheCompiler) {
  // Every 7th pattern: all exponents, subnormals, infinities and NaNs.
  for (uint32_t bits = 0; bits < 0x10000; bits += 7) {
    _Float16 half = std::bit_cast<_Float16>(static_cast<uint16_t>(bits));
    float widened =
        RunOk(Opcode::ExtF16F32, {Value::I32(static_cast<int32_t>(bits))})
            .f32();
    if (std::isnan(static_cast<float>(half))) {
      EXPECT_TRUE(std::isnan(widened)) << bits;
      continue;
    }
    ASSERT_EQ(std::bit_cast<uint32_t>(widened),
              std::bit_cast<uint32_t>(static_cast<float>(half)))
        << bits;
  }
  // Narrowing: every rounding boundary region, subnormals, overflow.
  const float samples[] = {0.0f,     -0.0f,         1.0f,     -2.5f,
                           65504.0f, 65519.99f,     65520.0f, 1e-8f,
                           2.98e-8f, 2.9802322e-8f, 5.96e-8f, 6.1e-5f,
                           0.1f,     3.14159265f,   1e10f,    -1e-7f};
  for (float sample : samples) {
    uint16_t expected = std::bit_cast<uint16_t>(static_cast<_Float16>(sample));
    EXPECT_EQ(RunOk(Opcode::TruncF32F16, {Value::F32(sample)}).i32(), expected)
        << sample;
  }
  for (uint32_t i = 0; i < 5000; ++i) {
    // A sweep over float bit patterns covering every half exponent.
    float sample = std::bit_cast<float>(0x33000000u + i * 0x27CEDu);
    uint16_t expected = std::bit_cast<uint16_t>(static_cast<_Float16>(sample));
    ASSERT_EQ(RunOk(Opcode::TruncF32F16, {Value::F32(sample)}).i32(), expected)
        << sample;
  }
  EXPECT_TRUE(std::isnan(HalfToFloat(static_cast<uint16_t>(
      RunOk(Opcode::TruncF32F16, {Value::F32(std::nanf(""))}).i32()))));
}

TEST(InterpreterMathTest, UnknownMathFunctionIsRejectedAtLoad) {
  Result<Value> result =
      RunSingleOp(Opcode::MathF32, {Value::F32(1.0f)}, kUnaryMathFunctionCount);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(std::string(result.status().message()),
              ::testing::HasSubstr("unknown unary math function"));
}

TEST(InterpreterMathTest, Version1ModulesCannotUseVersion2Ops) {
  ModuleBuilder builder("old");
  builder.bytecode_version = 1;
  FunctionBuilder &f = builder.AddFunction("f", "0f_f", {.f32 = 2});
  f.Op(Opcode::MathF32).Reg(1).Reg(0).MathFunction(0);
  f.Op(Opcode::Return).List({MakeTypedRegister(RegisterBank::kF32, 1)});
  builder.AddExport("f", f.ordinal());
  Result<std::vector<Value>> results =
      RunModule(builder, "f", {Value::F32(1.0f)});
  ASSERT_FALSE(results.ok());
  EXPECT_THAT(std::string(results.status().message()),
              ::testing::HasSubstr("needs bytecode version 2"));
}

} // namespace
} // namespace strata::vm::testing
