// Shared pieces of the fuzz targets.
//
// Native code in a module is trusted: a module file can carry any machine
// code, and running code is what executables are for. So the module fuzzer
// never runs the code of an executable it has not seen before. Its device
// loads executables through TrustedExecutableLoader:
//  * bytes identical to an executable of one of the trusted modules (the
//    seed corpus, compiled from the test programs) become a stand-in with
//    the same exports, binding counts and workgroup sizes whose workgroups
//    only touch the first and last byte of every binding (so ASan checks
//    the pointers and lengths the HAL passes) and count against a budget;
//  * any other bytes go through the embedded ELF loader's header, segment
//    and relocation checks (EmbeddedElfImage::Load, which runs no code) and
//    are then refused.
// The stand-in never reads binding contents as addresses, so host programs
// that bind the wrong buffers are exercised without the real kernels'
// assumptions about sizes.
#ifndef STRATA_TESTS_FUZZ_FUZZ_UTIL_H_
#define STRATA_TESTS_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "strata/base/ref_ptr.h"
#include "strata/base/status.h"
#include "strata/hal/allocator.h"
#include "strata/hal/device.h"
#include "strata/hal/executable.h"
#include "strata/session/instance.h"

namespace strata::fuzz {

// Limits that keep one fuzz input small and short.
inline constexpr uint64_t kMaxAllocationBytes = uint64_t(64) << 20;
inline constexpr uint64_t kStepBudget = 200000;
inline constexpr uint32_t kMaxStackDepth = 256;
// A call's deadline: bounds waits, which steps do not (well under
// libFuzzer's -timeout of 20 s in run_fuzzers.sh).
inline constexpr int64_t kCallTimeoutNs = 2'000'000'000;
inline constexpr uint64_t kWorkgroupBudget = 1 << 16;

// Resets the workgroup budget of the stand-in executables (per input).
void ResetWorkgroupBudget();

class TrustedExecutableLoader final : public hal::ExecutableLoader {
public:
  std::string_view name() const override { return "fuzz-trusted"; }
  std::vector<std::string> SupportedFormats() const override;
  bool CanLoad(std::string_view format) const override;
  Result<RefPtr<hal::Executable>>
  Load(std::string_view format, std::span<const uint8_t> bytes,
       std::span<const uint32_t> constants) override;
};

// The session instance and a local-sync-like device (inline grids, the
// loader above, a heap allocator limited to kMaxAllocationBytes), created
// once per process.
session::Instance &FuzzInstance();
RefPtr<hal::Device> FuzzDevice();
// The same allocator on its own.
hal::Allocator &FuzzAllocator();

// Runs one module file as module_fuzzer does: loads and verifies it into a
// fresh session on FuzzDevice() (dependencies, imports, __init), then calls
// every export not starting with "__" with zero-filled inputs of the shapes
// its reflection declares (dynamic dimensions as 1; functions whose inputs
// would exceed 1 MiB are skipped). Every failure must carry a message.
void RunModuleFile(const uint8_t *data, size_t size);

// Aborts unless `status` is OK or has a message. With STRATA_FUZZ_VERBOSE
// set in the environment, prints every status it sees.
void CheckError(const Status &status);

// Aborts with `message` (a property the target checks failed).
[[noreturn]] void Fail(std::string_view message);

} // namespace strata::fuzz

#endif // STRATA_TESTS_FUZZ_FUZZ_UTIL_H_
