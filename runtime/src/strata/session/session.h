// A session is like a process: its own VM context (and so its own module
// states) over one device. Sessions may share a device but keep separate
// timelines. Thread-compatible: one thread at a time per session; separate
// sessions run concurrently.
//
//   auto instance = session::Instance::Create();
//   auto device = (*instance)->CreateDevice("local-sync");
//   auto session = session::Session::Create(*instance, *device, {});
//   (*session)->AppendBytecodeModuleFromFile("model.smod");
//   std::vector<vm::Value> outputs;
//   (*session)->CallByName("module.main", inputs, &outputs);
#ifndef STRATA_SESSION_SESSION_H_
#define STRATA_SESSION_SESSION_H_

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/base/abort_signal.h"
#include "strata/base/owned_bytes.h"
#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/hal/buffer_view.h"
#include "strata/session/instance.h"
#include "strata/vm/context.h"
#include "strata/vm/loop.h"
#include "strata/vm/module.h"
#include "strata/vm/value.h"

namespace strata::session {

struct SessionOptions {
  vm::ContextOptions context_options;
  // Adds the `hal` module over the session's device (compiled programs
  // import it).
  bool add_hal_module = true;
  // Non-zero: sets the memory limit of the device's allocator, the most
  // bytes live in it at once (hal::Allocator::SetMemoryLimit); requests
  // past it are RESOURCE_EXHAUSTED. The allocator belongs to the device, so
  // the limit holds for every session on it. 0 leaves it as it is (by
  // default the machine's physical memory).
  uint64_t device_memory_limit = 0;
  // Bounds every call without a deadline of its own, and every module's
  // initialiser (__init) when it is appended: past it the call fails with
  // DEADLINE_EXCEEDED ("function 'module.main' exceeded its deadline
  // (2.0 s)"). 0 = no limit.
  int64_t default_timeout_ns = 0;
};

// Deadline and cancellation of one call (base/abort_signal.h). Past the
// deadline the call fails with DEADLINE_EXCEEDED, once `cancellation` is
// cancelled (from any thread) with CANCELLED; both name the function. The
// bytecode, the device work it submitted (stopped between workgroups,
// dropped while queued) and its waits all stop; the session stays usable.
struct CallOptions {
  // Absolute, on the NowNs() clock. nullopt: now + the session's
  // default_timeout_ns (if any); Deadline::Infinite(): no deadline.
  std::optional<Deadline> deadline;
  // May be null; may be shared by several calls.
  RefPtr<CancellationToken> cancellation;
};

class Session final : public RefObject {
public:
  static const RefTypeDescriptor kRefType; // "strata.session"

  static Result<RefPtr<Session>> Create(RefPtr<Instance> instance,
                                        RefPtr<hal::Device> device,
                                        SessionOptions options);

  Instance &instance() const { return *instance_; }
  vm::Context &context() const { return *context_; }
  hal::Device &device() const { return *device_; }
  RefPtr<hal::Allocator> device_allocator() const;

  // Releases cached resources of the device (pools, caches).
  Status Trim();

  // Appends a module: its dependencies must already be in the session and
  // its imports resolve against them; its __init runs now (bounded by
  // SessionOptions::default_timeout_ns).
  Status AppendModule(RefPtr<vm::Module> module);
  // Takes ownership of `bytes`, also when it fails.
  Status AppendBytecodeModuleFromMemory(OwnedBytes bytes);
  // Memory-maps the file.
  Status AppendBytecodeModuleFromFile(const std::string &path);
  Status AppendBytecodeModuleFromStdin();

  // "module.function"; a bare "function" means "module.function".
  Result<vm::Function> LookupFunction(std::string_view name) const;
  // What a caller may call: every export of the modules appended to the
  // session (not those it added itself, such as `hal`), in the order the
  // modules were appended and their exports declared, without the reserved
  // names that start with "__" (`__init`). A module appended later only
  // adds to the end.
  std::vector<vm::Function> ListFunctions() const;

  // Calls `function` after checking the inputs against its signature and,
  // when the module carries it, its tensor ABI (shape and element type of
  // each buffer view). Errors name the function and the argument.
  Status Call(const vm::Function &function, std::span<const vm::Value> inputs,
              std::vector<vm::Value> *outputs, const CallOptions &options = {});
  Status CallByName(std::string_view name, std::span<const vm::Value> inputs,
                    std::vector<vm::Value> *outputs,
                    const CallOptions &options = {});
  // Results-to-outs: like Call, but the results are written into
  // `outputs`, caller-provided buffer views (one per result; every result
  // must be a tensor). Each output must match its result's shape and
  // element type; before the call they are checked against the function's
  // reflected result types, after it against the actual results. Results
  // the callee allocated are copied in; nothing is written on any error.
  // Errors name the output: "function 'module.f' output 0: expected
  // 4x16xf32, got 4x8xf32".
  Status CallIntoOutputs(const vm::Function &function,
                         std::span<const vm::Value> inputs,
                         std::span<hal::BufferView *const> outputs,
                         const CallOptions &options = {});
  // Calls without the session's checks (the callee still verifies).
  Status CallDirect(const vm::Function &function,
                    std::span<const vm::Value> inputs,
                    std::vector<vm::Value> *outputs,
                    const CallOptions &options = {});

  // Asynchronous Call: queues the call on `loop` (vm/loop.h) and returns at
  // once. The call runs while the loop drains, suspending instead of
  // blocking when the program waits on device work, so several calls (of
  // this and other sessions) may be in flight on one loop. `callback` runs
  // exactly once, on the thread draining the loop, never inside CallAsync:
  // with the results, or with the failure and no results. Failures include
  // inputs that fail Call's checks (the function is then not invoked), a
  // second call in flight without
  // SessionOptions::context_options.allow_concurrent_invocations
  // (FAILED_PRECONDITION), and CANCELLED when the loop is destroyed first.
  // The session stays alive until the callback has run. The deadline of
  // `options` counts from now, queued time included.
  void CallAsync(const vm::Function &function, std::vector<vm::Value> inputs,
                 vm::Loop &loop, vm::InvokeCallback callback,
                 const CallOptions &options = {});

  // The signal one call of `function` runs under (null: neither deadline
  // nor cancellation).
  RefPtr<AbortSignal> MakeAbortSignal(const vm::Function &function,
                                      const CallOptions &options) const;

private:
  Session(RefPtr<Instance> instance, RefPtr<hal::Device> device,
          RefPtr<vm::Context> context, int64_t default_timeout_ns);

  RefPtr<Instance> instance_;
  RefPtr<hal::Device> device_;
  RefPtr<vm::Context> context_;
  int64_t default_timeout_ns_;
  // Modules of the context before the first the caller appended (`hal`).
  size_t first_appended_module_ = 0;
};

// Checks `inputs` against `function`'s signature and tensor reflection.
Status CheckCallInputs(const vm::Function &function,
                       std::span<const vm::Value> inputs);

// Runs `callback` with `failure` (and no results) during the next
// loop.Drain(), like a call that failed: how CallAsync and the C API report
// errors found before anything could be invoked.
void FailOnLoop(vm::Loop &loop, Status failure, vm::InvokeCallback callback);

} // namespace strata::session

#endif // STRATA_SESSION_SESSION_H_
