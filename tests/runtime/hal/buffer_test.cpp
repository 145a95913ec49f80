#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "strata/hal/allocator.h"
#include "strata/hal/buffer.h"
#include "strata/hal/buffer_view.h"
#include "strata/hal/ref_types.h"

namespace strata::hal {
namespace {

constexpr MemoryTypeBitfield kDeviceLocal = STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL;
constexpr BufferUsageBitfield kUsage = STRATA_HAL_BUFFER_USAGE_DEFAULT;
constexpr ElementType kF32 = STRATA_HAL_ELEMENT_TYPE_FLOAT_32;

TEST(AllocatorTest, AllocatesAlignedHostVisibleBuffers) {
  RefPtr<HeapAllocator> allocator = HeapAllocator::Create("test");
  auto buffer = allocator->AllocateBuffer(kDeviceLocal, kUsage, 100);
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  EXPECT_EQ((*buffer)->byte_length(), 100u);
  EXPECT_EQ(reinterpret_cast<uintptr_t>((*buffer)->host_data()) % 64, 0u);
  EXPECT_TRUE((*buffer)->memory_type() & STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL);
  EXPECT_TRUE((*buffer)->memory_type() & STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE);
  EXPECT_EQ((*buffer)->allowed_usage(), kUsage);
  EXPECT_EQ(RefCast<Buffer>(buffer->get()), buffer->get());
  EXPECT_EQ(std::string((*buffer)->ref_type()->name), "hal.buffer");
  EXPECT_EQ(std::string(allocator->ref_type()->name), "hal.allocator");

  auto empty = allocator->AllocateBuffer(kDeviceLocal, kUsage, 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->byte_length(), 0u);
  EXPECT_NE((*empty)->host_data(), nullptr);
}

TEST(AllocatorTest, Statistics) {
  RefPtr<HeapAllocator> allocator = HeapAllocator::Create("stats");
  {
    auto a = allocator->AllocateBuffer(kDeviceLocal, kUsage, 1000);
    auto b = allocator->AllocateBuffer(kDeviceLocal, kUsage, 24);
    ASSERT_TRUE(a.ok() && b.ok());
    AllocatorStatistics stats = allocator->statistics();
    EXPECT_EQ(stats.bytes_live, 1024u);
    EXPECT_EQ(stats.bytes_peak, 1024u);
    EXPECT_EQ(stats.allocation_count, 2u);
    EXPECT_EQ(stats.free_count, 0u);
    a->reset();
    EXPECT_EQ(allocator->statistics().bytes_live, 24u);
  }
  AllocatorStatistics stats = allocator->statistics();
  EXPECT_EQ(stats.bytes_live, 0u);
  EXPECT_EQ(stats.bytes_peak, 1024u);
  EXPECT_EQ(stats.free_count, 2u);
}

TEST(AllocatorTest, BuffersKeepAllocatorAlive) {
  RefPtr<HeapAllocator> allocator = HeapAllocator::Create("alive");
  auto buffer = allocator->AllocateBuffer(kDeviceLocal, kUsage, 16);
  ASSERT_TRUE(buffer.ok());
  HeapAllocator *raw = allocator.get();
  allocator.reset();
  EXPECT_EQ(raw->statistics().bytes_live, 16u);
  buffer->reset(); // Frees the buffer and then the allocator.
}

TEST(AllocatorTest, AbsurdSizesAreResourceExhausted) {
  RefPtr<HeapAllocator> allocator = HeapAllocator::Create("limits");
  auto huge =
      allocator->AllocateBuffer(kDeviceLocal, kUsage, uint64_t{1} << 62);
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);
  auto max = allocator->AllocateBuffer(kDeviceLocal, kUsage, ~uint64_t{0});
  EXPECT_EQ(max.status().code(), StatusCode::kResourceExhausted);

  RefPtr<HeapAllocator> limited =
      HeapAllocator::Create("limited", {.max_allocation_size = 1024});
  EXPECT_TRUE(limited->AllocateBuffer(kDeviceLocal, kUsage, 1024).ok());
  auto over = limited->AllocateBuffer(kDeviceLocal, kUsage, 1025);
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  EXPECT_NE(over.status().message().find("limited"), std::string_view::npos);
  EXPECT_EQ(limited->statistics().allocation_count, 1u);
}

TEST(BufferTest, MapReadWriteAndBounds) {
  RefPtr<HeapAllocator> allocator = HeapAllocator::Create("map");
  std::vector<uint8_t> data = {1, 2, 3, 4, 5, 6, 7, 8};
  auto buffer = allocator->AllocateBufferWithData(kDeviceLocal, kUsage, data);
  ASSERT_TRUE(buffer.ok());
  auto range = (*buffer)->MapRange(2, 4);
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->length, 4u);
  EXPECT_EQ(range->data[0], 3);
  range->data[0] = 42;

