// What every object of one cuda device shares: the driver's symbol table,
// the device's primary context and the one stream all its work runs on in
// order. Held by the device, its allocator (and so every buffer) and its
// executables through a shared_ptr, so the context outlives them all.
#ifndef STRATA_HAL_DRIVERS_CUDA_CUDA_CONTEXT_H_
#define STRATA_HAL_DRIVERS_CUDA_CUDA_CONTEXT_H_

#include <cstdint>
#include <memory>
#include <string>

#include "strata/base/status.h"
#include "strata/hal/drivers/cuda/cuda_dynamic_symbols.h"

namespace strata::hal::cuda {

struct CudaDeviceProperties {
  int ordinal = 0;
  std::string name;           // "NVIDIA H100 80GB HBM3"
  int compute_capability = 0; // major * 10 + minor (90 for sm_90)
  int multiprocessor_count = 0;
  uint64_t total_memory = 0; // bytes
  int driver_version = 0;    // 12040 for CUDA 12.4
  bool memory_pools = false; // cuMemAllocAsync is supported
};

// Reads the properties of GPU `ordinal`.
Result<CudaDeviceProperties>
QueryCudaDeviceProperties(const CudaSymbols &symbols, int ordinal);

// "NVIDIA H100 80GB HBM3 (sm_90, 79.6 GiB)".
std::string FormatCudaDeviceName(const CudaDeviceProperties &properties);

// Multi-line description: name, compute capability, memory, SMs, driver.
std::string FormatCudaDeviceProperties(const CudaDeviceProperties &properties);

class CudaContext {
public:
  // Retains GPU `ordinal`'s primary context and creates a non-blocking
  // stream on it. With memory pools, the default pool keeps freed blocks
  // (release threshold raised to the maximum) so steady calls allocate
  // without reaching the OS.
  static Result<std::shared_ptr<CudaContext>>
  Create(std::shared_ptr<const CudaSymbols> symbols, int ordinal);
  // Waits for the stream, destroys it and releases the primary context.
  ~CudaContext();
  CudaContext(const CudaContext &) = delete;
  CudaContext &operator=(const CudaContext &) = delete;

  const CudaSymbols &symbols() const { return *symbols_; }
  const CudaDeviceProperties &properties() const { return properties_; }
  CUstream stream() const { return stream_; }
  // The default memory pool; null when the device has none (then memory
  // comes from cuMemAlloc_v2).
  CUmemoryPool pool() const { return pool_; }

  // Binds the context to the calling thread. The driver API works on the
  // thread's current context and the HAL is called from any thread, so
  // every entry point that reaches CUDA calls this first.
  Status MakeCurrent() const;
  // Waits until all work on the stream is done.
  Status Synchronize() const;

private:
  CudaContext(std::shared_ptr<const CudaSymbols> symbols,
              CudaDeviceProperties properties, CUdevice device)
      : symbols_(std::move(symbols)), properties_(std::move(properties)),
        device_(device) {}

  std::shared_ptr<const CudaSymbols> symbols_;
  CudaDeviceProperties properties_;
  CUdevice device_;
  CUcontext context_ = nullptr;
  CUstream stream_ = nullptr;
  CUmemoryPool pool_ = nullptr;
};

} // namespace strata::hal::cuda

#endif // STRATA_HAL_DRIVERS_CUDA_CUDA_CONTEXT_H_
