// Shared helpers of the VM unit tests.
#ifndef STRATA_TESTS_RUNTIME_VM_VM_TEST_UTIL_H_
#define STRATA_TESTS_RUNTIME_VM_VM_TEST_UTIL_H_

#include <condition_variable>
#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "module_builder.h"
#include "strata/vm/byte_buffer.h"
#include "strata/vm/bytecode_module.h"
#include "strata/vm/context.h"
#include "strata/vm/list.h"
#include "strata/vm/native_module.h"
#include "strata/vm/value.h"
#include "strata/vm/wait_source.h"

#define STRATA_EXPECT_OK(expr)                                                 \
  do {                                                                         \
    ::strata::Status _status = (expr);                                         \
    EXPECT_TRUE(_status.ok()) << _status.ToString();                           \
  } while (false)
#define STRATA_ASSERT_OK(expr)                                                 \
  do {                                                                         \
    ::strata::Status _status = (expr);                                         \
    ASSERT_TRUE(_status.ok()) << _status.ToString();                           \
  } while (false)
#define STRATA_ASSERT_OK_AND_ASSIGN(lhs, expr)                                 \
  STRATA_ASSERT_OK_AND_ASSIGN_IMPL(                                            \
      STRATA_STATUS_CONCAT(_test_result_, __LINE__), lhs, expr)
#define STRATA_ASSERT_OK_AND_ASSIGN_IMPL(tmp, lhs, expr)                       \
  auto tmp = (expr);                                                           \
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString();                            \
  lhs = std::move(tmp).value()

namespace strata::vm::testing {

Result<RefPtr<BytecodeModule>> LoadModule(const ModuleBuilder &builder);

// A context with `modules` registered in order.
Result<RefPtr<Context>> MakeContext(std::vector<RefPtr<Module>> modules,
                                    ContextOptions options = {});

// Looks up "module.function" and invokes it.
Result<std::vector<Value>> InvokeByName(Context &context,
                                        std::string_view full_name,
                                        std::vector<Value> arguments);

// Builds a module "m" whose export "f" runs `builder`'s module alone.
Result<std::vector<Value>> RunModule(const ModuleBuilder &builder,
                                     std::string_view function,
                                     std::vector<Value> arguments,
                                     ContextOptions options = {});

// Runs one instruction whose format is a destination register followed by
// source registers (arithmetic, comparisons, casts, select, mov) on
// `arguments` and returns the destination.
// `math_function`: the id operand of math.* / math2.* ops.
Result<Value> RunSingleOp(Opcode opcode, std::vector<Value> arguments,
                          std::optional<uint32_t> math_function = {});

// A native module "native" (version 3) used by several tests:
//   add "0ii_i", sum "0iCiD_i" (base + all segment values),
//   dot "0CiID_I" (sum of i32 * i64 over tuples), fail "0i_v" (fails with
//   "native failure N" when N != 0), make_buffer "0i_r", counter "0v_i"
//   (per-state call count), identity "0r_r".
Result<RefPtr<NativeModule>> CreateTestNativeModule(uint32_t version = 3);

// A bytecode module "app" that depends on "native" (at least
// `minimum_native_version`) and exports main "0iii_iI":
//   main(a, b, c) = (add(a, sum(a, [b, c, 5])), dot([(a, I 2), (b, I 3)])).
ModuleBuilder MakeNativeCallerApp(uint32_t minimum_native_version = 3);

// A context of two bytecode modules: "lib" exporting twice "0r_rr" (its
// argument twice) and "app" exporting f "0r_r", which calls lib.twice
// through an import and returns the second result.
Result<RefPtr<Context>> MakeBytecodeImportContext();

// A wait source the test opens or fails by hand (from any thread).
class Gate final : public WaitSource {
public:
  void Open() { Settle(OkStatus()); }
  void Fail(Status status) { Settle(std::move(status)); }

  Status Query() override {
    std::lock_guard<std::mutex> lock(mutex_);
    return settled_ ? outcome_ : Status(StatusCode::kDeferred, "closed");
  }
  Status Wait(Deadline deadline) override {
    std::unique_lock<std::mutex> lock(mutex_);
    auto done = [&] { return settled_; };
    if (deadline.is_infinite())
      condition_.wait(lock, done);
    else if (!condition_.wait_until(
                 lock,
                 std::chrono::steady_clock::time_point(std::chrono::nanoseconds(
                     std::max<int64_t>(deadline.ns(), 0))),
                 done))
      return DeadlineExceededError("gate still closed");
    return outcome_;
  }
  void Subscribe(WaitNotifier *notifier) override {
    std::lock_guard<std::mutex> lock(mutex_);
    notifiers_.push_back(notifier);
  }
  void Unsubscribe(WaitNotifier *notifier) override {
    std::lock_guard<std::mutex> lock(mutex_);
    std::erase(notifiers_, notifier);
  }
  size_t subscriber_count() {
    std::lock_guard<std::mutex> lock(mutex_);
    return notifiers_.size();
  }

private:
  void Settle(Status status) {
    std::lock_guard<std::mutex> lock(mutex_);
    settled_ = true;
    outcome_ = std::move(status);
    condition_.notify_all();
    for (WaitNotifier *notifier : notifiers_)
      notifier->Notify();
  }

  std::mutex mutex_;
  std::condition_variable condition_;
  bool settled_ = false;
  Status outcome_;
  std::vector<WaitNotifier *> notifiers_;
};

// A native module "gate" with await "0r_i": 0 when the gate was already
// open, 1 after a yield, 2 after blocking (when the invocation cannot
// yield); fails with the gate's failure.
Result<RefPtr<NativeModule>> CreateGateModule();

} // namespace strata::vm::testing

#endif // STRATA_TESTS_RUNTIME_VM_VM_TEST_UTIL_H_
