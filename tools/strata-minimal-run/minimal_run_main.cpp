// strata-minimal-run: the smallest useful embedding of the runtime. Loads a
// module, calls one function on a host device that runs dispatches inline
// (the local-sync setup) with the embedded ELF loader only, and prints each
// tensor result's sum. Inputs are the function's reflected tensor types
// with every element 1 (f32 only), so no tensor parsing is linked in.
//
//   strata-minimal-run model.smod main
//
// Built statically (see CMakeLists.txt); bench/README.md reports its
// stripped size.
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "strata/hal/buffer_view.h"
#include "strata/hal/loaders/embedded_elf_loader.h"
#include "strata/hal/local/local_device.h"
#include "strata/hal/ref_types.h"
#include "strata/modules/hal/hal_module.h"
#include "strata/vm/bytecode_module.h"
#include "strata/vm/context.h"
#include "strata_version.h"

namespace {

using namespace strata;

Result<std::vector<vm::Value>> MakeInputs(const vm::ModuleExport &info,
                                          hal::Allocator &allocator) {
  std::vector<vm::Value> inputs;
  for (const vm::TensorTypeInfo &type : info.argument_types) {
    if (type.element_type != STRATA_HAL_ELEMENT_TYPE_FLOAT_32)
      return UnimplementedError("only f32 inputs are generated");
    size_t count = 1;
    for (int64_t dim : type.shape) {
      if (dim < 0)
        return UnimplementedError("dynamic input shapes are not generated");
      count *= size_t(dim);
    }
    std::vector<float> ones(count, 1.0f);
    STRATA_ASSIGN_OR_RETURN(RefPtr<hal::BufferView> view,
                            hal::BufferView::Allocate(
                                allocator, type.shape, type.element_type,
                                STRATA_HAL_MEMORY_TYPE_DEVICE_LOCAL |
                                    STRATA_HAL_MEMORY_TYPE_HOST_VISIBLE,
                                STRATA_HAL_BUFFER_USAGE_DEFAULT,
                                {reinterpret_cast<const uint8_t *>(ones.data()),
                                 ones.size() * sizeof(float)}));
    inputs.push_back(vm::Value::Ref(std::move(view)));
  }
  return inputs;
}

Status Run(const char *path, const char *function_name) {
  hal::LocalDeviceParams params;
  params.id = "local-sync";
  params.loaders.push_back(std::make_unique<hal::EmbeddedElfLoader>());
  params.grid_runner = std::make_unique<hal::InlineGridRunner>();
  STRATA_ASSIGN_OR_RETURN(RefPtr<hal::LocalDevice> device,
                          hal::LocalDevice::Create(std::move(params)));

  RefPtr<vm::Instance> instance = vm::Instance::Create();
  for (const RefTypeDescriptor *type : hal::AllRefTypes())
    STRATA_RETURN_IF_ERROR(instance->RegisterType(*type));
  RefPtr<vm::Context> context = vm::Context::Create(instance);
  STRATA_ASSIGN_OR_RETURN(RefPtr<vm::Module> hal_module,
                          modules::CreateHalModule({device}));
  STRATA_RETURN_IF_ERROR(context->RegisterModule(std::move(hal_module)));
  STRATA_ASSIGN_OR_RETURN(RefPtr<vm::BytecodeModule> module,
                          vm::LoadBytecodeModuleFromFile(path));
  STRATA_RETURN_IF_ERROR(context->RegisterModule(module));

  STRATA_ASSIGN_OR_RETURN(
      vm::Function function,
      context->LookupFunction(StrCat(module->name(), ".", function_name)));
  STRATA_ASSIGN_OR_RETURN(std::vector<vm::Value> inputs,
                          MakeInputs(function.info(), *device->allocator()));
  std::vector<vm::Value> results;
  STRATA_RETURN_IF_ERROR(context->Invoke(function, inputs, &results));
  for (size_t i = 0; i < results.size(); ++i) {
    auto *view = RefCast<hal::BufferView>(results[i].ref());
    if (!view || view->element_type() != STRATA_HAL_ELEMENT_TYPE_FLOAT_32) {
      std::printf("result %zu: not an f32 tensor\n", i);
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(hal::MappedRange mapped,
                            view->buffer()->MapRange(0, view->byte_length()));
    double sum = 0;
    for (float value : mapped.As<float>())
      sum += value;
    std::printf("result %zu: %s sum %g\n", i, view->FormatShape().c_str(), sum);
  }
  return OkStatus();
}

} // namespace

int main(int argc, char **argv) {
  if (argc == 2 && std::strcmp(argv[1], "--version") == 0) {
    std::printf("strata-minimal-run (Strata %s, git %s)\n",
                STRATA_VERSION_STRING, STRATA_GIT_COMMIT);
    return 0;
  }
  if (argc == 2 && std::strcmp(argv[1], "--help") == 0) {
    std::printf("usage: strata-minimal-run MODULE.smod FUNCTION\n\n"
                "Calls FUNCTION with f32 inputs of ones on a local-sync "
                "device and prints each result's shape and sum.\n\n"
                "flags:\n"
                "  --version  print the Strata version and git commit\n"
                "  --help     print this help\n");
    return 0;
  }
  if (argc != 3) {
    std::fprintf(stderr, "usage: strata-minimal-run MODULE.smod FUNCTION\n");
    return 2;
  }
  Status status = Run(argv[1], argv[2]);
  if (!status.ok()) {
    std::fprintf(stderr, "strata-minimal-run: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
