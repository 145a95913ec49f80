#include "strata/vm/instance.h"

#include "strata/vm/byte_buffer.h"
#include "strata/vm/list.h"
#include "strata/vm/module.h"

namespace strata::vm {

const RefTypeDescriptor Instance::kRefType = {"vm.instance"};

RefPtr<Instance> Instance::Create() {
  auto instance = RefPtr<Instance>::Adopt(new Instance());
  for (const RefTypeDescriptor *type :
       {&ByteBuffer::kRefType, &List::kRefType, &Module::kRefType}) {
    Status status = instance->RegisterType(*type);
    assert(status.ok() && "built-in ref types cannot collide");
    status.IgnoreError();
  }
  return instance;
}

Status Instance::RegisterType(const RefTypeDescriptor &type) {
  if (!type.name || !*type.name)
    return InvalidArgumentError("ref type descriptor without a name");
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = types_.emplace(type.name, &type);
  if (!inserted && it->second != &type)
    return AlreadyExistsError("another ref type named '", type.name,
                              "' is already registered");
  return OkStatus();
}

const RefTypeDescriptor *Instance::LookupType(std::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = types_.find(std::string(name));
  return it == types_.end() ? nullptr : it->second;
}

} // namespace strata::vm