  auto whole = (*buffer)->MapRange();
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->length, 8u);
  EXPECT_EQ(whole->bytes()[2], 42);

  EXPECT_EQ((*buffer)->MapRange(8, 0).status().code(), StatusCode::kOk);
  EXPECT_EQ((*buffer)->MapRange(9, 0).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ((*buffer)->MapRange(4, 5).status().code(), StatusCode::kOutOfRange);
  EXPECT_EQ((*buffer)->MapRange(1, ~uint64_t{0} - 1).status().code(),
            StatusCode::kOutOfRange);

  uint8_t out[3] = {};
  ASSERT_TRUE((*buffer)->ReadData(5, out).ok());
  EXPECT_EQ(out[0], 6);
  EXPECT_EQ(out[2], 8);
  EXPECT_FALSE((*buffer)->ReadData(6, out).ok());
  uint8_t in[2] = {9, 9};
  EXPECT_TRUE((*buffer)->WriteData(6, in).ok());
  EXPECT_FALSE((*buffer)->WriteData(7, in).ok());
}

TEST(BufferTest, SubspansRetainTheAllocation) {
  RefPtr<HeapAllocator> allocator = HeapAllocator::Create("subspan");
  std::vector<uint8_t> data(64);
  for (size_t i = 0; i < data.size(); ++i)
    data[i] = uint8_t(i);
  auto buffer = allocator->AllocateBufferWithData(kDeviceLocal, kUsage, data);
  ASSERT_TRUE(buffer.ok());
  Buffer *allocation = buffer->get();

  auto span = (*buffer)->Subspan(16, 32);
  ASSERT_TRUE(span.ok());
  EXPECT_EQ((*span)->byte_offset(), 16u);
  EXPECT_EQ((*span)->byte_length(), 32u);
  EXPECT_EQ((*span)->allocated_buffer(), allocation);
  EXPECT_EQ((*span)->host_data()[0], 16);

  // A subspan of a subspan views the allocation directly.
  auto inner = (*span)->Subspan(8, kWholeBuffer);
  ASSERT_TRUE(inner.ok());
  EXPECT_EQ((*inner)->byte_offset(), 24u);
  EXPECT_EQ((*inner)->byte_length(), 24u);
  EXPECT_EQ((*inner)->allocated_buffer(), allocation);
  EXPECT_EQ((*inner)->host_data()[0], 24);

  EXPECT_EQ((*span)->Subspan(0, 33).status().code(), StatusCode::kOutOfRange);
  // The whole range returns the same buffer.
  auto same = (*buffer)->Subspan(0, kWholeBuffer);
  ASSERT_TRUE(same.ok());
  EXPECT_EQ(same->get(), allocation);

  buffer->reset();
  same.value().reset();
  span->reset();
  EXPECT_EQ(allocator->statistics().bytes_live, 64u);
  EXPECT_EQ((*inner)->host_data()[1], 25);
  inner->reset();
  EXPECT_EQ(allocator->statistics().bytes_live, 0u);
}

TEST(BufferTest, WrappedHostMemory) {
  std::vector<uint8_t> storage(16, 7);
  bool released = false;
  {
    RefPtr<Buffer> buffer = Buffer::WrapHostMemory(
        storage.data(), storage.size(), STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
        kUsage, [&] { released = true; });
    auto range = buffer->MapRange();
    ASSERT_TRUE(range.ok());
    EXPECT_EQ(range->data, storage.data());
  }
  EXPECT_TRUE(released);

  RefPtr<Buffer> device_only = Buffer::WrapHostMemory(
      storage.data(), storage.size(), kDeviceLocal, kUsage, nullptr);
  EXPECT_EQ(device_only->MapRange().status().code(),
            StatusCode::kPermissionDenied);
}

