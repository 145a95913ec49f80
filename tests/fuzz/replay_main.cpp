// Runs a fuzz target once on each file named on the command line (or in a
// directory named there), without libFuzzer: how CTest replays the seed and
// regression corpora in every build. A crash or sanitizer report fails the
// test; the target's own checks abort on wrong results.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc,
                                                          char ***argv);

namespace {

bool ReadFile(const std::filesystem::path &path, std::vector<uint8_t> *out) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return false;
  out->assign(std::istreambuf_iterator<char>(file),
              std::istreambuf_iterator<char>());
  return !file.bad();
}

} // namespace

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  std::vector<std::filesystem::path> files;
  for (int i = 1; i < argc; ++i) {
    std::filesystem::path path = argv[i];
    std::error_code error;
    if (std::filesystem::is_directory(path, error)) {
      for (const auto &entry : std::filesystem::directory_iterator(path))
        if (entry.is_regular_file() && entry.path().filename() != "README.md")
          files.push_back(entry.path());
    } else if (std::filesystem::exists(path, error)) {
      files.push_back(path);
    }
    // A missing directory is an empty corpus (e.g. no regressions yet).
  }
  std::sort(files.begin(), files.end());
  std::vector<uint8_t> bytes;
  for (const auto &path : files) {
    if (!ReadFile(path, &bytes)) {
      std::fprintf(stderr, "cannot read %s\n", path.c_str());
      return 1;
    }
    std::fprintf(stderr, "running %s (%zu bytes)\n", path.c_str(),
                 bytes.size());
    // Copy into an exactly sized heap block so ASan sees overreads.
    std::vector<uint8_t> input(bytes.begin(), bytes.end());
    LLVMFuzzerTestOneInput(input.data(), input.size());
  }
  std::fprintf(stderr, "%zu inputs ran cleanly\n", files.size());
  return 0;
}
