// The cuda device over a fake CUDA driver (a symbol table of host
// functions: device memory is host memory, launches are recorded and the
// one known kernel runs on the host), and, where a GPU is present, over the
// real driver.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cuda_test_util.h"
#include "strata/hal/drivers/cuda/cuda_allocator.h"
#include "strata/hal/drivers/cuda/cuda_device.h"
#include "strata/hal/drivers/cuda/cuda_driver.h"
#include "strata/hal/drivers/register_drivers.h"

namespace strata::hal::cuda {
namespace {

// ---------------------------------------------------------------------------
// The fake driver. One at a time (the functions are plain C functions).

struct FakeFunction {
  std::string name;
  uint32_t binding_count;
  uint32_t push_constant_count;
};

struct FakeLaunch {
  std::string kernel;
  unsigned grid[3];
  unsigned block[3];
  std::vector<uint64_t> addresses;
  std::vector<uint32_t> constants;
};

struct FakeCuda {
  std::vector<std::string> calls;
  std::vector<FakeLaunch> launches;
  std::map<std::string, FakeFunction> kernels = {
      {"add_constant", {"add_constant", 2, 1}}};
  CUresult launch_result = CUDA_SUCCESS;
  uint64_t release_threshold = 0;
  int live_device_allocations = 0;
  int live_host_allocations = 0;
  // cuMemHostAlloc is CUDA_ERROR_OUT_OF_MEMORY while this many pinned
  // blocks are live (0: never).
  int host_allocation_limit = 0;
  std::vector<void *> freed_host_blocks;
  int loaded_modules = 0;
  int stream_syncs = 0;
};

FakeCuda *fake = nullptr;
int fake_context_storage, fake_stream_storage, fake_pool_storage;
int fake_module_storage;

void *Pointer(CUdeviceptr address) {
  return reinterpret_cast<void *>(uintptr_t(address));
}
CUdeviceptr Address(const void *pointer) {
  return CUdeviceptr(reinterpret_cast<uintptr_t>(pointer));
}

#define FAKE_CALL(name) fake->calls.push_back(#name)

CudaSymbols FakeSymbols() {
  CudaSymbols s;
  s.cuInit = [](unsigned) -> CUresult { return CUDA_SUCCESS; };
  s.cuDriverGetVersion = [](int *version) -> CUresult {
    *version = 12040;
    return CUDA_SUCCESS;
  };
  s.cuGetErrorName = [](CUresult error, const char **name) -> CUresult {
    *name = error == CUDA_ERROR_LAUNCH_FAILED ? "CUDA_ERROR_LAUNCH_FAILED"
            : error == CUDA_ERROR_INVALID_PTX ? "CUDA_ERROR_INVALID_PTX"
                                              : "CUDA_ERROR_UNKNOWN";
    return CUDA_SUCCESS;
  };
  s.cuGetErrorString = [](CUresult error, const char **text) -> CUresult {
    *text = error == CUDA_ERROR_LAUNCH_FAILED ? "unspecified launch failure"
                                              : "fake error";
    return CUDA_SUCCESS;
  };
  s.cuDeviceGetCount = [](int *count) -> CUresult {
    *count = 1;
    return CUDA_SUCCESS;
  };
  s.cuDeviceGet = [](CUdevice *device, int ordinal) -> CUresult {
    *device = ordinal;
    return CUDA_SUCCESS;
  };
  s.cuDeviceGetName = [](char *name, int length, CUdevice) -> CUresult {
    std::snprintf(name, size_t(length), "Fake GPU");
    return CUDA_SUCCESS;
  };
  s.cuDeviceGetAttribute = [](int *value, CUdevice_attribute attribute,
                              CUdevice) -> CUresult {
    switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
      *value = 9;
      break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
      *value = 0;
      break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = 132;
      break;
    default:
      *value = 1;
    }
    return CUDA_SUCCESS;
  };
  s.cuDeviceTotalMem_v2 = [](size_t *bytes, CUdevice) -> CUresult {
    *bytes = size_t{80} << 30;
    return CUDA_SUCCESS;
  };
  s.cuDevicePrimaryCtxRetain = [](CUcontext *context, CUdevice) -> CUresult {
    *context = reinterpret_cast<CUcontext>(&fake_context_storage);
    return CUDA_SUCCESS;
  };
  s.cuDevicePrimaryCtxRelease_v2 = [](CUdevice) -> CUresult {
    FAKE_CALL(cuDevicePrimaryCtxRelease_v2);
    return CUDA_SUCCESS;
  };
  s.cuCtxSetCurrent = [](CUcontext) -> CUresult { return CUDA_SUCCESS; };
  s.cuStreamCreate = [](CUstream *stream, unsigned flags) -> CUresult {
    EXPECT_EQ(flags, CU_STREAM_NON_BLOCKING);
    *stream = reinterpret_cast<CUstream>(&fake_stream_storage);
    return CUDA_SUCCESS;
  };
  s.cuStreamDestroy_v2 = [](CUstream) -> CUresult { return CUDA_SUCCESS; };
  s.cuStreamSynchronize = [](CUstream) -> CUresult {
    ++fake->stream_syncs;
    return CUDA_SUCCESS;
  };
  s.cuMemAlloc_v2 = [](CUdeviceptr *pointer, size_t bytes) -> CUresult {
    *pointer = Address(std::malloc(bytes));
    ++fake->live_device_allocations;
    return CUDA_SUCCESS;
  };
  s.cuMemFree_v2 = [](CUdeviceptr pointer) -> CUresult {
    std::free(Pointer(pointer));
    --fake->live_device_allocations;
    return CUDA_SUCCESS;
  };
  s.cuDeviceGetDefaultMemPool = [](CUmemoryPool *pool, CUdevice) -> CUresult {
    *pool = reinterpret_cast<CUmemoryPool>(&fake_pool_storage);
    return CUDA_SUCCESS;
  };
  s.cuMemPoolSetAttribute = [](CUmemoryPool, CUmemPool_attribute attribute,
                               void *value) -> CUresult {
    if (attribute == CU_MEMPOOL_ATTR_RELEASE_THRESHOLD)
      fake->release_threshold = *static_cast<uint64_t *>(value);
    return CUDA_SUCCESS;
  };
  s.cuMemPoolTrimTo = [](CUmemoryPool, size_t) -> CUresult {
    FAKE_CALL(cuMemPoolTrimTo);
    return CUDA_SUCCESS;
  };
  s.cuMemAllocAsync = [](CUdeviceptr *pointer, size_t bytes,
                         CUstream) -> CUresult {
    FAKE_CALL(cuMemAllocAsync);
    *pointer = Address(std::malloc(bytes));
    ++fake->live_device_allocations;
    return CUDA_SUCCESS;
  };
  s.cuMemFreeAsync = [](CUdeviceptr pointer, CUstream) -> CUresult {
    FAKE_CALL(cuMemFreeAsync);
    std::free(Pointer(pointer));
    --fake->live_device_allocations;
    return CUDA_SUCCESS;
  };
  s.cuMemHostAlloc = [](void **pointer, size_t bytes,
                        unsigned flags) -> CUresult {
    FAKE_CALL(cuMemHostAlloc);
    EXPECT_EQ(flags, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP);
    if (fake->host_allocation_limit &&
        fake->live_host_allocations >= fake->host_allocation_limit)
      return CUDA_ERROR_OUT_OF_MEMORY;
    *pointer = std::malloc(bytes);
    ++fake->live_host_allocations;
    return CUDA_SUCCESS;
  };
  s.cuMemFreeHost = [](void *pointer) -> CUresult {
    FAKE_CALL(cuMemFreeHost);
    fake->freed_host_blocks.push_back(pointer);
    std::free(pointer);
    --fake->live_host_allocations;
    return CUDA_SUCCESS;
  };
  s.cuMemHostGetDevicePointer_v2 = [](CUdeviceptr *device, void *host,
                                      unsigned) -> CUresult {
    *device = Address(host);
    return CUDA_SUCCESS;
  };
  s.cuMemcpyAsync = [](CUdeviceptr target, CUdeviceptr source, size_t bytes,
                       CUstream) -> CUresult {
    FAKE_CALL(cuMemcpyAsync);
    std::memmove(Pointer(target), Pointer(source), bytes);
    return CUDA_SUCCESS;
  };
  s.cuMemcpyHtoDAsync_v2 = [](CUdeviceptr target, const void *source,
                              size_t bytes, CUstream) -> CUresult {
    FAKE_CALL(cuMemcpyHtoDAsync_v2);
    std::memcpy(Pointer(target), source, bytes);
    return CUDA_SUCCESS;
  };
  s.cuMemcpyDtoHAsync_v2 = [](void *target, CUdeviceptr source, size_t bytes,
                              CUstream) -> CUresult {
    FAKE_CALL(cuMemcpyDtoHAsync_v2);
    std::memcpy(target, Pointer(source), bytes);
    return CUDA_SUCCESS;
  };
  s.cuMemsetD8Async = [](CUdeviceptr target, unsigned char value, size_t count,
                         CUstream) -> CUresult {
    FAKE_CALL(cuMemsetD8Async);
    std::memset(Pointer(target), value, count);
    return CUDA_SUCCESS;
  };
  s.cuMemsetD16Async = [](CUdeviceptr target, unsigned short value,
                          size_t count, CUstream) -> CUresult {
    FAKE_CALL(cuMemsetD16Async);
    for (size_t i = 0; i < count; ++i)
      std::memcpy(static_cast<uint8_t *>(Pointer(target)) + 2 * i, &value, 2);
    return CUDA_SUCCESS;
  };
  s.cuMemsetD32Async = [](CUdeviceptr target, unsigned int value, size_t count,
                          CUstream) -> CUresult {
    FAKE_CALL(cuMemsetD32Async);
    for (size_t i = 0; i < count; ++i)
      std::memcpy(static_cast<uint8_t *>(Pointer(target)) + 4 * i, &value, 4);
    return CUDA_SUCCESS;
  };
  s.cuModuleLoadDataEx = [](CUmodule *module, const void *image,
                            unsigned option_count, CUjit_option *options,
                            void **values) -> CUresult {
    FAKE_CALL(cuModuleLoadDataEx);
    if (std::strstr(static_cast<const char *>(image), "syntax error")) {
      for (unsigned i = 0; i < option_count; ++i)
        if (options[i] == CU_JIT_ERROR_LOG_BUFFER)
          std::strcpy(static_cast<char *>(values[i]),
                      "ptxas fatal: syntax error at line 3");
      return CUDA_ERROR_INVALID_PTX;
    }
    *module = reinterpret_cast<CUmodule>(&fake_module_storage);
    ++fake->loaded_modules;
    return CUDA_SUCCESS;
  };
  s.cuModuleUnload = [](CUmodule) -> CUresult {
    --fake->loaded_modules;
    return CUDA_SUCCESS;
  };
  s.cuModuleGetFunction = [](CUfunction *function, CUmodule,
                             const char *name) -> CUresult {
    auto it = fake->kernels.find(name);
    if (it == fake->kernels.end())
      return 500; // CUDA_ERROR_NOT_FOUND
    *function = reinterpret_cast<CUfunction>(&it->second);
    return CUDA_SUCCESS;
  };
  s.cuLaunchKernel = [](CUfunction function, unsigned gx, unsigned gy,
                        unsigned gz, unsigned bx, unsigned by, unsigned bz,
                        unsigned shared, CUstream, void **params,
                        void **extra) -> CUresult {
    FAKE_CALL(cuLaunchKernel);
    EXPECT_EQ(shared, 0u);
    EXPECT_EQ(extra, nullptr);
    if (fake->launch_result != CUDA_SUCCESS)
      return fake->launch_result;
    auto *kernel = reinterpret_cast<FakeFunction *>(function);
    FakeLaunch launch{kernel->name, {gx, gy, gz}, {bx, by, bz}, {}, {}};
    for (uint32_t i = 0; i < kernel->binding_count; ++i)
      launch.addresses.push_back(*static_cast<uint64_t *>(params[i]));
    for (uint32_t i = 0; i < kernel->push_constant_count; ++i)
      launch.constants.push_back(
          *static_cast<uint32_t *>(params[kernel->binding_count + i]));
    // add_constant on the host: out[i] = in[i] + addend.
    auto *in = static_cast<uint32_t *>(Pointer(launch.addresses[0]));
    auto *out = static_cast<uint32_t *>(Pointer(launch.addresses[1]));
    for (unsigned i = 0; i < gx * bx; ++i)
      out[i] = in[i] + launch.constants[0];
    fake->launches.push_back(std::move(launch));
    return CUDA_SUCCESS;
  };
  s.cuEventCreate = [](CUevent *event, unsigned) -> CUresult {
    *event = reinterpret_cast<CUevent>(new int(0));
    return CUDA_SUCCESS;
  };
  s.cuEventDestroy_v2 = [](CUevent event) -> CUresult {
    delete reinterpret_cast<int *>(event);
    return CUDA_SUCCESS;
  };
  s.cuEventRecord = [](CUevent, CUstream) -> CUresult {
    FAKE_CALL(cuEventRecord);
    return CUDA_SUCCESS;
  };
  s.cuEventSynchronize = [](CUevent) -> CUresult { return CUDA_SUCCESS; };
  s.cuEventElapsedTime_v2 = [](float *milliseconds, CUevent,
                               CUevent) -> CUresult {
    *milliseconds = 0.5f;
    return CUDA_SUCCESS;
  };
  return s;
}

class CudaFakeDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    fake = &state_;
    auto device =
        CudaDevice::Create(std::make_shared<CudaSymbols>(FakeSymbols()), 0);
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = std::move(*device);
  }
  void TearDown() override {
    device_.reset();
    // Every allocation and module went back to the driver.
    EXPECT_EQ(state_.live_device_allocations, 0);
    EXPECT_EQ(state_.live_host_allocations, 0);
    EXPECT_EQ(state_.loaded_modules, 0);
    fake = nullptr;
  }

  RefPtr<Buffer> Allocate(MemoryTypeBitfield memory_type, uint64_t length) {
    auto buffer = device_->allocator()->AllocateBuffer(
        memory_type, STRATA_HAL_BUFFER_USAGE_DEFAULT, length);
    EXPECT_TRUE(buffer.ok()) << buffer.status().ToString();
    return buffer.ok() ? std::move(*buffer) : nullptr;
  }

  RefPtr<Executable> LoadAddConstant(uint32_t blocks_per_workgroup = 1) {
    std::vector<uint8_t> bytes = testing::BuildCudaExecutable(
        {{"add_constant", 2, 1, {4, 1, 1}, blocks_per_workgroup}},
        testing::kAddConstantPtx, 80);
    auto executable = device_->CreateExecutable(
        STRATA_HAL_EXECUTABLE_FORMAT_CUDA_PTX, bytes, {});
    EXPECT_TRUE(executable.ok()) << executable.status().ToString();
    return executable.ok() ? std::move(*executable) : nullptr;
  }

  RefPtr<CommandBuffer> NewCommandBuffer() {
    auto command_buffer =
        device_->CreateCommandBuffer(STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
                                     STRATA_HAL_COMMAND_CATEGORY_TRANSFER |
                                         STRATA_HAL_COMMAND_CATEGORY_DISPATCH,
                                     STRATA_HAL_QUEUE_AFFINITY_ANY, 0);
    EXPECT_TRUE(command_buffer.ok()) << command_buffer.status().ToString();
    return command_buffer.ok() ? std::move(*command_buffer) : nullptr;
  }

  Status Execute(CommandBuffer *command_buffer, Fence *signal_fence) {
    CommandBuffer *const list[] = {command_buffer};
    return device_->QueueExecute(STRATA_HAL_QUEUE_AFFINITY_ANY, nullptr,
                                 signal_fence, list);
  }

  std::vector<uint32_t> ReadWords(Buffer *buffer, size_t count) {
    std::vector<uint32_t> words(count);
    Status status = device_->QueueRead(
        STRATA_HAL_QUEUE_AFFINITY_ANY, nullptr, nullptr, buffer, 0,
        {reinterpret_cast<uint8_t *>(words.data()), count * 4});
    EXPECT_TRUE(status.ok()) << status.ToString();
    return words;
  }

  FakeCuda state_;
  RefPtr<CudaDevice> device_;
};

