#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "strata/hal/api.h"
#include "strata/hal/deferred_command_buffer.h"
#include "strata/hal/drivers/local_sync/local_sync_driver.h"

namespace strata::hal {
namespace {

constexpr CommandCategoryBitfield kAllCategories =
    STRATA_HAL_COMMAND_CATEGORY_TRANSFER | STRATA_HAL_COMMAND_CATEGORY_DISPATCH;

// An executable with fixed exports and no code: enough for recording.
class FakeExecutable final : public Executable {
public:
  std::string_view name() const override { return "fake"; }
  uint32_t export_count() const override { return 2; }
  std::string_view export_name(uint32_t ordinal) const override {
    return ordinal == 0 ? "two_bindings" : "no_bindings";
  }
  uint32_t export_binding_count(uint32_t ordinal) const override {
    return ordinal == 0 ? 2 : 0;
  }
};

class CommandBufferTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto device = CreateLocalSyncDriver()->CreateDevice("");
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = *device;
    buffer_ = Allocate(64);
    other_ = Allocate(32);
  }

  RefPtr<Buffer> Allocate(uint64_t size) {
    auto buffer = device_->allocator()->AllocateBuffer(
        STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, STRATA_HAL_BUFFER_USAGE_DEFAULT,
        size);
    EXPECT_TRUE(buffer.ok());
    return *buffer;
  }

  RefPtr<CommandBuffer>
  Create(CommandCategoryBitfield categories = kAllCategories) {
    auto command_buffer = device_->CreateCommandBuffer(
        STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, categories,
        STRATA_HAL_QUEUE_AFFINITY_ANY, 0);
    EXPECT_TRUE(command_buffer.ok()) << command_buffer.status().ToString();
    return *command_buffer;
  }

  Status Execute(CommandBuffer *command_buffer) {
    CommandBuffer *list[] = {command_buffer};
    return device_->QueueExecute(STRATA_HAL_QUEUE_AFFINITY_ANY, nullptr,
                                 nullptr, list);
  }

  std::vector<uint8_t> Read(Buffer *buffer) {
    std::vector<uint8_t> bytes(buffer->byte_length());
    EXPECT_TRUE(buffer->ReadData(0, bytes).ok());
    return bytes;
  }

  RefPtr<Device> device_;
  RefPtr<Buffer> buffer_;
  RefPtr<Buffer> other_;
};

