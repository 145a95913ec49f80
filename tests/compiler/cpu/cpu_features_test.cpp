// cpu_features.def against LLVM: the runtime's CPUID reading agrees with
// LLVM's own host detection for every listed feature (so a module compiled
// with --cpu=host is never refused on its own machine, and a feature the
// host lacks is never taken as present), and the table covers every
// feature LLVM enables for the CPUs strata-compile documents.
#include "strata/hal/local/cpu_features.h"

#include <set>
#include <string>

#include <gtest/gtest.h>

#include "llvm/ADT/StringMap.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/Triple.h"

namespace strata::hal {
namespace {

const char *const kListed[] = {
#define STRATA_CPU_FEATURE(name, leaf, subleaf, reg, bit, needs, use) name,
#include "strata/hal/local/cpu_features.def"
#undef STRATA_CPU_FEATURE
};

TEST(CpuFeaturesTest, AgreesWithLLVMHostDetection) {
  llvm::StringMap<bool> host = llvm::sys::getHostCPUFeatures();
  if (host.empty())
    GTEST_SKIP() << "LLVM cannot read this host's features";
  int compared = 0;
  for (const char *name : kListed) {
    auto it = host.find(name);
    if (it == host.end())
      continue; // LLVM's detection does not report it at all
    std::optional<bool> present = HostHasCpuFeature(name);
    ASSERT_TRUE(present.has_value()) << name;
    EXPECT_EQ(*present, it->second) << name;
    ++compared;
  }
  EXPECT_GT(compared, 50);
}

// LLVM feature names that are not instruction sets CPUID reports: tuning
// flags and the x86-64 baseline every CPU has.
bool IsBaselineOrTuning(llvm::StringRef name) {
  static const std::set<std::string> kBaseline = {
      "64bit", "64bit-mode", "cmov", "cx8", "fxsr",
      "mmx",   "sse",        "sse2", "x87", "nopl"};
  return kBaseline.count(name.str()) || name.starts_with("tuning") ||
         name.starts_with("fast-") || name.starts_with("slow-") ||
         name.starts_with("prefer-") || name.starts_with("false-deps-") ||
         name.starts_with("idiv") || name.starts_with("lea-") ||
         name.starts_with("use-") || name.starts_with("allow-") ||
         name.starts_with("avoid-") || name.starts_with("pad-") ||
         name.starts_with("branch") || name.starts_with("sbb-") ||
         name.starts_with("no-") || name == "macrofusion" || name == "ermsb" ||
         name == "fsrm" || name == "vzeroupper" ||
         name == "sse-unaligned-mem" || name == "inline-asm-use-gpr32";
}

TEST(CpuFeaturesTest, ListsEveryFeatureOfTheDocumentedCpus) {
  llvm::InitializeNativeTarget();
  llvm::Triple triple("x86_64-unknown-linux-gnu");
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  ASSERT_NE(target, nullptr) << error;
  std::set<std::string> listed(std::begin(kListed), std::end(kListed));
  for (const char *cpu : {"x86-64", "x86-64-v2", "x86-64-v3", "x86-64-v4",
                          "znver4", "sapphirerapids"}) {
    std::unique_ptr<llvm::MCSubtargetInfo> subtarget(
        target->createMCSubtargetInfo(triple, cpu, ""));
    for (const llvm::SubtargetFeatureKV &feature :
         subtarget->getAllProcessorFeatures()) {
      llvm::StringRef name = feature.Key;
      if (!subtarget->checkFeatures("+" + name.str()) ||
          IsBaselineOrTuning(name))
        continue;
      EXPECT_TRUE(listed.count(name.str()))
          << cpu << " enables '" << name.str()
          << "', which cpu_features.def does not list";
    }
  }
}

} // namespace
} // namespace strata::hal
