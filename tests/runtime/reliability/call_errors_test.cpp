// Calls with the wrong number of arguments, the wrong value or element type,
// the wrong shape or rank: the error names the function, the argument index
// and expected vs given, and the caller's outputs are left alone.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "module_builder.h"
#include "strata/hal/allocator.h"
#include "strata/hal/buffer_view.h"
#include "strata/session/session.h"
#include "vm_test_util.h"

namespace strata {
namespace {

using ::testing::HasSubstr;
using vm::TensorTypeInfo;
using vm::Value;
using vm::testing::FunctionBuilder;
using vm::testing::ModuleBuilder;
using vm::testing::RegI32;
using vm::testing::RegRef;

constexpr uint32_t kF32 = STRATA_HAL_ELEMENT_TYPE_FLOAT_32;

// "calls.pick(tensor<4xf32>, tensor<?x2xf32>, i32) -> tensor<4xf32>": returns
// its first argument. "calls.fail(tensor<4xf32>) -> tensor<4xf32>" fails.
OwnedBytes BuildModule() {
  ModuleBuilder builder("calls");
  FunctionBuilder &pick =
      builder.AddFunction("pick", "0rri_r", {.i32 = 1, .ref = 2});
  pick.Op(vm::Opcode::Return).List({RegRef(0)});
  builder.AddExport("pick", pick.ordinal(),
                    {TensorTypeInfo{{4}, kF32}, TensorTypeInfo{{-1, 2}, kF32}},
                    {TensorTypeInfo{{4}, kF32}});
  uint32_t message = builder.AddRodata("message", "deliberate failure", 1);
  FunctionBuilder &fail =
      builder.AddFunction("fail", "0r_r", {.i32 = 1, .ref = 1});
  fail.Op(vm::Opcode::ConstI32).Reg(0).I32(int32_t(StatusCode::kInternal));
  fail.Op(vm::Opcode::Fail).Reg(0).Rodata(message);
  builder.AddExport("fail", fail.ordinal(), {TensorTypeInfo{{4}, kF32}},
                    {TensorTypeInfo{{4}, kF32}});
  return builder.BuildOwned();
}

class CallErrorsTest : public ::testing::Test {
protected:
  void SetUp() override {
    STRATA_ASSERT_OK_AND_ASSIGN(instance_, session::Instance::Create());
    STRATA_ASSERT_OK_AND_ASSIGN(RefPtr<hal::Device> device,
                                instance_->CreateDevice("local-sync"));
    allocator_ = device->allocator();
    STRATA_ASSERT_OK_AND_ASSIGN(
        session_, session::Session::Create(instance_, device, {}));
    STRATA_ASSERT_OK(session_->AppendBytecodeModuleFromMemory(BuildModule()));
  }

  Value Tensor(std::vector<int64_t> shape, hal::ElementType type = kF32) {
    auto view =
        hal::BufferView::Allocate(*allocator_, shape, type,
                                  STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL |
                                      STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
                                  STRATA_HAL_BUFFER_USAGE_DEFAULT);
    EXPECT_TRUE(view.ok()) << view.status().ToString();
    return Value::Ref(std::move(*view));
  }

  // Calls `name` with `inputs`; expects INVALID_ARGUMENT and outputs that
  // still hold exactly what the caller put there. Returns the message.
  std::string CallFails(const char *name, std::vector<Value> inputs,
                        StatusCode code = StatusCode::kInvalidArgument) {
    Value sentinel = Value::I32(12345);
    std::vector<Value> outputs = {sentinel};
    Status status = session_->CallByName(name, inputs, &outputs);
    EXPECT_EQ(status.code(), code) << status.ToString();
    if (code == StatusCode::kInvalidArgument) {
      EXPECT_EQ(outputs.size(), 1u);
      EXPECT_TRUE(outputs.size() == 1 &&
                  outputs[0].type() == vm::ValueType::kI32 &&
                  outputs[0].i32() == 12345)
          << "a rejected call wrote to its outputs";
    } else {
      // A call that failed while running returns no results.
      EXPECT_TRUE(outputs.empty());
    }
    return std::string(status.message());
  }

