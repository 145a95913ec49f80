// Instance: process-wide VM state shared by contexts; today the registry of
// ref types by name. Creating one registers the VM's own types (vm.buffer,
// vm.list); the session registers the HAL types on top.
#ifndef STRATA_VM_INSTANCE_H_
#define STRATA_VM_INSTANCE_H_

#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"

namespace strata::vm {

class Instance final : public RefObject {
public:
  static const RefTypeDescriptor kRefType; // "vm.instance"

  static RefPtr<Instance> Create();

  // Registers `type` (which must outlive the instance, typically a static).
  // Registering the same descriptor again is a no-op; another descriptor
  // with the same name is ALREADY_EXISTS.
  Status RegisterType(const RefTypeDescriptor &type);
  // The descriptor registered under `name`, or null.
  const RefTypeDescriptor *LookupType(std::string_view name) const;

private:
  Instance() : RefObject(&kRefType) {}

  mutable std::mutex mutex_;
  std::unordered_map<std::string, const RefTypeDescriptor *> types_;
};

} // namespace strata::vm

#endif // STRATA_VM_INSTANCE_H_
