#include "strata/hal/local/cpu_features.h"

#include <array>
#include <cstdint>
#include <string>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace strata::hal {
namespace {

enum class StateNeeded { none, ymm, zmm, amx };

struct CpuidRegisters {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

struct Feature {
  std::string_view name;
  uint32_t leaf, subleaf;
  uint32_t CpuidRegisters::*reg;
  int bit;
  StateNeeded needs;
};

constexpr Feature kFeatures[] = {
#define STRATA_CPU_FEATURE(name, leaf, subleaf, reg, bit, needs, use)          \
  {name, leaf, subleaf, &CpuidRegisters::reg, bit, StateNeeded::needs},
#include "strata/hal/local/cpu_features.def"
#undef STRATA_CPU_FEATURE
};
constexpr size_t kFeatureCount = std::size(kFeatures);

#if defined(__x86_64__)
// Zeros for a leaf past the CPU's maximum in its range (basic or extended:
// __get_cpuid_count checks both).
CpuidRegisters Cpuid(uint32_t leaf, uint32_t subleaf) {
  CpuidRegisters r;
  if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx))
    return CpuidRegisters();
  return r;
}

// Register state the OS saves and restores (XCR0), which decides whether
// AVX / AVX-512 / AMX instructions may be used at all.
uint64_t EnabledStateMask() {
  if (!((Cpuid(1, 0).ecx >> 27) & 1)) // OSXSAVE
    return 0;
  uint32_t low, high;
  __asm__ volatile("xgetbv" : "=a"(low), "=d"(high) : "c"(0));
  return (uint64_t(high) << 32) | low;
}

bool StateEnabled(StateNeeded needed, uint64_t mask) {
  switch (needed) {
  case StateNeeded::none:
    return true;
  case StateNeeded::ymm:
    return (mask & 0x6) == 0x6; // SSE + AVX state
  case StateNeeded::zmm:
    return (mask & 0xE6) == 0xE6; // + opmask, ZMM_Hi256, Hi16_ZMM
  case StateNeeded::amx:
    return (mask & 0x60000) == 0x60000; // XTILECFG + XTILEDATA
  }
  return false;
}

// Every listed feature's presence, read once per process.
const std::array<bool, kFeatureCount> &HostFeatureTable() {
  static const std::array<bool, kFeatureCount> table = [] {
    std::array<bool, kFeatureCount> present{};
    uint64_t state = EnabledStateMask();
    for (size_t i = 0; i < kFeatureCount; ++i) {
      const Feature &feature = kFeatures[i];
      CpuidRegisters registers = Cpuid(feature.leaf, feature.subleaf);
      present[i] = ((registers.*feature.reg >> feature.bit) & 1) &&
                   StateEnabled(feature.needs, state);
    }
    return present;
  }();
  return table;
}
#endif

std::optional<size_t> FindFeature(std::string_view llvm_name) {
  for (size_t i = 0; i < kFeatureCount; ++i)
    if (kFeatures[i].name == llvm_name)
      return i;
  return std::nullopt;
}

// Appends `name` to a ", "-separated list, bounding what a hostile module
// can make the message hold.
void AppendName(std::string &list, size_t &count, std::string_view name) {
  constexpr size_t kMaxNames = 32, kMaxNameLength = 40;
  if (count++ >= kMaxNames) {
    if (count == kMaxNames + 1)
      list += ", ...";
    return;
  }
  if (!list.empty())
    list += ", ";
  list += name.substr(0, kMaxNameLength);
}

} // namespace

std::optional<bool> HostHasCpuFeature(std::string_view llvm_name) {
#if defined(__x86_64__)
  if (std::optional<size_t> index = FindFeature(llvm_name))
    return HostFeatureTable()[*index];
#endif
  return std::nullopt;
}

Status CheckHostCpuFeatures(std::string_view llvm_names) {
  std::string missing, unknown;
  size_t missing_count = 0, unknown_count = 0;
  while (!llvm_names.empty()) {
    size_t comma = llvm_names.find(',');
    std::string_view name = llvm_names.substr(0, comma);
    llvm_names.remove_prefix(comma == std::string_view::npos ? llvm_names.size()
                                                             : comma + 1);
    if (name.empty())
      continue;
    std::optional<bool> present = HostHasCpuFeature(name);
    if (!present)
      AppendName(unknown, unknown_count, name);
    else if (!*present)
      AppendName(missing, missing_count, name);
  }
  if (missing.empty() && unknown.empty())
    return OkStatus();
  std::string message;
  if (!missing.empty())
    message = StrCat("this CPU lacks ", missing);
  if (!unknown.empty())
    message += StrCat(message.empty() ? "" : "; ",
                      "this runtime does not know the CPU features ", unknown);
  return FailedPreconditionError(
      message,
      ", which the module's executables were compiled for: compile it with "
      "--cpu=host on this machine or name an older --cpu (x86-64-v3, "
      "x86-64-v2, x86-64)");
}

} // namespace strata::hal
