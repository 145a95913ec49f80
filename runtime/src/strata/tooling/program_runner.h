// What strata-run and strata-bench share: create an instance, a device and a
// session, load the modules, find the function and parse the inputs.
#ifndef STRATA_TOOLING_PROGRAM_RUNNER_H_
#define STRATA_TOOLING_PROGRAM_RUNNER_H_

#include <string>
#include <vector>

#include "strata/session/session.h"
#include "strata/tooling/flags.h"

namespace strata::tooling {

struct ProgramOptions {
  // Module files in registration order; "-" reads one from stdin.
  std::vector<std::string> modules;
  std::string function;
  std::string device = "local-sync";
  // Executable loaders for local devices ("embedded", "system", "vmvx",
  // comma-separated; "" = the device's default); added to the device URI as
  // ?loader=.
  std::string loader;
  // Worker count for local-task (0 = one per core, -1 = the default);
  // added to the device URI as ?workers=.
  int64_t workers = -1;
  // Tensor arguments in tensor_text.h form ("2x2xf32=1 2 3 4", "@in.npy").
  std::vector<std::string> inputs;
  // Most bytes live in the device's allocator at once (inputs, results and
  // the program's buffers); 0 = the default, the machine's physical memory.
  // SessionOptions::device_memory_limit.
  uint64_t device_memory_limit = 0;
  // Bounds each module's __init at load and each call (session default
  // timeout): past it they fail with DEADLINE_EXCEEDED. 0 = no limit.
  double timeout_seconds = 0;
};

struct Program {
  RefPtr<session::Instance> instance;
  RefPtr<hal::Device> device;
  RefPtr<session::Session> session;
  vm::Function function;
  std::vector<vm::Value> inputs;
};

Result<Program> LoadProgram(const ProgramOptions &options);

// Replaces each result the host cannot map (a view of device-only memory,
// such as an argument the tools uploaded and the function returned
// reshaped) with a host-visible copy read through the device's queue.
Status CopyResultsToHost(Program &program, std::vector<vm::Value> &results);

// Registers the flags that fill `options` (--module, --function, --device,
// --loader, --workers, --input, --device-memory-limit, --timeout) for the
// tools that run a program.
void AddProgramFlags(FlagParser &flags, ProgramOptions &options);

// `options.device` with the loader and worker options appended as URI
// options ("local-task" -> "local-task?loader=system&workers=2").
std::string DeviceUri(const ProgramOptions &options);

// Every device the built-in drivers find, one per line: its URI (what
// --device takes) and its name. Drivers that find nothing (cuda without a
// GPU or driver) list nothing.
Result<std::string> FormatDeviceList();

// One result as text: a tensor as "4xf32=5 12 21 32", a scalar as "i32=7".
Result<std::string> FormatValue(const vm::Value &value);

} // namespace strata::tooling

#endif // STRATA_TOOLING_PROGRAM_RUNNER_H_
