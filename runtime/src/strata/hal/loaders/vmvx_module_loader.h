// Loads VMVX executables: VM bytecode modules whose exports are dispatch
// entry points (hal/local/vmvx_abi.h). Portable: no native code is loaded.
// Each workgroup runs on a VM context of its own (the bytecode module plus
// the `vmvx` microkernel module); contexts are pooled, so concurrent
// workgroups of one dispatch never share one. A workgroup runs under the
// dispatching thread's AbortSignal::Current() (the call that submitted the
// work): its VM stack polls the signal, so a kernel that never ends stops
// with the call's CANCELLED or DEADLINE_EXCEEDED. Format:
// STRATA_HAL_EXECUTABLE_FORMAT_VMVX.
#ifndef STRATA_HAL_LOADERS_VMVX_MODULE_LOADER_H_
#define STRATA_HAL_LOADERS_VMVX_MODULE_LOADER_H_

#include "strata/hal/executable.h"
#include "strata/vm/instance.h"

namespace strata::hal {

class VmvxModuleLoader final : public ExecutableLoader {
public:
  VmvxModuleLoader();

  std::string_view name() const override { return "vmvx"; }
  std::vector<std::string> SupportedFormats() const override;
  bool CanLoad(std::string_view format) const override;
  // Verifies the module (FlatBuffer, bytecode), checks that every export has
  // the dispatch calling convention and that its imports resolve against
  // the microkernel module (by registering it in a first context).
  // `constants` must be empty.
  Result<RefPtr<Executable>> Load(std::string_view format,
                                  std::span<const uint8_t> bytes,
                                  std::span<const uint32_t> constants) override;

private:
  RefPtr<vm::Instance> instance_;
};

} // namespace strata::hal

#endif // STRATA_HAL_LOADERS_VMVX_MODULE_LOADER_H_
