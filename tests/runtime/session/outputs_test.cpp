// Results-to-outs calls (Session::CallIntoOutputs): results land in the
// caller's buffer views; mismatches name the output and write nothing.
#include "session_test_util.h"

namespace strata::session::testing {
namespace {

using ::testing::HasSubstr;

class SessionOutputsTest : public ::testing::Test {
protected:
  void SetUp() override {
    Result<RefPtr<Instance>> instance = Instance::Create();
    ASSERT_TRUE(instance.ok());
    Result<RefPtr<hal::Device>> device =
        (*instance)->CreateDevice("local-sync");
    ASSERT_TRUE(device.ok());
    Result<RefPtr<Session>> session =
        MakeSession(*instance, *device, "matmul_bias_relu");
    ASSERT_TRUE(session.ok()) << session.status().ToString();
    session_ = *session;
    Result<vm::Function> function =
        session_->LookupFunction("matmul_bias_relu");
    ASSERT_TRUE(function.ok());
    function_ = *function;
    c_ = MakeMatmulCase(3);
    RefPtr<hal::Allocator> allocator = session_->device_allocator();
    inputs_ = {vm::Value::Ref(*MakeF32View(*allocator, {4, 8}, c_.x)),
               vm::Value::Ref(*MakeF32View(*allocator, {8, 16}, c_.w)),
               vm::Value::Ref(*MakeF32View(*allocator, {16}, c_.b))};
  }

  RefPtr<hal::BufferView> Filled(std::vector<int64_t> shape, float value) {
    size_t count = 1;
    for (int64_t dim : shape)
      count *= size_t(dim);
    std::vector<float> values(count, value);
    return *MakeF32View(*session_->device_allocator(), shape, values);
  }

  RefPtr<Session> session_;
  vm::Function function_;
  MatmulCase c_;
  std::vector<vm::Value> inputs_;
};

TEST_F(SessionOutputsTest, ResultIsWrittenIntoTheOutput) {
  RefPtr<hal::BufferView> output = Filled({4, 16}, -1.0f);
  hal::BufferView *outputs[] = {output.get()};
  STRATA_ASSERT_OK(session_->CallIntoOutputs(function_, inputs_, outputs));
  EXPECT_EQ(*ReadF32(*output), c_.expected);
  // Again into the same output (reused across calls).
  STRATA_ASSERT_OK(session_->CallIntoOutputs(function_, inputs_, outputs));
  EXPECT_EQ(*ReadF32(*output), c_.expected);
}

TEST_F(SessionOutputsTest, MismatchesNameTheOutputAndWriteNothing) {
  RefPtr<hal::BufferView> wrong_shape = Filled({4, 8}, 7.0f);
  hal::BufferView *outputs[] = {wrong_shape.get()};
  Status status = session_->CallIntoOutputs(function_, inputs_, outputs);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("function 'module.matmul_bias_relu' output 0: "
                        "expected 4x16xf32, got 4x8xf32"));
  EXPECT_EQ(*ReadF32(*wrong_shape), std::vector<float>(32, 7.0f));

  RefPtr<hal::BufferView> wrong_type = *hal::BufferView::Allocate(
      *session_->device_allocator(), std::vector<int64_t>{4, 16},
      STRATA_HAL_ELEMENT_TYPE_SINT_32, STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
      STRATA_HAL_BUFFER_USAGE_DEFAULT);
  outputs[0] = wrong_type.get();
  status = session_->CallIntoOutputs(function_, inputs_, outputs);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("output 0"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("i32"));

  outputs[0] = nullptr;
  status = session_->CallIntoOutputs(function_, inputs_, outputs);
  EXPECT_THAT(std::string(status.message()), HasSubstr("output 0 is null"));

  status = session_->CallIntoOutputs(function_, inputs_, {});
  EXPECT_THAT(std::string(status.message()), HasSubstr("has 1 result, got 0"));
}

TEST_F(SessionOutputsTest, FailedCallWritesNothing) {
  RefPtr<hal::BufferView> output = Filled({4, 16}, 5.0f);
  hal::BufferView *outputs[] = {output.get()};
  std::vector<vm::Value> bad_inputs = inputs_;
  bad_inputs[2] = vm::Value::Ref(Filled({15}, 0.0f));
  Status status = session_->CallIntoOutputs(function_, bad_inputs, outputs);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), HasSubstr("argument 2"));
  EXPECT_EQ(*ReadF32(*output), std::vector<float>(64, 5.0f));
}

} // namespace
} // namespace strata::session::testing
