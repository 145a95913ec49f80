// strata-run: loads a module file and calls one function.
//   strata-run --module=m.smod --function=f --input="4xf32=1 2 3 4" ...
#include <cstdio>
#include <iostream>

#include "strata/hal/buffer_view.h"
#include "strata/hal/device.h"
#include "strata/tooling/dispatch_profile.h"
#include "strata/tooling/flags.h"
#include "strata/tooling/numpy_io.h"
#include "strata/tooling/program_runner.h"
#include "strata/tooling/tensor_text.h"
#include "strata/tooling/terminal.h"

namespace {

using namespace strata;

int Fail(const Status &status) {
  return tooling::ReportError("strata-run", status);
}

Status CheckExpected(const vm::Value &value, const std::string &expected_text,
                     size_t index, hal::Allocator &allocator, double rtol,
                     double atol) {
  auto *view = RefCast<hal::BufferView>(value.ref());
  if (!view)
    return InvalidArgumentError("output ", index,
                                " is not a tensor; cannot compare");
  STRATA_ASSIGN_OR_RETURN(
      auto expected, tooling::ParseTensorArgument(expected_text, allocator));
  return tooling::CompareBufferViews(*view, *expected, rtol, atol)
      .Annotate("output ", index);
}

int Run(int argc, char **argv) {
  tooling::ProgramOptions options;
  std::vector<std::string> outputs, expected;
  double rtol = 1e-5, atol = 1e-6;
  tooling::FlagParser flags("strata-run", "--module=FILE.smod --function=NAME "
                                          "[--input=...]...");
  tooling::AddProgramFlags(flags, options);
  flags.AddStringList("output", &outputs,
                      "@file.npy to write a result to (repeatable, in order; "
                      "results without one are printed)");
  flags.AddStringList("expected_output", &expected,
                      "expected result, same forms as --input (repeatable)");
  flags.AddDouble("rtol", &rtol, "relative tolerance for --expected_output");
  flags.AddDouble("atol", &atol, "absolute tolerance for --expected_output");
  std::string trace;
  flags.AddString("trace", &trace,
                  "FILE.json: profile the call and write a Chrome trace "
                  "(open in Perfetto) with one span per dispatch (named "
                  "after the model ops it runs, e.g. "
                  "conv2d_relu:/layer1/layer1.0/conv1/Conv), queue "
                  "operation and transfer command");
  bool list_devices = false;
  flags.AddBool("list-devices", &list_devices,
                "print the URI and name of every available device and exit");
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
  if (list_devices) {
    auto devices = tooling::FormatDeviceList();
    if (!devices.ok())
      return Fail(devices.status());
    std::cout << *devices;
    return 0;
  }
  if (!positional.empty())
    return Fail(InvalidArgumentError("unexpected argument '", positional[0],
                                     "' (see --help)"));

  auto program = tooling::LoadProgram(options);
  if (!program.ok())
    return Fail(program.status());
  hal::Device &device = program->session->device();
  if (!trace.empty()) {
    hal::ProfilingOptions profiling = tooling::ProfilingOptionsForSites(
        tooling::ReadDispatchSites(program->function));
    profiling.file_path = trace;
    status = device.ProfilingBegin(profiling);
    if (!status.ok())
      return Fail(status);
  }
  std::vector<vm::Value> results;
  status = program->session->Call(program->function, program->inputs, &results);
  // The trace is written also when the call failed: it shows how far it got.
  if (!trace.empty()) {
    Status ended = device.ProfilingEnd();
    if (status.ok())
      status = ended;
  }
  if (status.ok())
    status = tooling::CopyResultsToHost(*program, results);
  if (!status.ok())
    return Fail(status);
  if (outputs.size() > results.size())
    return Fail(InvalidArgumentError(outputs.size(), " --output flags but ",
                                     program->function.FullName(), " has ",
                                     results.size(), " results"));
  if (!expected.empty() && expected.size() != results.size())
    return Fail(InvalidArgumentError(
        expected.size(), " --expected_output flags but ",
        program->function.FullName(), " has ", results.size(), " results"));

  int exit_code = 0;
  for (size_t i = 0; i < results.size(); ++i) {
    if (i < outputs.size()) {
      const std::string &target = outputs[i];
      auto *view = RefCast<hal::BufferView>(results[i].ref());
      if (target.empty() || target[0] != '@')
        return Fail(InvalidArgumentError("--output expects @FILE.npy, got '",
                                         target, "'"));
      if (!view)
        return Fail(InvalidArgumentError("result ", i,
                                         " is not a tensor; cannot write it "
                                         "as .npy"));
      status = tooling::SaveNumpyFile(target.substr(1), *view);
      if (!status.ok())
        return Fail(status);
    } else {
      auto text = tooling::FormatValue(results[i]);
      if (!text.ok())
        return Fail(text.status());
      std::cout << *text << "\n";
    }
    if (!expected.empty()) {
      status = CheckExpected(results[i], expected[i], i,
                             *program->session->device_allocator(), rtol, atol);
      if (!status.ok()) {
        exit_code = tooling::ReportError("strata-run", status);
      }
    }
  }
  if (!expected.empty() && exit_code == 0)
    std::cout << "[SUCCESS] all " << results.size()
              << " results match the expected outputs\n";
  return exit_code;
}

} // namespace

int main(int argc, char **argv) { return Run(argc, argv); }
