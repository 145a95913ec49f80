#include "strata/hal/drivers/cuda/cuda_executable.h"

#include <cstring>
#include <unordered_set>

#include "strata/base/checked_math.h"

namespace strata::hal::cuda {
namespace {

static_assert(sizeof(strata_cuda_executable_header_t) == 32);
static_assert(sizeof(strata_cuda_export_t) == 32);

// The export's fields other than its name, checked.
Status CheckExportShape(const strata_cuda_export_t &entry, uint32_t index) {
  if (entry.blocks_per_workgroup == 0 ||
      entry.blocks_per_workgroup > STRATA_CUDA_MAX_BLOCKS_PER_WORKGROUP)
    return InvalidArgumentError("cuda executable export ", index,
                                ": blocks_per_workgroup ",
                                entry.blocks_per_workgroup, " is outside 1..",
                                STRATA_CUDA_MAX_BLOCKS_PER_WORKGROUP);
  uint64_t threads = 1;
  for (int axis = 0; axis < 3; ++axis) {
    if (entry.block_size[axis] == 0)
      return InvalidArgumentError("cuda executable export ", index,
                                  ": block_size[", axis, "] is 0");
    threads *= entry.block_size[axis];
    // Checked per axis so the product of three u32 never wraps.
    if (threads > STRATA_CUDA_MAX_THREADS_PER_BLOCK)
      return InvalidArgumentError(
          "cuda executable export ", index, ": block size ",
          entry.block_size[0], "x", entry.block_size[1], "x",
          entry.block_size[2], " exceeds ", STRATA_CUDA_MAX_THREADS_PER_BLOCK,
          " threads per block");
  }
  if (entry.binding_count > STRATA_CUDA_MAX_BINDINGS)
    return InvalidArgumentError("cuda executable export ", index,
                                ": binding_count ", entry.binding_count,
                                " exceeds ", STRATA_CUDA_MAX_BINDINGS);
  uint64_t parameter_bytes = uint64_t(entry.binding_count) * 8 +
                             uint64_t(entry.push_constant_count) * 4;
  if (parameter_bytes > kCudaMaxKernelParameterBytes)
    return InvalidArgumentError(
        "cuda executable export ", index, ": ", entry.binding_count,
        " bindings and push_constant_count ", entry.push_constant_count,
        " take ", parameter_bytes, " bytes of kernel parameters, over CUDA's ",
        kCudaMaxKernelParameterBytes);
  return OkStatus();
}

Status CheckPtx(std::span<const uint8_t> bytes,
                const strata_cuda_executable_header_t &header) {
  if (header.ptx_length < 2)
    return InvalidArgumentError("cuda executable: ptx_length ",
                                header.ptx_length,
                                " leaves no PTX text before its NUL");
  if (!RangeInBounds(header.ptx_offset, header.ptx_length, bytes.size()))
    return InvalidArgumentError("cuda executable: PTX range [ptx_offset ",
                                header.ptx_offset, ", + ptx_length ",
                                header.ptx_length, ") is outside the ",
                                bytes.size(), "-byte executable");
  const uint8_t *ptx = bytes.data() + header.ptx_offset;
  if (ptx[header.ptx_length - 1] != 0)
    return InvalidArgumentError(
        "cuda executable: the PTX text does not end with a NUL byte");
  if (const void *nul = std::memchr(ptx, 0, header.ptx_length - 1))
    return InvalidArgumentError(
        "cuda executable: the PTX text has a NUL byte at offset ",
        static_cast<const uint8_t *>(nul) - ptx, " before its end");
  return OkStatus();
}

} // namespace

Result<CudaExecutableLayout>
ParseCudaExecutable(std::span<const uint8_t> bytes) {
  strata_cuda_executable_header_t header;
  if (bytes.size() < sizeof(header))
    return InvalidArgumentError("cuda executable of ", bytes.size(),
                                " bytes is smaller than its ", sizeof(header),
                                "-byte header");
  std::memcpy(&header, bytes.data(), sizeof(header));
  if (std::memcmp(header.magic, STRATA_CUDA_EXECUTABLE_MAGIC,
                  sizeof(header.magic)) != 0)
    return InvalidArgumentError("cuda executable: bad magic (expected \"",
                                STRATA_CUDA_EXECUTABLE_MAGIC,
                                "\" and a NUL byte)");
  if (header.version != STRATA_CUDA_EXECUTABLE_VERSION)
    return InvalidArgumentError("cuda executable: version ", header.version,
                                " is not the supported version ",
                                STRATA_CUDA_EXECUTABLE_VERSION);
  if (header.reserved != 0)
    return InvalidArgumentError("cuda executable: header reserved field is ",
                                header.reserved, ", expected 0");
  if (header.export_count < 1 || header.export_count > STRATA_CUDA_MAX_EXPORTS)
    return InvalidArgumentError("cuda executable: export_count ",
                                header.export_count, " is outside 1..",
                                STRATA_CUDA_MAX_EXPORTS);
  uint64_t table_end = sizeof(header) + uint64_t(header.export_count) *
                                            sizeof(strata_cuda_export_t);
  if (table_end > bytes.size())
    return InvalidArgumentError("cuda executable: the table of ",
                                header.export_count, " exports ends at byte ",
                                table_end, ", past the ", bytes.size(),
                                "-byte executable");
  STRATA_RETURN_IF_ERROR(CheckPtx(bytes, header));

  CudaExecutableLayout layout;
  layout.min_compute_capability = header.min_compute_capability;
  layout.ptx = std::string_view(
      reinterpret_cast<const char *>(bytes.data() + header.ptx_offset),
      header.ptx_length - 1);
  layout.exports.reserve(header.export_count);
  std::unordered_set<std::string_view> names;
  for (uint32_t i = 0; i < header.export_count; ++i) {
    strata_cuda_export_t entry;
    std::memcpy(&entry,
                bytes.data() + sizeof(header) + size_t(i) * sizeof(entry),
                sizeof(entry));
    if (entry.name_length == 0)
      return InvalidArgumentError("cuda executable export ", i,
                                  ": empty name (name_length 0)");
    if (!RangeInBounds(entry.name_offset, entry.name_length, bytes.size()))
      return InvalidArgumentError(
          "cuda executable export ", i, ": name range [name_offset ",
          entry.name_offset, ", + name_length ", entry.name_length,
          ") is outside the ", bytes.size(), "-byte executable");
    std::string_view name(
        reinterpret_cast<const char *>(bytes.data() + entry.name_offset),
        entry.name_length);
    // The kernel is looked up by C string.
    if (name.find('\0') != std::string_view::npos)
      return InvalidArgumentError("cuda executable export ", i,
                                  ": name contains a NUL byte");
    STRATA_RETURN_IF_ERROR(CheckExportShape(entry, i));
    if (!names.insert(name).second)
      return InvalidArgumentError("cuda executable export ", i, ": name '",
                                  name, "' is used by an earlier export");
    layout.exports.push_back(
        {name,
         entry.binding_count,
         entry.push_constant_count,
         {entry.block_size[0], entry.block_size[1], entry.block_size[2]},
         entry.blocks_per_workgroup});
  }
  return layout;
}

CudaExecutable::CudaExecutable(std::shared_ptr<CudaContext> context,
                               CUmodule module, std::vector<Export> exports)
    : Executable(&kFamily), context_(std::move(context)), module_(module),
      exports_(std::move(exports)) {
  name_ = StrCat("cuda-ptx:", exports_.empty() ? "" : exports_[0].name);
}

CudaExecutable::~CudaExecutable() {
  if (context_->MakeCurrent().ok())
    context_->symbols().cuModuleUnload(module_);
}

namespace {

// JIT-compiles `ptx`; a failure carries the JIT's error log.
Result<CUmodule> LoadPtxModule(const CudaSymbols &symbols,
                               std::string_view ptx) {
  char error_log[8192] = {};
  CUjit_option options[] = {CU_JIT_ERROR_LOG_BUFFER,
                            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  // Option values are passed in pointer-sized slots; the size is a value.
  void *values[] = {error_log,
                    reinterpret_cast<void *>(uintptr_t(sizeof(error_log) - 1))};
  CUmodule module = nullptr;
  Status status = STRATA_CUDA_CALL(symbols, cuModuleLoadDataEx, &module,
                                   ptx.data(), 2u, options, values);
  if (status.ok())
    return module;
  error_log[sizeof(error_log) - 1] = 0;
  if (error_log[0])
    return status.Annotate("JIT-compiling the PTX failed; the JIT log: ",
                           std::string_view(error_log));
  return status.Annotate("JIT-compiling the PTX failed (no JIT log)");
}

} // namespace

Result<RefPtr<Executable>>
CudaExecutableLoader::Load(std::string_view format,
                           std::span<const uint8_t> bytes,
                           std::span<const uint32_t> constants) {
  if (!CanLoad(format))
    return InvalidArgumentError("cuda loader cannot load format '", format,
                                "'");
  if (!constants.empty())
    return UnimplementedError("cuda executables take no executable constants (",
                              constants.size(), " given)");
  STRATA_ASSIGN_OR_RETURN(CudaExecutableLayout layout,
                          ParseCudaExecutable(bytes));
  const CudaDeviceProperties &properties = context_->properties();
  if (uint32_t(properties.compute_capability) < layout.min_compute_capability)
    return FailedPreconditionError("cuda executable needs compute capability ",
                                   layout.min_compute_capability / 10, ".",
                                   layout.min_compute_capability % 10, " (sm_",
                                   layout.min_compute_capability,
                                   ") but device '", properties.name, "' has ",
                                   properties.compute_capability / 10, ".",
                                   properties.compute_capability % 10);
  const CudaSymbols &symbols = context_->symbols();
  STRATA_RETURN_IF_ERROR(context_->MakeCurrent());
  STRATA_ASSIGN_OR_RETURN(CUmodule module, LoadPtxModule(symbols, layout.ptx));
  std::vector<CudaExecutable::Export> exports;
  exports.reserve(layout.exports.size());
  for (const CudaExportLayout &entry : layout.exports) {
    CudaExecutable::Export info{std::string(entry.name),    entry.binding_count,
                                entry.push_constant_count,  entry.block_size,
                                entry.blocks_per_workgroup, nullptr};
    if (Status status =
            STRATA_CUDA_CALL(symbols, cuModuleGetFunction, &info.function,
                             module, info.name.c_str());
        !status.ok()) {
      symbols.cuModuleUnload(module);
      return status.Annotate("cuda executable export '", info.name,
                             "': no such kernel in the PTX");
    }
    exports.push_back(std::move(info));
  }
  return RefPtr<Executable>::Adopt(
      new CudaExecutable(context_, module, std::move(exports)));
}

} // namespace strata::hal::cuda
