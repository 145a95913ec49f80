// What the module fuzz targets run on one input (fuzz_util.h has the
// limits): load + verify into a fresh session, __init, then every export
// called with zero-filled inputs of its reflected shapes.
#include <cstdint>
#include <vector>

#include "fuzz_util.h"
#include "strata/base/owned_bytes.h"
#include "strata/hal/buffer_view.h"
#include "strata/session/session.h"

namespace strata::fuzz {
namespace {

// Zero inputs are small: larger reflected shapes skip the function.
constexpr uint64_t kMaxInputBytes = uint64_t(1) << 20;

// Zero-filled arguments for `function`; false when its reflection asks for
// more than kMaxInputBytes or for something invalid.
bool BuildZeroInputs(const vm::Function &function,
                     std::vector<vm::Value> *inputs) {
  const vm::ModuleExport &info = function.info();
  if (info.signature.is_variadic())
    return false;
  uint64_t total_bytes = 0;
  size_t tensor_index = 0;
  for (vm::ValueType type : info.signature.argument_types()) {
    switch (type) {
    case vm::ValueType::kI32:
      inputs->push_back(vm::Value::I32(0));
      break;
    case vm::ValueType::kI64:
      inputs->push_back(vm::Value::I64(0));
      break;
    case vm::ValueType::kF32:
      inputs->push_back(vm::Value::F32(0));
      break;
    case vm::ValueType::kF64:
      inputs->push_back(vm::Value::F64(0));
      break;
    case vm::ValueType::kRef: {
      if (tensor_index >= info.argument_types.size()) {
        inputs->push_back(vm::Value::NullRef());
        break;
      }
      const vm::TensorTypeInfo &tensor = info.argument_types[tensor_index++];
      if (tensor.shape.size() > hal::BufferView::kMaxRank)
        return false;
      std::vector<int64_t> shape = tensor.shape;
      for (int64_t &dim : shape)
        if (dim < 0)
          dim = 1;
      auto element_type = static_cast<hal::ElementType>(tensor.element_type);
      auto byte_length =
          hal::BufferView::ComputeByteLength(shape, element_type);
      if (!byte_length.ok())
        return false;
      total_bytes += *byte_length;
      if (total_bytes > kMaxInputBytes)
        return false;
      auto view =
          hal::BufferView::Allocate(FuzzAllocator(), shape, element_type,
                                    STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL |
                                        STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
                                    STRATA_HAL_BUFFER_USAGE_DEFAULT);
      if (!view.ok()) {
        CheckError(view.status());
        return false;
      }
      inputs->push_back(vm::Value::Ref(std::move(*view)));
      break;
    }
    default:
      return false;
    }
  }
  return true;
}

} // namespace

void RunModuleFile(const uint8_t *data, size_t size) {
  ResetWorkgroupBudget();
  session::SessionOptions options;
  options.context_options.stack_options.max_depth = kMaxStackDepth;
  options.context_options.stack_options.max_storage_bytes = size_t(8) << 20;
  options.context_options.stack_options.step_budget = kStepBudget;
  // Steps bound the interpreter, not waits: a program that makes the
  // device wait on a fence it never signals (the inline local-sync queue
  // waits on the calling thread) would block forever. A deadline ends it
  // with DEADLINE_EXCEEDED, as an embedder's timeout does.
  options.default_timeout_ns = kCallTimeoutNs;
  auto session = session::Session::Create(
      RefPtr<session::Instance>::Retain(&FuzzInstance()), FuzzDevice(),
      options);
  if (!session.ok())
    Fail(session.status().ToString());
  Status loaded = (*session)->AppendBytecodeModuleFromMemory(
      OwnedBytes::CopyOf(std::span<const uint8_t>(data, size)));
  if (!loaded.ok()) {
    CheckError(loaded);
    return;
  }
  vm::Context &context = (*session)->context();
  size_t index = context.module_count() - 1;
  vm::Module &module = context.module(index);
  for (uint32_t i = 0; i < module.exports().size(); ++i) {
    if (module.exports()[i].name.starts_with("__"))
      continue;
    vm::Function function;
    function.module = RefPtr<vm::Module>::Retain(&module);
    function.state = context.module_state(index);
    function.export_ordinal = i;
    std::vector<vm::Value> inputs;
    if (!BuildZeroInputs(function, &inputs))
      continue;
    std::vector<vm::Value> outputs;
    CheckError((*session)->Call(function, inputs, &outputs));
  }
}

} // namespace strata::fuzz