TEST_F(CudaFakeDeviceTest, PropertiesAndQueries) {
  EXPECT_EQ(device_->id(), "cuda");
  EXPECT_EQ(state_.release_threshold, ~uint64_t{0});
  EXPECT_EQ(*device_->QueryI64("hal.executable.format", "cuda-ptx-v1"), 1);
  EXPECT_EQ(*device_->QueryI64("hal.executable.format", "embedded-elf-x86_64"),
            0);
  EXPECT_EQ(*device_->QueryI64("hal.device", "concurrency"), 1);
  EXPECT_EQ(*device_->QueryI64("hal.dispatch", "concurrency"), 132);
  EXPECT_EQ(*device_->QueryI64("hal.device.id", "cu*"), 1);
  EXPECT_EQ(*device_->QueryI64("hal.device.id", "local-*"), 0);
  EXPECT_EQ(device_->QueryI64("hal.cpu.features", "avx2").status().code(),
            StatusCode::kNotFound);
  std::string info = device_->DumpInfo();
  for (const char *text : {"Fake GPU", "sm_90", "80.0 GiB",
                           "multiprocessors: "
                           "132",
                           "driver version: 12.4", "cuda-ptx-v1"})
    EXPECT_NE(info.find(text), std::string::npos) << text << "\n" << info;
}

