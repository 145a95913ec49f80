// The CPU feature probe finds every feature the kernel reports in
// /proc/cpuinfo.
#include "strata/hal/local/cpu_features.h"

#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace strata::hal {
namespace {

std::set<std::string> KernelCpuFlags() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("flags", 0) != 0)
      continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string word; words >> word;)
      flags.insert(word);
    return flags;
  }
  return {};
}

TEST(CpuFeaturesTest, MatchesTheKernelsView) {
  std::set<std::string> flags = KernelCpuFlags();
  if (flags.empty())
    GTEST_SKIP() << "no /proc/cpuinfo flags";
  const std::pair<const char *, const char *> kNames[] = {
      {"sse4.1", "sse4_1"},
      {"sse4.2", "sse4_2"},
      {"avx", "avx"},
      {"avx2", "avx2"},
      {"fma", "fma"},
      {"bmi2", "bmi2"},
      {"avx512f", "avx512f"},
      {"avx512bw", "avx512bw"},
      {"avx512vl", "avx512vl"},
      {"avx512fp16", "avx512_fp16"},
      {"amx-tile", "amx_tile"},
      {"avx512vp2intersect", "avx512_vp2intersect"},
      {"avxvnni", "avx_vnni"},
      // Extended leaves (0x80000001, 0x80000008).
      {"sahf", "lahf_lm"},
      {"lzcnt", "abm"},
      {"prfchw", "3dnowprefetch"},
      {"sse4a", "sse4a"},
      {"clzero", "clzero"},
      {"wbnoinvd", "wbnoinvd"},
      {"cx16", "cx16"},
      {"movbe", "movbe"},
      {"gfni", "gfni"},
      {"avx512bf16", "avx512_bf16"},
  };
  for (auto [llvm_name, linux_name] : kNames) {
    std::optional<bool> present = HostHasCpuFeature(llvm_name);
    ASSERT_TRUE(present.has_value()) << llvm_name;
    // Every feature the kernel lists is detected. The kernel may hide one
    // that CPUID reports (clearcpuid=, or a hypervisor's guest kernel: a
    // Firecracker guest on an EPYC lists neither abm nor sse4a while CPUID
    // has both), so a feature detected beyond its list is only reported.
    if (flags.count(linux_name) == 1)
      EXPECT_TRUE(*present) << llvm_name;
    else if (*present)
      std::printf("note: CPUID reports %s, the kernel does not list %s\n",
                  llvm_name, linux_name);
  }
}

TEST(CpuFeaturesTest, UnknownNamesAreNotGuessed) {
  EXPECT_FALSE(HostHasCpuFeature("warp-drive").has_value());
  EXPECT_FALSE(HostHasCpuFeature("").has_value());
}

const char *const kListed[] = {
#define STRATA_CPU_FEATURE(name, leaf, subleaf, reg, bit, needs, use) name,
#include "strata/hal/local/cpu_features.def"
#undef STRATA_CPU_FEATURE
};

TEST(CpuFeaturesTest, CheckAcceptsWhatTheHostHas) {
  std::string present;
  for (const char *name : kListed)
    if (HostHasCpuFeature(name).value_or(false))
      present += std::string(present.empty() ? "" : ",") + name;
  EXPECT_TRUE(CheckHostCpuFeatures(present).ok());
  EXPECT_TRUE(CheckHostCpuFeatures("").ok());
}

// Every missing and unknown feature is named, not just the first.
TEST(CpuFeaturesTest, CheckNamesEveryMissingFeature) {
  std::vector<std::string> missing;
  std::string present;
  for (const char *name : kListed) {
    if (!HostHasCpuFeature(name).value_or(false))
      missing.push_back(name);
    else if (present.empty())
      present = name;
  }
  if (missing.size() < 2)
    GTEST_SKIP() << "this CPU has all but " << missing.size()
                 << " listed features";
  std::string list =
      missing[0] + "," + present + "," + missing[1] + ",warp-drive";
  Status status = CheckHostCpuFeatures(list);
  ASSERT_EQ(status.code(), StatusCode::kFailedPrecondition);
  std::string message(status.message());
  EXPECT_NE(
      message.find("this CPU lacks " + missing[0] + ", " + missing[1] + ";"),
      std::string::npos)
      << message;
  EXPECT_NE(message.find("does not know the CPU features warp-drive"),
            std::string::npos)
      << message;
  if (!present.empty())
    EXPECT_EQ(message.find(" " + present + ","), std::string::npos) << message;
}

TEST(CpuFeaturesTest, CheckBoundsTheMessage) {
  std::string list;
  for (int i = 0; i < 1000; ++i)
    list +=
        "unknown-feature-" + std::to_string(i) + std::string(100, 'x') + ",";
  Status status = CheckHostCpuFeatures(list);
  ASSERT_FALSE(status.ok());
  EXPECT_LT(status.message().size(), 2000u);
  EXPECT_NE(status.message().find(", ..."), std::string::npos);
}

} // namespace
} // namespace strata::hal
