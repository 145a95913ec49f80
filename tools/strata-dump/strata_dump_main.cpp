// strata-dump: prints what a module file holds (dependencies, imports,
// exports with signatures, rodata, per-function bytecode disassembly).
#include <cstdio>
#include <iostream>

#include "strata/base/file_contents.h"
#include "strata/tooling/flags.h"
#include "strata/tooling/terminal.h"
#include "strata/vm/bytecode_disassembler.h"

namespace {

using namespace strata;

int Fail(const Status &status) {
  return tooling::ReportError("strata-dump", status);
}

int Run(int argc, char **argv) {
  bool no_bytecode = false;
  tooling::FlagParser flags("strata-dump", "FILE.smod");
  flags.AddBool("no-bytecode", &no_bytecode,
                "omit the per-function disassembly");
  std::vector<std::string> positional;
  Status status = flags.Parse(argc, argv, &positional);
  if (flags.help_requested()) {
    std::cout << flags.Help();
    return 0;
  }
  if (flags.version_requested()) {
    std::cout << flags.Version();
    return 0;
  }
  if (!status.ok())
    return Fail(status);
  if (positional.size() != 1)
    return Fail(InvalidArgumentError("expected one module file (see --help)"));
  auto bytes = ReadFileContents(positional[0]);
  if (!bytes.ok())
    return Fail(bytes.status());
  vm::DisassemblyOptions options;
  options.include_bytecode = !no_bytecode;
  status = vm::DisassembleModuleFile(bytes->span(), std::cout, options);
  if (!status.ok())
    return Fail(status.Annotate(positional[0]));
  return 0;
}

} // namespace

int main(int argc, char **argv) { return Run(argc, argv); }