TEST_F(CudaFakeDeviceTest, MemoryKinds) {
  RefPtr<Buffer> device_buffer =
      Allocate(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, 64);
  RefPtr<Buffer> host_buffer = Allocate(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL |
                                            STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
                                        64);
  ASSERT_TRUE(device_buffer && host_buffer);
  EXPECT_EQ(device_buffer->host_data(), nullptr);
  EXPECT_FALSE(device_buffer->MapRange().ok());
  ASSERT_NE(host_buffer->host_data(), nullptr);
  EXPECT_TRUE(host_buffer->memory_type() &
              STRATA_HAL_MEMORY_TYPE_HOST_COHERENT);
  EXPECT_EQ(CudaBuffer::FromBuffer(host_buffer.get())->device_address(),
            Address(host_buffer->host_data()));
  EXPECT_EQ(state_.live_device_allocations, 1);
  EXPECT_EQ(state_.live_host_allocations, 1);
  AllocatorStatistics stats = device_->allocator()->statistics();
  EXPECT_EQ(stats.bytes_live, 128u);
  // Subspans find their allocation's address plus their offset.
  auto subspan = device_buffer->Subspan(16, 16);
  ASSERT_TRUE(subspan.ok());
  EXPECT_EQ(*CudaDeviceAddress(subspan->get(), "x"),
            CudaBuffer::FromBuffer(device_buffer.get())->device_address() + 16);
  // The memory limit applies to both kinds.
  ASSERT_TRUE(device_->allocator()->SetMemoryLimit(160).ok());
  auto refused = device_->allocator()->AllocateBuffer(
      STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, STRATA_HAL_BUFFER_USAGE_DEFAULT, 64);
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
}

