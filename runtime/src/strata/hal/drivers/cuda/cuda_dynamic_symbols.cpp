#include "strata/hal/drivers/cuda/cuda_dynamic_symbols.h"

#include <cstdlib>
#include <dlfcn.h>
#include <mutex>

namespace strata::hal::cuda {
namespace {

// Resolves every symbol of the .def into `symbols`; names the first one
// missing.
Status ResolveSymbols(void *library, const char *library_name,
                      CudaSymbols &symbols) {
  auto resolve = [&](const char *name, const char *fallback,
                     void **slot) -> Status {
    *slot = dlsym(library, name);
    if (!*slot && fallback)
      *slot = dlsym(library, fallback);
    if (*slot)
      return OkStatus();
    return UnavailableError("no CUDA driver: ", library_name,
                            " lacks the entry point ", name,
                            " (a driver too old for this runtime?)");
  };
#define STRATA_CUDA_SYMBOL(name, parameters)                                   \
  STRATA_RETURN_IF_ERROR(                                                      \
      resolve(#name, nullptr, reinterpret_cast<void **>(&symbols.name)));
#define STRATA_CUDA_SYMBOL_FALLBACK(name, fallback, parameters)                \
  STRATA_RETURN_IF_ERROR(                                                      \
      resolve(#name, #fallback, reinterpret_cast<void **>(&symbols.name)));
#include "strata/hal/drivers/cuda/cuda_dynamic_symbols.def"
#undef STRATA_CUDA_SYMBOL_FALLBACK
#undef STRATA_CUDA_SYMBOL
  return OkStatus();
}

Result<std::shared_ptr<const CudaSymbols>> LoadFromLibrary() {
  const char *library_name = std::getenv(kCudaDriverLibraryEnv);
  if (!library_name || !*library_name)
    library_name = "libcuda.so.1";
  void *library = dlopen(library_name, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *error = dlerror();
    return UnavailableError("no CUDA driver: cannot load ", library_name, " (",
                            error ? error : "unknown error", ")");
  }
  auto symbols = std::make_shared<CudaSymbols>();
  if (Status status = ResolveSymbols(library, library_name, *symbols);
      !status.ok()) {
    dlclose(library);
    return status;
  }
  // Kept loaded for the life of the process: unloading libcuda while
  // anything may still hold a context is not safe.
  symbols->init_result = symbols->cuInit(0);
  return std::shared_ptr<const CudaSymbols>(std::move(symbols));
}

} // namespace

Result<std::shared_ptr<const CudaSymbols>> LoadCudaSymbols() {
  static std::mutex mutex;
  static std::shared_ptr<const CudaSymbols> *loaded = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded)
    return *loaded;
  STRATA_ASSIGN_OR_RETURN(std::shared_ptr<const CudaSymbols> symbols,
                          LoadFromLibrary());
  // Never destroyed: devices may outlive static destructors at exit.
  loaded = new std::shared_ptr<const CudaSymbols>(symbols);
  return symbols;
}

Status CudaResultToStatus(const CudaSymbols &symbols, CUresult result,
                          const char *call) {
  if (result == CUDA_SUCCESS)
    return OkStatus();
  const char *name = nullptr;
  const char *text = nullptr;
  if (!symbols.cuGetErrorName ||
      symbols.cuGetErrorName(result, &name) != CUDA_SUCCESS || !name)
    name = nullptr;
  if (!symbols.cuGetErrorString ||
      symbols.cuGetErrorString(result, &text) != CUDA_SUCCESS || !text)
    text = nullptr;
  std::string message =
      name ? std::string(name) : StrCat("CUDA error ", result);
  if (text)
    message += StrCat(" (", text, ")");
  message += StrCat(" in ", call);
  switch (result) {
  case CUDA_ERROR_OUT_OF_MEMORY:
    return ResourceExhaustedError(message);
  case CUDA_ERROR_NO_DEVICE:
  case CUDA_ERROR_INVALID_DEVICE:
  case CUDA_ERROR_NOT_INITIALIZED:
    return UnavailableError(message);
  case CUDA_ERROR_INVALID_PTX:
    return InvalidArgumentError(message);
  default:
    return InternalError(message);
  }
}

} // namespace strata::hal::cuda
