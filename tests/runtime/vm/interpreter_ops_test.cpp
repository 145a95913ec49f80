// Semantics of the scalar ops, one instruction at a time.
#include <cmath>
#include <limits>

#include "vm_test_util.h"

namespace strata::vm::testing {
namespace {

Value RunOk(Opcode opcode, std::vector<Value> arguments) {
  Result<Value> result = RunSingleOp(opcode, std::move(arguments));
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? std::move(result).value() : Value();
}

int32_t I32Op(Opcode opcode, int32_t a, int32_t b) {
  return RunOk(opcode, {Value::I32(a), Value::I32(b)}).i32();
}
int64_t I64Op(Opcode opcode, int64_t a, int64_t b) {
  return RunOk(opcode, {Value::I64(a), Value::I64(b)}).i64();
}
float F32Op(Opcode opcode, float a, float b) {
  return RunOk(opcode, {Value::F32(a), Value::F32(b)}).f32();
}
double F64Op(Opcode opcode, double a, double b) {
  return RunOk(opcode, {Value::F64(a), Value::F64(b)}).f64();
}

constexpr int32_t kMinI32 = std::numeric_limits<int32_t>::min();
constexpr int32_t kMaxI32 = std::numeric_limits<int32_t>::max();
constexpr int64_t kMinI64 = std::numeric_limits<int64_t>::min();
constexpr int64_t kMaxI64 = std::numeric_limits<int64_t>::max();

TEST(InterpreterOpsTest, I32Arithmetic) {
  EXPECT_EQ(I32Op(Opcode::AddI32, 2, 3), 5);
  EXPECT_EQ(I32Op(Opcode::AddI32, kMaxI32, 1), kMinI32); // wraps
  EXPECT_EQ(I32Op(Opcode::SubI32, 2, 3), -1);
  EXPECT_EQ(I32Op(Opcode::MulI32, -4, 6), -24);
  EXPECT_EQ(I32Op(Opcode::MulI32, 0x10000, 0x10000), 0); // wraps
  EXPECT_EQ(I32Op(Opcode::DivI32S, -7, 2), -3);
  EXPECT_EQ(I32Op(Opcode::DivI32S, kMinI32, -1), kMinI32);
  EXPECT_EQ(I32Op(Opcode::DivI32U, -2, 2), 0x7FFFFFFF);
  EXPECT_EQ(I32Op(Opcode::RemI32S, -7, 2), -1);
  EXPECT_EQ(I32Op(Opcode::RemI32S, kMinI32, -1), 0);
  EXPECT_EQ(I32Op(Opcode::RemI32U, -1, 10), 5); // 4294967295 % 10
  EXPECT_EQ(I32Op(Opcode::AndI32, 0b1100, 0b1010), 0b1000);
  EXPECT_EQ(I32Op(Opcode::OrI32, 0b1100, 0b1010), 0b1110);
  EXPECT_EQ(I32Op(Opcode::XorI32, 0b1100, 0b1010), 0b0110);
  EXPECT_EQ(I32Op(Opcode::ShlI32, 1, 31), kMinI32);
  EXPECT_EQ(I32Op(Opcode::ShlI32, 1, 33), 2); // amount modulo 32
  EXPECT_EQ(I32Op(Opcode::ShrI32S, -16, 2), -4);
  EXPECT_EQ(I32Op(Opcode::ShrI32U, -16, 28), 15);
  EXPECT_EQ(I32Op(Opcode::MinI32S, -3, 2), -3);
  EXPECT_EQ(I32Op(Opcode::MaxI32S, -3, 2), 2);
  EXPECT_EQ(RunOk(Opcode::NotI32, {Value::I32(0)}).i32(), -1);
}

TEST(InterpreterOpsTest, I64Arithmetic) {
  EXPECT_EQ(I64Op(Opcode::AddI64, kMaxI64, 1), kMinI64);
  EXPECT_EQ(I64Op(Opcode::SubI64, 10, 20), -10);
  EXPECT_EQ(I64Op(Opcode::MulI64, int64_t(1) << 40, 1 << 10), int64_t(1) << 50);
  EXPECT_EQ(I64Op(Opcode::DivI64S, -9, 4), -2);
  EXPECT_EQ(I64Op(Opcode::DivI64S, kMinI64, -1), kMinI64);
  EXPECT_EQ(I64Op(Opcode::DivI64U, -1, int64_t(1) << 32), 0xFFFFFFFF);
  EXPECT_EQ(I64Op(Opcode::RemI64S, -9, 4), -1);
  EXPECT_EQ(I64Op(Opcode::RemI64U, -1, 16), 15);
  EXPECT_EQ(I64Op(Opcode::AndI64, 6, 3), 2);
  EXPECT_EQ(I64Op(Opcode::OrI64, 6, 3), 7);
  EXPECT_EQ(I64Op(Opcode::XorI64, 6, 3), 5);
  EXPECT_EQ(I64Op(Opcode::ShlI64, 1, 63), kMinI64);
  EXPECT_EQ(I64Op(Opcode::ShlI64, 1, 64), 1);
  EXPECT_EQ(I64Op(Opcode::ShrI64S, kMinI64, 63), -1);
  EXPECT_EQ(I64Op(Opcode::ShrI64U, kMinI64, 63), 1);
  EXPECT_EQ(I64Op(Opcode::MinI64S, -1, 1), -1);
  EXPECT_EQ(I64Op(Opcode::MaxI64S, -1, 1), 1);
  EXPECT_EQ(RunOk(Opcode::NotI64, {Value::I64(-1)}).i64(), 0);
}

TEST(InterpreterOpsTest, DivisionByZeroIsAnError) {
  for (Opcode opcode :
       {Opcode::DivI32S, Opcode::DivI32U, Opcode::RemI32S, Opcode::RemI32U}) {
    Result<Value> result = RunSingleOp(opcode, {Value::I32(1), Value::I32(0)});
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find("division by zero"),
              std::string_view::npos);
  }
  for (Opcode opcode :
       {Opcode::DivI64S, Opcode::DivI64U, Opcode::RemI64S, Opcode::RemI64U}) {
    EXPECT_FALSE(RunSingleOp(opcode, {Value::I64(1), Value::I64(0)}).ok());
  }
}

TEST(InterpreterOpsTest, FloatArithmetic) {
  EXPECT_FLOAT_EQ(F32Op(Opcode::AddF32, 1.5f, 2.25f), 3.75f);
  EXPECT_FLOAT_EQ(F32Op(Opcode::SubF32, 1.5f, 2.25f), -0.75f);
  EXPECT_FLOAT_EQ(F32Op(Opcode::MulF32, 1.5f, -2.0f), -3.0f);
  EXPECT_FLOAT_EQ(F32Op(Opcode::DivF32, 1.0f, 4.0f), 0.25f);
  EXPECT_TRUE(std::isinf(F32Op(Opcode::DivF32, 1.0f, 0.0f)));
  EXPECT_FLOAT_EQ(RunOk(Opcode::NegF32, {Value::F32(2.0f)}).f32(), -2.0f);
  EXPECT_FLOAT_EQ(RunOk(Opcode::AbsF32, {Value::F32(-2.0f)}).f32(), 2.0f);
  EXPECT_FLOAT_EQ(RunOk(Opcode::SqrtF32, {Value::F32(9.0f)}).f32(), 3.0f);
  EXPECT_FLOAT_EQ(F32Op(Opcode::MinF32, 1.0f, -1.0f), -1.0f);
  EXPECT_FLOAT_EQ(F32Op(Opcode::MaxF32, 1.0f, -1.0f), 1.0f);
  EXPECT_TRUE(std::isnan(F32Op(Opcode::MinF32, NAN, 1.0f)));
  EXPECT_TRUE(std::isnan(F32Op(Opcode::MaxF32, 1.0f, NAN)));
  EXPECT_TRUE(std::signbit(F32Op(Opcode::MinF32, 0.0f, -0.0f)));
  EXPECT_FALSE(std::signbit(F32Op(Opcode::MaxF32, -0.0f, 0.0f)));

  EXPECT_DOUBLE_EQ(F64Op(Opcode::AddF64, 0.5, 0.25), 0.75);
  EXPECT_DOUBLE_EQ(F64Op(Opcode::SubF64, 0.5, 0.25), 0.25);
  EXPECT_DOUBLE_EQ(F64Op(Opcode::MulF64, 0.5, 0.25), 0.125);
  EXPECT_DOUBLE_EQ(F64Op(Opcode::DivF64, 0.5, 0.25), 2.0);
  EXPECT_DOUBLE_EQ(RunOk(Opcode::NegF64, {Value::F64(1.0)}).f64(), -1.0);
  EXPECT_DOUBLE_EQ(RunOk(Opcode::AbsF64, {Value::F64(-1.0)}).f64(), 1.0);
  EXPECT_DOUBLE_EQ(RunOk(Opcode::SqrtF64, {Value::F64(2.0)}).f64(),
                   std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(F64Op(Opcode::MinF64, 3.0, 2.0), 2.0);
  EXPECT_DOUBLE_EQ(F64Op(Opcode::MaxF64, 3.0, 2.0), 3.0);
  EXPECT_TRUE(std::isnan(F64Op(Opcode::MaxF64, NAN, 2.0)));
}

TEST(InterpreterOpsTest, Comparisons) {
  EXPECT_EQ(I32Op(Opcode::CmpEqI32, 3, 3), 1);
  EXPECT_EQ(I32Op(Opcode::CmpNeI32, 3, 3), 0);
  EXPECT_EQ(I32Op(Opcode::CmpLtI32S, -1, 0), 1);
  EXPECT_EQ(I32Op(Opcode::CmpLtI32U, -1, 0), 0);
  EXPECT_EQ(I32Op(Opcode::CmpLeI32S, 2, 2), 1);
  EXPECT_EQ(I32Op(Opcode::CmpLeI32U, -1, 2), 0);
  EXPECT_EQ(RunOk(Opcode::CmpNzI32, {Value::I32(7)}).i32(), 1);
  EXPECT_EQ(RunOk(Opcode::CmpNzI32, {Value::I32(0)}).i32(), 0);

  auto i64_compare = [](Opcode opcode, int64_t a, int64_t b) {
    return RunOk(opcode, {Value::I64(a), Value::I64(b)}).i32();
  };
  EXPECT_EQ(i64_compare(Opcode::CmpEqI64, kMinI64, kMinI64), 1);
  EXPECT_EQ(i64_compare(Opcode::CmpNeI64, 1, 2), 1);
  EXPECT_EQ(i64_compare(Opcode::CmpLtI64S, -1, 0), 1);
  EXPECT_EQ(i64_compare(Opcode::CmpLtI64U, -1, 0), 0);
  EXPECT_EQ(i64_compare(Opcode::CmpLeI64S, 5, 4), 0);
  EXPECT_EQ(i64_compare(Opcode::CmpLeI64U, 4, -5), 1);

  auto f32_compare = [](Opcode opcode, float a, float b) {
    return RunOk(opcode, {Value::F32(a), Value::F32(b)}).i32();
  };
  EXPECT_EQ(f32_compare(Opcode::CmpEqF32, 1.0f, 1.0f), 1);
  EXPECT_EQ(f32_compare(Opcode::CmpEqF32, NAN, NAN), 0);
  EXPECT_EQ(f32_compare(Opcode::CmpLtF32, 1.0f, 2.0f), 1);
  EXPECT_EQ(f32_compare(Opcode::CmpLtF32, NAN, 2.0f), 0);
  EXPECT_EQ(f32_compare(Opcode::CmpLeF32, 2.0f, 2.0f), 1);

  auto f64_compare = [](Opcode opcode, double a, double b) {
    return RunOk(opcode, {Value::F64(a), Value::F64(b)}).i32();
  };
  EXPECT_EQ(f64_compare(Opcode::CmpEqF64, 0.0, -0.0), 1);
  EXPECT_EQ(f64_compare(Opcode::CmpLtF64, 3.0, 2.0), 0);
  EXPECT_EQ(f64_compare(Opcode::CmpLeF64, 2.0, NAN), 0);
}

TEST(InterpreterOpsTest, RefComparisonsAndSelect) {
  RefPtr<ByteBuffer> a = ByteBuffer::FromString("a");
  RefPtr<ByteBuffer> b = ByteBuffer::FromString("b");
  EXPECT_EQ(RunOk(Opcode::CmpEqRef, {Value::Ref(a), Value::Ref(a)}).i32(), 1);
  EXPECT_EQ(RunOk(Opcode::CmpEqRef, {Value::Ref(a), Value::Ref(b)}).i32(), 0);
  EXPECT_EQ(RunOk(Opcode::CmpNzRef, {Value::Ref(a)}).i32(), 1);
  EXPECT_EQ(RunOk(Opcode::CmpNzRef, {Value::NullRef()}).i32(), 0);

  Value chosen =
      RunOk(Opcode::SelectRef, {Value::I32(0), Value::Ref(a), Value::Ref(b)});
  EXPECT_EQ(chosen.ref(), b.get());
  EXPECT_EQ(
      RunOk(Opcode::SelectI32, {Value::I32(1), Value::I32(10), Value::I32(20)})
          .i32(),
      10);
  EXPECT_EQ(
      RunOk(Opcode::SelectI64, {Value::I32(0), Value::I64(10), Value::I64(20)})
          .i64(),
      20);
  EXPECT_FLOAT_EQ(RunOk(Opcode::SelectF32,
                        {Value::I32(5), Value::F32(1.f), Value::F32(2.f)})
                      .f32(),
                  1.f);
  EXPECT_DOUBLE_EQ(RunOk(Opcode::SelectF64,
                         {Value::I32(0), Value::F64(1.0), Value::F64(2.0)})
                       .f64(),
                   2.0);
  // The module's frame released its references on return.
  chosen = Value();
  EXPECT_EQ(a->ref_count(), 1);
  EXPECT_EQ(b->ref_count(), 1);
}

TEST(InterpreterOpsTest, Moves) {
  EXPECT_EQ(RunOk(Opcode::MovI32, {Value::I32(-5)}).i32(), -5);
  EXPECT_EQ(RunOk(Opcode::MovI64, {Value::I64(kMinI64)}).i64(), kMinI64);
  EXPECT_FLOAT_EQ(RunOk(Opcode::MovF32, {Value::F32(0.5f)}).f32(), 0.5f);
  EXPECT_DOUBLE_EQ(RunOk(Opcode::MovF64, {Value::F64(0.5)}).f64(), 0.5);
  RefPtr<ByteBuffer> buffer = ByteBuffer::FromString("x");
  EXPECT_EQ(RunOk(Opcode::MovRef, {Value::Ref(buffer)}).ref(), buffer.get());
}

TEST(InterpreterOpsTest, Casts) {
  EXPECT_EQ(RunOk(Opcode::TruncI64I32, {Value::I64(0x1'0000'0005)}).i32(), 5);
  EXPECT_EQ(RunOk(Opcode::TruncI64I32, {Value::I64(-1)}).i32(), -1);
  EXPECT_EQ(RunOk(Opcode::ExtI32I64S, {Value::I32(-1)}).i64(), -1);
  EXPECT_EQ(RunOk(Opcode::ExtI32I64U, {Value::I32(-1)}).i64(), 0xFFFFFFFF);
  EXPECT_FLOAT_EQ(RunOk(Opcode::CastSI32F32, {Value::I32(-3)}).f32(), -3.0f);
  EXPECT_EQ(RunOk(Opcode::CastF32SI32, {Value::F32(-3.9f)}).i32(), -3);
  EXPECT_EQ(RunOk(Opcode::CastF32SI32, {Value::F32(1e20f)}).i32(), kMaxI32);
  EXPECT_EQ(RunOk(Opcode::CastF32SI32, {Value::F32(-1e20f)}).i32(), kMinI32);
  EXPECT_EQ(RunOk(Opcode::CastF32SI32, {Value::F32(NAN)}).i32(), 0);
  EXPECT_DOUBLE_EQ(RunOk(Opcode::CastSI64F64, {Value::I64(-7)}).f64(), -7.0);
  EXPECT_EQ(RunOk(Opcode::CastF64SI64, {Value::F64(2.99)}).i64(), 2);
  EXPECT_EQ(RunOk(Opcode::CastF64SI64, {Value::F64(1e300)}).i64(), kMaxI64);
  EXPECT_DOUBLE_EQ(RunOk(Opcode::ExtF32F64, {Value::F32(0.5f)}).f64(), 0.5);
  EXPECT_FLOAT_EQ(RunOk(Opcode::TruncF64F32, {Value::F64(0.25)}).f32(), 0.25f);
}

TEST(InterpreterOpsTest, Constants) {
  ModuleBuilder builder("consts");
  FunctionBuilder &function = builder.AddFunction(
      "f", "0v_iIfFr", {.i32 = 1, .i64 = 1, .f32 = 1, .f64 = 1, .ref = 1});
  function.Op(Opcode::ConstI32).Reg(0).I32(-123);
  function.Op(Opcode::ConstI64).Reg(0).I64(int64_t(1) << 40);
  function.Op(Opcode::ConstF32).Reg(0).F32(1.25f);
  function.Op(Opcode::ConstF64).Reg(0).F64(-2.5);
  function.Op(Opcode::ConstRefZero).Reg(0);
  function.Op(Opcode::Return)
      .List({RegI32(0), RegI64(0), RegF32(0), RegF64(0), RegRef(0)});
  builder.AddExport("f", function.ordinal());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Value> results,
                              RunModule(builder, "f", {}));
  ASSERT_EQ(results.size(), 5u);
  EXPECT_EQ(results[0].i32(), -123);
  EXPECT_EQ(results[1].i64(), int64_t(1) << 40);
  EXPECT_FLOAT_EQ(results[2].f32(), 1.25f);
  EXPECT_DOUBLE_EQ(results[3].f64(), -2.5);
  EXPECT_TRUE(results[4].is_ref());
  EXPECT_EQ(results[4].ref(), nullptr);
}

TEST(InterpreterOpsTest, DestinationMayAliasSource) {
  ModuleBuilder builder("alias");
  FunctionBuilder &function = builder.AddFunction("f", "0i_i", {.i32 = 1});
  function.Op(Opcode::AddI32).Reg(0).Reg(0).Reg(0);
  function.Op(Opcode::MulI32).Reg(0).Reg(0).Reg(0);
  function.Op(Opcode::Return).List({RegI32(0)});
  builder.AddExport("f", function.ordinal());
  STRATA_ASSERT_OK_AND_ASSIGN(std::vector<Value> results,
                              RunModule(builder, "f", {Value::I32(3)}));
  EXPECT_EQ(results[0].i32(), 36);
}

} // namespace
} // namespace strata::vm::testing
