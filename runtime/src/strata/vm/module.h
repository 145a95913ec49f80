// Module: the interface every VM module implements, bytecode or native.
// A module is immutable and may be shared by many contexts; everything
// mutable (globals, resolved imports, device handles) lives in the
// ModuleState a context creates for it.
//
// Life of a module in a context (see context.h):
//   CreateState() -> ResolveImport(state, i, target) for each import ->
//   Initialize(stack, state) -> Call(...) any number of times -> state freed.
#ifndef STRATA_VM_MODULE_H_
#define STRATA_VM_MODULE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/vm/signature.h"
#include "strata/vm/stack.h"
#include "strata/vm/value.h"

namespace strata::vm {

class BytecodeModule;
class NativeModuleState;

// Per-context mutable state of a module. Modules subclass it.
class ModuleState {
public:
  virtual ~ModuleState() = default;
  // The state as a native module's, or null: the runtime builds without
  // RTTI, so no dynamic_cast.
  virtual NativeModuleState *AsNativeModuleState() { return nullptr; }
};

// A module this one needs registered before it.
struct ModuleDependency {
  std::string name;
  uint32_t minimum_version = 0;
  bool is_optional = false;
};

// A function this module calls in an earlier module ("module.function").
struct ModuleImport {
  std::string full_name;
  Signature signature;
  bool is_optional = false;
};

// Shape (-1 = dynamic) and element type (strata_hal_element_type_t) of one
// tensor at the ABI boundary.
struct TensorTypeInfo {
  std::vector<int64_t> shape;
  uint32_t element_type = 0;
  // The name in the source (an ONNX graph input or output), or empty.
  std::string name;

  // "4x?xf32", or just "f32" for scalars.
  std::string ToString() const;
};

// Short name of an element type: "f32", "i8", "ui16", "i1", "bf16", or
// "type_0x..." when unknown.
std::string ElementTypeName(uint32_t element_type);

struct CallContract;

struct ModuleExport {
  std::string name;
  Signature signature;
  // Tensor ABI reflection: one entry per tensor (buffer view) argument /
  // result, in order; empty when the module carries none.
  std::vector<TensorTypeInfo> argument_types;
  std::vector<TensorTypeInfo> result_types;
  std::vector<std::pair<std::string, std::string>> attributes;
  // What the verifier may check about calls of this export (call_contract.h);
  // null for none. Static data of the module that provides it.
  const CallContract *contract = nullptr;

  // "(4xf32, 4xf32) -> (4xf32)", each with its name first where it has one
  // ("(x: 4xf32) -> (y: 4xf32)"); empty without reflection.
  std::string FormatTensorTypes() const;
};

class Module;

// Whether Module::Call checks its arguments against the export's signature.
enum class ArgumentCheck : uint8_t {
  kCheck,
  // The caller already did: a verified bytecode call site (the verifier
  // matched its registers to the signature) or an invocation whose
  // arguments the context checked. Saves a walk of the signature per call.
  kCheckedByCaller,
};

// A callable export of a module bound to that module's state in one context.
// The context keeps both alive; a Function must not outlive its context.
struct Function {
  RefPtr<Module> module;
  ModuleState *state = nullptr;
  uint32_t export_ordinal = 0;

  explicit operator bool() const { return static_cast<bool>(module); }
  const ModuleExport &info() const;
  const Signature &signature() const { return info().signature; }
  // "module.function", unformatted (for error messages on hot paths).
  FunctionName Name() const;
  // "module.function".
  std::string FullName() const;

  // Calls the function on `stack`; arguments in the Module::Call form.
  Status Call(Stack &stack, std::span<const Value> arguments,
              std::span<Value> results,
              ArgumentCheck check = ArgumentCheck::kCheck) const;
};

class Module : public RefObject {
public:
  static const RefTypeDescriptor kRefType; // "vm.module"

  const std::string &name() const { return name_; }
  uint32_t version() const { return version_; }
  std::span<const ModuleDependency> dependencies() const {
    return dependencies_;
  }
  std::span<const ModuleImport> imports() const { return imports_; }
  std::span<const ModuleExport> exports() const { return exports_; }
  std::optional<uint32_t> FindExport(std::string_view name) const;

  // Creates this module's state for one context.
  virtual Result<std::unique_ptr<ModuleState>> CreateState() = 0;

  // Binds import `import_ordinal` to `target`, an export of an earlier
  // module whose signature matches. Optional imports that did not resolve
  // are never passed here. The default fails: the module has no imports.
  virtual Status ResolveImport(ModuleState *state, uint32_t import_ordinal,
                               const Function &target);

  // Runs after all imports are resolved. The default calls the export named
  // "__init" if there is one.
  virtual Status Initialize(Stack &stack, ModuleState *state);

  // Calls export `export_ordinal`. `arguments` follow the export's
  // signature (variadic segments as an i32 tuple count plus the flattened
  // tuples); `results` has one slot per result and is filled on success.
  // Implementations check the arguments (unless `check` says the caller
  // did) and push a frame on `stack`.
  virtual Status Call(Stack &stack, ModuleState *state, uint32_t export_ordinal,
                      std::span<const Value> arguments,
                      std::span<Value> results, ArgumentCheck check) = 0;

  // Source location of bytecode offset `pc` in function `function_ordinal`
  // ("file:line:col") for backtraces; empty when unknown.
  virtual std::string FormatSourceLocation(uint32_t function_ordinal,
                                           uint32_t pc) const {
    return {};
  }

  // This module as a bytecode module (a compiled module file), or null.
  virtual const BytecodeModule *AsBytecodeModule() const { return nullptr; }

protected:
  Module(std::string name, uint32_t version)
      : RefObject(&kRefType), name_(std::move(name)), version_(version) {}

  // Filled by subclasses while they are built.
  std::vector<ModuleDependency> dependencies_;
  std::vector<ModuleImport> imports_;
  std::vector<ModuleExport> exports_;

private:
  std::string name_;
  uint32_t version_;
};

// Inline: one call layer (and one copy of the spans through the stack)
// less on every import call.
inline Status Function::Call(Stack &stack, std::span<const Value> arguments,
                             std::span<Value> results,
                             ArgumentCheck check) const {
  if (!module)
    return FailedPreconditionError("call of a null function");
  return module->Call(stack, state, export_ordinal, arguments, results, check);
}

} // namespace strata::vm

#endif // STRATA_VM_MODULE_H_
