// A structure-aware mutator for module files (module_bytecode_fuzzer): reads
// the input as a Strata module (schema/module.fbs), changes its function
// bytecode (bytes, opcodes, register operands, branch targets, constant and
// callee indices, whole instructions with the branches around them kept
// right) or, less often, its tables (register counts, signatures, import
// names, rodata sizes, export reflection, global counts), and writes a
// well-formed FlatBuffer again, so that inputs get past the schema check
// into the bytecode verifier and the interpreter. Inputs that are no module
// go to libFuzzer's byte-level LLVMFuzzerMutate.
#ifndef STRATA_TESTS_FUZZ_MODULE_BYTECODE_MUTATOR_H_
#define STRATA_TESTS_FUZZ_MODULE_BYTECODE_MUTATOR_H_

#include <cstddef>
#include <cstdint>

namespace strata::fuzz {

// Mutated modules never grow past this many bytes (nor past max_size).
inline constexpr size_t kMaxMutatedModuleBytes = 128 << 10;

// LLVMFuzzerCustomMutator: mutates the module in data[0, size) in place
// (room for max_size bytes) and returns its new size. The same seed and
// input give the same result.
size_t MutateModuleBytecode(uint8_t *data, size_t size, size_t max_size,
                            unsigned seed);

// LLVMFuzzerCustomCrossOver: the first module with a function body, or a run
// of instructions, taken from the second; 0 when either is no module.
size_t CrossOverModuleBytecode(const uint8_t *data1, size_t size1,
                               const uint8_t *data2, size_t size2, uint8_t *out,
                               size_t max_out_size, unsigned seed);

} // namespace strata::fuzz

#endif // STRATA_TESTS_FUZZ_MODULE_BYTECODE_MUTATOR_H_
