// The CPU feature probe agrees with what the kernel reports in /proc/cpuinfo.
#include "strata/hal/local/cpu_features.h"

#include <fstream>
#include <set>
#include <sstream>
#include <string>

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
      {"sse4.1", "sse4_1"},     {"sse4.2", "sse4_2"},
      {"avx", "avx"},           {"avx2", "avx2"},
      {"fma", "fma"},           {"bmi2", "bmi2"},
      {"avx512f", "avx512f"},   {"avx512bw", "avx512bw"},
      {"avx512vl", "avx512vl"}, {"avx512fp16", "avx512_fp16"},
      {"amx-tile", "amx_tile"}, {"avx512vp2intersect", "avx512_vp2intersect"},
      {"avxvnni", "avx_vnni"},
  };
  for (auto [llvm_name, linux_name] : kNames) {
    std::optional<bool> present = HostHasCpuFeature(llvm_name);
    ASSERT_TRUE(present.has_value()) << llvm_name;
    EXPECT_EQ(*present, flags.count(linux_name) == 1) << llvm_name;
  }
}

TEST(CpuFeaturesTest, UnknownNamesAreNotGuessed) {
  EXPECT_FALSE(HostHasCpuFeature("warp-drive").has_value());
  EXPECT_FALSE(HostHasCpuFeature("").has_value());
}

} // namespace
} // namespace strata::hal
