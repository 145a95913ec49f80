// A structure-aware mutator for ONNX models (onnx_graph_fuzzer): parses the
// input as an onnx::ModelProto, applies one structured mutation that keeps
// it a valid protobuf but plants hostile values (attributes, dims, element
// types, initializer data, op types, wiring, node copies, opsets, If/Loop
// wrappers, recursive model-local functions) and serializes it back. Inputs
// that do not parse go to libFuzzer's byte-level LLVMFuzzerMutate.
#ifndef STRATA_TESTS_FUZZ_ONNX_GRAPH_MUTATOR_H_
#define STRATA_TESTS_FUZZ_ONNX_GRAPH_MUTATOR_H_

#include <cstddef>
#include <cstdint>

namespace strata::fuzz {

// Mutated models never grow past this many bytes (nor past max_size); a
// mutation that would is replaced by a byte-level one.
inline constexpr size_t kMaxMutatedModelBytes = 64 << 10;

// LLVMFuzzerCustomMutator: mutates the model in data[0, size) in place
// (data has room for max_size bytes) and returns its new size. The same
// seed and input give the same result.
size_t MutateONNXGraph(uint8_t *data, size_t size, size_t max_size,
                       unsigned seed);

// LLVMFuzzerCustomCrossOver: writes to `out` (room for max_out_size bytes)
// the first model with a node, initializer, attribute set or type taken from
// the second; returns its size, or 0 when either does not parse.
size_t CrossOverONNXGraphs(const uint8_t *data1, size_t size1,
                           const uint8_t *data2, size_t size2, uint8_t *out,
                           size_t max_out_size, unsigned seed);

} // namespace strata::fuzz

#endif // STRATA_TESTS_FUZZ_ONNX_GRAPH_MUTATOR_H_
