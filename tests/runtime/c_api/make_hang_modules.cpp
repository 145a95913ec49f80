// Writes the modules of session/hang_module.h as files for the C API's
// deadline test: make_hang_modules LIBRARY.so HANG.smod INIT_SPIN.smod
#include <cstdio>
#include <fstream>
#include <iterator>
#include <vector>

#include "hang_module.h"

namespace {

bool WriteFile(const char *path, const std::vector<uint8_t> &bytes) {
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char *>(bytes.data()),
             std::streamsize(bytes.size()));
  return file.good();
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: make_hang_modules LIBRARY.so HANG.smod "
                         "INIT_SPIN.smod\n");
    return 2;
  }
  std::ifstream library_file(argv[1], std::ios::binary);
  std::vector<uint8_t> library(std::istreambuf_iterator<char>(library_file),
                               {});
  if (library.empty()) {
    std::fprintf(stderr, "make_hang_modules: cannot read '%s'\n", argv[1]);
    return 1;
  }
  if (!WriteFile(argv[2], strata::session::testing::BuildHangModule(library)) ||
      !WriteFile(argv[3], strata::session::testing::BuildInitSpinModule())) {
    std::fprintf(stderr, "make_hang_modules: cannot write the modules\n");
    return 1;
  }
  return 0;
}
