// Context: an ordered set of modules, each with its own state, in which
// functions are invoked. Registering a module checks its dependencies,
// resolves its imports against modules registered earlier, creates its
// state and runs its initializer.
//
// Invocations (invocation.h) run one at a time per context unless the
// context was created with `allow_concurrent_invocations`; beginning a
// second one while another is in flight is FAILED_PRECONDITION naming both.
// Registration is thread-compatible: finish it before invoking.
#ifndef STRATA_VM_CONTEXT_H_
#define STRATA_VM_CONTEXT_H_

#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/vm/instance.h"
#include "strata/vm/module.h"
#include "strata/vm/stack.h"
#include "strata/vm/value.h"

namespace strata::vm {

struct ContextOptions {
  // Limits of the stacks Invoke creates.
  StackOptions stack_options;
  // Several invocations may be in flight at once (several threads, or
  // several async invocations on a loop). Module states are then shared by
  // them: programs that write globals must not rely on exclusive access.
  bool allow_concurrent_invocations = false;
};

class Context final : public RefObject {
public:
  static const RefTypeDescriptor kRefType; // "vm.context"

  static RefPtr<Context> Create(RefPtr<Instance> instance,
                                ContextOptions options = {});
  ~Context() override;

  Instance &instance() const { return *instance_; }
  const ContextOptions &options() const { return options_; }

  // Appends `module`:
  //  * FAILED_PRECONDITION when frozen, ALREADY_EXISTS for a duplicate name;
  //  * each required dependency must be registered with at least its
  //    minimum version ("module 'x' requires 'hal' >= 2 but 'hal' version 1
  //    is registered");
  //  * each import "m.f" must match an export of an earlier module with an
  //    equal calling convention; missing required imports are NOT_FOUND,
  //    missing optional ones stay unresolved (calling them fails);
  //  * then the module's state is created and Module::Initialize runs
  //    (bytecode modules: their "__init" function, exported or not), under
  //    `abort_signal` (null: the thread's AbortSignal::Current(), if any):
  //    an initialiser that runs past its deadline or is cancelled fails
  //    the registration with DEADLINE_EXCEEDED or CANCELLED.
  // On failure the context is unchanged.
  Status RegisterModule(RefPtr<Module> module,
                        RefPtr<AbortSignal> abort_signal = nullptr);

  // No modules can be registered afterwards.
  void Freeze() { frozen_ = true; }
  bool is_frozen() const { return frozen_; }

  size_t module_count() const { return entries_.size(); }
  Module &module(size_t index) const { return *entries_[index].module; }
  ModuleState *module_state(size_t index) const {
    return entries_[index].state.get();
  }
  // The registered module named `name`, or null.
  Module *FindModule(std::string_view name) const;

  // "module.function" (split at the first '.'); NOT_FOUND naming it.
  Result<Function> LookupFunction(std::string_view full_name) const;

  // Checks that `function` belongs to this context and that `arguments`
  // match its signature (count and types: "'m.f' argument 1 has type f32,
  // expected i32").
  Status CheckInvocation(const Function &function,
                         std::span<const Value> arguments) const;

  // Runs `function` to completion on a stack of the context's pool (reused
  // across calls), after the checks of CheckInvocation; `results` is
  // replaced with its results (its capacity reused; left empty on failure).
  // Waits that the program yields on (hal.fence.await) block this thread and
  // resume. `abort_signal` bounds the invocation (see Invocation; null: the
  // thread's AbortSignal::Current(), if any).
  Status Invoke(const Function &function, std::span<const Value> arguments,
                std::vector<Value> *results,
                RefPtr<AbortSignal> abort_signal = nullptr);
  // Same on a caller-provided stack (reused across calls).
  Status Invoke(Stack &stack, const Function &function,
                std::span<const Value> arguments, std::vector<Value> *results,
                RefPtr<AbortSignal> abort_signal = nullptr);

private:
  friend class Invocation;
  Context(RefPtr<Instance> instance, ContextOptions options);

  // Counts an invocation of `function` in flight; FAILED_PRECONDITION when
  // another is and concurrency is not allowed.
  Status AcquireInvocation(const Function &function);
  void ReleaseInvocation();

  // A reset stack from the pool, or a new one.
  std::unique_ptr<Stack> AcquireStack();
  // Returns an empty stack to the pool (a few are kept).
  void ReleaseStack(std::unique_ptr<Stack> stack);

  struct Entry {
    RefPtr<Module> module;
    std::unique_ptr<ModuleState> state;
  };
  Status CheckDependencies(const Module &module) const;
  Status ResolveImports(Module &module, ModuleState *state) const;
  const Entry *FindEntry(std::string_view name) const;

  RefPtr<Instance> instance_;
  ContextOptions options_;
  std::vector<Entry> entries_;
  bool frozen_ = false;
  std::mutex invocation_mutex_;
  uint32_t invocations_in_flight_ = 0;
  // Name of the first invocation in flight, for the error message.
  // Views into a registered module (modules stay for the context's life).
  FunctionName invocation_in_flight_name_;
  std::mutex stack_pool_mutex_;
  std::vector<std::unique_ptr<Stack>> stack_pool_;
};

} // namespace strata::vm

#endif // STRATA_VM_CONTEXT_H_
