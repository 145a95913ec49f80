#include "strata/hal/local/cpu_features.h"

#include <cstdint>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace strata::hal {
namespace {

enum class StateNeeded { none, ymm, zmm, amx };

#if defined(__x86_64__)
struct CpuidRegisters {
  uint32_t eax = 0, ebx = 0, ecx = 0, edx = 0;
};

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

bool StateEnabled(StateNeeded needed) {
  static const uint64_t mask = EnabledStateMask();
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
#endif

} // namespace

std::optional<bool> HostHasCpuFeature(std::string_view llvm_name) {
#if defined(__x86_64__)
  struct Feature {
    std::string_view name;
    uint32_t leaf, subleaf;
    uint32_t CpuidRegisters::*reg;
    int bit;
    StateNeeded needs;
  };
  static const Feature kFeatures[] = {
#define STRATA_CPU_FEATURE(name, leaf, subleaf, reg, bit, needs)               \
  {name, leaf, subleaf, &CpuidRegisters::reg, bit, StateNeeded::needs},
#include "strata/hal/local/cpu_features.def"
#undef STRATA_CPU_FEATURE
  };
  for (const Feature &feature : kFeatures) {
    if (feature.name != llvm_name)
      continue;
    if (feature.leaf > Cpuid(0, 0).eax)
      return false;
    bool reported =
        (Cpuid(feature.leaf, feature.subleaf).*feature.reg >> feature.bit) & 1;
    return reported && StateEnabled(feature.needs);
  }
#endif
  return std::nullopt;
}

} // namespace strata::hal
