#!/usr/bin/python3
"""Compiles one end-to-end case with strata-compile, runs it with strata-run
(inputs and outputs as .npy files) and compares every output with the
numpy reference: rtol 1e-4 for floats (plus an absolute floor of 1e-5 of
the output's largest magnitude), exact for integers and booleans."""
import argparse
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from e2e_cases import CASES  # noqa: E402


def compare(index, got, want):
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"output {index}: got {got.dtype}{list(got.shape)}, want {want.dtype}{list(want.shape)}"
    if np.issubdtype(want.dtype, np.floating):
        # Relative 1e-4 per element, with an absolute floor scaled to the
        # output's magnitude: long f32 sums cannot match a float64
        # reference to 1e-4 relative near zero.
        scale = float(np.max(np.abs(want))) if want.size else 0.0
        if not np.allclose(got, want, rtol=1e-4, atol=1e-6 + 1e-5 * scale):
            err = np.max(np.abs(got.astype(np.float64) - want))
            return f"output {index}: max abs error {err:g}\n got  {got}\n want {want}"
    elif not np.array_equal(got, want):
        return f"output {index}: mismatch\n got  {got}\n want {want}"
    return None


def compile_cached(compiler, source, cache_dir, tmp, target, cpu=None):
    """Compiles `source` for `target` (and `cpu`), reusing an earlier result
    for the same source text, flags and compiler binary (several cases and
    devices share one program)."""
    flags = [f"--target={target}"] + ([f"--cpu={cpu}"] if cpu else [])
    if not cache_dir:
        module = os.path.join(tmp, "module.smod")
        start = time.monotonic()
        subprocess.run([compiler, source, "-o", module] + flags, check=True)
        print(f"compile: {time.monotonic() - start:.2f} s")
        return module
    key = hashlib.sha256()
    with open(source, "rb") as f:
        key.update(f.read())
    stat = os.stat(compiler)
    key.update(f"{compiler}:{stat.st_mtime_ns}:{stat.st_size}:{flags}".encode())
    os.makedirs(cache_dir, exist_ok=True)
    module = os.path.join(cache_dir, key.hexdigest()[:24] + ".smod")
    if os.path.exists(module):
        return module
    partial = os.path.join(tmp, "module.smod")
    start = time.monotonic()
    subprocess.run([compiler, source, "-o", partial] + flags, check=True)
    print(f"compile: {time.monotonic() - start:.2f} s")
    shutil.copyfile(partial, module + f".{os.getpid()}")
    os.replace(module + f".{os.getpid()}", module)  # atomic for racing tests
    return module


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--case", required=True, choices=sorted(CASES))
    parser.add_argument("--bin", required=True, help="directory with strata-compile/strata-run")
    parser.add_argument("--run-bin", help="directory with strata-run (default: --bin)")
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--device", default="local-sync")
    parser.add_argument("--cache-dir", help="reuse compiled modules from here")
    parser.add_argument("--target", default="cpu", choices=["cpu", "vmvx", "cpu,cuda"],
                        help="executable target to compile for")
    args = parser.parse_args()

    source, function, make = CASES[args.case]
    inputs, references = make()
    run_bin = args.run_bin or args.bin
    with tempfile.TemporaryDirectory() as tmp:
        module = compile_cached(os.path.join(args.bin, "strata-compile"),
                                os.path.join(args.source_dir, source), args.cache_dir, tmp,
                                args.target)
        command = [os.path.join(run_bin, "strata-run"), f"--module={module}",
                   f"--function={function}", f"--device={args.device}"]
        for i, value in enumerate(inputs):
            path = os.path.join(tmp, f"input{i}.npy")
            np.save(path, value)
            command.append(f"--input=@{path}")
        outputs = [os.path.join(tmp, f"output{i}.npy") for i in range(len(references))]
        command += [f"--output=@{path}" for path in outputs]
        result = subprocess.run(command, capture_output=True, text=True)
        if result.returncode != 0:
            print(f"strata-run failed ({result.returncode}):\n{result.stderr}")
            return 1
        failures = [compare(i, np.load(p), want)
                    for i, (p, want) in enumerate(zip(outputs, references))]
        failures = [f for f in failures if f]
        for failure in failures:
            print(failure)
        if failures:
            return 1
    print(f"{args.case}: {len(references)} outputs match numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
