// Interpreter cost per loop iteration, for measuring what the per-step
// checks (step budget, deadline, cancellation; vm/stack.h) add:
//   build/tests/bin/vm_interpreter_loop_bench [ITERATIONS]
// Prints the best of 5 runs per loop shape, with and without an abort
// signal (a deadline far away and a cancellation token).
#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "module_builder.h"
#include "strata/base/abort_signal.h"
#include "strata/vm/context.h"
#include "vm_test_util.h"

namespace strata::vm::testing {
namespace {

// count(n): i = 0; while (i < n) i += 1; two taken branches per iteration.
void AddCountLoop(ModuleBuilder &builder) {
  FunctionBuilder &f = builder.AddFunction("count", "0i_i", {.i32 = 4});
  Label loop = f.NewLabel(), body = f.NewLabel(), exit = f.NewLabel();
  f.Op(Opcode::ConstI32).Reg(1).I32(0);
  f.Op(Opcode::ConstI32).Reg(2).I32(1);
  f.Bind(loop);
  f.Op(Opcode::CmpLtI32S).Reg(3).Reg(1).Reg(0);
  f.Op(Opcode::CondBranch).Reg(3).Branch(body).Branch(exit);
  f.Bind(body);
  f.Op(Opcode::AddI32).Reg(1).Reg(1).Reg(2);
  f.Op(Opcode::Branch).Branch(loop);
  f.Bind(exit);
  f.Op(Opcode::Return).List({RegI32(1)});
  builder.AddExport("count", f.ordinal());
}

// calls(n): the same loop calling inc(i) -> i + 1 each iteration.
void AddCallLoop(ModuleBuilder &builder) {
  FunctionBuilder &inc = builder.AddFunction("inc", "0i_i", {.i32 = 2});
  inc.Op(Opcode::ConstI32).Reg(1).I32(1);
  inc.Op(Opcode::AddI32).Reg(0).Reg(0).Reg(1);
  inc.Op(Opcode::Return).List({RegI32(0)});
  FunctionBuilder &f = builder.AddFunction("calls", "0i_i", {.i32 = 4});
  Label loop = f.NewLabel(), body = f.NewLabel(), exit = f.NewLabel();
  f.Op(Opcode::ConstI32).Reg(1).I32(0);
  f.Bind(loop);
  f.Op(Opcode::CmpLtI32S).Reg(3).Reg(1).Reg(0);
  f.Op(Opcode::CondBranch).Reg(3).Branch(body).Branch(exit);
  f.Bind(body);
  f.Op(Opcode::Call)
      .Function(inc.ordinal())
      .List({RegI32(1)})
      .List({RegI32(1)});
  f.Op(Opcode::Branch).Branch(loop);
  f.Bind(exit);
  f.Op(Opcode::Return).List({RegI32(1)});
  builder.AddExport("calls", f.ordinal());
}

double BestNsPerIteration(Context &context, const char *name,
                          int32_t iterations, RefPtr<AbortSignal> signal) {
  Result<Function> function = context.LookupFunction(name);
  if (!function.ok()) {
    std::fprintf(stderr, "%s\n", function.status().ToString().c_str());
    std::exit(1);
  }
  std::vector<Value> arguments = {Value::I32(iterations)};
  double best = 1e30;
  for (int run = 0; run < 5; ++run) {
    std::vector<Value> results;
    int64_t start = NowNs();
    Status status = context.Invoke(*function, arguments, &results, signal);
    int64_t elapsed = NowNs() - start;
    if (!status.ok() || results[0].i32() != iterations) {
      std::fprintf(stderr, "%s failed: %s\n", name, status.ToString().c_str());
      std::exit(1);
    }
    best = std::min(best, double(elapsed) / iterations);
  }
  return best;
}

int Main(int argc, char **argv) {
  int32_t iterations = argc > 1 ? std::atoi(argv[1]) : 50000000;
  ModuleBuilder builder("bench");
  AddCountLoop(builder);
  AddCallLoop(builder);
  Result<RefPtr<BytecodeModule>> module = LoadModule(builder);
  if (!module.ok())
    return 1;
  Result<RefPtr<Context>> context = MakeContext({*module});
  if (!context.ok())
    return 1;
  RefPtr<AbortSignal> signal = AbortSignal::Create(
      "bench", Deadline::AfterNs(int64_t(3600) * 1000000000),
      CancellationToken::Create());
  for (const char *name : {"bench.count", "bench.calls"}) {
    double plain = BestNsPerIteration(**context, name, iterations, nullptr);
    double with_signal =
        BestNsPerIteration(**context, name, iterations, signal);
    std::printf("%-12s %6.2f ns/iteration, with deadline + cancellation "
                "%6.2f ns/iteration\n",
                name, plain, with_signal);
  }
  return 0;
}

} // namespace
} // namespace strata::vm::testing

int main(int argc, char **argv) {
  return strata::vm::testing::Main(argc, argv);
}
