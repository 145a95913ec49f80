#!/usr/bin/python3
"""Every end-to-end program compiled for one --cpu level (x86-64 ... x86-64-v4,
znver4, sapphirerapids, host), then:

- every executable in the modules is checked against the executable ABI
  (executable_symbols.py: nothing undefined the runtime does not provide,
  only the query function exported);
- if this host has the level's features (/proc/cpuinfo), every case runs on
  local-sync with the default loader and matches numpy;
- if it lacks some, loading must be refused with the error that names
  exactly the missing ones (for the x86-64 psABI levels, whose features are
  fixed; for named CPUs, every feature named must really be missing), and
  the test reports SKIPPED (exit 77) for the runs.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
from e2e_cases import CASES  # noqa: E402
from executable_symbols import check_module, runtime_imports  # noqa: E402
from run_e2e import compare, compile_cached  # noqa: E402

SKIPPED = 77

# LLVM feature name -> the flag Linux shows in /proc/cpuinfo, for every
# feature the code generator may use (cpu_features.def, use = codegen).
LINUX_FLAG = {
    "sse3": "pni", "ssse3": "ssse3", "sse4.1": "sse4_1", "sse4.2": "sse4_2",
    "popcnt": "popcnt", "cx16": "cx16", "sahf": "lahf_lm", "movbe": "movbe",
    "avx": "avx", "avx2": "avx2", "bmi": "bmi1", "bmi2": "bmi2", "f16c": "f16c",
    "fma": "fma", "lzcnt": "abm", "prfchw": "3dnowprefetch", "sse4a": "sse4a",
    "gfni": "gfni", "avx512f": "avx512f", "avx512bw": "avx512bw",
    "avx512cd": "avx512cd", "avx512dq": "avx512dq", "avx512vl": "avx512vl",
    "avx512ifma": "avx512ifma", "avx512vbmi": "avx512vbmi",
    "avx512vbmi2": "avx512_vbmi2", "avx512vnni": "avx512_vnni",
    "avx512bitalg": "avx512_bitalg", "avx512vpopcntdq": "avx512_vpopcntdq",
    "avx512bf16": "avx512_bf16", "avx512fp16": "avx512_fp16",
    "avxvnni": "avx_vnni", "avxifma": "avx_ifma", "avxvnniint8": "avx_vnni_int8",
}

# The x86-64 psABI micro-architecture levels, as the features a module for
# them requires (xsave, also in v3, is never required: no code uses it).
_V2 = {"cx16", "sahf", "popcnt", "sse3", "sse4.1", "sse4.2", "ssse3"}
_V3 = _V2 | {"avx", "avx2", "bmi", "bmi2", "f16c", "fma", "lzcnt", "movbe"}
_V4 = _V3 | {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"}
PSABI_LEVELS = {"x86-64": set(), "x86-64-v2": _V2, "x86-64-v3": _V3, "x86-64-v4": _V4}

MISSING_RE = re.compile(r"this CPU lacks ([a-z0-9.\-, ]+?), which the module's "
                        r"executables were compiled for")


def host_flags():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("flags"):
                return set(line.split(":", 1)[1].split())
    return set()


def run_case(run_bin, module, name, tmp):
    """Runs one case; returns (None, None) on a match, else (stderr or
    mismatch text, whether it was a load error)."""
    _, function, make = CASES[name]
    inputs, references = make()
    command = [os.path.join(run_bin, "strata-run"), f"--module={module}",
               f"--function={function}", "--device=local-sync"]
    for i, value in enumerate(inputs):
        path = os.path.join(tmp, f"{name}_input{i}.npy")
        np.save(path, value)
        command.append(f"--input=@{path}")
    outputs = [os.path.join(tmp, f"{name}_output{i}.npy") for i in range(len(references))]
    command += [f"--output=@{p}" for p in outputs]
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        return result.stderr, True
    failures = [compare(i, np.load(p), want)
                for i, (p, want) in enumerate(zip(outputs, references))]
    failures = [f for f in failures if f]
    return ("\n".join(failures), False) if failures else (None, None)


def check_refusal(cpu, stderr, flags):
    """The load error must name exactly the features this host lacks."""
    match = MISSING_RE.search(stderr)
    if not match:
        return f"--cpu={cpu}: the load failed, but not with the CPU feature error:\n{stderr}"
    named = {n.strip() for n in match.group(1).split(",")}
    unmapped = sorted(n for n in named if n not in LINUX_FLAG)
    if unmapped:
        return f"--cpu={cpu}: the error names {unmapped}, which this test cannot map to /proc/cpuinfo"
    present = sorted(n for n in named if LINUX_FLAG[n] in flags)
    if present:
        return f"--cpu={cpu}: the error names {present}, which this host has"
    if cpu in PSABI_LEVELS:
        expected = {n for n in PSABI_LEVELS[cpu] if LINUX_FLAG[n] not in flags}
        if named != expected:
            return f"--cpu={cpu}: the error names {sorted(named)}, expected {sorted(expected)}"
    return None


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", required=True)
    parser.add_argument("--bin", required=True, help="directory with strata-compile")
    parser.add_argument("--run-bin", required=True, help="directory with strata-run")
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--cache-dir")
    parser.add_argument("--symbols-def", required=True, help="executable_symbols.def")
    parser.add_argument("--case", action="append", help="only these cases")
    args = parser.parse_args()

    names = sorted(args.case or CASES)
    allowed_imports = runtime_imports(args.symbols_def)
    flags = host_flags()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        modules = {}
        for name in names:
            source = os.path.join(args.source_dir, CASES[name][0])
            if source not in modules:
                work = os.path.join(tmp, str(len(modules)))  # one per program
                os.makedirs(work)
                modules[source] = compile_cached(
                    os.path.join(args.bin, "strata-compile"), source, args.cache_dir,
                    work, "cpu", args.cpu)
                problems, count = check_module(modules[source], allowed_imports)
                failures += [f"{CASES[name][0]}: {p}" for p in problems]
        print(f"--cpu={args.cpu}: compiled {len(modules)} programs, executables "
              f"checked against {os.path.basename(args.symbols_def)}")

        refused = None
        passed = 0
        for name in names:
            error, load_error = run_case(args.run_bin, modules[os.path.join(
                args.source_dir, CASES[name][0])], name, tmp)
            if error is None:
                passed += 1
                continue
            if load_error and MISSING_RE.search(error):
                refused = error
                break
            failures.append(f"{name}: {error}")

        if cpu_must_run(args.cpu, flags) and refused:
            failures.append(f"--cpu={args.cpu}: refused on a host that has its features:\n{refused}")
        elif refused:
            problem = check_refusal(args.cpu, refused, flags)
            if problem:
                failures.append(problem)
    for failure in failures:
        print("FAIL", failure)
    if failures:
        return 1
    if refused:
        print(f"SKIPPED running the --cpu={args.cpu} programs: "
              f"{MISSING_RE.search(refused).group(0)} (load refusal checked)")
        return SKIPPED
    print(f"--cpu={args.cpu}: {passed} cases match numpy")
    return 0


def cpu_must_run(cpu, flags):
    """Whether this host certainly has every feature the level requires."""
    if cpu == "host":
        return True
    if cpu in PSABI_LEVELS:
        return all(LINUX_FLAG[n] in flags for n in PSABI_LEVELS[cpu])
    return False


if __name__ == "__main__":
    sys.exit(main())
