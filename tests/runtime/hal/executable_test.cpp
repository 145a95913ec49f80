// Loads hand-written CPU executable libraries (testdata/) through a device's
// executable cache and runs them on local-sync, once per loader: the system
// loader gets them as ordinary shared libraries, the embedded ELF loader as
// self-contained ones (HAL_FREESTANDING_DIR).
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <vector>

#include "strata/hal/api.h"
#include "strata/hal/drivers/local_sync/local_sync_driver.h"
#include "strata/hal/loaders/embedded_elf_loader.h"
#include "strata/hal/loaders/system_library_loader.h"
#include "strata/hal/local/executable_library.h"
#include "strata/hal/local/local_executable.h"

#if defined(__SANITIZE_THREAD__)
#define STRATA_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define STRATA_TEST_TSAN 1
#endif
#endif

namespace strata::hal {
namespace {

constexpr const char *kFormat = STRATA_HAL_EXECUTABLE_FORMAT_ELF_X86_64;
constexpr QueueAffinity kAny = STRATA_HAL_QUEUE_AFFINITY_ANY;
constexpr CommandCategoryBitfield kAllCategories =
    STRATA_HAL_COMMAND_CATEGORY_TRANSFER | STRATA_HAL_COMMAND_CATEGORY_DISPATCH;

std::vector<uint8_t> ReadFile(const char *path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file.good()) << "cannot open " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), {});
}

// "test_library" -> the library built for the loader under test.
std::string LibraryPath(std::string_view loader, std::string_view name) {
  if (loader == "embedded")
    return StrCat(HAL_FREESTANDING_DIR, "/", name, ".so");
  static const std::pair<std::string_view, const char *> kSystem[] = {
      {"test_library", HAL_TEST_LIBRARY_PATH},
      {"import_library", HAL_TEST_IMPORT_LIBRARY_PATH},
      {"bad_version", HAL_TEST_BAD_VERSION_PATH},
      {"bad_null", HAL_TEST_BAD_NULL_PATH},
      {"bad_no_query", HAL_TEST_BAD_NO_QUERY_PATH},
      {"bad_sanitizer", HAL_TEST_BAD_SANITIZER_PATH},
      {"bad_no_exports", HAL_TEST_BAD_NO_EXPORTS_PATH},
  };
  for (const auto &[key, path] : kSystem)
    if (key == name)
      return path;
  ADD_FAILURE() << "no library " << name;
  return "";
}

class ExecutableTest : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    auto device =
        CreateLocalSyncDriver()->CreateDevice(StrCat("?loader=", GetParam()));
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = *device;
  }

  std::vector<uint8_t> ReadLibrary(std::string_view name) {
    return ReadFile(LibraryPath(GetParam(), name).c_str());
  }

  Result<RefPtr<Executable>> Load(std::string_view name) {
    std::vector<uint8_t> bytes = ReadLibrary(name);
    return device_->CreateExecutable(kFormat, bytes);
  }

  std::unique_ptr<ExecutableLoader>
  CreateLoader(ExecutableImportResolver resolve_import = {}) {
    if (std::string_view(GetParam()) == "embedded")
      return std::make_unique<EmbeddedElfLoader>(std::move(resolve_import));
    return std::make_unique<SystemLibraryLoader>(std::move(resolve_import));
  }

  RefPtr<Buffer> Upload(std::span<const float> values) {
    auto buffer = device_->allocator()->AllocateBufferWithData(
        STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, STRATA_HAL_BUFFER_USAGE_DEFAULT,
        {reinterpret_cast<const uint8_t *>(values.data()),
         values.size_bytes()});
    EXPECT_TRUE(buffer.ok());
    return *buffer;
  }

  RefPtr<Buffer> Allocate(uint64_t size) {
    auto buffer = device_->allocator()->AllocateBuffer(
        STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL, STRATA_HAL_BUFFER_USAGE_DEFAULT,
        size);
    EXPECT_TRUE(buffer.ok());
    return *buffer;
  }

  RefPtr<CommandBuffer> CreateCommandBuffer() {
    auto cb = device_->CreateCommandBuffer(
        STRATA_HAL_COMMAND_BUFFER_MODE_ONE_SHOT, kAllCategories, kAny, 0);
    EXPECT_TRUE(cb.ok());
    return *cb;
  }

  // Submits `cb` signalling a fresh fence, waits for it, returns the result.
  Status SubmitAndWait(CommandBuffer *cb, RefPtr<Fence> *out_fence = nullptr) {
    auto fence = device_->CreateFence();
    if (!fence.ok())
      return fence.status();
    if (out_fence)
      *out_fence = *fence;
    CommandBuffer *list[] = {cb};
    Status status = device_->QueueExecute(kAny, nullptr, fence->get(), list);
    Status waited = (*fence)->Wait(Deadline::AfterMs(10000));
    EXPECT_EQ(status.code(), waited.code());
    return status;
  }

  template <typename T> std::vector<T> Read(Buffer *buffer) {
    std::vector<T> values(buffer->byte_length() / sizeof(T));
    EXPECT_TRUE(buffer
                    ->ReadData(0, {reinterpret_cast<uint8_t *>(values.data()),
                                   values.size() * sizeof(T)})
                    .ok());
    return values;
  }

  RefPtr<Device> device_;
};

