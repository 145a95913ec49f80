#!/usr/bin/python3
"""Modules carrying one variant of each executable per CPU
(`--cpu=x86-64-v2,x86-64-v3`): the variant needing the most features this
CPU has is loaded, whatever the order of the list; one this CPU cannot run
is never loaded; when none fits, the load error names what the CPU lacks.

Which variant ran is visible in the numbers: a * b + c (cases/fma_probe.mlir)
rounds once where the code was compiled for FMA (x86-64-v3 and up) and
twice otherwise, and the inputs make the two differ."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from run_e2e_cpu_levels import LINUX_FLAG, MISSING_RE, PSABI_LEVELS, host_flags  # noqa: E402

SKIPPED = 77
# What a sapphirerapids module requires beyond x86-64-v4.
SAPPHIRERAPIDS_EXTRA = {"avx512fp16", "avxvnni", "avx512bf16", "avx512vnni",
                        "avx512bitalg", "avx512vbmi", "avx512vbmi2", "avx512ifma",
                        "avx512vpopcntdq", "gfni", "prfchw"}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="directory with strata-compile")
    parser.add_argument("--run-bin", required=True, help="directory with strata-run")
    parser.add_argument("--source-dir", required=True)
    args = parser.parse_args()
    flags = host_flags()

    def has(features):
        return all(LINUX_FLAG[f] in flags for f in features)

    if not has(PSABI_LEVELS["x86-64-v3"]):
        print("SKIPPED: this CPU lacks x86-64-v3 (FMA): the probe cannot tell variants apart")
        return SKIPPED
    has_v4 = has(PSABI_LEVELS["x86-64-v4"])
    has_spr = has(PSABI_LEVELS["x86-64-v4"] | SAPPHIRERAPIDS_EXTRA)

    # a * b is exact in f64 and c cancels its leading part: the fused and
    # twice-rounded sums differ in most elements.
    step = np.float32(2.0 ** -12)
    a = (1 + step * np.arange(1, 17)).astype(np.float32)
    b = (1 + step * np.arange(3, 19)).astype(np.float32)
    c = -np.float32(1.0) * np.ones(16, np.float32)
    fused = (a.astype(np.float64) * b + c).astype(np.float32)
    twice = (a * b + c).astype(np.float32)
    assert np.count_nonzero(fused != twice) >= 8
    source = os.path.join(args.source_dir, "tests/e2e/cases/fma_probe.mlir")

    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        inputs = []
        for name, value in (("a", a), ("b", b), ("c", c)):
            path = os.path.join(tmp, f"{name}.npy")
            np.save(path, value)
            inputs.append(f"--input=@{path}")

        def run(cpus):
            module = os.path.join(tmp, cpus.replace(",", "+") + ".smod")
            subprocess.run([os.path.join(args.bin, "strata-compile"), source,
                            f"--cpu={cpus}", "-o", module], check=True)
            out = os.path.join(tmp, "out.npy")
            result = subprocess.run(
                [os.path.join(args.run_bin, "strata-run"), f"--module={module}",
                 "--function=probe", f"--output=@{out}"] + inputs,
                capture_output=True, text=True)
            if result.returncode != 0:
                return None, result.stderr
            return np.load(out), None

        def expect(cpus, want_fused):
            got, error = run(cpus)
            want = "fused" if want_fused else "rounded twice"
            if got is None:
                failures.append(f"--cpu={cpus}: failed, want {want}:\n{error}")
            elif not np.array_equal(got, fused if want_fused else twice):
                other = "rounded twice" if want_fused else "fused"
                state = other if np.array_equal(got, twice if want_fused else fused) else "neither"
                failures.append(f"--cpu={cpus}: got {state}, want {want}")
            else:
                print(f"ok   --cpu={cpus}: {want}")

        expect("x86-64-v2", False)  # the probe tells the two apart
        expect("x86-64-v3", True)
        expect("x86-64-v2,x86-64-v3", True)  # the richer one, in any order
        expect("x86-64-v3,x86-64-v2", True)
        expect("x86-64,x86-64-v2,x86-64-v4", has_v4)  # v4 needs v3's FMA too
        expect("x86-64-v2,sapphirerapids", has_spr)  # never one it cannot run
        expect("sapphirerapids,x86-64-v3", True)
        if not has_spr:
            got, error = run("sapphirerapids,graniterapids")
            match = MISSING_RE.search(error or "")
            missing = sorted(f for f in PSABI_LEVELS["x86-64-v4"] | SAPPHIRERAPIDS_EXTRA
                             if LINUX_FLAG[f] not in flags)
            if got is not None or not match or match.group(1) != ", ".join(missing):
                failures.append("--cpu=sapphirerapids,graniterapids: want the load error "
                                f"naming {missing}, got {error or 'a result'}")
            else:
                print(f"ok   --cpu=sapphirerapids,graniterapids: refused naming {match.group(1)}")
    for failure in failures:
        print("FAIL", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
