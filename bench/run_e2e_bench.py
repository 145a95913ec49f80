#!/usr/bin/python3
"""Times every end-to-end program with strata-bench and prints one line per
program (compile seconds, min / median / p90 call latency). Speed is only
measured here, never asserted in tests.

  bench/run_e2e_bench.py [--bin build/bin] [--iterations 200] [--json out.json]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "tests", "e2e"))
from e2e_cases import CASES  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--device", default="local-sync")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (source, function, make) in sorted(CASES.items()):
            module = os.path.join(tmp, f"{name}.smod")
            start = time.monotonic()
            subprocess.run([os.path.join(args.bin, "strata-compile"),
                            os.path.join(ROOT, source), "-o", module], check=True)
            compile_s = time.monotonic() - start
            inputs, _ = make()
            command = [os.path.join(args.bin, "strata-bench"), f"--module={module}",
                       f"--function={function}", f"--device={args.device}",
                       f"--iterations={args.iterations}", "--json"]
            for i, value in enumerate(inputs):
                path = os.path.join(tmp, f"{name}_{i}.npy")
                np.save(path, value)
                command.append(f"--input=@{path}")
            stats = json.loads(subprocess.run(command, check=True, capture_output=True,
                                              text=True).stdout)
            stats.update(program=name, compile_s=compile_s)
            rows.append(stats)

    print(f"{'program':<20} {'compile s':>9} {'min ms':>9} {'median ms':>10} {'p90 ms':>9}")
    for r in rows:
        print(f"{r['program']:<20} {r['compile_s']:>9.2f} {r['min_ms']:>9.4f} "
              f"{r['median_ms']:>10.4f} {r['p90_ms']:>9.4f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
