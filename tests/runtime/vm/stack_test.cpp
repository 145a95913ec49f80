#include "strata/vm/stack.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "strata/vm/byte_buffer.h"

namespace strata::vm {
namespace {

using ::testing::HasSubstr;

TEST(StackTest, PushesZeroedFramesAndPops) {
  Stack stack;
  EXPECT_EQ(stack.depth(), 0u);
  Result<StackFrame *> frame =
      stack.PushFrame(FrameKind::kBytecode, nullptr, nullptr, 3, "f",
                      {.i32 = 3, .i64 = 2, .f32 = 1, .f64 = 1, .ref = 2});
  ASSERT_TRUE(frame.ok());
  StackFrame *f = frame.value();
  EXPECT_EQ(stack.top(), f);
  EXPECT_EQ(f->function_ordinal, 3u);
  EXPECT_EQ(f->registers.i32[2], 0);
  EXPECT_EQ(f->registers.i64[1], 0);
  EXPECT_EQ(f->registers.f64[0], 0.0);
  EXPECT_EQ(f->registers.ref[1], nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(f->registers.i64) % 8, 0u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(f->registers.f64) % 8, 0u);
  stack.PopFrame();
  EXPECT_EQ(stack.depth(), 0u);
  EXPECT_EQ(stack.top(), nullptr);
}

TEST(StackTest, FramesDoNotMoveWhenStorageGrows) {
  Stack stack;
  std::vector<StackFrame *> frames;
  for (int i = 0; i < 200; ++i) {
    Result<StackFrame *> frame = stack.PushFrame(
        FrameKind::kBytecode, nullptr, nullptr, i, "f", {.i32 = 64, .ref = 4});
    ASSERT_TRUE(frame.ok());
    frame.value()->registers.i32[63] = i;
    frames.push_back(frame.value());
  }
  for (int i = 0; i < 200; ++i) {
    EXPECT_EQ(frames[i]->registers.i32[63], i);
    EXPECT_EQ(frames[i]->function_ordinal, static_cast<uint32_t>(i));
  }
  EXPECT_EQ(frames.back()->parent, frames[198]);
  stack.PopFramesTo(10);
  EXPECT_EQ(stack.depth(), 10u);
  EXPECT_EQ(stack.top(), frames[9]);
  // Storage is reused after popping.
  for (int i = 0; i < 100; ++i)
    ASSERT_TRUE(stack
                    .PushFrame(FrameKind::kBytecode, nullptr, nullptr, i, "g",
                               {.i64 = 100})
                    .ok());
}

TEST(StackTest, PoppingReleasesRefs) {
  RefPtr<ByteBuffer> buffer = ByteBuffer::FromString("x");
  Stack stack;
  Result<StackFrame *> frame = stack.PushFrame(FrameKind::kBytecode, nullptr,
                                               nullptr, 0, "f", {.ref = 3});
  ASSERT_TRUE(frame.ok());
  frame.value()->registers.ref[0] = buffer;
  frame.value()->registers.ref[2] = buffer;
  EXPECT_EQ(buffer->ref_count(), 3);
  stack.PopFrame();
  EXPECT_EQ(buffer->ref_count(), 1);
}

TEST(StackTest, DepthAndStorageLimits) {
  Stack shallow(StackOptions{.max_depth = 5});
  for (int i = 0; i < 5; ++i)
    ASSERT_TRUE(
        shallow.PushFrame(FrameKind::kNative, nullptr, nullptr, 0, "f").ok());
  Result<StackFrame *> too_deep =
      shallow.PushFrame(FrameKind::kNative, nullptr, nullptr, 0, "f");
  EXPECT_EQ(too_deep.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(too_deep.status().message()),
              HasSubstr("depth limit of 5 frames"));

  Stack small(StackOptions{.max_storage_bytes = 64 * 1024});
  Status status;
  for (int i = 0; i < 100 && status.ok(); ++i)
    status = small
                 .PushFrame(FrameKind::kBytecode, nullptr, nullptr, 0, "f",
                            {.i64 = 1000})
                 .status();
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), HasSubstr("storage limit"));
}

TEST(StackTest, StepBudget) {
  Stack unlimited;
  for (int i = 0; i < 1000; ++i)
    EXPECT_TRUE(unlimited.ConsumeStep());
  Stack limited(StackOptions{.step_budget = 3});
  EXPECT_TRUE(limited.ConsumeStep());
  EXPECT_TRUE(limited.ConsumeStep());
  EXPECT_TRUE(limited.ConsumeStep());
  EXPECT_FALSE(limited.ConsumeStep());
  EXPECT_EQ(limited.StepBudgetExhaustedError().code(),
            StatusCode::kDeadlineExceeded);
}

TEST(StackTest, BacktraceIsAttachedOnce) {
  Stack stack;
  ASSERT_TRUE(
      stack.PushFrame(FrameKind::kBytecode, nullptr, nullptr, 0, "outer").ok());
  stack.top()->pc = 0x12;
  ASSERT_TRUE(
      stack.PushFrame(FrameKind::kNative, nullptr, nullptr, 0, "inner").ok());
  Status annotated = stack.AnnotateWithBacktrace(InternalError("boom"));
  EXPECT_EQ(annotated.message(), "boom\n  at ?.inner (native)\n"
                                 "  at ?.outer +0x0012");
  EXPECT_EQ(annotated.code(), StatusCode::kInternal);
  // Outer frames leave an attached backtrace alone.
  stack.PopFrame();
  EXPECT_EQ(stack.AnnotateWithBacktrace(annotated).message(),
            annotated.message());
  EXPECT_TRUE(stack.AnnotateWithBacktrace(OkStatus()).ok());
}

} // namespace
} // namespace strata::vm
