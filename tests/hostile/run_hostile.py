#!/usr/bin/env python3
"""Runs the hostile-input corpus: files an attacker could hand Strata.

Each `cases_*.py` beside this file builds the files of one class (small,
made here, never stored) and says, per case, the commands to run and the
exact error the last one must give:

    def make_cases(out_dir: pathlib.Path) -> list[Case]

A case passes when every step but the last succeeds and the last one
exits non-zero (not by a signal) within `timeout` seconds, with stderr
matching `error` (a regular expression, searched), and, outside sanitizer
builds, without its peak resident memory passing `max_rss_mb`.

Steps name a tool (`strata-compile`, `strata-run`, ...) as their first
word: compiler tools come from --compiler-bin, the others from
--runtime-bin, so the runtime cases also run under a sanitizer build.
"""
import argparse
import concurrent.futures
import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
COMPILER_TOOLS = {"strata-compile", "strata-opt"}


class Case:
    def __init__(self, name, steps, error, timeout=60, max_rss_mb=2048,
                 env=None):
        self.name = name
        self.steps = steps        # list of argv lists
        self.error = error        # regex the last step's stderr must match
        self.timeout = timeout
        self.max_rss_mb = max_rss_mb
        self.env = env or {}


def load_classes(selected):
    classes = []
    for path in sorted(HERE.glob("cases_*.py")):
        name = path.stem[len("cases_"):]
        if selected and name not in selected:
            continue
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        classes.append((name, module))
    return classes


def run_step(argv, timeout, env):
    """Runs argv; returns (exit code or None on timeout, stderr, peak RSS MiB).

    Reaps the child with wait4 to read its peak resident memory.
    """
    with tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=stderr,
                                env=env, start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid == proc.pid:
                break
            if time.monotonic() > deadline:
                os.killpg(proc.pid, 9)
                os.wait4(proc.pid, 0)
                proc.returncode = 0  # reaped here, not by Popen
                return None, "", 0
            time.sleep(0.01)
        proc.returncode = os.waitstatus_to_exitcode(status)
        stderr.seek(0)
        text = stderr.read().decode(errors="replace")
        return proc.returncode, text, usage.ru_maxrss / 1024.0


def resolve(argv, args):
    tool = argv[0]
    if "/" in tool:
        return list(argv)
    directory = args.compiler_bin if tool in COMPILER_TOOLS else args.runtime_bin
    return [os.path.join(directory, tool)] + [str(a) for a in argv[1:]]


def run_case(case, args):
    env = dict(os.environ)
    env.update(case.env)
    for index, step in enumerate(case.steps):
        argv = resolve(step, args)
        last = index == len(case.steps) - 1
        rc, err, rss = run_step(argv, case.timeout, env)
        what = " ".join(os.path.basename(a) if i == 0 else a
                        for i, a in enumerate(argv))
        if rc is None:
            return f"timed out after {case.timeout} s: {what}"
        if not args.no_rss_limit and rss > case.max_rss_mb:
            return f"peak memory {rss:.0f} MiB > {case.max_rss_mb} MiB: {what}"
        if not last:
            if rc != 0:
                return f"set-up step failed (exit {rc}): {what}\n{err}"
            continue
        if rc == 0:
            return f"succeeded but must fail with /{case.error}/: {what}"
        if rc < 0:
            return f"killed by signal {-rc} (must fail with /{case.error}/): {what}\n{err[-2000:]}"
        if not re.search(case.error, err):
            return (f"exit {rc}, but stderr does not match /{case.error}/: "
                    f"{what}\n{err[-2000:]}")
        return None
    return "no steps"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--compiler-bin", required=True)
    parser.add_argument("--runtime-bin", required=True)
    parser.add_argument("--class", dest="classes", action="append",
                        help="run only these classes (cases_NAME.py)")
    parser.add_argument("--case", help="run only cases whose name matches")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--no-rss-limit", action="store_true",
                        help="sanitizer builds: peak memory is not meaningful")
    parser.add_argument("--keep", help="write the generated files here")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="strata-hostile-") as tmp:
        root = pathlib.Path(args.keep or tmp)
        jobs = []
        for name, module in load_classes(args.classes):
            out_dir = root / name
            out_dir.mkdir(parents=True, exist_ok=True)
            for case in module.make_cases(out_dir):
                if args.case and not re.search(args.case, case.name):
                    continue
                jobs.append((f"{name}/{case.name}", case))
        failures = []
        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            results = pool.map(lambda job: (job[0], run_case(job[1], args)),
                               jobs)
            for label, failure in results:
                print(("FAIL " if failure else "ok   ") + label, flush=True)
                if failure:
                    failures.append((label, failure))
        for label, failure in failures:
            print(f"\n== {label}\n{failure}")
        print(f"\n{len(jobs) - len(failures)} passed, {len(failures)} failed")
        return 1 if failures or not jobs else 0


if __name__ == "__main__":
    sys.exit(main())
