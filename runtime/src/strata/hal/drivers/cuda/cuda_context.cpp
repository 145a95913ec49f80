#include "strata/hal/drivers/cuda/cuda_context.h"

#include <cstdio>
#include <limits>

namespace strata::hal::cuda {

Result<CudaDeviceProperties>
QueryCudaDeviceProperties(const CudaSymbols &symbols, int ordinal) {
  CudaDeviceProperties properties;
  properties.ordinal = ordinal;
  CUdevice device = 0;
  STRATA_RETURN_IF_ERROR(
      STRATA_CUDA_CALL(symbols, cuDeviceGet, &device, ordinal));
  char name[256] = {};
  STRATA_RETURN_IF_ERROR(STRATA_CUDA_CALL(symbols, cuDeviceGetName, name,
                                          int(sizeof(name) - 1), device));
  properties.name = name;
  auto attribute = [&](CUdevice_attribute which, int *value) {
    return STRATA_CUDA_CALL(symbols, cuDeviceGetAttribute, value, which,
                            device);
  };
  int major = 0, minor = 0, pools = 0;
  STRATA_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &major));
  STRATA_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &minor));
  STRATA_RETURN_IF_ERROR(attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                   &properties.multiprocessor_count));
  STRATA_RETURN_IF_ERROR(
      attribute(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED, &pools));
  properties.compute_capability = major * 10 + minor;
  properties.memory_pools = pools != 0;
  size_t total_memory = 0;
  STRATA_RETURN_IF_ERROR(
      STRATA_CUDA_CALL(symbols, cuDeviceTotalMem_v2, &total_memory, device));
  properties.total_memory = total_memory;
  STRATA_RETURN_IF_ERROR(STRATA_CUDA_CALL(symbols, cuDriverGetVersion,
                                          &properties.driver_version));
  return properties;
}

namespace {

std::string FormatGiB(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.1f GiB",
                double(bytes) / double(uint64_t{1} << 30));
  return text;
}

} // namespace

std::string FormatCudaDeviceName(const CudaDeviceProperties &properties) {
  return StrCat(properties.name, " (sm_", properties.compute_capability, ", ",
                FormatGiB(properties.total_memory), ")");
}

std::string FormatCudaDeviceProperties(const CudaDeviceProperties &properties) {
  return StrCat("  gpu: ", properties.ordinal, " ", properties.name, "\n",
                "  compute capability: ", properties.compute_capability / 10,
                ".", properties.compute_capability % 10, " (sm_",
                properties.compute_capability, ")\n",
                "  memory: ", FormatGiB(properties.total_memory), " (",
                properties.total_memory, " bytes)\n",
                "  multiprocessors: ", properties.multiprocessor_count, "\n",
                "  driver version: ", properties.driver_version / 1000, ".",
                properties.driver_version % 1000 / 10, "\n", "  memory pools: ",
                properties.memory_pools ? "yes (cuMemAllocAsync)"
                                        : "no (cuMemAlloc)",
                "\n");
}

Result<std::shared_ptr<CudaContext>>
CudaContext::Create(std::shared_ptr<const CudaSymbols> symbols, int ordinal) {
  const CudaSymbols &table = *symbols;
  STRATA_ASSIGN_OR_RETURN(CudaDeviceProperties properties,
                          QueryCudaDeviceProperties(table, ordinal));
  CUdevice device = 0;
  STRATA_RETURN_IF_ERROR(
      STRATA_CUDA_CALL(table, cuDeviceGet, &device, ordinal));
  std::shared_ptr<CudaContext> context(
      new CudaContext(std::move(symbols), std::move(properties), device));
  // From here the destructor undoes whatever succeeded.
  STRATA_RETURN_IF_ERROR(STRATA_CUDA_CALL(table, cuDevicePrimaryCtxRetain,
                                          &context->context_, device));
  STRATA_RETURN_IF_ERROR(context->MakeCurrent());
  STRATA_RETURN_IF_ERROR(STRATA_CUDA_CALL(
      table, cuStreamCreate, &context->stream_, CU_STREAM_NON_BLOCKING));
  if (context->properties_.memory_pools) {
    STRATA_RETURN_IF_ERROR(STRATA_CUDA_CALL(table, cuDeviceGetDefaultMemPool,
                                            &context->pool_, device));
    // The pool otherwise returns freed memory to the OS at every
    // synchronization, and each queue operation synchronizes.
    uint64_t threshold = std::numeric_limits<uint64_t>::max();
    STRATA_RETURN_IF_ERROR(
        STRATA_CUDA_CALL(table, cuMemPoolSetAttribute, context->pool_,
                         CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold));
  }
  return context;
}

CudaContext::~CudaContext() {
  if (!context_)
    return;
  // Errors here have nowhere to go: the objects are gone either way.
  if (symbols_->cuCtxSetCurrent(context_) == CUDA_SUCCESS && stream_) {
    symbols_->cuStreamSynchronize(stream_);
    symbols_->cuStreamDestroy_v2(stream_);
  }
  symbols_->cuDevicePrimaryCtxRelease_v2(device_);
}

Status CudaContext::MakeCurrent() const {
  return STRATA_CUDA_CALL(*symbols_, cuCtxSetCurrent, context_);
}

Status CudaContext::Synchronize() const {
  return STRATA_CUDA_CALL(*symbols_, cuStreamSynchronize, stream_);
}

} // namespace strata::hal::cuda
