// Fuzz target: a module file from arbitrary bytes. Loads it into a fresh
// session on a local-sync-like device (FlatBuffer + bytecode verification,
// dependency and import checks, __init), then calls every export with
// zero-filled inputs of the shapes its reflection declares (dynamic
// dimensions as 1). Limits keep each input short: a step budget, a stack
// depth limit, a 64 MiB allocation limit and a workgroup budget. Executable
// code is never run unless it is byte-identical to a trusted one (see
// fuzz_util.h). Every failure must be an error status with a message.
#include <cstddef>
#include <cstdint>

#include "fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata::fuzz::RunModuleFile(data, size);
  return 0;
}