// Pinned host memory costs the driver hundreds of microseconds or more to
// allocate and free: freed blocks are cached and handed out again.
constexpr MemoryTypeBitfield kHostVisible =
    STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL | STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE;

int CountCalls(const FakeCuda &state, std::string_view name) {
  return int(std::count(state.calls.begin(), state.calls.end(), name));
}

TEST_F(CudaFakeDeviceTest, FreedHostBlockIsReusedForANearbySize) {
  RefPtr<Allocator> allocator = device_->allocator();
  RefPtr<Buffer> first = Allocate(kHostVisible, 5000);
  ASSERT_TRUE(first);
  void *host = first->host_data();
  CUdeviceptr address = CudaBuffer::FromBuffer(first.get())->device_address();
  first.reset();
  EXPECT_EQ(CountCalls(state_, "cuMemFreeHost"), 0);
  EXPECT_EQ(state_.live_host_allocations, 1);
  AllocatorStatistics stats = allocator->statistics();
  EXPECT_EQ(stats.bytes_live, 0u);
  EXPECT_EQ(stats.bytes_cached, 8192u); // 5000 bytes in 4 KiB granules.

  // 6000 bytes round to the same 8 KiB block: no driver call.
  RefPtr<Buffer> second = Allocate(kHostVisible, 6000);
  ASSERT_TRUE(second);
  EXPECT_EQ(CountCalls(state_, "cuMemHostAlloc"), 1);
  EXPECT_EQ(second->host_data(), host);
  EXPECT_EQ(CudaBuffer::FromBuffer(second.get())->device_address(), address);
  EXPECT_EQ(second->byte_length(), 6000u);
  EXPECT_TRUE(second->memory_type() & STRATA_HAL_MEMORY_TYPE_HOST_COHERENT);
  stats = allocator->statistics();
  EXPECT_EQ(stats.bytes_live, 6000u);
  EXPECT_EQ(stats.bytes_cached, 0u);
  EXPECT_EQ(stats.allocation_count, 2u);
  EXPECT_EQ(stats.free_count, 1u);

  // A far smaller request does not take a larger block.
  second.reset();
  RefPtr<Buffer> small = Allocate(kHostVisible, 100);
  ASSERT_TRUE(small);
  EXPECT_NE(small->host_data(), host);
  EXPECT_EQ(CountCalls(state_, "cuMemHostAlloc"), 2);
  EXPECT_EQ(allocator->statistics().bytes_cached, 8192u);
  // Device memory requests never take pinned blocks.
  RefPtr<Buffer> device_buffer =
      Allocate(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, 8192);
  ASSERT_TRUE(device_buffer);
  EXPECT_EQ(device_buffer->host_data(), nullptr);
  EXPECT_EQ(allocator->statistics().bytes_cached, 8192u);
  // The cached block goes back to the driver with the device (TearDown).
}

TEST_F(CudaFakeDeviceTest, TrimFreesCachedHostBlocks) {
  RefPtr<Buffer> buffer = Allocate(kHostVisible, 64);
  ASSERT_TRUE(buffer);
  void *host = buffer->host_data();
  buffer.reset();
  EXPECT_EQ(device_->allocator()->statistics().bytes_cached, 4096u);
  EXPECT_TRUE(state_.freed_host_blocks.empty());
  ASSERT_TRUE(device_->Trim().ok());
  EXPECT_EQ(state_.freed_host_blocks, std::vector<void *>{host});
  EXPECT_EQ(state_.live_host_allocations, 0);
  EXPECT_EQ(device_->allocator()->statistics().bytes_cached, 0u);
  EXPECT_EQ(CountCalls(state_, "cuMemPoolTrimTo"), 1);
}

TEST_F(CudaFakeDeviceTest, CachedHostBlocksGiveWayToTheMemoryLimit) {
  RefPtr<Allocator> allocator = device_->allocator();
  ASSERT_TRUE(allocator->SetMemoryLimit(32768).ok());
  RefPtr<Buffer> old_block = Allocate(kHostVisible, 8192);
  RefPtr<Buffer> new_block = Allocate(kHostVisible, 8192);
  ASSERT_TRUE(old_block && new_block);
  void *old_host = old_block->host_data();
  old_block.reset();
  new_block.reset();
  EXPECT_EQ(allocator->statistics().bytes_cached, 16384u);
  // 20 KiB live leaves room for 12 KiB: the oldest block goes.
  RefPtr<Buffer> device_buffer =
      Allocate(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, 20480);
  ASSERT_TRUE(device_buffer);
  EXPECT_EQ(state_.freed_host_blocks, std::vector<void *>{old_host});
  EXPECT_EQ(allocator->statistics().bytes_cached, 8192u);
  // A request past the limit fails whatever is cached.
  auto refused = allocator->AllocateBuffer(
      kHostVisible, STRATA_HAL_BUFFER_USAGE_DEFAULT, 16384);
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  // 12 KiB more reaches the limit: the last cached block goes too.
  RefPtr<Buffer> host_buffer = Allocate(kHostVisible, 12288);
  ASSERT_TRUE(host_buffer);
  void *host = host_buffer->host_data();
  EXPECT_EQ(state_.freed_host_blocks.size(), 2u);
  EXPECT_EQ(allocator->statistics().bytes_cached, 0u);
  host_buffer.reset();
  EXPECT_EQ(allocator->statistics().bytes_cached, 12288u);
  // Lowering the limit drops cached blocks over it at once.
  ASSERT_TRUE(allocator->SetMemoryLimit(24576).ok());
  EXPECT_EQ(state_.freed_host_blocks.back(), host);
  EXPECT_EQ(allocator->statistics().bytes_cached, 0u);
  EXPECT_EQ(state_.live_host_allocations, 0);
}

