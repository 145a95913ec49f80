// NativeModule: a module whose exports are C++ functions listed in a static
// table. Native functions are called exactly like bytecode functions: from
// bytecode through imports, or from the host through Context::Invoke.
//
// A native function receives its arguments already checked against its
// calling convention (so `arguments[i].i32()` etc. are safe), must set
// every result, and reports failure through its Status:
//
//   Status Sum(Stack &stack, ModuleState *state,
//              std::span<const Value> arguments, std::span<Value> results) {
//     // "0iCiD_i": base, then the segment as count + values.
//     int32_t sum = arguments[0].i32();
//     int32_t count = arguments[1].i32();
//     for (int32_t i = 0; i < count; ++i)
//       sum += arguments[2 + i].i32();
//     results[0] = Value::I32(sum);
//     return OkStatus();
//   }
//
//   const NativeFunctionDef kFunctions[] = {
//       {"sum", "0iCiD_i", Sum},
//       {"math.scale", "0r_r", Scale},   // "math." prefix is optional
//   };
//   const NativeModuleDescriptor kDescriptor = {
//       .name = "math", .version = 1, .functions = kFunctions};
//
//   // State: any ModuleState subclass, created once per context.
//   auto module = NativeModule::Create(kDescriptor, [device] {
//     return Result<std::unique_ptr<ModuleState>>(
//         std::make_unique<MathState>(device));
//   });
//
// Inside a function, `static_cast<MathState *>(state)` recovers the state.
// Refs: use CastRef<T>(arguments[i], "argument name") (value.h) for checked
// downcasts with clear errors; strings arrive as vm.buffer
// (ByteBuffer::AsStringView()). Results that are refs: Value::Ref(ptr).
//
// An export named "__init" ("0v_v") runs when the module is registered.
// Results are checked after each call: an unset non-ref result is an error.
// Native functions may call any Function with Function::Call(stack, ...).
//
// Waiting without blocking: when stack.CanYield(), a function that must wait
// returns stack.Yield(wait_source, deadline) (DEFERRED). The invocation is
// suspended; once the wait is over the same call runs again with the same
// arguments, and stack.TakeWaitResult() tells it how the wait ended. When
// !CanYield() (no resumable invocation, or a native caller below) it must
// block instead.
//
// Native modules may import functions of earlier modules: list them in
// `imports` and derive the state from NativeModuleState; the resolved
// targets are then in state->imports() (unresolved optional ones are null).
//
// Subclassing instead of a factory: derive from NativeModule, pass the
// descriptor to the protected constructor, override CreateState(), and
// call InitializeTables() once before use (it validates the table).
#ifndef STRATA_VM_NATIVE_MODULE_H_
#define STRATA_VM_NATIVE_MODULE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "strata/vm/call_contract.h"
#include "strata/vm/module.h"

namespace strata::vm {

using NativeFunction = Status (*)(Stack &stack, ModuleState *state,
                                  std::span<const Value> arguments,
                                  std::span<Value> results);

struct NativeFunctionDef {
  // Export name; a leading "<module name>." is stripped, so the
  // fully-qualified names of hal_imports.def can be used as they are.
  const char *name;
  const char *calling_convention;
  NativeFunction function;
  // What the verifier may check about calls of this function (may be null;
  // must outlive the module, like the table).
  const CallContract *contract = nullptr;
};

struct NativeImportDef {
  const char *full_name;
  const char *calling_convention;
  bool is_optional = false;
};

struct NativeDependencyDef {
  const char *name;
  uint32_t minimum_version = 0;
  bool is_optional = false;
};

struct NativeModuleDescriptor {
  const char *name;
  uint32_t version = 0;
  std::span<const NativeFunctionDef> functions;
  std::span<const NativeImportDef> imports = {};
  std::span<const NativeDependencyDef> dependencies = {};
};

// Base for states of native modules that import functions.
class NativeModuleState : public ModuleState {
public:
  NativeModuleState *AsNativeModuleState() override { return this; }
  std::span<const Function> imports() const { return imports_; }

private:
  friend class NativeModule;
  std::vector<Function> imports_;
};

class NativeModule : public Module {
public:
  using StateFactory = std::function<Result<std::unique_ptr<ModuleState>>()>;

  // `descriptor` is copied, but the tables it points to (and the name) must
  // outlive the module; static tables do. Without `create_state` the module
  // gets an empty state (a NativeModuleState).
  static Result<RefPtr<NativeModule>>
  Create(const NativeModuleDescriptor &descriptor,
         StateFactory create_state = nullptr);

  Result<std::unique_ptr<ModuleState>> CreateState() override;
  Status ResolveImport(ModuleState *state, uint32_t import_ordinal,
                       const Function &target) override;
  Status Call(Stack &stack, ModuleState *state, uint32_t export_ordinal,
              std::span<const Value> arguments, std::span<Value> results,
              ArgumentCheck check) override;

protected:
  explicit NativeModule(const NativeModuleDescriptor &descriptor);
  // Parses the descriptor's calling conventions and fills the export,
  // import and dependency tables. Must succeed before the module is used.
  Status InitializeTables();

private:
  // A copy; the tables it points to must outlive the module.
  NativeModuleDescriptor descriptor_;
  StateFactory create_state_;
  bool tables_initialized_ = false;
};

} // namespace strata::vm

#endif // STRATA_VM_NATIVE_MODULE_H_
