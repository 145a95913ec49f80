// Fuzz target: the cuda driver's executable parser on arbitrary bytes. It
// runs before any CUDA call, on bytes straight from a module file, so it
// must refuse everything malformed with a clear error and, for what it
// accepts, hand the loader only ranges inside the bytes: names and PTX
// within them, the PTX NUL-terminated, block sizes CUDA launches.
#include <cstdint>
#include <span>

#include "fuzz_util.h"
#include "strata/hal/drivers/cuda/cuda_executable.h"

namespace strata::fuzz {
namespace {

bool Inside(std::span<const uint8_t> bytes, std::string_view view) {
  auto begin = reinterpret_cast<const uint8_t *>(view.data());
  return begin >= bytes.data() &&
         begin + view.size() <= bytes.data() + bytes.size();
}

void RunOne(const uint8_t *data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  auto layout = hal::cuda::ParseCudaExecutable(bytes);
  if (!layout.ok()) {
    CheckError(layout.status());
    return;
  }
  if (!Inside(bytes, layout->ptx) || layout->ptx.empty())
    Fail("the PTX view is empty or outside the executable");
  auto terminator = reinterpret_cast<const uint8_t *>(layout->ptx.data()) +
                    layout->ptx.size();
  if (terminator >= bytes.data() + bytes.size() || *terminator != 0)
    Fail("the PTX is not followed by its NUL inside the executable");
  if (layout->ptx.find('\0') != std::string_view::npos)
    Fail("the PTX holds a NUL");
  if (layout->exports.empty())
    Fail("an executable without exports was accepted");
  for (const hal::cuda::CudaExportLayout &entry : layout->exports) {
    if (entry.name.empty() || !Inside(bytes, entry.name))
      Fail("an export name is empty or outside the executable");
    uint64_t threads = 1;
    for (uint32_t size : entry.block_size) {
      if (size == 0)
        Fail("a block size of 0 was accepted");
      threads *= size;
    }
    if (threads > STRATA_CUDA_MAX_THREADS_PER_BLOCK)
      Fail("a block of more than 1024 threads was accepted");
    if (entry.blocks_per_workgroup == 0 ||
        entry.blocks_per_workgroup > STRATA_CUDA_MAX_BLOCKS_PER_WORKGROUP)
      Fail("blocks_per_workgroup outside 1..65536 was accepted");
    if (uint64_t(entry.binding_count) * 8 +
            uint64_t(entry.push_constant_count) * 4 >
        hal::cuda::kCudaMaxKernelParameterBytes)
      Fail("kernel parameters past CUDA's limit were accepted");
  }
}

} // namespace
} // namespace strata::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata::fuzz::RunOne(data, size);
  return 0;
}
