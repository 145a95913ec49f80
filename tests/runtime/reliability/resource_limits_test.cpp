// Resource limits end in RESOURCE_EXHAUSTED-style errors, not in an OOM kill
// or a hang: module file size (mapped, read from a stream, in memory), the
// VM stack depth and step budget through a session, allocation sizes, and
// tensors parsed from text.
#include <cstdio>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "module_builder.h"
#include "strata/base/file_contents.h"
#include "strata/hal/allocator.h"
#include "strata/session/session.h"
#include "strata/tooling/numpy_io.h"
#include "strata/tooling/tensor_text.h"
#include "strata/vm/bytecode_module.h"
#include "strata/vm/bytecode_verifier.h"
#include "vm_test_util.h"

namespace strata {
namespace {

using ::testing::HasSubstr;
using vm::Value;
using vm::testing::FunctionBuilder;
using vm::testing::Label;
using vm::testing::ModuleBuilder;
using vm::testing::RegI32;

std::string TempPath(const char *name) {
  const char *directory = std::getenv("TMPDIR");
  return std::string(directory ? directory : "/tmp") + "/strata_limits_" +
         std::to_string(::getpid()) + "_" + name;
}

// A sparse file one byte over the module limit (no disk space used).
class OversizedFile {
public:
  OversizedFile() : path_(TempPath("huge.smod")) {
    int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ok_ = fd >= 0 && ::ftruncate(fd, off_t(vm::kMaxModuleFileSize) + 1) == 0;
    if (fd >= 0)
      ::close(fd);
  }
  ~OversizedFile() { std::remove(path_.c_str()); }
  bool ok() const { return ok_; }
  const std::string &path() const { return path_; }

private:
  std::string path_;
  bool ok_ = false;
};

TEST(ResourceLimitsTest, ModuleBytesOverTheLimit) {
  // Address space only: the verifier must reject the size before reading.
  size_t size = vm::kMaxModuleFileSize + 1;
  void *reservation =
      ::mmap(nullptr, size, PROT_NONE,
             MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  ASSERT_NE(reservation, MAP_FAILED);
  auto result = vm::VerifyModuleFile(std::span<const uint8_t>(
      static_cast<const uint8_t *>(reservation), size));
  EXPECT_EQ(result.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(result.status().message()),
              HasSubstr("module file of 2147483647 bytes exceeds the limit "
                        "of 2147483646 bytes"));
  auto module = vm::BytecodeModule::FromMemory(OwnedBytes::Wrap(
      std::span<const uint8_t>(static_cast<const uint8_t *>(reservation), size),
      [reservation, size] { ::munmap(reservation, size); }));
  EXPECT_EQ(module.status().code(), StatusCode::kResourceExhausted);
}

TEST(ResourceLimitsTest, ModuleFileOverTheLimit) {
  OversizedFile file;
  ASSERT_TRUE(file.ok());
  auto module = vm::LoadBytecodeModuleFromFile(file.path());
  EXPECT_EQ(module.status().code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(module.status().message()),
              HasSubstr("is larger than the limit of 2147483646 bytes"));

  STRATA_ASSERT_OK_AND_ASSIGN(auto instance, session::Instance::Create());
  STRATA_ASSERT_OK_AND_ASSIGN(auto device,
                              instance->CreateDevice("local-sync"));
  STRATA_ASSERT_OK_AND_ASSIGN(auto session,
                              session::Session::Create(instance, device, {}));
  Status status = session->AppendBytecodeModuleFromFile(file.path());
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), HasSubstr(file.path()));
}

TEST(ResourceLimitsTest, StreamOverTheLimit) {
  // A pipe has no size to check up front: reading stops at the limit.
  for (size_t length : {size_t(64), size_t(65), size_t(200000)}) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    pid_t writer = ::fork();
    ASSERT_GE(writer, 0);
    if (writer == 0) {
      ::close(fds[0]);
      std::vector<uint8_t> bytes(length, 'x');
      size_t written = 0;
      while (written < bytes.size()) {
        ssize_t count =
            ::write(fds[1], bytes.data() + written, bytes.size() - written);
        if (count <= 0)
          break;
        written += size_t(count);
      }
      ::_exit(0);
    }
    ::close(fds[1]);
    auto contents = ReadFdContents(fds[0], "<pipe>", 64);
    ::close(fds[0]);
    int ignored;
    ::waitpid(writer, &ignored, 0);
    if (length <= 64) {
      ASSERT_TRUE(contents.ok()) << contents.status().ToString();
      EXPECT_EQ(contents->span().size(), length);
    } else {
      EXPECT_EQ(contents.status().code(), StatusCode::kResourceExhausted);
      EXPECT_THAT(std::string(contents.status().message()),
                  HasSubstr("'<pipe>' is larger than the limit of 64 bytes"));
    }
  }
}

