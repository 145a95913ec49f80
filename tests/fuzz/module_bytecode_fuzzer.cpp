// Fuzz target: module files whose bytecode and tables are mutated inside a
// well-formed FlatBuffer (module_bytecode_mutator.h), so that inputs reach
// the bytecode verifier, __init and the interpreter instead of failing the
// schema check; each runs as in module_fuzzer (RunModuleFile).
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"
#include "module_bytecode_mutator.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata::fuzz::RunModuleFile(data, size);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t max_size, unsigned int seed) {
  return strata::fuzz::MutateModuleBytecode(data, size, max_size, seed);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1,
                                            const uint8_t *data2, size_t size2,
                                            uint8_t *out, size_t max_out_size,
                                            unsigned int seed) {
  return strata::fuzz::CrossOverModuleBytecode(data1, size1, data2, size2, out,
                                               max_out_size, seed);
}
