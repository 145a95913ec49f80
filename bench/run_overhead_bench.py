#!/usr/bin/python3
"""The runtime's own costs, on local-sync and local-task (2 workers), in one
run, interleaved: what a call costs beyond its kernels, what each dispatch
adds, and how many heap allocations a steady call makes. Measured here,
never asserted in tests.

  bench/run_overhead_bench.py [--bin build/bin] [--rounds 5] [--iterations 20000]

Programs (compiled on the fly):
  call      examples/simple_mul.mlir: one dispatch of a 4-element multiply,
            the whole cost of a call (argument checks, command buffer,
            submission, fence, result).
  dispatch  32 independent 8x8 matmuls, each result returned: 32 dispatches
            of one workgroup; its time per call / 32 is the cost of a
            dispatch with its result.

Each figure is the best median over the rounds (the machine is shared and
noisy; the best round is the one least disturbed).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEVICES = ["local-sync", "local-task?workers=2"]
FAN_OUT = 32


def fan_out_program(count):
    """`count` independent matmuls of the argument by distinct constants."""
    lines = ["func.func @main(%x: tensor<8x8xf32>) -> (" +
             ", ".join(["tensor<8x8xf32>"] * count) + ") {",
             "  %zero = arith.constant 0.0 : f32"]
    for i in range(count):
        # Distinct weights, so no two matmuls fold into one.
        values = ", ".join(
            "[" + ", ".join(str(float(i * 64 + r * 8 + c)) for c in range(8)) + "]"
            for r in range(8))
        lines += [
            f"  %w{i} = arith.constant dense<[{values}]> : tensor<8x8xf32>",
            f"  %e{i} = tensor.empty() : tensor<8x8xf32>",
            f"  %f{i} = linalg.fill ins(%zero : f32) outs(%e{i} : tensor<8x8xf32>)"
            " -> tensor<8x8xf32>",
            f"  %o{i} = linalg.matmul ins(%x, %w{i} : tensor<8x8xf32>, tensor<8x8xf32>)"
            f" outs(%f{i} : tensor<8x8xf32>) -> tensor<8x8xf32>"]
    lines.append("  return " + ", ".join(f"%o{i}" for i in range(count)) + " : " +
                 ", ".join(["tensor<8x8xf32>"] * count))
    lines.append("}")
    return "\n".join(lines) + "\n"


def bench(args, module, function, device, inputs):
    command = [os.path.join(args.bin, "strata-bench"), f"--module={module}",
               f"--function={function}", f"--device={device}",
               f"--iterations={args.iterations}", "--json"] + \
        [f"--input={value}" for value in inputs]
    return json.loads(subprocess.run(command, check=True, capture_output=True,
                                     text=True).stdout)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20000)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        fan_source = os.path.join(tmp, "fan_out.mlir")
        with open(fan_source, "w") as f:
            f.write(fan_out_program(FAN_OUT))
        programs = {
            "call": (os.path.join(ROOT, "examples", "simple_mul.mlir"), "simple_mul",
                     ["4xf32=1 2 3 4", "4xf32=5 6 7 8"], 1),
            "dispatch": (fan_source, "main", ["8x8xf32=1"], FAN_OUT),
        }
        modules = {}
        for name, (source, _, _, _) in programs.items():
            modules[name] = os.path.join(tmp, f"{name}.smod")
            subprocess.run([os.path.join(args.bin, "strata-compile"), source, "-o",
                            modules[name]], check=True)
        best = {}
        for _ in range(args.rounds):
            for name, (_, function, inputs, _) in programs.items():
                for device in DEVICES:
                    stats = bench(args, modules[name], function, device, inputs)
                    key = (name, device)
                    if key not in best or stats["median_ms"] < best[key]["median_ms"]:
                        best[key] = stats

    print(f"{'what':<10} {'device':<22} {'us per call':>11} {'us per unit':>11} "
          f"{'heap allocs/call':>16}")
    for name, (_, _, _, units) in programs.items():
        for device in DEVICES:
            stats = best[(name, device)]
            us = stats["median_ms"] * 1e3
            print(f"{name:<10} {device:<22} {us:>11.2f} {us / units:>11.2f} "
                  f"{stats['heap_allocations_per_call']:>16.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