TEST(ResourceLimitsTest, FileReadOverTheLimit) {
  std::string path = TempPath("small.bin");
  std::string text(100, 'y');
  STRATA_ASSERT_OK(WriteFileContents(
      path,
      std::span(reinterpret_cast<const uint8_t *>(text.data()), text.size())));
  EXPECT_EQ(ReadFileContents(path, 99).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(MapFileContents(path, 99).status().code(),
            StatusCode::kResourceExhausted);
  EXPECT_TRUE(ReadFileContents(path, 100).ok());
  EXPECT_TRUE(MapFileContents(path, 100).ok());
  std::remove(path.c_str());
}

// Session options reach the stacks of calls and of __init.
class SessionStackLimitsTest : public ::testing::Test {
protected:
  Result<RefPtr<session::Session>> MakeSession(vm::StackOptions stack) {
    STRATA_ASSIGN_OR_RETURN(auto instance, session::Instance::Create());
    STRATA_ASSIGN_OR_RETURN(auto device, instance->CreateDevice("local-sync"));
    session::SessionOptions options;
    options.context_options.stack_options = stack;
    return session::Session::Create(instance, device, options);
  }
};

TEST_F(SessionStackLimitsTest, RunawayRecursion) {
  ModuleBuilder builder("deep");
  FunctionBuilder &f = builder.AddFunction("forever", "0i_i", {.i32 = 1});
  f.Op(vm::Opcode::Call)
      .Function(f.ordinal())
      .List({RegI32(0)})
      .List({RegI32(0)});
  f.Op(vm::Opcode::Return).List({RegI32(0)});
  builder.AddExport("forever", f.ordinal());
  STRATA_ASSERT_OK_AND_ASSIGN(auto session, MakeSession({.max_depth = 40}));
  STRATA_ASSERT_OK(
      session->AppendBytecodeModuleFromMemory(builder.BuildOwned()));
  std::vector<Value> outputs;
  Status status = session->CallByName(
      "deep.forever", std::vector<Value>{Value::I32(1)}, &outputs);
  EXPECT_EQ(status.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(std::string(status.message()), HasSubstr("depth limit of 40"));
}

TEST_F(SessionStackLimitsTest, EndlessInitializer) {
  ModuleBuilder builder("spin");
  FunctionBuilder &init = builder.AddFunction("__init", "0v_v", {});
  Label loop = init.NewLabel();
  init.Bind(loop);
  init.Op(vm::Opcode::Branch).Branch(loop);
  STRATA_ASSERT_OK_AND_ASSIGN(auto session,
                              MakeSession({.step_budget = 10000}));
  Status status = session->AppendBytecodeModuleFromMemory(builder.BuildOwned());
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded);
  // The failed module is not part of the session.
  EXPECT_EQ(session->context().FindModule("spin"), nullptr);
}

TEST(ResourceLimitsTest, TensorTextOverTheAllocatorLimit) {
  auto allocator = hal::HeapAllocator::Create(
      "limited", {.max_allocation_size = uint64_t(1) << 20});
  // 4 TB: refused by the allocator before any host memory is committed.
  auto huge = tooling::ParseTensorArgument("1000000x1000000xf32=0", *allocator);
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);
  auto over = tooling::ParseTensorArgument("262145xf32=1", *allocator);
  EXPECT_EQ(over.status().code(), StatusCode::kResourceExhausted);
  auto fits = tooling::ParseTensorArgument("262144xf32=1", *allocator);
  EXPECT_TRUE(fits.ok()) << fits.status().ToString();
  EXPECT_EQ(allocator->statistics().bytes_live, fits.ok() ? 1u << 20 : 0u);
}

TEST(ResourceLimitsTest, NumpyFileOverTheAllocatorLimit) {
  // An 8 GiB .npy file (sparse): mapped, so only the header is read before
  // the allocator refuses the tensor.
  std::string header = "{'descr': '<f4', 'fortran_order': False, "
                       "'shape': (1073741824, 2), }";
  header.resize(128 - 10 - 1, ' ');
  header += '\n';
  std::string prefix = std::string("\x93NUMPY\x01\x00", 8);
  prefix += char(header.size());
  prefix += char(0);
  prefix += header;
  ASSERT_EQ(prefix.size(), 128u);
  std::string path = TempPath("huge.npy");
  STRATA_ASSERT_OK(WriteFileContents(
      path, std::span(reinterpret_cast<const uint8_t *>(prefix.data()),
                      prefix.size())));
  ASSERT_EQ(::truncate(path.c_str(), off_t(128) + (off_t(8) << 30)), 0);
  auto allocator = hal::HeapAllocator::Create(
      "limited", {.max_allocation_size = uint64_t(1) << 20});
  auto view = tooling::LoadNumpyFile(path, *allocator);
  EXPECT_EQ(view.status().code(), StatusCode::kResourceExhausted)
      << view.status().ToString();
  std::remove(path.c_str());
}

} // namespace
} // namespace strata
