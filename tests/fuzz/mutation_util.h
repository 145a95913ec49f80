// What the structure-aware mutators (LLVMFuzzerCustomMutator) share: a
// deterministic random source seeded by libFuzzer's `seed` argument, and the
// hostile values they plant.
#ifndef STRATA_TESTS_FUZZ_MUTATION_UTIL_H_
#define STRATA_TESTS_FUZZ_MUTATION_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <random>
#include <vector>

// libFuzzer's own byte-level mutator (the fallback for inputs that do not
// parse); replay_main.cpp defines a simple one for the replay binaries.
extern "C" size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

namespace strata::fuzz {

class FuzzRandom {
public:
  explicit FuzzRandom(uint64_t seed) : engine_(seed) {}

  uint64_t Bits() { return engine_(); }
  // Uniform enough in [0, n); 0 when n is 0. Modulo rather than a
  // distribution so that a seed means the same on every standard library.
  size_t Below(size_t n) { return n == 0 ? 0 : size_t(engine_() % n); }
  bool OneIn(size_t n) { return Below(n) == 0; }
  template <typename T> const T &Pick(const std::vector<T> &values) {
    return values[Below(values.size())];
  }
  template <typename T, size_t N> const T &Pick(const T (&values)[N]) {
    return values[Below(N)];
  }

  // Sizes, indices and counts that break careless arithmetic: 0, -1, the
  // edges of 32 and 64 bits, or `current` nudged by a little.
  int64_t HostileInt(int64_t current);
  // NaN, infinities, -0, the largest and smallest floats, or `current`
  // scaled or nudged.
  double HostileFloat(double current);

private:
  std::mt19937_64 engine_;
};

} // namespace strata::fuzz

#endif // STRATA_TESTS_FUZZ_MUTATION_UTIL_H_