TEST_F(CommandBufferTest, CreationValidation) {
  EXPECT_EQ(device_
                ->CreateCommandBuffer(STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
                                      0, STRATA_HAL_QUEUE_AFFINITY_ANY, 0)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(device_
                ->CreateCommandBuffer(STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
                                      0x10, STRATA_HAL_QUEUE_AFFINITY_ANY, 0)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  RefPtr<CommandBuffer> command_buffer = Create();
  EXPECT_EQ(std::string(command_buffer->ref_type()->name),
            "hal.command_buffer");
  EXPECT_EQ(command_buffer->categories(), kAllCategories);
}

TEST_F(CommandBufferTest, TransfersReplayInOrder) {
  RefPtr<CommandBuffer> cb = Create();
  ASSERT_TRUE(cb->FillBuffer(buffer_.get(), 0, kWholeBuffer, 0xAB, 1).ok());
  ASSERT_TRUE(cb->FillBuffer(buffer_.get(), 4, 8, 0x1234, 2).ok());
  ASSERT_TRUE(cb->FillBuffer(buffer_.get(), 12, 8, 0xDEADBEEF, 4).ok());
  ASSERT_TRUE(cb->ExecutionBarrier().ok());
  uint8_t update[] = {1, 2, 3};
  ASSERT_TRUE(cb->UpdateBuffer(update, buffer_.get(), 20).ok());
  update[0] = 99; // Captured at record time.
  ASSERT_TRUE(cb->CopyBuffer(buffer_.get(), 0, other_.get(), 0, 32).ok());
  // Overlapping copy inside one buffer behaves like memmove.
  ASSERT_TRUE(cb->CopyBuffer(buffer_.get(), 20, buffer_.get(), 21, 3).ok());
  ASSERT_TRUE(cb->Finalize().ok());
  ASSERT_TRUE(Execute(cb.get()).ok());

  std::vector<uint8_t> bytes = Read(buffer_.get());
  EXPECT_EQ(bytes[0], 0xAB);
  EXPECT_EQ(bytes[3], 0xAB);
  uint16_t half;
  std::memcpy(&half, &bytes[4], 2);
  EXPECT_EQ(half, 0x1234);
  std::memcpy(&half, &bytes[10], 2);
  EXPECT_EQ(half, 0x1234);
  uint32_t word;
  std::memcpy(&word, &bytes[16], 4);
  EXPECT_EQ(word, 0xDEADBEEFu);
  EXPECT_EQ((std::vector<uint8_t>(bytes.begin() + 20, bytes.begin() + 25)),
            (std::vector<uint8_t>{1, 1, 2, 3, 0xAB}));
  std::vector<uint8_t> copied = Read(other_.get());
  EXPECT_EQ(copied[0], 0xAB);
  EXPECT_EQ(copied[20], 1);
  EXPECT_EQ(copied[22], 3);
}

TEST_F(CommandBufferTest, CommandsRetainTheirBuffers) {
  RefPtr<CommandBuffer> cb = Create();
  RefPtr<Buffer> temp = Allocate(16);
  ASSERT_TRUE(cb->FillBuffer(temp.get(), 0, 16, 7, 1).ok());
  ASSERT_TRUE(cb->CopyBuffer(temp.get(), 0, buffer_.get(), 0, 16).ok());
  EXPECT_EQ(temp->ref_count(), 3);
  temp.reset();
  ASSERT_TRUE(cb->Finalize().ok());
  ASSERT_TRUE(Execute(cb.get()).ok());
  EXPECT_EQ(Read(buffer_.get())[15], 7);
}

TEST_F(CommandBufferTest, FillValidation) {
  RefPtr<CommandBuffer> cb = Create();
  EXPECT_EQ(cb->FillBuffer(nullptr, 0, 4, 0, 1).code(),
            StatusCode::kInvalidArgument);
  Status bad_pattern = cb->FillBuffer(buffer_.get(), 0, 4, 0, 3);
  EXPECT_EQ(bad_pattern.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_pattern.message().find("pattern length"),
            std::string_view::npos);
  EXPECT_EQ(cb->FillBuffer(buffer_.get(), 2, 8, 0, 4).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(cb->FillBuffer(buffer_.get(), 0, 6, 0, 4).code(),
            StatusCode::kInvalidArgument);
  Status out_of_range = cb->FillBuffer(buffer_.get(), 60, 8, 0, 1);
  EXPECT_EQ(out_of_range.code(), StatusCode::kOutOfRange);
  EXPECT_NE(out_of_range.message().find("fill_buffer target"),
            std::string_view::npos);
  EXPECT_EQ(cb->FillBuffer(buffer_.get(), 65, kWholeBuffer, 0, 1).code(),
            StatusCode::kOutOfRange);
}

TEST_F(CommandBufferTest, CopyAndUpdateValidation) {
  RefPtr<CommandBuffer> cb = Create();
  EXPECT_EQ(cb->CopyBuffer(nullptr, 0, buffer_.get(), 0, 4).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(cb->CopyBuffer(buffer_.get(), 0, nullptr, 0, 4).code(),
            StatusCode::kInvalidArgument);
  Status source_range = cb->CopyBuffer(buffer_.get(), 60, other_.get(), 0, 8);
  EXPECT_EQ(source_range.code(), StatusCode::kOutOfRange);
  EXPECT_NE(source_range.message().find("source"), std::string_view::npos);
  Status target_range = cb->CopyBuffer(buffer_.get(), 0, other_.get(), 0, 64);
  EXPECT_EQ(target_range.code(), StatusCode::kOutOfRange);
  EXPECT_NE(target_range.message().find("target"), std::string_view::npos);
  uint8_t bytes[8] = {};
  EXPECT_EQ(cb->UpdateBuffer(bytes, other_.get(), 28).code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(cb->UpdateBuffer(bytes, nullptr, 0).code(),
            StatusCode::kInvalidArgument);
}

TEST_F(CommandBufferTest, DispatchValidation) {
  RefPtr<CommandBuffer> cb = Create();
  RefPtr<Executable> executable = MakeRef<FakeExecutable>();
  BufferBinding two[] = {{buffer_.get(), 0, 16}, {other_.get()}};
  EXPECT_EQ(cb->Dispatch(nullptr, 0, {}, {}, two).code(),
            StatusCode::kInvalidArgument);
  Status bad_ordinal = cb->Dispatch(executable.get(), 2, {}, {}, two);
  EXPECT_EQ(bad_ordinal.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_ordinal.message().find("ordinal 2"), std::string_view::npos);
  Status bad_count = cb->Dispatch(executable.get(), 0, {}, {},
                                  std::span<const BufferBinding>(two, 1));
  EXPECT_EQ(bad_count.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad_count.message().find("expects 2 bindings, got 1"),
            std::string_view::npos)
      << bad_count.ToString();
  BufferBinding null_binding[] = {{buffer_.get()}, {nullptr}};
  EXPECT_EQ(cb->Dispatch(executable.get(), 0, {}, {}, null_binding).code(),
            StatusCode::kInvalidArgument);
  BufferBinding out_of_range[] = {{buffer_.get(), 32, 64}, {other_.get()}};
  Status range = cb->Dispatch(executable.get(), 0, {}, {}, out_of_range);
  EXPECT_EQ(range.code(), StatusCode::kOutOfRange);
  EXPECT_NE(range.message().find("binding 0"), std::string_view::npos);
  EXPECT_TRUE(cb->Dispatch(executable.get(), 0, {4, 1, 1}, {}, two).ok());
  EXPECT_TRUE(cb->Dispatch(executable.get(), 1, {0, 0, 0}, {}, {}).ok());
  EXPECT_EQ(executable->ref_count(), 3); // Recorded commands retain it.

  auto *deferred = static_cast<DeferredCommandBuffer *>(cb.get());
  ASSERT_EQ(deferred->commands().size(), 2u);
  const auto &dispatch = std::get<DispatchCommand>(deferred->commands()[0]);
  // kWholeBuffer resolved.
  EXPECT_EQ(deferred->bindings(dispatch)[1].length, 32u);

  // A non-local executable cannot run on a local device.
  ASSERT_TRUE(cb->Finalize().ok());
  Status run = Execute(cb.get());
  EXPECT_EQ(run.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(run.message().find("not loaded for a local device"),
            std::string_view::npos)
      << run.ToString();
}

TEST_F(CommandBufferTest, WorkgroupCountLimits) {
  RefPtr<CommandBuffer> cb = Create();
  RefPtr<Executable> executable = MakeRef<FakeExecutable>();
  const uint32_t kMax = kMaxWorkgroupCountPerDimension;
  EXPECT_TRUE(ValidateWorkgroupCount({kMax, 1, 1}).ok());
  EXPECT_TRUE(ValidateWorkgroupCount({0, kMax, 0}).ok());
  // 4096 x 4096 = 2^24 exactly.
  EXPECT_TRUE(ValidateWorkgroupCount({4096, 4096, 1}).ok());

  Status x = cb->Dispatch(executable.get(), 1, {kMax + 1, 1, 1}, {}, {});
  EXPECT_EQ(x.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(x.message(), "dispatch of 'no_bindings': workgroup count "
                         "65536x1x1 exceeds the limit of 65535 per dimension");
  // The largest i32 in z, as a hostile program would pass it; a zero
  // elsewhere does not make it acceptable.
  Status z = cb->Dispatch(executable.get(), 1, {0, 1, 0x7FFFFFFF}, {}, {});
  EXPECT_EQ(z.message(), "dispatch of 'no_bindings': workgroup count "
                         "0x1x2147483647 exceeds the limit of 65535 per "
                         "dimension");
  Status total = cb->Dispatch(executable.get(), 1, {4096, 4096, 2}, {}, {});
  EXPECT_EQ(total.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(total.message(),
            "dispatch of 'no_bindings': workgroup count 4096x4096x2 "
            "(33554432 workgroups) exceeds the limit of 16777216 workgroups "
            "per dispatch");
  // Nothing was recorded by the refused dispatches.
  auto *deferred = static_cast<DeferredCommandBuffer *>(cb.get());
  EXPECT_TRUE(deferred->commands().empty());
}

TEST_F(CommandBufferTest, RangesThatWrapAreOutOfRange) {
  RefPtr<CommandBuffer> cb = Create();
  RefPtr<Executable> executable = MakeRef<FakeExecutable>();
  constexpr uint64_t kHuge = ~uint64_t{0} - 3; // offset + kHuge wraps to 4
  EXPECT_EQ(cb->FillBuffer(buffer_.get(), 8, kHuge, 0, 1).code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(cb->CopyBuffer(buffer_.get(), 8, other_.get(), 0, kHuge).code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(cb->CopyBuffer(buffer_.get(), 0, other_.get(), kHuge, 8).code(),
            StatusCode::kOutOfRange);
  uint8_t bytes[8] = {};
  EXPECT_EQ(cb->UpdateBuffer(bytes, other_.get(), kHuge).code(),
            StatusCode::kOutOfRange);
  BufferBinding wraps[] = {{buffer_.get(), 8, kHuge}, {other_.get()}};
  Status binding = cb->Dispatch(executable.get(), 0, {1, 1, 1}, {}, wraps);
  EXPECT_EQ(binding.code(), StatusCode::kOutOfRange);
  EXPECT_NE(binding.message().find("binding 0"), std::string_view::npos);
  auto *deferred = static_cast<DeferredCommandBuffer *>(cb.get());
  EXPECT_TRUE(deferred->commands().empty());
}

TEST_F(CommandBufferTest, CategoryValidation) {
  RefPtr<CommandBuffer> transfer_only =
      Create(STRATA_HAL_COMMAND_CATEGORY_TRANSFER);
  RefPtr<Executable> executable = MakeRef<FakeExecutable>();
  Status dispatch = transfer_only->Dispatch(executable.get(), 1, {}, {}, {});
  EXPECT_EQ(dispatch.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(dispatch.message().find("DISPATCH"), std::string_view::npos);
  RefPtr<CommandBuffer> dispatch_only =
      Create(STRATA_HAL_COMMAND_CATEGORY_DISPATCH);
  Status fill = dispatch_only->FillBuffer(buffer_.get(), 0, 4, 0, 1);
  EXPECT_EQ(fill.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(fill.message().find("TRANSFER"), std::string_view::npos);
}

TEST_F(CommandBufferTest, FinalizeAndSubmissionRules) {
  RefPtr<CommandBuffer> cb = Create();
  ASSERT_TRUE(cb->FillBuffer(buffer_.get(), 0, 4, 1, 1).ok());
  Status unfinalized = Execute(cb.get());
  EXPECT_EQ(unfinalized.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(unfinalized.message().find("finalized"), std::string_view::npos);

  ASSERT_TRUE(cb->Finalize().ok());
  EXPECT_TRUE(cb->is_finalized());
  EXPECT_EQ(cb->Finalize().code(), StatusCode::kFailedPrecondition);
  Status late = cb->FillBuffer(buffer_.get(), 0, 4, 1, 1);
  EXPECT_EQ(late.code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(cb->ExecutionBarrier().code(), StatusCode::kFailedPrecondition);

  EXPECT_TRUE(Execute(cb.get()).ok());
  Status again = Execute(cb.get());
  EXPECT_EQ(again.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(again.message().find("one-shot"), std::string_view::npos);

  // Without ONE_SHOT a command buffer can be submitted repeatedly.
  auto reusable = device_->CreateCommandBuffer(
      0, kAllCategories, STRATA_HAL_QUEUE_AFFINITY_ANY, 0);
  ASSERT_TRUE(reusable.ok());
  ASSERT_TRUE((*reusable)->Finalize().ok());
  EXPECT_TRUE(Execute(reusable->get()).ok());
  EXPECT_TRUE(Execute(reusable->get()).ok());

  CommandBuffer *null_list[] = {nullptr};
  EXPECT_EQ(device_
                ->QueueExecute(STRATA_HAL_QUEUE_AFFINITY_ANY, nullptr, nullptr,
                               null_list)
                .code(),
            StatusCode::kInvalidArgument);
}

} // namespace
} // namespace strata::hal