TEST_F(CudaFakeDeviceTest, HostBlockCacheKeepsToItsBudgetDroppingTheOldest) {
  CudaAllocatorOptions options;
  options.host_block_cache_bytes = 12288;
  RefPtr<CudaAllocator> allocator =
      CudaAllocator::Create("small cache", device_->context(), options);
  auto allocate = [&](uint64_t length) {
    return *allocator->AllocateBuffer(kHostVisible,
                                      STRATA_HAL_BUFFER_USAGE_DEFAULT, length);
  };
  RefPtr<Buffer> a = allocate(4096), b = allocate(4096), c = allocate(4096);
  RefPtr<Buffer> d = allocate(8192), e = allocate(16384);
  void *a_host = a->host_data(), *b_host = b->host_data();
  void *e_host = e->host_data();
  a.reset();
  b.reset();
  c.reset();
  EXPECT_EQ(allocator->statistics().bytes_cached, 12288u);
  EXPECT_TRUE(state_.freed_host_blocks.empty());
  // 8 KiB more: the two oldest make room.
  d.reset();
  EXPECT_EQ(state_.freed_host_blocks, (std::vector<void *>{a_host, b_host}));
  EXPECT_EQ(allocator->statistics().bytes_cached, 12288u);
  // A block over the whole budget is freed at once.
  e.reset();
  EXPECT_EQ(state_.freed_host_blocks.back(), e_host);
  EXPECT_EQ(allocator->statistics().bytes_cached, 12288u);
  // The allocator frees the rest when it goes.
  allocator.reset();
  EXPECT_EQ(state_.live_host_allocations, 0);

  // A budget of 0 caches nothing.
  options.host_block_cache_bytes = 0;
  allocator = CudaAllocator::Create("no cache", device_->context(), options);
  allocate(100).reset();
  EXPECT_EQ(allocator->statistics().bytes_cached, 0u);
  EXPECT_EQ(state_.live_host_allocations, 0);
}

