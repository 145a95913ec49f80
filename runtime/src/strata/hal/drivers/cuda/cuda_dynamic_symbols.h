// The CUDA driver API, loaded at run time: the runtime neither includes
// cuda.h nor links libcuda, so it builds everywhere and a machine without
// a GPU lists no cuda device instead of failing to start. The few types
// and constants the driver uses are declared here with cuda.h's names and
// values (CUDA 13.0, checked against /usr/local/cuda/include/cuda.h).
//
// A CudaSymbols table is plain data: tests fill one with fake functions and
// create a device over it (cuda_device.h).
#ifndef STRATA_HAL_DRIVERS_CUDA_CUDA_DYNAMIC_SYMBOLS_H_
#define STRATA_HAL_DRIVERS_CUDA_CUDA_DYNAMIC_SYMBOLS_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "strata/base/status.h"

namespace strata::hal::cuda {

// cuda.h types. Enums are passed as C enums (int-sized).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using CUmemoryPool = struct CUmemPoolHandle_st *;

enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1,
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY = 19,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
};

enum CUjit_option : int {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

enum CUmemPool_attribute : int {
  CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4, // cuuint64_t
};

inline constexpr CUresult CUDA_SUCCESS = 0;
inline constexpr CUresult CUDA_ERROR_INVALID_VALUE = 1;
inline constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
inline constexpr CUresult CUDA_ERROR_NOT_INITIALIZED = 3;
inline constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
inline constexpr CUresult CUDA_ERROR_INVALID_DEVICE = 101;
inline constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
inline constexpr CUresult CUDA_ERROR_LAUNCH_FAILED = 719;

inline constexpr unsigned int CU_STREAM_NON_BLOCKING = 0x1;
inline constexpr unsigned int CU_EVENT_DEFAULT = 0x0;
inline constexpr unsigned int CU_MEMHOSTALLOC_PORTABLE = 0x01;
inline constexpr unsigned int CU_MEMHOSTALLOC_DEVICEMAP = 0x02;

// Every entry point of cuda_dynamic_symbols.def as a function pointer.
struct CudaSymbols {
#define STRATA_CUDA_SYMBOL(name, parameters)                                   \
  CUresult(*name) parameters = nullptr;
#define STRATA_CUDA_SYMBOL_FALLBACK(name, fallback, parameters)                \
  STRATA_CUDA_SYMBOL(name, parameters)
#include "strata/hal/drivers/cuda/cuda_dynamic_symbols.def"
#undef STRATA_CUDA_SYMBOL_FALLBACK
#undef STRATA_CUDA_SYMBOL
  // What cuInit(0) returned when the loader called it (tables filled by
  // tests set it themselves).
  CUresult init_result = CUDA_SUCCESS;
};

// The environment variable naming the driver library to load instead of
// libcuda.so.1 (tests point it at a path that does not exist).
inline constexpr const char *kCudaDriverLibraryEnv =
    "STRATA_CUDA_DRIVER_LIBRARY";

// The process's CUDA driver: libcuda.so.1 (or $STRATA_CUDA_DRIVER_LIBRARY)
// loaded, every symbol resolved and cuInit(0) called, once; later calls
// return the same table. The library is never unloaded. UNAVAILABLE
// "no CUDA driver: cannot load libcuda.so.1 (<dlerror>)" without one, or
// naming the first missing symbol. A failed load is retried next call.
Result<std::shared_ptr<const CudaSymbols>> LoadCudaSymbols();

// OK for CUDA_SUCCESS; otherwise a status naming the error and the call:
// "CUDA_ERROR_OUT_OF_MEMORY (out of memory) in cuMemAlloc_v2".
// Out of memory is RESOURCE_EXHAUSTED, a missing device or driver
// UNAVAILABLE, a rejected PTX INVALID_ARGUMENT, anything else INTERNAL.
Status CudaResultToStatus(const CudaSymbols &symbols, CUresult result,
                          const char *call);

} // namespace strata::hal::cuda

// Calls symbols.name(args...) and turns its result into a Status naming
// the entry point: STRATA_CUDA_CALL(symbols, cuStreamSynchronize, stream).
#define STRATA_CUDA_CALL(symbols, name, ...)                                   \
  ::strata::hal::cuda::CudaResultToStatus((symbols),                           \
                                          (symbols).name(__VA_ARGS__), #name)

#endif // STRATA_HAL_DRIVERS_CUDA_CUDA_DYNAMIC_SYMBOLS_H_
