#include "strata/session/instance.h"

#include "strata/hal/drivers/register_drivers.h"
#include "strata/hal/ref_types.h"

namespace strata::session {

const RefTypeDescriptor Instance::kRefType = {"strata.instance"};

Instance::Instance(RefPtr<vm::Instance> vm_instance)
    : RefObject(&kRefType), vm_instance_(std::move(vm_instance)) {}

Result<RefPtr<Instance>> Instance::Create() {
  RefPtr<vm::Instance> vm_instance = vm::Instance::Create();
  for (const RefTypeDescriptor *type : hal::AllRefTypes())
    STRATA_RETURN_IF_ERROR(vm_instance->RegisterType(*type));
  auto instance = RefPtr<Instance>::Adopt(new Instance(std::move(vm_instance)));
  STRATA_RETURN_IF_ERROR(hal::RegisterAllDrivers(instance->driver_registry_));
  return instance;
}

Result<RefPtr<hal::Device>> Instance::CreateDevice(std::string_view uri) {
  return driver_registry_.CreateDevice(uri);
}

} // namespace strata::session