  RefPtr<session::Instance> instance_;
  RefPtr<hal::Allocator> allocator_;
  RefPtr<session::Session> session_;
};

TEST_F(CallErrorsTest, GoodCall) {
  std::vector<Value> outputs;
  STRATA_ASSERT_OK(session_->CallByName(
      "calls.pick",
      std::vector<Value>{Tensor({4}), Tensor({7, 2}), Value::I32(1)},
      &outputs));
  ASSERT_EQ(outputs.size(), 1u);
  EXPECT_TRUE(outputs[0].is_ref());
}

TEST_F(CallErrorsTest, ArgumentCount) {
  EXPECT_THAT(CallFails("calls.pick", {Tensor({4}), Tensor({1, 2})}),
              HasSubstr("function 'calls.pick' takes 3 arguments, got 2"));
  EXPECT_THAT(CallFails("calls.pick", {Tensor({4}), Tensor({1, 2}),
                                       Value::I32(0), Value::I32(0)}),
              HasSubstr("function 'calls.pick' takes 3 arguments, got 4"));
  EXPECT_THAT(CallFails("calls.pick", {}),
              HasSubstr("function 'calls.pick' takes 3 arguments, got 0"));
}

TEST_F(CallErrorsTest, ValueType) {
  std::string message =
      CallFails("calls.pick", {Tensor({4}), Tensor({1, 2}), Value::F32(1)});
  EXPECT_THAT(message, HasSubstr("calls.pick"));
  EXPECT_THAT(message, HasSubstr("argument 2"));
  EXPECT_THAT(message, HasSubstr("f32"));
  EXPECT_THAT(message, HasSubstr("i32"));
  message =
      CallFails("calls.pick", {Value::I32(0), Tensor({1, 2}), Value::I32(1)});
  EXPECT_THAT(message, HasSubstr("calls.pick"));
  EXPECT_THAT(message, HasSubstr("argument 0"));
}

TEST_F(CallErrorsTest, NotATensor) {
  EXPECT_THAT(CallFails("calls.pick",
                        {Value::NullRef(), Tensor({1, 2}), Value::I32(1)}),
              HasSubstr("function 'calls.pick' argument 0: expected a tensor "
                        "4xf32, got null"));
}

TEST_F(CallErrorsTest, ElementType) {
  EXPECT_THAT(
      CallFails("calls.pick", {Tensor({4}, STRATA_HAL_ELEMENT_TYPE_SINT_32),
                               Tensor({1, 2}), Value::I32(1)}),
      HasSubstr("function 'calls.pick' argument 0: expected 4xf32, got "
                "4xi32"));
  EXPECT_THAT(
      CallFails("calls.pick",
                {Tensor({4}), Tensor({1, 2}, STRATA_HAL_ELEMENT_TYPE_FLOAT_16),
                 Value::I32(1)}),
      HasSubstr("function 'calls.pick' argument 1: expected ?x2xf32, got "
                "1x2xf16"));
}

TEST_F(CallErrorsTest, Shape) {
  EXPECT_THAT(
      CallFails("calls.pick", {Tensor({5}), Tensor({1, 2}), Value::I32(1)}),
      HasSubstr("function 'calls.pick' argument 0: expected 4xf32, got "
                "5xf32"));
  // A dynamic dimension takes any size; the static one still must match.
  EXPECT_THAT(
      CallFails("calls.pick", {Tensor({4}), Tensor({3, 3}), Value::I32(1)}),
      HasSubstr("function 'calls.pick' argument 1: expected ?x2xf32, got "
                "3x3xf32"));
}

TEST_F(CallErrorsTest, Rank) {
  EXPECT_THAT(
      CallFails("calls.pick", {Tensor({2, 2}), Tensor({1, 2}), Value::I32(1)}),
      HasSubstr("function 'calls.pick' argument 0: expected 4xf32, got "
                "2x2xf32"));
  EXPECT_THAT(
      CallFails("calls.pick", {Tensor({4}), Tensor({2}), Value::I32(1)}),
      HasSubstr("function 'calls.pick' argument 1: expected ?x2xf32, got "
                "2xf32"));
  EXPECT_THAT(
      CallFails("calls.pick", {Tensor({}), Tensor({1, 2}), Value::I32(1)}),
      HasSubstr("function 'calls.pick' argument 0: expected 4xf32, got f32"));
}

TEST_F(CallErrorsTest, FailureWhileRunningLeavesNoResults) {
  std::string message =
      CallFails("calls.fail", {Tensor({4})}, StatusCode::kInternal);
  EXPECT_THAT(message, HasSubstr("deliberate failure"));
  EXPECT_THAT(message, HasSubstr("calls.fail"));
}

TEST_F(CallErrorsTest, UnknownFunction) {
  std::vector<Value> outputs;
  Status status =
      session_->CallByName("calls.nope", std::vector<Value>{}, &outputs);
  EXPECT_EQ(status.code(), StatusCode::kNotFound);
  EXPECT_THAT(std::string(status.message()), HasSubstr("calls.nope"));
}

} // namespace
} // namespace strata