TEST_P(ExecutableTest, ExportsAreReflected) {
  auto executable = Load("test_library");
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  EXPECT_EQ(std::string((*executable)->ref_type()->name), "hal.executable");
  EXPECT_EQ((*executable)->name(), "test_library");
  ASSERT_EQ((*executable)->export_count(), 5u);
  EXPECT_EQ((*executable)->export_name(0), "add_f32");
  EXPECT_EQ((*executable)->export_binding_count(0), 3u);
  EXPECT_EQ((*executable)->export_name(1), "scale");
  EXPECT_EQ((*executable)->export_binding_count(1), 2u);
  EXPECT_EQ(*(*executable)->LookupExport("grid"), 3u);
  auto missing = (*executable)->LookupExport("nope");
  EXPECT_EQ(missing.status().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.status().message().find("add_f32, scale"),
            std::string_view::npos);
  auto *local = dynamic_cast<LocalExecutable *>(executable->get());
  ASSERT_NE(local, nullptr);
  EXPECT_EQ(local->export_workgroup_size(3),
            (std::array<uint32_t, 3>{2, 3, 4}));
}

TEST_P(ExecutableTest, AddAndScaleOverMultipleWorkgroups) {
  auto executable = Load("test_library");
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  uint32_t add = *(*executable)->LookupExport("add_f32");
  uint32_t scale = *(*executable)->LookupExport("scale");

  // 37 elements: 5 workgroups of 8, the last partial.
  constexpr size_t kCount = 37;
  std::vector<float> a(kCount), b(kCount);
  for (size_t i = 0; i < kCount; ++i) {
    a[i] = float(i);
    b[i] = 1000.0f + float(i) * 0.5f;
  }
  RefPtr<Buffer> a_buffer = Upload(a);
  RefPtr<Buffer> b_buffer = Upload(b);
  RefPtr<Buffer> sum = Allocate(kCount * sizeof(float));
  // The scaled output lives at an offset inside a larger buffer.
  RefPtr<Buffer> scaled = Allocate(64 + kCount * sizeof(float));

  RefPtr<CommandBuffer> cb = CreateCommandBuffer();
  BufferBinding add_bindings[] = {
      {a_buffer.get()}, {b_buffer.get()}, {sum.get(), 0, kWholeBuffer}};
  uint32_t workgroups = (kCount + 7) / 8;
  ASSERT_TRUE(
      cb->Dispatch(executable->get(), add, {workgroups, 1, 1}, {}, add_bindings)
          .ok());
  ASSERT_TRUE(cb->ExecutionBarrier().ok());
  float factor = 3.0f;
  uint32_t factor_bits;
  std::memcpy(&factor_bits, &factor, 4);
  uint32_t constants[] = {factor_bits};
  BufferBinding scale_bindings[] = {{sum.get()},
                                    {scaled.get(), 64, kCount * 4}};
  ASSERT_TRUE(cb->Dispatch(executable->get(), scale, {workgroups, 1, 1},
                           constants, scale_bindings)
                  .ok());
  ASSERT_TRUE(cb->Finalize().ok());
  // Recording retained everything; dropping our references is fine.
  executable->reset();
  a_buffer.reset();
  ASSERT_TRUE(SubmitAndWait(cb.get()).ok());

  std::vector<float> sums = Read<float>(sum.get());
  std::vector<float> scaled_values = Read<float>(scaled.get());
  for (size_t i = 0; i < kCount; ++i) {
    EXPECT_EQ(sums[i], a[i] + b[i]) << i;
    EXPECT_EQ(scaled_values[16 + i], (a[i] + b[i]) * 3.0f) << i;
  }
}

