// Deadlines and cancellation through the session API, on both local
// drivers: runaway bytecode, a fence nothing signals, a huge dispatch grid,
// a VMVX kernel that never ends and an initialiser that never ends each
// fail with DEADLINE_EXCEEDED (or CANCELLED from another thread) naming the
// function; afterwards the same session computes matmul_bias_relu right.
#include <chrono>
#include <fstream>
#include <iterator>
#include <thread>

#include "hang_module.h"
#include "session_test_util.h"
#include "strata/base/owned_bytes.h"

namespace strata::session::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr int64_t kMs = 1000000;

std::vector<uint8_t> ReadFile(const char *path) {
  std::ifstream file(path, std::ios::binary);
  EXPECT_TRUE(file.good()) << "cannot open " << path;
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(file), {});
}

class SessionDeadlineTest : public ::testing::TestWithParam<const char *> {
protected:
  void SetUp() override {
    Result<RefPtr<Instance>> instance = Instance::Create();
    ASSERT_TRUE(instance.ok());
    instance_ = *instance;
    Result<RefPtr<hal::Device>> device = instance_->CreateDevice(GetParam());
    ASSERT_TRUE(device.ok()) << device.status().ToString();
    device_ = *device;
  }

  // A session with matmul_bias_relu and the hang module.
  RefPtr<Session> MakeHangSession(SessionOptions options = {}) {
    Result<RefPtr<Session>> session =
        MakeSession(instance_, device_, "matmul_bias_relu", options);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    if (!session.ok())
      return nullptr;
    Status appended =
        (*session)->AppendBytecodeModuleFromMemory(OwnedBytes::FromVector(
            BuildHangModule(ReadFile(HAL_TEST_LIBRARY_PATH))));
    EXPECT_TRUE(appended.ok()) << appended.ToString();
    return *session;
  }

  Status CallHang(Session &session, const char *name,
                  const CallOptions &options = {}) {
    std::vector<vm::Value> results;
    return session.CallByName(StrCat("hang.", name), {}, &results, options);
  }

  // The session still computes the right numbers.
  void ExpectUsable(Session &session) {
    MatmulCase c = MakeMatmulCase(3);
    RefPtr<hal::Allocator> allocator = session.device_allocator();
    auto x = MakeF32View(*allocator, {4, 8}, c.x);
    auto w = MakeF32View(*allocator, {8, 16}, c.w);
    auto b = MakeF32View(*allocator, {16}, c.b);
    ASSERT_TRUE(x.ok() && w.ok() && b.ok());
    std::vector<vm::Value> inputs = {vm::Value::Ref(*x), vm::Value::Ref(*w),
                                     vm::Value::Ref(*b)};
    std::vector<vm::Value> results;
    STRATA_ASSERT_OK(session.CallByName("matmul_bias_relu", inputs, &results));
    auto *view = RefCast<hal::BufferView>(results[0].ref());
    ASSERT_NE(view, nullptr);
    Result<std::vector<float>> values = ReadF32(*view);
    ASSERT_TRUE(values.ok());
    EXPECT_EQ(*values, c.expected);
  }

  RefPtr<Instance> instance_;
  RefPtr<hal::Device> device_;
};

TEST_P(SessionDeadlineTest, EveryHangEndsAtTheCallDeadline) {
  RefPtr<Session> session = MakeHangSession();
  ASSERT_TRUE(session);
  for (const char *name : {"spin", "await_never", "huge_grid", "vmvx_spin"}) {
    CallOptions options;
    options.deadline = Deadline::AfterNs(200 * kMs);
    Status status = CallHang(*session, name, options);
    EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded)
        << name << ": " << status.ToString();
    EXPECT_THAT(std::string(status.message()),
                HasSubstr(StrCat("function 'hang.", name,
                                 "' exceeded its deadline (0.2 s)")))
        << name;
    ExpectUsable(*session);
  }
}

TEST_P(SessionDeadlineTest, SessionDefaultTimeoutBoundsCallsAndInit) {
  SessionOptions options;
  options.default_timeout_ns = 150 * kMs;
  RefPtr<Session> session = MakeHangSession(options);
  ASSERT_TRUE(session);
  Status status = CallHang(*session, "huge_grid");
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status.ToString();
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("function 'hang.huge_grid' exceeded its deadline "
                        "(0.1 s)"));
  // A call's own deadline replaces the default; Infinite() lifts it.
  CallOptions longer;
  longer.deadline = Deadline::AfterNs(300 * kMs);
  status = CallHang(*session, "spin", longer);
  EXPECT_THAT(std::string(status.message()), HasSubstr("(0.3 s)"));

  status = session->AppendBytecodeModuleFromMemory(
      OwnedBytes::FromVector(BuildInitSpinModule()));
  EXPECT_EQ(status.code(), StatusCode::kDeadlineExceeded) << status.ToString();
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("initializing module 'init_spin': function "
                        "'init_spin.__init' exceeded its deadline"));
  EXPECT_EQ(session->context().FindModule("init_spin"), nullptr);
  ExpectUsable(*session);
}

TEST_P(SessionDeadlineTest, CancelledFromAnotherThread) {
  RefPtr<Session> session = MakeHangSession();
  ASSERT_TRUE(session);
  for (const char *name : {"spin", "await_never", "huge_grid", "vmvx_spin"}) {
    CallOptions options;
    options.cancellation = CancellationToken::Create();
    std::thread canceller([token = options.cancellation] {
      std::this_thread::sleep_for(std::chrono::milliseconds(30));
      token->Cancel();
    });
    Status status = CallHang(*session, name, options);
    canceller.join();
    EXPECT_EQ(status.code(), StatusCode::kCancelled)
        << name << ": " << status.ToString();
    EXPECT_THAT(std::string(status.message()),
                HasSubstr(StrCat("function 'hang.", name, "' was cancelled")));
    ExpectUsable(*session);
  }
}

TEST_P(SessionDeadlineTest, AsyncCallsOnALoop) {
  RefPtr<Session> session = MakeHangSession();
  ASSERT_TRUE(session);
  Result<vm::Function> await_never =
      session->LookupFunction("hang.await_never");
  ASSERT_TRUE(await_never.ok());
  vm::Loop loop;
  Status outcome;
  CallOptions options;
  options.deadline = Deadline::AfterNs(50 * kMs);
  session->CallAsync(
      *await_never, {}, loop,
      [&](Status status, std::vector<vm::Value>) { outcome = status; },
      options);
  STRATA_EXPECT_OK(loop.Drain());
  EXPECT_EQ(outcome.code(), StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(outcome.message()),
              StartsWith("function 'hang.await_never' exceeded its deadline"));
  ExpectUsable(*session);
}

INSTANTIATE_TEST_SUITE_P(Drivers, SessionDeadlineTest,
                         ::testing::Values("local-sync",
                                           "local-task?workers=3"),
                         [](const auto &info) {
                           return std::string(info.index == 0 ? "LocalSync"
                                                              : "LocalTask");
                         });

} // namespace
} // namespace strata::session::testing
