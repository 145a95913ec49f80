#include "strata/vm/signature.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace strata::vm {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

Signature ParseOk(std::string_view text) {
  Result<Signature> signature = Signature::Parse(text);
  EXPECT_TRUE(signature.ok()) << text << ": " << signature.status().ToString();
  return signature.ok() ? std::move(signature).value() : Signature();
}

std::vector<Value> Values(std::initializer_list<Value> values) {
  return std::vector<Value>(values);
}

std::string ParseError(std::string_view text) {
  Result<Signature> signature = Signature::Parse(text);
  EXPECT_FALSE(signature.ok()) << text;
  return signature.ok() ? "" : std::string(signature.status().message());
}

TEST(SignatureTest, ParsesSimpleSignatures) {
  Signature signature = ParseOk("0rr_r");
  EXPECT_EQ(signature.calling_convention(), "0rr_r");
  EXPECT_THAT(signature.argument_types(),
              ElementsAre(ValueType::kRef, ValueType::kRef));
  EXPECT_THAT(signature.result_types(), ElementsAre(ValueType::kRef));
  EXPECT_FALSE(signature.is_variadic());

  Signature all = ParseOk("0iIfFr_FfIi");
  EXPECT_THAT(all.argument_types(),
              ElementsAre(ValueType::kI32, ValueType::kI64, ValueType::kF32,
                          ValueType::kF64, ValueType::kRef));
  EXPECT_EQ(all.ToDisplayString(),
            "(i32, i64, f32, f64, ref) -> (f64, f32, i64, i32)");
}

TEST(SignatureTest, VoidMeansNone) {
  Signature none = ParseOk("0v_v");
  EXPECT_TRUE(none.arguments().empty());
  EXPECT_TRUE(none.results().empty());
  EXPECT_EQ(none, ParseOk("0_"));
  EXPECT_EQ(ParseOk("0v_i"), ParseOk("0_i"));
  EXPECT_FALSE(ParseOk("0v_i") == ParseOk("0i_i"));
  EXPECT_EQ(none.ToDisplayString(), "() -> ()");
}

TEST(SignatureTest, ParsesVariadicSegments) {
  Signature signature = ParseOk("0rIIiiCID_r");
  EXPECT_TRUE(signature.is_variadic());
  EXPECT_EQ(signature.variadic_segment_count(), 1u);
  ASSERT_EQ(signature.arguments().size(), 6u);
  EXPECT_TRUE(signature.arguments()[5].is_variadic());
  EXPECT_THAT(signature.arguments()[5].tuple_types,
              ElementsAre(ValueType::kI64));
  EXPECT_TRUE(signature.argument_types().empty());
  EXPECT_EQ(signature.ToDisplayString(),
            "(ref, i64, i64, i32, i32, [i64]...) -> (ref)");

  Signature dispatch = ParseOk("0rriiiiICiDCrIID_v");
  EXPECT_EQ(dispatch.variadic_segment_count(), 2u);
  EXPECT_THAT(dispatch.arguments().back().tuple_types,
              ElementsAre(ValueType::kRef, ValueType::kI64, ValueType::kI64));
}

TEST(SignatureTest, RejectsMalformedSignatures) {
  EXPECT_THAT(ParseError(""), HasSubstr("empty"));
  EXPECT_THAT(ParseError("1i_i"), HasSubstr("unsupported version '1'"));
  EXPECT_THAT(ParseError("0ii"), HasSubstr("missing '_'"));
  EXPECT_THAT(ParseError("0i_i_i"), HasSubstr("more than one '_'"));
  EXPECT_THAT(ParseError("0x_i"), HasSubstr("unexpected character 'x'"));
  EXPECT_THAT(ParseError("0iv_i"), HasSubstr("'v' must stand alone"));
  EXPECT_THAT(ParseError("0Ci_v"), HasSubstr("without closing 'D'"));
  EXPECT_THAT(ParseError("0CD_v"), HasSubstr("empty variadic segment"));
  EXPECT_THAT(ParseError("0CCiDD_v"), HasSubstr("in a variadic segment"));
  EXPECT_THAT(ParseError("0v_CiD"), HasSubstr("results cannot be variadic"));
  EXPECT_THAT(ParseError("0D_v"), HasSubstr("unexpected character 'D'"));
}

TEST(SignatureTest, ExpandsArgumentTypes) {
  Signature signature = ParseOk("0iCiID_r");
  std::vector<ValueType> types;
  ASSERT_TRUE(
      signature.ExpandArgumentTypes(std::vector<uint16_t>{2}, &types).ok());
  EXPECT_THAT(types,
              ElementsAre(ValueType::kI32, ValueType::kI32, ValueType::kI64,
                          ValueType::kI32, ValueType::kI64));
  ASSERT_TRUE(
      signature.ExpandArgumentTypes(std::vector<uint16_t>{0}, &types).ok());
  EXPECT_THAT(types, ElementsAre(ValueType::kI32));
  EXPECT_FALSE(signature.ExpandArgumentTypes({}, &types).ok());
}

TEST(SignatureTest, ChecksCallFormArguments) {
  const FunctionName kName{"m", "f"};
  Signature signature = ParseOk("0iCrD_v");
  EXPECT_TRUE(signature
                  .CheckArguments(Values({Value::I32(1), Value::I32(2),
                                          Value::NullRef(), Value::NullRef()}),
                                  kName)
                  .ok());
  EXPECT_TRUE(
      signature.CheckArguments(Values({Value::I32(1), Value::I32(0)}), kName)
          .ok());
  Status wrong = signature.CheckArguments(
      Values({Value::I32(1), Value::I32(1), Value::I32(3)}), kName);
  EXPECT_EQ(wrong.message(), "'m.f' argument 2 has type i32, expected ref");
  EXPECT_FALSE(signature.CheckArguments(Values({Value::I32(1)}), kName).ok());

  Signature results = ParseOk("0v_ir");
  EXPECT_TRUE(
      results.CheckResults(Values({Value::I32(1), Value::NullRef()}), kName)
          .ok());
  EXPECT_FALSE(
      results.CheckResults(Values({Value::I32(1), Value()}), kName).ok());
  EXPECT_FALSE(results.CheckResults(Values({Value::I32(1)}), kName).ok());
}

} // namespace
} // namespace strata::vm