TEST_F(CudaFakeDeviceTest, OutOfPinnedMemoryFreesTheCacheAndRetries) {
  RefPtr<Buffer> buffer = Allocate(kHostVisible, 4096);
  ASSERT_TRUE(buffer);
  buffer.reset();
  // The driver refuses a second pinned block while one is live.
  state_.host_allocation_limit = 1;
  RefPtr<Buffer> large = Allocate(kHostVisible, 65536);
  ASSERT_TRUE(large);
  EXPECT_EQ(CountCalls(state_, "cuMemHostAlloc"), 3);
  EXPECT_EQ(CountCalls(state_, "cuMemFreeHost"), 1);
  EXPECT_EQ(device_->allocator()->statistics().bytes_cached, 0u);
  // With nothing cached the refusal stands.
  auto refused = device_->allocator()->AllocateBuffer(
      kHostVisible, STRATA_HAL_BUFFER_USAGE_DEFAULT, 65536);
  EXPECT_EQ(refused.status().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(device_->allocator()->statistics().bytes_live, 65536u);
}

TEST_F(CudaFakeDeviceTest, ImportCopiesIntoDeviceMemory) {
  std::vector<uint8_t> bytes = {1, 2, 3, 4, 5, 6, 7, 8};
  bool released = false;
  auto buffer = device_->allocator()->ImportHostBytes(
      STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL | STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
      STRATA_HAL_BUFFER_USAGE_DEFAULT, bytes, [&] { released = true; });
  ASSERT_TRUE(buffer.ok()) << buffer.status().ToString();
  EXPECT_TRUE(released);
  EXPECT_EQ((*buffer)->host_data(), nullptr);
  bytes.assign(8, 0); // The buffer holds its own copy.
  std::vector<uint32_t> words = ReadWords(buffer->get(), 2);
  EXPECT_EQ(words[0], 0x04030201u);
  EXPECT_EQ(words[1], 0x08070605u);
}

TEST_F(CudaFakeDeviceTest, CommandBufferReplaysOntoTheStream) {
  RefPtr<Buffer> input = Allocate(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, 32);
  RefPtr<Buffer> output = Allocate(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, 32);
  RefPtr<Buffer> copy = Allocate(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL |
                                     STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
                                 32);
  RefPtr<Executable> executable = LoadAddConstant();
  RefPtr<CommandBuffer> command_buffer = NewCommandBuffer();
  ASSERT_TRUE(input && output && copy && executable && command_buffer);

  // input = 7 7 7 7 | 0x0102 pattern | 10 11 (update), then
  // output = input + 5 over 8 words (2 workgroups of 4), copy = output.
  ASSERT_TRUE(command_buffer->FillBuffer(input.get(), 0, 16, 7, 4).ok());
  ASSERT_TRUE(command_buffer->FillBuffer(input.get(), 16, 8, 0x0102, 2).ok());
  ASSERT_TRUE(command_buffer->FillBuffer(output.get(), 0, 32, 0xAB, 1).ok());
  uint32_t updates[] = {10, 11};
  ASSERT_TRUE(command_buffer
                  ->UpdateBuffer({reinterpret_cast<uint8_t *>(updates), 8},
                                 input.get(), 24)
                  .ok());
  ASSERT_TRUE(command_buffer->ExecutionBarrier().ok());
  uint32_t constants[] = {5};
  BufferBinding bindings[] = {{input.get(), 0, kWholeBuffer},
                              {output.get(), 0, kWholeBuffer}};
  ASSERT_TRUE(
      command_buffer
          ->Dispatch(executable.get(), 0, {2, 1, 1}, constants, bindings, 3)
          .ok());
  // A zero-count grid runs nothing.
  ASSERT_TRUE(
      command_buffer
          ->Dispatch(executable.get(), 0, {0, 1, 1}, constants, bindings)
          .ok());
  ASSERT_TRUE(command_buffer->ExecutionBarrier().ok());
  ASSERT_TRUE(
      command_buffer->CopyBuffer(output.get(), 0, copy.get(), 0, 32).ok());
  ASSERT_TRUE(command_buffer->Finalize().ok());

  state_.calls.clear();
  auto fence = device_->CreateFence();
  ASSERT_TRUE(fence.ok());
  Status status = Execute(command_buffer.get(), fence->get());
  ASSERT_TRUE(status.ok()) << status.ToString();
  EXPECT_TRUE((*fence)->Query().ok());

  std::vector<std::string> expected_calls = {
      "cuMemsetD32Async",     "cuMemsetD16Async", "cuMemsetD8Async",
      "cuMemcpyHtoDAsync_v2", "cuLaunchKernel",   "cuMemcpyAsync"};
  EXPECT_EQ(state_.calls, expected_calls);
  ASSERT_EQ(state_.launches.size(), 1u);
  const FakeLaunch &launch = state_.launches[0];
  EXPECT_EQ(launch.kernel, "add_constant");
  EXPECT_EQ(launch.grid[0], 2u);
  EXPECT_EQ(launch.grid[1], 1u);
  EXPECT_EQ(launch.grid[2], 1u);
  EXPECT_EQ(launch.block[0], 4u);
  EXPECT_EQ(launch.block[1], 1u);
  ASSERT_EQ(launch.addresses.size(), 2u);
  EXPECT_EQ(launch.addresses[0],
            CudaBuffer::FromBuffer(input.get())->device_address());
  EXPECT_EQ(launch.addresses[1],
            CudaBuffer::FromBuffer(output.get())->device_address());
  EXPECT_EQ(launch.constants, std::vector<uint32_t>{5});

  std::vector<uint32_t> expected = {
      12, 12, 12, 12, 0x01020102 + 5, 0x01020102 + 5, 15, 16};
  EXPECT_EQ(ReadWords(output.get(), 8), expected);
  // Host-visible memory is read in place.
  std::vector<uint32_t> copied(8);
  std::memcpy(copied.data(), copy->host_data(), 32);
  EXPECT_EQ(copied, expected);
}

TEST_F(CudaFakeDeviceTest, BindingOffsetsReachTheKernel) {
  RefPtr<Buffer> buffer = Allocate(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, 256);
  RefPtr<Executable> executable = LoadAddConstant();
  RefPtr<CommandBuffer> command_buffer = NewCommandBuffer();
  ASSERT_TRUE(buffer && executable && command_buffer);
  auto subspan = buffer->Subspan(64, 128);
  ASSERT_TRUE(subspan.ok());
  uint32_t constants[] = {1};
  BufferBinding bindings[] = {{subspan->get(), 32, 16},
                              {buffer.get(), 128, 16}};
  ASSERT_TRUE(command_buffer->FillBuffer(buffer.get(), 0, 256, 0, 4).ok());
  ASSERT_TRUE(
      command_buffer
          ->Dispatch(executable.get(), 0, {1, 1, 1}, constants, bindings)
          .ok());
  ASSERT_TRUE(command_buffer->Finalize().ok());
  ASSERT_TRUE(Execute(command_buffer.get(), nullptr).ok());
  ASSERT_EQ(state_.launches.size(), 1u);
  CUdeviceptr base = CudaBuffer::FromBuffer(buffer.get())->device_address();
  EXPECT_EQ(state_.launches[0].addresses[0], base + 96);
  EXPECT_EQ(state_.launches[0].addresses[1], base + 128);
}

TEST_F(CudaFakeDeviceTest, BlocksPerWorkgroupScaleTheGrid) {
  RefPtr<Buffer> buffer = Allocate(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, 256);
  RefPtr<Executable> executable = LoadAddConstant(/*blocks_per_workgroup=*/4);
  RefPtr<CommandBuffer> command_buffer = NewCommandBuffer();
  ASSERT_TRUE(buffer && executable && command_buffer);
  uint32_t constants[] = {1};
  BufferBinding bindings[] = {{buffer.get(), 0, 128}, {buffer.get(), 128, 128}};
  ASSERT_TRUE(
      command_buffer
          ->Dispatch(executable.get(), 0, {2, 3, 1}, constants, bindings)
          .ok());
  ASSERT_TRUE(command_buffer->Finalize().ok());
  ASSERT_TRUE(Execute(command_buffer.get(), nullptr).ok());
  ASSERT_EQ(state_.launches.size(), 1u);
  EXPECT_EQ(state_.launches[0].grid[0], 8u);
  EXPECT_EQ(state_.launches[0].grid[1], 3u);
  EXPECT_EQ(state_.launches[0].grid[2], 1u);

  // x scaled past CUDA's 2^31 - 1 blocks is refused before the launch.
  RefPtr<Executable> widest = LoadAddConstant(/*blocks_per_workgroup=*/65536);
  RefPtr<CommandBuffer> too_wide = NewCommandBuffer();
  ASSERT_TRUE(widest && too_wide);
  ASSERT_TRUE(
      too_wide->Dispatch(widest.get(), 0, {65535, 1, 1}, constants, bindings)
          .ok());
  ASSERT_TRUE(too_wide->Finalize().ok());
  Status status = Execute(too_wide.get(), nullptr);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.ToString().find("past CUDA's grid limits"),
            std::string::npos)
      << status.ToString();
  EXPECT_EQ(state_.launches.size(), 1u);
}

