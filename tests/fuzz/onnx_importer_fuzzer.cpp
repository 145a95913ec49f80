// Fuzz target: the ONNX importer on arbitrary bytes (a ModelProto as
// strata-compile reads it from a .onnx file), mutated byte by byte by
// libFuzzer. Every input must end in a module that verifies or in a
// diagnostic: never a crash, an assertion or a sanitizer report. Only built
// with the compiler (STRATA_BUILD_COMPILER). onnx_graph_fuzzer checks the
// same on structurally mutated models.
#include <cstddef>
#include <cstdint>

#include "onnx_import_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata::fuzz::CheckONNXImport(data, size);
  return 0;
}