TEST_P(ExecutableTest, GridCoversEveryWorkgroupOnce) {
  auto executable = Load("test_library");
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  constexpr uint32_t kX = 3, kY = 2, kZ = 4, kTotal = kX * kY * kZ;
  RefPtr<Buffer> out = Allocate((8 + 2 * kTotal) * 4);
  RefPtr<CommandBuffer> cb = CreateCommandBuffer();
  ASSERT_TRUE(cb->FillBuffer(out.get(), 0, kWholeBuffer, 0, 4).ok());
  ASSERT_TRUE(cb->ExecutionBarrier().ok());
  uint32_t constants[] = {1, 2};
  BufferBinding bindings[] = {{out.get()}};
  ASSERT_TRUE(
      cb->Dispatch(executable->get(), 3, {kX, kY, kZ}, constants, bindings)
          .ok());
  ASSERT_TRUE(cb->Finalize().ok());
  ASSERT_TRUE(SubmitAndWait(cb.get()).ok());

  std::vector<uint32_t> values = Read<uint32_t>(out.get());
  EXPECT_EQ((std::vector<uint32_t>(values.begin(), values.begin() + 8)),
            (std::vector<uint32_t>{kX, kY, kZ, 2, 3, 4, 2, 1}));
  for (uint32_t z = 0; z < kZ; ++z)
    for (uint32_t y = 0; y < kY; ++y)
      for (uint32_t x = 0; x < kX; ++x) {
        uint32_t linear = (z * kY + y) * kX + x;
        EXPECT_EQ(values[8 + linear], 1u) << x << "," << y << "," << z;
        EXPECT_EQ(values[8 + kTotal + linear], x | y << 8 | z << 16);
      }
}

TEST_P(ExecutableTest, FailingWorkgroupFailsSubmissionAndFence) {
  auto executable = Load("test_library");
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  RefPtr<Buffer> out = Allocate(16);
  RefPtr<CommandBuffer> cb = CreateCommandBuffer();
  ASSERT_TRUE(cb->FillBuffer(out.get(), 0, kWholeBuffer, 0, 4).ok());
  BufferBinding bindings[] = {{out.get()}};
  ASSERT_TRUE(cb->Dispatch(executable->get(), 2, {4, 1, 1}, {}, bindings).ok());
  ASSERT_TRUE(cb->Finalize().ok());
  RefPtr<Fence> fence;
  Status status = SubmitAndWait(cb.get(), &fence);
  EXPECT_EQ(status.code(), StatusCode::kInternal);
  EXPECT_NE(status.message().find("'fail' failed with code 7 in workgroup "
                                  "(2, 0, 0)"),
            std::string_view::npos)
      << status.ToString();
  EXPECT_EQ(fence->Query().code(), StatusCode::kInternal);
  // Workgroups before the failing one ran; the grid stopped there.
  EXPECT_EQ(Read<uint32_t>(out.get()), (std::vector<uint32_t>{1, 1, 0, 0}));
}

TEST_P(ExecutableTest, ImportsResolveThroughTheLoader) {
  std::vector<uint8_t> bytes = ReadLibrary("import_library");
  auto unresolved = CreateLoader()->Load(kFormat, bytes, {});
  EXPECT_EQ(unresolved.status().code(), StatusCode::kNotFound);
  EXPECT_NE(unresolved.status().message().find("test_add_one"),
            std::string_view::npos);

  static int (*add_one)(int) = [](int x) { return x + 1; };
  auto loader = CreateLoader([](std::string_view name) -> const void * {
    return name == "test_add_one" ? reinterpret_cast<const void *>(add_one)
                                  : nullptr;
  });
  auto executable = loader->Load(kFormat, bytes, {});
  ASSERT_TRUE(executable.ok()) << executable.status().ToString();
  float initial[] = {0};
  RefPtr<Buffer> out = Upload(initial);
  int32_t forty_one = 41;
  ASSERT_TRUE(
      out->WriteData(0, {reinterpret_cast<uint8_t *>(&forty_one), 4}).ok());
  RefPtr<CommandBuffer> cb = CreateCommandBuffer();
  BufferBinding bindings[] = {{out.get()}};
  ASSERT_TRUE(cb->Dispatch(executable->get(), 0, {1, 1, 1}, {}, bindings).ok());
  ASSERT_TRUE(cb->Finalize().ok());
  ASSERT_TRUE(SubmitAndWait(cb.get()).ok());
  EXPECT_EQ(Read<int32_t>(out.get())[0], 42);
}