TEST_F(CudaFakeDeviceTest, FailedLaunchFailsTheSignalFence) {
  RefPtr<Buffer> buffer = Allocate(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, 64);
  RefPtr<Executable> executable = LoadAddConstant();
  RefPtr<CommandBuffer> command_buffer = NewCommandBuffer();
  ASSERT_TRUE(buffer && executable && command_buffer);
  uint32_t constants[] = {1};
  BufferBinding bindings[] = {{buffer.get(), 0, 32}, {buffer.get(), 32, 32}};
  ASSERT_TRUE(
      command_buffer
          ->Dispatch(executable.get(), 0, {1, 1, 1}, constants, bindings)
          .ok());
  ASSERT_TRUE(command_buffer->Finalize().ok());
  state_.launch_result = CUDA_ERROR_LAUNCH_FAILED;
  auto fence = device_->CreateFence();
  ASSERT_TRUE(fence.ok());
  int syncs = state_.stream_syncs;
  Status status = Execute(command_buffer.get(), fence->get());
  EXPECT_FALSE(status.ok());
  // The stream is still waited for: earlier work may use the buffers.
  EXPECT_GT(state_.stream_syncs, syncs);
  Status fence_status = (*fence)->Query();
  ASSERT_FALSE(fence_status.ok());
  for (const char *text :
       {"CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure) in "
        "cuLaunchKernel",
        "dispatch of 'add_constant'", "queue_execute"})
    EXPECT_NE(fence_status.message().find(text), std::string_view::npos)
        << text << ": " << fence_status.ToString();
}

TEST_F(CudaFakeDeviceTest, HostMemoryTheDeviceCannotReachIsRefused) {
  std::vector<uint8_t> host(64);
  RefPtr<Buffer> wrapped = Buffer::WrapHostMemory(
      host.data(), host.size(), STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
      STRATA_HAL_BUFFER_USAGE_DEFAULT, nullptr);
  RefPtr<Buffer> buffer = Allocate(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, 64);
  RefPtr<Executable> executable = LoadAddConstant();
  RefPtr<CommandBuffer> command_buffer = NewCommandBuffer();
  ASSERT_TRUE(buffer && executable && command_buffer);
  uint32_t constants[] = {1};
  BufferBinding bindings[] = {{wrapped.get(), 0, 32}, {buffer.get(), 0, 32}};
  ASSERT_TRUE(
      command_buffer
          ->Dispatch(executable.get(), 0, {1, 1, 1}, constants, bindings)
          .ok());
  ASSERT_TRUE(command_buffer->Finalize().ok());
  Status status = Execute(command_buffer.get(), nullptr);
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("binding 0 is memory the cuda device "
                                  "cannot reach"),
            std::string_view::npos)
      << status.ToString();
  EXPECT_TRUE(state_.launches.empty());
  // Queue reads and writes of host memory work in place.
  std::vector<uint8_t> bytes = {9, 8, 7};
  ASSERT_TRUE(device_
                  ->QueueWrite(STRATA_HAL_QUEUE_AFFINITY_ANY, nullptr, nullptr,
                               bytes, wrapped.get(), 4)
                  .ok());
  EXPECT_EQ(host[5], 8);
}

TEST_F(CudaFakeDeviceTest, ExecutableLoadErrors) {
  std::vector<uint8_t> bad_ptx = testing::BuildCudaExecutable(
      {{"add_constant", 2, 1, {4, 1, 1}}}, ".version 7.0 syntax error", 80);
  auto executable = device_->CreateExecutable(
      STRATA_HAL_EXECUTABLE_FORMAT_CUDA_PTX, bad_ptx, {});
  ASSERT_FALSE(executable.ok());
  EXPECT_NE(
      executable.status().message().find("ptxas fatal: syntax error at line 3"),
      std::string_view::npos)
      << executable.status().ToString();
  EXPECT_NE(executable.status().message().find("CUDA_ERROR_INVALID_PTX"),
            std::string_view::npos);

  std::vector<uint8_t> too_new = testing::BuildCudaExecutable(
      {{"add_constant", 2, 1, {4, 1, 1}}}, testing::kAddConstantPtx, 100);
  executable = device_->CreateExecutable(STRATA_HAL_EXECUTABLE_FORMAT_CUDA_PTX,
                                         too_new, {});
  EXPECT_EQ(executable.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(executable.status().message().find(
                "needs compute capability 10.0 (sm_100)"),
            std::string_view::npos)
      << executable.status().ToString();

  std::vector<uint8_t> missing = testing::BuildCudaExecutable(
      {{"no_such_kernel", 1, 0, {4, 1, 1}}}, testing::kAddConstantPtx, 80);
  executable = device_->CreateExecutable(STRATA_HAL_EXECUTABLE_FORMAT_CUDA_PTX,
                                         missing, {});
  ASSERT_FALSE(executable.ok());
  EXPECT_NE(executable.status().message().find("no_such_kernel"),
            std::string_view::npos);
  EXPECT_EQ(state_.loaded_modules, 0);

  std::vector<uint8_t> corrupt = bad_ptx;
  corrupt[0] = 'X';
  executable = device_->CreateExecutable(STRATA_HAL_EXECUTABLE_FORMAT_CUDA_PTX,
                                         corrupt, {});
  EXPECT_EQ(executable.status().code(), StatusCode::kInvalidArgument);
}

TEST_F(CudaFakeDeviceTest, ProfilingTimesEachDispatch) {
  RefPtr<Buffer> buffer = Allocate(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, 64);
  RefPtr<Executable> executable = LoadAddConstant();
  RefPtr<CommandBuffer> command_buffer = NewCommandBuffer();
  ASSERT_TRUE(buffer && executable && command_buffer);
  uint32_t constants[] = {1};
  BufferBinding bindings[] = {{buffer.get(), 0, 32}, {buffer.get(), 32, 32}};
  ASSERT_TRUE(
      command_buffer
          ->Dispatch(executable.get(), 0, {1, 1, 1}, constants, bindings, 7)
          .ok());
  ASSERT_TRUE(command_buffer->Finalize().ok());
  std::vector<DispatchProfile> seen;
  std::vector<std::string> names;
  ProfilingOptions options;
  options.on_dispatch = [&](const DispatchProfile &profile) {
    seen.push_back(profile);
    names.emplace_back(profile.export_name);
  };
  ASSERT_TRUE(device_->ProfilingBegin(options).ok());
  ASSERT_TRUE(Execute(command_buffer.get(), nullptr).ok());
  ASSERT_TRUE(device_->ProfilingEnd().ok());
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(names[0], "add_constant");
  EXPECT_EQ(seen[0].site, 7u);
  EXPECT_EQ(seen[0].duration_ns, 500000);

  ProfilingOptions trace;
  trace.file_path = "/tmp/trace.json";
  EXPECT_EQ(device_->ProfilingBegin(trace).code(), StatusCode::kUnimplemented);
}

// ---------------------------------------------------------------------------
// A real GPU, where there is one.

class CudaRealDeviceTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_TRUE(RegisterAllDrivers(registry_).ok());
    auto device = registry_.CreateDevice("cuda");
    if (!device.ok())
      GTEST_SKIP() << "no CUDA GPU here: " << device.status().ToString();
    device_ = std::move(*device);
  }

  DriverRegistry registry_;
  RefPtr<Device> device_;
};

