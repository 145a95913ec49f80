// Runs a fuzz target once on each file named on the command line (or in a
// directory named there), without libFuzzer: how CTest replays the seed and
// regression corpora in every build. A crash or sanitizer report fails the
// test; the target's own checks abort on wrong results.
//
// With --mutations=N first, a target with a custom mutator also runs on N
// chained mutations of every file (and a cross-over with the next file), with
// fixed seeds: the mutator's own smoke test, in every build.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <system_error>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
extern "C" __attribute__((weak)) int LLVMFuzzerInitialize(int *argc,
                                                          char ***argv);
extern "C" __attribute__((weak)) size_t LLVMFuzzerCustomMutator(
    uint8_t *data, size_t size, size_t max_size, unsigned int seed);
extern "C" __attribute__((weak)) size_t LLVMFuzzerCustomCrossOver(
    const uint8_t *data1, size_t size1, const uint8_t *data2, size_t size2,
    uint8_t *out, size_t max_out_size, unsigned int seed);

namespace {

std::minstd_rand byte_mutations(1);

bool ReadFile(const std::filesystem::path &path, std::vector<uint8_t> *out) {
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return false;
  out->assign(std::istreambuf_iterator<char>(file),
              std::istreambuf_iterator<char>());
  return !file.bad();
}

// Runs the target on an exactly sized heap copy, so ASan sees overreads.
// With STRATA_FUZZ_LAST_INPUT set, each input is first written to the file
// it names: after a crash, that file reproduces it.
void Run(const uint8_t *data, size_t size) {
  static const char *last_input = std::getenv("STRATA_FUZZ_LAST_INPUT");
  if (last_input)
    std::ofstream(last_input, std::ios::binary)
        .write(reinterpret_cast<const char *>(data), std::streamsize(size));
  std::vector<uint8_t> input(data, data + size);
  LLVMFuzzerTestOneInput(input.data(), input.size());
}

} // namespace

// What custom mutators fall back to when libFuzzer is not linked: a byte
// changed, inserted or erased.
extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size,
                                   size_t max_size) {
  switch (byte_mutations() % 3) {
  case 0:
    if (size < max_size) {
      size_t position = byte_mutations() % (size + 1);
      std::memmove(data + position + 1, data + position, size - position);
      data[position] = uint8_t(byte_mutations());
      return size + 1;
    }
    [[fallthrough]];
  case 1:
    if (size > 1) {
      size_t position = byte_mutations() % size;
      std::memmove(data + position, data + position + 1, size - position - 1);
      return size - 1;
    }
    [[fallthrough]];
  default:
    if (size > 0)
      data[byte_mutations() % size] ^= uint8_t(1 + byte_mutations() % 255);
    return size;
  }
}

int main(int argc, char **argv) {
  if (LLVMFuzzerInitialize)
    LLVMFuzzerInitialize(&argc, &argv);
  int first = 1;
  unsigned mutations = 0;
  if (argc > 1 && std::strncmp(argv[1], "--mutations=", 12) == 0) {
    mutations = unsigned(std::strtoul(argv[1] + 12, nullptr, 10));
    first = 2;
    if (!LLVMFuzzerCustomMutator) {
      std::fprintf(stderr, "--mutations: this target has no mutator\n");
      return 1;
    }
  }
  std::vector<std::filesystem::path> files;
  for (int i = first; i < argc; ++i) {
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
  std::vector<std::vector<uint8_t>> contents(files.size());
  for (size_t i = 0; i < files.size(); ++i) {
    if (!ReadFile(files[i], &contents[i])) {
      std::fprintf(stderr, "cannot read %s\n", files[i].c_str());
      return 1;
    }
    std::fprintf(stderr, "running %s (%zu bytes)\n", files[i].c_str(),
                 contents[i].size());
    Run(contents[i].data(), contents[i].size());
    // Only the mutations need the files again; large corpora stay small.
    if (mutations == 0)
      std::vector<uint8_t>().swap(contents[i]);
  }
  size_t runs = files.size();
  for (size_t i = 0; i < files.size() && mutations > 0; ++i) {
    std::fprintf(stderr, "mutating %s %u times\n", files[i].c_str(), mutations);
    const std::vector<uint8_t> &original = contents[i];
    size_t max_size = std::max<size_t>(2 * original.size(), 64 << 10);
    std::vector<uint8_t> buffer(original), out(max_size);
    buffer.resize(max_size);
    size_t size = original.size();
    for (unsigned m = 0; m < mutations; ++m, ++runs) {
      unsigned seed = unsigned(i * 7919 + m);
      size = LLVMFuzzerCustomMutator(buffer.data(), size, max_size, seed);
      if (size > max_size) {
        std::fprintf(stderr, "the mutator returned %zu bytes, over %zu\n", size,
                     max_size);
        std::abort();
      }
      Run(buffer.data(), size);
      // Restart from the seed now and then, as libFuzzer's corpus would.
      if (m % 8 == 7) {
        std::copy(original.begin(), original.end(), buffer.begin());
        size = original.size();
      }
    }
    if (LLVMFuzzerCustomCrossOver && files.size() > 1) {
      const std::vector<uint8_t> &next = contents[(i + 1) % files.size()];
      size_t crossed = LLVMFuzzerCustomCrossOver(
          original.data(), original.size(), next.data(), next.size(),
          out.data(), max_size, unsigned(i));
      if (crossed > 0) {
        Run(out.data(), crossed);
        ++runs;
      }
    }
  }
  std::fprintf(stderr, "%zu inputs ran cleanly\n", runs);
  return 0;
}
