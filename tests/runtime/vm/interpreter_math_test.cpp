// Semantics of the math, cast, bitcast and narrow buffer ops of bytecode
// version 2 (what VMVX executables use), checked against the C++ library.
#include <bit>
#include <cmath>
#include <limits>

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