TEST(BufferViewTest, CreateAndQuery) {
  RefPtr<HeapAllocator> allocator = HeapAllocator::Create("view");
  auto buffer = allocator->AllocateBuffer(kDeviceLocal, kUsage, 64);
  ASSERT_TRUE(buffer.ok());
  int64_t shape[] = {2, 3};
  auto view = BufferView::Create(*buffer, shape, kF32);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ((*view)->rank(), 2u);
  EXPECT_EQ((*view)->dim(1), 3);
  EXPECT_EQ((*view)->element_count(), 6u);
  EXPECT_EQ((*view)->byte_length(), 24u);
  EXPECT_EQ((*view)->element_type(), kF32);
  EXPECT_EQ((*view)->encoding_type(),
            EncodingType(STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR));
  EXPECT_EQ((*view)->buffer().get(), buffer->get());
  EXPECT_EQ((*view)->FormatShape(), "2x3xf32");
  EXPECT_EQ(std::string((*view)->ref_type()->name), "hal.buffer_view");

  // Scalars and empty tensors.
  auto scalar = BufferView::Create(*buffer, {}, kF32);
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ((*scalar)->element_count(), 1u);
  int64_t empty_shape[] = {0, 5};
  auto empty = BufferView::Create(*buffer, empty_shape, kF32);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ((*empty)->byte_length(), 0u);

  // With an offset: a view over a subspan.
  auto offset_view = BufferView::Create(
      *buffer, 40, 24, shape, kF32, STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR);
  ASSERT_TRUE(offset_view.ok()) << offset_view.status().ToString();
  EXPECT_EQ((*offset_view)->buffer()->byte_offset(), 40u);
}

TEST(BufferViewTest, ValidationErrors) {
  RefPtr<HeapAllocator> allocator = HeapAllocator::Create("view");
  auto buffer = allocator->AllocateBuffer(kDeviceLocal, kUsage, 16);
  ASSERT_TRUE(buffer.ok());

  int64_t too_big[] = {5};
  auto result = BufferView::Create(*buffer, too_big, kF32);
  EXPECT_EQ(result.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(result.status().message().find("5xf32"), std::string_view::npos)
      << result.status().ToString();

  int64_t negative[] = {-1, 2};
  EXPECT_FALSE(BufferView::Create(*buffer, negative, kF32).ok());
  int64_t overflow[] = {int64_t{1} << 40, int64_t{1} << 40};
  EXPECT_FALSE(BufferView::Create(*buffer, overflow, kF32).ok());
  std::vector<int64_t> high_rank(17, 1);
  EXPECT_FALSE(BufferView::Create(*buffer, high_rank, kF32).ok());
  int64_t ok_shape[] = {2};
  EXPECT_FALSE(BufferView::Create(*buffer, ok_shape, 0x12345678u).ok());
  EXPECT_FALSE(BufferView::Create(*buffer, ok_shape, kF32, 77).ok());
  EXPECT_FALSE(BufferView::Create(nullptr, ok_shape, kF32).ok());
  EXPECT_EQ(BufferView::Create(*buffer, 12, kWholeBuffer, ok_shape, kF32,
                               STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR)
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(BufferView::Create(*buffer, 17, kWholeBuffer, ok_shape, kF32,
                               STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR)
                .status()
                .code(),
            StatusCode::kOutOfRange);
}

TEST(BufferViewTest, AllocateAndCheck) {
  RefPtr<HeapAllocator> allocator = HeapAllocator::Create("view");
  float values[] = {1, 2, 3, 4};
  int64_t shape[] = {2, 2};
  auto view = BufferView::Allocate(
      *allocator, shape, kF32, kDeviceLocal, kUsage,
      {reinterpret_cast<const uint8_t *>(values), sizeof(values)});
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  auto range = (*view)->buffer()->MapRange();
  ASSERT_TRUE(range.ok());
  EXPECT_EQ(range->As<float>()[3], 4.0f);

  EXPECT_FALSE(BufferView::Allocate(*allocator, shape, kF32, kDeviceLocal,
                                    kUsage, {range->data, 3})
                   .ok());

  EXPECT_TRUE(CheckBufferView(view->get(), "input 0", kF32,
                              STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR, shape)
                  .ok());
  int64_t other_shape[] = {2, 3};
  Status mismatch =
      CheckBufferView(view->get(), "input 0", kF32,
                      STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR, other_shape);
  EXPECT_EQ(mismatch.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(mismatch.message(), "input 0: expected 2x3xf32, got 2x2xf32");
  Status type_mismatch =
      CheckBufferView(view->get(), "input 1", STRATA_HAL_ELEMENT_TYPE_SINT_32,
                      STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR, shape);
  EXPECT_EQ(type_mismatch.message(), "input 1: expected 2x2xi32, got 2x2xf32");
  EXPECT_FALSE(CheckBufferView(nullptr, "input 2", kF32,
                               STRATA_HAL_ENCODING_TYPE_DENSE_ROW_MAJOR, shape)
                   .ok());
}

TEST(RefTypesTest, AllHalTypesListed) {
  std::vector<std::string> names;
  for (const RefTypeDescriptor *type : AllRefTypes())
    names.push_back(type->name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "hal.allocator", "hal.buffer", "hal.buffer_view",
                       "hal.command_buffer", "hal.device", "hal.executable",
                       "hal.fence", "hal.semaphore", "hal.driver"}));
}

} // namespace
} // namespace strata::hal
