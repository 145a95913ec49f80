// The heap allocator's memory limit (live bytes and single requests), memory
// the system refuses, and sizes of buffers and views that overflow.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "strata/hal/allocator.h"
#include "strata/hal/buffer.h"
#include "strata/hal/buffer_view.h"

namespace strata::hal {
namespace {

constexpr MemoryTypeBitfield kDeviceLocal = STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL;
constexpr BufferUsageBitfield kUsage = STRATA_HAL_BUFFER_USAGE_DEFAULT;
constexpr ElementType kF32 = STRATA_HAL_ELEMENT_TYPE_FLOAT_32;

TEST(AllocatorLimitTest, DefaultIsPhysicalMemory) {
  RefPtr<HeapAllocator> allocator = HeapAllocator::Create("default");
  EXPECT_EQ(allocator->memory_limit(), DefaultMemoryLimit());
  EXPECT_GT(DefaultMemoryLimit(), uint64_t(64) << 20);
  EXPECT_EQ(allocator->max_allocation_size(), DefaultMemoryLimit());
  // One byte more than physical memory is refused without asking the
  // system, which might overcommit it.
  auto over =
      allocator->AllocateBuffer(kDeviceLocal, kUsage, DefaultMemoryLimit() + 1);
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
}

TEST(AllocatorLimitTest, LiveBytesAreBounded) {
  RefPtr<HeapAllocator> allocator =
      HeapAllocator::Create("small", {.memory_limit = 1024});
  auto first = allocator->AllocateBuffer(kDeviceLocal, kUsage, 600);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  auto second = allocator->AllocateBuffer(kDeviceLocal, kUsage, 600);
  EXPECT_EQ(second.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(second.status().message(),
            "allocation of 600 bytes would bring allocator 'small' to 1200 "
            "live bytes, over its memory limit of 1024 bytes (600 bytes "
            "already live)");
  EXPECT_EQ(allocator->statistics().bytes_live, 600u);
  EXPECT_EQ(allocator->statistics().allocation_count, 1u);
  // Exactly up to the limit is fine; freeing makes room again.
  auto rest = allocator->AllocateBuffer(kDeviceLocal, kUsage, 424);
  EXPECT_TRUE(rest.ok()) << rest.status().ToString();
  EXPECT_EQ(allocator->AllocateBuffer(kDeviceLocal, kUsage, 1).status().code(),
            StatusCode::kResourceExhausted);
  first->reset();
  EXPECT_TRUE(allocator->AllocateBuffer(kDeviceLocal, kUsage, 600).ok());
  EXPECT_LE(allocator->statistics().bytes_peak, 1024u);
}

TEST(AllocatorLimitTest, SingleRequestsAreBounded) {
  RefPtr<HeapAllocator> allocator = HeapAllocator::Create(
      "capped", {.memory_limit = 1024, .max_allocation_size = 256});
  EXPECT_EQ(allocator->max_allocation_size(), 256u);
  auto big = allocator->AllocateBuffer(kDeviceLocal, kUsage, 300);
  EXPECT_EQ(big.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(big.status().message(), "allocation of 300 bytes exceeds the "
                                    "limit of allocator 'capped' (256 bytes)");
  // A request larger than the whole limit names the limit too.
  RefPtr<HeapAllocator> limited =
      HeapAllocator::Create("limited", {.memory_limit = 1024});
  auto huge = limited->AllocateBuffer(kDeviceLocal, kUsage, uint64_t(1) << 40);
  EXPECT_EQ(huge.status().message(),
            "allocation of 1099511627776 bytes exceeds the limit of allocator "
            "'limited' (1024 bytes)");
  // Sizes whose padding to the alignment would wrap.
  auto max = limited->AllocateBuffer(kDeviceLocal, kUsage, ~uint64_t{0});
  EXPECT_EQ(max.status().code(), StatusCode::kResourceExhausted);
}

TEST(AllocatorLimitTest, LimitCanBeChanged) {
  RefPtr<HeapAllocator> allocator = HeapAllocator::Create("settable");
  Allocator &base = *allocator;
  ASSERT_TRUE(base.SetMemoryLimit(100).ok());
  EXPECT_EQ(base.memory_limit(), 100u);
  auto kept = allocator->AllocateBuffer(kDeviceLocal, kUsage, 80);
  ASSERT_TRUE(kept.ok());
  // Lowering it below the live bytes keeps what is live and refuses more.
  ASSERT_TRUE(base.SetMemoryLimit(50).ok());
  auto more = allocator->AllocateBuffer(kDeviceLocal, kUsage, 1);
  EXPECT_EQ(more.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(more.status().message().find("80 bytes already live"),
            std::string_view::npos)
      << more.status().ToString();
  // 0 restores the default.
  ASSERT_TRUE(base.SetMemoryLimit(0).ok());
  EXPECT_EQ(base.memory_limit(), DefaultMemoryLimit());
}

TEST(AllocatorLimitTest, MemoryTheSystemRefusesIsResourceExhausted) {
  // A limit far above physical memory, then a request no system grants
  // (2^62 bytes, past the address space): the allocation returns null.
  RefPtr<HeapAllocator> allocator =
      HeapAllocator::Create("unbounded", {.memory_limit = ~uint64_t{0}});
  auto huge =
      allocator->AllocateBuffer(kDeviceLocal, kUsage, uint64_t(1) << 62);
  ASSERT_FALSE(huge.ok());
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(huge.status().message(),
            "the system refused 4611686018427387904 bytes to allocator "
            "'unbounded' (out of host memory; its memory limit is "
            "18446744073709551615 bytes)");
  // The refused request is not counted as live, nor as an allocation.
  AllocatorStatistics statistics = allocator->statistics();
  EXPECT_EQ(statistics.bytes_live, 0u);
  EXPECT_EQ(statistics.bytes_peak, 0u);
  EXPECT_EQ(statistics.allocation_count, 0u);
  EXPECT_EQ(statistics.free_count, 0u);
  EXPECT_TRUE(allocator->AllocateBuffer(kDeviceLocal, kUsage, 64).ok());
}

TEST(AllocatorLimitTest, ConcurrentRequestsNeverPassTheLimit) {
  constexpr uint64_t kLimit = 1000;
  RefPtr<HeapAllocator> allocator =
      HeapAllocator::Create("shared", {.memory_limit = kLimit});
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        auto buffer = allocator->AllocateBuffer(kDeviceLocal, kUsage, 300);
        if (!buffer.ok())
          refused.fetch_add(1);
      }
    });
  }
  for (std::thread &thread : threads)
    thread.join();
  AllocatorStatistics statistics = allocator->statistics();
  EXPECT_LE(statistics.bytes_peak, kLimit);
  EXPECT_EQ(statistics.bytes_live, 0u);
  EXPECT_EQ(statistics.allocation_count + uint64_t(refused.load()), 2000u);
  EXPECT_EQ(statistics.free_count, statistics.allocation_count);
}

TEST(BufferSizesTest, ViewShapesThatOverflow) {
  RefPtr<HeapAllocator> allocator = HeapAllocator::Create("views");
  RefPtr<Buffer> buffer = *allocator->AllocateBuffer(kDeviceLocal, kUsage, 64);
  // 2^32 x 2^32 x 4 bytes wraps to 0 in 64 bits: it must not "fit".
  std::vector<int64_t> wraps = {int64_t(1) << 32, int64_t(1) << 32};
  auto view = BufferView::Create(buffer, wraps, kF32);
  EXPECT_EQ(view.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(view.status().message(),
            "shape 4294967296x4294967296 x 4 bytes overflows 64 bits");
  EXPECT_EQ(BufferView::ComputeByteLength(wraps, kF32).status().message(),
            view.status().message());
  // Allocate refuses before asking the allocator for anything.
  auto allocated =
      BufferView::Allocate(*allocator, wraps, kF32, kDeviceLocal, kUsage);
  EXPECT_EQ(allocated.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator->statistics().allocation_count, 1u);
  // Fits 64 bits but not the buffer.
  std::vector<int64_t> large = {int64_t(1) << 20, int64_t(1) << 20};
  auto too_large = BufferView::Create(buffer, large, kF32);
  EXPECT_EQ(too_large.status().message(),
            "buffer view 1048576x1048576xf32 needs 4398046511104 bytes but the "
            "buffer has 64");
  // An empty view of huge other dimensions is fine.
  std::vector<int64_t> empty = {int64_t(1) << 40, 0, int64_t(1) << 40};
  auto empty_view = BufferView::Create(buffer, empty, kF32);
  ASSERT_TRUE(empty_view.ok()) << empty_view.status().ToString();
  EXPECT_EQ((*empty_view)->byte_length(), 0u);
  EXPECT_EQ((*empty_view)->element_count(), 0u);
  // Too many dimensions for a view, refused before allocating.
  std::vector<int64_t> rank17(17, 1);
  auto deep =
      BufferView::Allocate(*allocator, rank17, kF32, kDeviceLocal, kUsage);
  EXPECT_EQ(deep.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator->statistics().allocation_count, 1u);
}

TEST(BufferSizesTest, RangesThatWrapAreOutOfRange) {
  RefPtr<HeapAllocator> allocator = HeapAllocator::Create("ranges");
  RefPtr<Buffer> buffer = *allocator->AllocateBuffer(kDeviceLocal, kUsage, 64);
  constexpr uint64_t kHuge = ~uint64_t{0} - 7; // 16 + kHuge wraps to 8
  EXPECT_EQ(buffer->Subspan(16, kHuge).status().code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(buffer->MapRange(16, kHuge).status().code(),
            StatusCode::kOutOfRange);
  EXPECT_EQ(buffer->Subspan(kHuge, 16).status().code(),
            StatusCode::kOutOfRange);
  auto view = BufferView::Create(buffer, 16, kHuge, {}, kF32,
                                 STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR);
  EXPECT_EQ(view.status().code(), StatusCode::kOutOfRange);
  // Subspans of subspans stay inside the allocation.
  RefPtr<Buffer> inner = *buffer->Subspan(32, 32);
  EXPECT_EQ(inner->Subspan(16, 17).status().code(), StatusCode::kOutOfRange);
  RefPtr<Buffer> innermost = *inner->Subspan(16, 16);
  EXPECT_EQ(innermost->byte_offset(), 48u);
  EXPECT_EQ(innermost->host_data(), buffer->host_data() + 48);
}

} // namespace
} // namespace strata::hal
