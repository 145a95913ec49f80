// Fuzz target: the ONNX importer on models mutated by their structure
// (onnx_graph_mutator.h: hostile attributes, dims, element types, data, op
// types, wiring, If/Loop wrappers, recursive functions), with the same
// check as onnx_importer_fuzzer: a module that verifies or a diagnostic.
#include <cstddef>
#include <cstdint>

#include "onnx_graph_mutator.h"
#include "onnx_import_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata::fuzz::CheckONNXImport(data, size);
  return 0;
}

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size,
                                          size_t max_size, unsigned int seed) {
  return strata::fuzz::MutateONNXGraph(data, size, max_size, seed);
}

extern "C" size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1,
                                            const uint8_t *data2, size_t size2,
                                            uint8_t *out, size_t max_out_size,
                                            unsigned int seed) {
  return strata::fuzz::CrossOverONNXGraphs(data1, size1, data2, size2, out,
                                           max_out_size, seed);
}