TEST_P(ExecutableTest, RepeatedLoadsAreIndependent) {
  // Load, drop and reload several libraries so fd numbers get reused; each
  // load must see its own library.
  for (int i = 0; i < 4; ++i) {
    auto test_library = Load("test_library");
    ASSERT_TRUE(test_library.ok()) << test_library.status().ToString();
    EXPECT_EQ((*test_library)->name(), "test_library");
    test_library->reset();
    std::vector<uint8_t> bytes = ReadLibrary("import_library");
    auto import_library = CreateLoader()->Load(kFormat, bytes, {});
    // Fails on the import, after identifying the right library.
    EXPECT_NE(import_library.status().message().find("import_library"),
              std::string_view::npos)
        << import_library.status().ToString();
  }
}

void ExpectLoadError(Result<RefPtr<Executable>> result, StatusCode code,
                     std::string_view substring) {
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), code) << result.status().ToString();
  EXPECT_NE(result.status().message().find(substring), std::string_view::npos)
      << result.status().ToString();
}

TEST_P(ExecutableTest, RejectsGarbageAndTruncatedElf) {
  std::vector<uint8_t> garbage(4096);
  for (size_t i = 0; i < garbage.size(); ++i)
    garbage[i] = uint8_t(i * 131 + 7);
  ExpectLoadError(device_->CreateExecutable(kFormat, garbage),
                  StatusCode::kInvalidArgument, "not an ELF file");
  ExpectLoadError(device_->CreateExecutable(kFormat, {}),
                  StatusCode::kInvalidArgument, "not an ELF file");

  std::vector<uint8_t> bytes = ReadLibrary("test_library");
  ASSERT_GT(bytes.size(), 1024u);
  ExpectLoadError(device_->CreateExecutable(
                      kFormat, std::span<const uint8_t>(bytes.data(), 40)),
                  StatusCode::kInvalidArgument, "truncated");
  ExpectLoadError(
      device_->CreateExecutable(
          kFormat, std::span<const uint8_t>(bytes.data(), bytes.size() / 2)),
      StatusCode::kInvalidArgument, "truncated");

  std::vector<uint8_t> wrong_machine = bytes;
  wrong_machine[18] = 183; // e_machine = EM_AARCH64.
  ExpectLoadError(device_->CreateExecutable(kFormat, wrong_machine),
                  StatusCode::kInvalidArgument, "not x86-64");
  std::vector<uint8_t> executable_type = bytes;
  executable_type[16] = 2; // e_type = ET_EXEC.
  ExpectLoadError(device_->CreateExecutable(kFormat, executable_type),
                  StatusCode::kInvalidArgument, "not a shared object");
}

TEST_P(ExecutableTest, RejectsBadLibraries) {
  ExpectLoadError(Load("bad_version"), StatusCode::kFailedPrecondition,
                  "executable built for library ABI version 99, runtime "
                  "supports 0");
  ExpectLoadError(Load("bad_null"), StatusCode::kInvalidArgument,
                  "returned NULL");
  ExpectLoadError(Load("bad_no_query"), StatusCode::kNotFound,
                  "strata_hal_executable_library_query");
  // A library built for TSan loads only into a TSan runtime.
#if defined(STRATA_TEST_TSAN)
  EXPECT_TRUE(Load("bad_sanitizer").ok());
#else
  ExpectLoadError(Load("bad_sanitizer"), StatusCode::kFailedPrecondition,
                  "thread sanitizer");
#endif
  ExpectLoadError(Load("bad_no_exports"), StatusCode::kInvalidArgument,
                  "no exports");
}

TEST_P(ExecutableTest, RejectsUnknownFormatAndConstants) {
  std::vector<uint8_t> bytes = ReadLibrary("test_library");
  auto result = device_->CreateExecutable("spirv-fb", bytes);
  ExpectLoadError(result, StatusCode::kNotFound, "'spirv-fb'");
  EXPECT_NE(result.status().message().find("'elf-x86_64'"),
            std::string_view::npos)
      << result.status().ToString();

  uint32_t constants[] = {1};
  ExpectLoadError(device_->CreateExecutable(kFormat, bytes, constants),
                  StatusCode::kUnimplemented, "constants");
}

INSTANTIATE_TEST_SUITE_P(Loaders, ExecutableTest,
                         ::testing::Values("system", "embedded"),
                         [](const auto &info) {
                           return std::string(info.param);
                         });

} // namespace
} // namespace strata::hal
