// The runtime instance: the HAL driver registry (every built-in driver
// registered) and the VM instance with every ref type registered. One per
// process is typical; sessions share it.
#ifndef STRATA_SESSION_INSTANCE_H_
#define STRATA_SESSION_INSTANCE_H_

#include <string_view>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/hal/device.h"
#include "strata/hal/driver_registry.h"
#include "strata/vm/instance.h"

namespace strata::session {

class Instance final : public RefObject {
public:
  static const RefTypeDescriptor kRefType; // "strata.instance"

  static Result<RefPtr<Instance>> Create();

  hal::DriverRegistry &driver_registry() { return driver_registry_; }
  const RefPtr<vm::Instance> &vm_instance() const { return vm_instance_; }

  // Creates a device by driver name or URI ("local-sync", "local-sync://0").
  Result<RefPtr<hal::Device>> CreateDevice(std::string_view uri);

private:
  explicit Instance(RefPtr<vm::Instance> vm_instance);

  hal::DriverRegistry driver_registry_;
  RefPtr<vm::Instance> vm_instance_;
};

} // namespace strata::session

#endif // STRATA_SESSION_INSTANCE_H_