TEST_F(CudaRealDeviceTest, ListsTheGpu) {
  bool listed = false;
  for (const auto &device : registry_.EnumerateDevices())
    if (device.driver == "cuda") {
      listed = true;
      EXPECT_NE(device.info.name.find("(sm_"), std::string::npos);
    }
  EXPECT_TRUE(listed);
  std::cout << device_->DumpInfo();
}

TEST_F(CudaRealDeviceTest, PinnedBlocksAreReused) {
  RefPtr<Allocator> allocator = device_->allocator();
  auto allocate = [&](uint64_t length) {
    auto buffer =
        allocator->AllocateBuffer(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL |
                                      STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
                                  STRATA_HAL_BUFFER_USAGE_DEFAULT, length);
    EXPECT_TRUE(buffer.ok()) << buffer.status().ToString();
    return buffer.ok() ? std::move(*buffer) : nullptr;
  };
  constexpr uint64_t kLength = 4 << 20;
  auto start = std::chrono::steady_clock::now();
  RefPtr<Buffer> first = allocate(kLength);
  auto first_done = std::chrono::steady_clock::now();
  ASSERT_TRUE(first);
  void *host = first->host_data();
  first.reset();
  EXPECT_EQ(allocator->statistics().bytes_cached, kLength);
  constexpr int kRounds = 100;
  for (int i = 0; i < kRounds; ++i) {
    RefPtr<Buffer> buffer = allocate(kLength - 100);
    ASSERT_TRUE(buffer);
    EXPECT_EQ(buffer->host_data(), host);
  }
  auto end = std::chrono::steady_clock::now();
  using Microseconds = std::chrono::duration<double, std::micro>;
  std::cout << "4 MiB pinned block: first allocation "
            << Microseconds(first_done - start).count()
            << " us, reused allocate+drop "
            << Microseconds(end - first_done).count() / kRounds << " us\n";
  ASSERT_TRUE(device_->Trim().ok());
  EXPECT_EQ(allocator->statistics().bytes_cached, 0u);
}

TEST_F(CudaRealDeviceTest, FillDispatchReadBack) {
  constexpr uint32_t kCount = 1024;
  auto allocate = [&](MemoryTypeBitfield memory_type) {
    return *device_->allocator()->AllocateBuffer(
        memory_type, STRATA_HAL_BUFFER_USAGE_DEFAULT, kCount * 4);
  };
  RefPtr<Buffer> input = allocate(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL);
  RefPtr<Buffer> output = allocate(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL);
  RefPtr<Buffer> host = allocate(STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL |
                                 STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE);
  std::vector<uint8_t> bytes = testing::BuildCudaExecutable(
      {{"add_constant", 2, 1, {256, 1, 1}}}, testing::kAddConstantPtx, 50);
  auto executable = device_->CreateExecutable(
      STRATA_HAL_EXECUTABLE_FORMAT_CUDA_PTX, bytes, {});
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  auto command_buffer =
      *device_->CreateCommandBuffer(STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT,
                                    STRATA_HAL_COMMAND_CATEGORY_TRANSFER |
                                        STRATA_HAL_COMMAND_CATEGORY_DISPATCH,
                                    STRATA_HAL_QUEUE_AFFINITY_ANY, 0);
  ASSERT_TRUE(
      command_buffer->FillBuffer(input.get(), 0, kCount * 4, 40, 4).ok());
  uint32_t constants[] = {2};
  BufferBinding bindings[] = {{input.get(), 0, kWholeBuffer},
                              {output.get(), 0, kWholeBuffer}};
  ASSERT_TRUE(command_buffer
                  ->Dispatch(executable->get(), 0, {kCount / 256, 1, 1},
                             constants, bindings)
                  .ok());
  ASSERT_TRUE(
      command_buffer->CopyBuffer(output.get(), 0, host.get(), 0, kCount * 4)
          .ok());
  ASSERT_TRUE(command_buffer->Finalize().ok());
  CommandBuffer *const list[] = {command_buffer.get()};
  auto fence = *device_->CreateFence();
  Status status = device_->QueueExecute(STRATA_HAL_QUEUE_AFFINITY_ANY, nullptr,
                                        fence.get(), list);
  ASSERT_TRUE(status.ok()) << status.ToString();
  ASSERT_TRUE(fence->Query().ok());
  std::vector<uint32_t> words(kCount);
  ASSERT_TRUE(
      device_
          ->QueueRead(STRATA_HAL_QUEUE_AFFINITY_ANY, nullptr, nullptr,
                      output.get(), 0,
                      {reinterpret_cast<uint8_t *>(words.data()), kCount * 4})
          .ok());
  for (uint32_t i = 0; i < kCount; ++i)
    ASSERT_EQ(words[i], 42u) << i;
  const auto *mapped = reinterpret_cast<const uint32_t *>(host->host_data());
  for (uint32_t i = 0; i < kCount; ++i)
    ASSERT_EQ(mapped[i], 42u) << i;
}

} // namespace
} // namespace strata::hal::cuda
