// Fuzz target: the embedded ELF loader on arbitrary bytes. Runs the header
// validation every loader uses, then EmbeddedElfImage::Load (segments,
// reservation, copies, dynamic section, relocations, protection) and symbol
// lookups on what loaded. Initialisers and library code never run: they are
// the library's own code, trusted once it loads (see fuzz_util.h).
#include <cstdint>
#include <span>

#include "fuzz_util.h"
#include "strata/hal/loaders/embedded_elf_image.h"
#include "strata/hal/local/elf_validation.h"
#include "strata/hal/local/executable_library.h"

namespace strata::fuzz {
namespace {

void RunOne(const uint8_t *data, size_t size) {
  std::span<const uint8_t> bytes(data, size);
  Status valid = hal::ValidateElfX86_64SharedObject(bytes);
  CheckError(valid);
  auto image = hal::EmbeddedElfImage::Load(bytes);
  if (!image.ok()) {
    CheckError(image.status());
    return;
  }
  if (!valid.ok())
    Fail("the image loaded although the header validation failed: " +
         valid.ToString());
  for (const char *name : {STRATA_HAL_EXECUTABLE_LIBRARY_QUERY_SYMBOL, "",
                           "strata_hal_executable_library_quer"}) {
    auto symbol = (*image)->LookupFunction(name);
    if (!symbol.ok()) {
      CheckError(symbol.status());
      continue;
    }
    if (!(*image)->IsCode(*symbol))
      Fail("a looked-up function is not inside code");
    (void)(*image)->IsReadable(*symbol, 16);
    (void)(*image)->IsString(static_cast<const char *>(*symbol));
  }
}

} // namespace
} // namespace strata::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  strata::fuzz::RunOne(data, size);
  return 0;
}
