#!/usr/bin/python3
"""Damaged module files must give a clear error and a non-zero exit, never
a crash: every truncation point of a valid module (sampled) and many random
byte flips. A flip may leave the module valid (e.g. in padding); then the
run must still not crash."""
import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile


def run(strata_run, module):
    return subprocess.run(
        [strata_run, f"--module={module}", "--function=simple_mul",
         "--input=4xf32=1 2 3 4", "--input=4xf32=5 6 7 8"],
        capture_output=True, text=True, errors="replace", timeout=60)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--run-bin")
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--flips", type=int, default=1000)
    args = parser.parse_args()
    strata_run = os.path.join(args.run_bin or args.bin, "strata-run")

    with tempfile.TemporaryDirectory() as tmp:
        good = os.path.join(tmp, "good.smod")
        subprocess.run([os.path.join(args.bin, "strata-compile"),
                        os.path.join(args.source_dir, "examples/simple_mul.mlir"),
                        "-o", good], check=True)
        data = open(good, "rb").read()
        baseline = run(strata_run, good)
        if baseline.returncode != 0 or "4xf32=5 12 21 32" not in baseline.stdout:
            print("the undamaged module does not run:", baseline.stdout, baseline.stderr)
            return 1

        damaged = os.path.join(tmp, "damaged.smod")
        problems = []
        rng = random.Random(1234)
        cuts = sorted(set([0, 1, 4, 8, len(data) - 1] +
                          rng.sample(range(len(data)), min(60, len(data)))))
        cases = [("truncated to %d bytes" % n, data[:n]) for n in cuts]
        for _ in range(args.flips):
            at = rng.randrange(len(data))
            flipped = bytearray(data)
            flipped[at] ^= 1 << rng.randrange(8)
            cases.append(("bit flip at byte %d" % at, bytes(flipped)))

        clean_errors = 0
        for what, content in cases:
            with open(damaged, "wb") as f:
                f.write(content)
            result = run(strata_run, damaged)
            sanitizer = ("Sanitizer" in result.stderr or
                         "runtime error:" in result.stderr)
            if result.returncode < 0 or result.returncode >= 128 or sanitizer:
                problems.append(f"{what}: crashed ({result.returncode}): {result.stderr[-300:]}")
            elif result.returncode != 0:
                if not result.stderr.strip():
                    problems.append(f"{what}: failed without a message")
                else:
                    clean_errors += 1
            elif what.startswith("truncated"):
                problems.append(f"{what}: accepted a truncated module")
        for problem in problems:
            print(problem)
        print(f"{len(cases)} damaged modules: {clean_errors} clean errors, "
              f"{len(cases) - clean_errors - len(problems)} still valid, "
              f"{len(problems)} problems")
        return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
