// What the ONNX fuzz targets check on one input, shared by the byte-level
// target (onnx_importer_fuzzer) and the graph-aware one (onnx_graph_fuzzer).
#ifndef STRATA_TESTS_FUZZ_ONNX_IMPORT_CHECK_H_
#define STRATA_TESTS_FUZZ_ONNX_IMPORT_CHECK_H_

#include <cstddef>
#include <cstdint>

namespace strata::fuzz {

// Imports `data` as a .onnx file would be read by strata-compile. Aborts
// unless the import fails with an error diagnostic or succeeds with a module
// that verifies. With STRATA_FUZZ_VERBOSE set, prints every diagnostic.
void CheckONNXImport(const uint8_t *data, size_t size);

} // namespace strata::fuzz

#endif // STRATA_TESTS_FUZZ_ONNX_IMPORT_CHECK_H_
