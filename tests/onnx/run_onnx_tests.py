#!/usr/bin/python3
"""ONNX conformance: compiles every case of the ONNX backend test data
(Debian's libonnx-testdata: node/, pytorch-converted/, pytorch-operator/,
simple/) and the real models of shared/models with strata-compile, runs
them with strata-run and compares with the reference outputs.

Tolerances: the ONNX backend's (rtol 1e-3, atol 1e-7) for floats, exact for
integers and bools; real models: max |error| <= 1e-3 * max |reference|.

Prints a table per suite, every failure with its reason category, and the
closing line `N passed, M failed`. With --expected, exits non-zero when a
suite passes fewer cases than recorded there (the counts only go up)."""
import argparse
import concurrent.futures
import glob
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

SUITES = ["node", "pytorch-converted", "pytorch-operator", "simple"]
DEFAULT_TESTDATA = "/usr/share/libonnx-testdata/data"


class Case:
    def __init__(self, suite, name, directory, real_model=False):
        self.suite, self.name, self.dir = suite, name, directory
        self.real_model = real_model


def discover(testdata, models, suites):
    cases = []
    for suite in suites:
        if suite == "models":
            for d in sorted(glob.glob(os.path.join(models, "*"))):
                if os.path.exists(os.path.join(d, "model.onnx")):
                    cases.append(Case("models", os.path.basename(d), d, True))
            continue
        for d in sorted(glob.glob(os.path.join(testdata, suite, "*"))):
            if os.path.exists(os.path.join(d, "model.onnx")):
                cases.append(Case(suite, os.path.basename(d), d))
    return cases


def load_tensor(path):
    """Reads a TensorProto .pb; None for sequence/optional values."""
    with open(path, "rb") as f:
        data = f.read()
    tensor = onnx.TensorProto()
    try:
        tensor.ParseFromString(data)
    except Exception:
        return None
    if tensor.data_type == 0 and not tensor.dims and not tensor.raw_data:
        return None
    return numpy_helper.to_array(tensor)


def bfloat16_inputs(model_path):
    """Which graph inputs (in order, initializers left out) are bfloat16:
    the test data stores them as uint16 (numpy has no bfloat16)."""
    try:
        model = onnx.load(model_path, load_external_data=False)
    except Exception:
        return []
    initializers = {t.name for t in model.graph.initializer}
    return [i.type.tensor_type.elem_type == onnx.TensorProto.BFLOAT16
            for i in model.graph.input if i.name not in initializers]


def bfloat16_text(bits):
    """A bfloat16 tensor (its 16-bit patterns) as strata-run tensor text:
    each value widened to f32 exactly, printed so it parses back exactly."""
    values = (bits.astype(np.uint32).reshape(-1) << 16).view(np.float32)
    shape = "x".join(str(d) for d in bits.shape)
    prefix = f"{shape}xbf16" if shape else "bf16"
    return prefix + "=" + " ".join(repr(float(v)) for v in values)


def compare(got, want, real_model):
    """None when `got` matches `want`, else a description."""
    if got.shape != want.shape:
        return f"shape {list(got.shape)}, expected {list(want.shape)}"
    if np.issubdtype(want.dtype, np.floating):
        g = got.astype(np.float64).reshape(-1)
        w = want.astype(np.float64).reshape(-1)
        err = np.abs(g - w)
        both_nan = np.isnan(g) & np.isnan(w)
        err[both_nan] = 0
        same_inf = np.isinf(w) & (g == w)
        err[same_inf] = 0
        max_err = float(np.nanmax(err)) if err.size else 0.0
        if np.isnan(err).any():
            max_err = float("nan")
        if real_model:
            scale = float(np.max(np.abs(w))) if w.size else 0.0
            ok = not np.isnan(err).any() and max_err <= 1e-3 * scale
            if not ok:
                return f"max error {max_err:.3g} (relative {max_err / max(scale, 1e-30):.3g})"
            return None
        tol = 1e-7 + 1e-3 * np.abs(w)
        bad = ~(err <= tol) & ~both_nan
        if bad.any():
            return f"max error {max_err:.3g} ({int(bad.sum())} of {w.size} elements)"
        return None
    if want.dtype == np.bool_:
        if not np.array_equal(got.astype(np.bool_), want):
            return f"{int((got.astype(np.bool_) != want).sum())} of {want.size} elements differ"
        return None
    if got.astype(want.dtype).tobytes() != want.tobytes() or got.dtype.itemsize != want.dtype.itemsize:
        diff = int((got.astype(np.int64) != want.astype(np.int64)).sum())
        return f"{diff} of {want.size} elements differ"
    return None


IMPORT_UNSUPPORTED = re.compile(r"\((\w+)\): unsupported op (.*)")


def categorize_compile_error(stderr):
    """(category, detail) for a failed strata-compile."""
    first = next((l for l in stderr.splitlines() if "error:" in l), stderr.strip()[:300])
    m = IMPORT_UNSUPPORTED.search(stderr)
    if m:
        return f"import: unsupported op {m.group(2).split()[0] if m.group(2) else m.group(1)}", first
    if "node '" in first or "graph input" in first or "graph output" in first \
            or "invalid ONNX model" in first or "initializer" in first or "tensor '" in first:
        return "import: " + classify_import(first), first
    return "compile error", first


def classify_import(line):
    if "sequences" in line or "optionals" in line:
        return "sequence/optional value"
    if "element type" in line:
        return "unsupported element type"
    if "dynamic" in line:
        return "dynamic shape"
    if "compile-time" in line:
        return "non-constant operand"
    if "invalid ONNX model" in line:
        return "invalid model"
    return "error"


def run_case(case, args):
    start = time.monotonic()
    result = {"suite": case.suite, "name": case.name}
    data_sets = sorted(glob.glob(os.path.join(case.dir, "test_data_set_*")))
    with tempfile.TemporaryDirectory(prefix="strata-onnx-") as tmp:
        module = os.path.join(tmp, "model.smod")
        try:
            proc = subprocess.run(
                [os.path.join(args.bin, "strata-compile"),
                 os.path.join(case.dir, "model.onnx"), "-o", module] + args.compile_arg,
                capture_output=True, text=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return dict(result, ok=False, category="timeout", detail="compile")
        if proc.returncode < 0 or proc.returncode > 2:
            return dict(result, ok=False, category="crash",
                        detail=f"strata-compile exit {proc.returncode}: " + proc.stderr.strip()[-300:])
        if proc.returncode != 0:
            category, detail = categorize_compile_error(proc.stderr)
            return dict(result, ok=False, category=category, detail=detail)
        bf16_inputs = bfloat16_inputs(os.path.join(case.dir, "model.onnx"))
        for ds in data_sets:
            inputs = sorted(glob.glob(os.path.join(ds, "input_*.pb")),
                            key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
            outputs = sorted(glob.glob(os.path.join(ds, "output_*.pb")),
                             key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[0]))
            command = [os.path.join(args.bin, "strata-run"), f"--module={module}",
                       "--function=main", f"--device={args.device}"]
            for i, p in enumerate(inputs):
                value = load_tensor(p)
                if value is None:
                    return dict(result, ok=False, category="import: sequence/optional value",
                                detail=os.path.basename(p))
                if i < len(bf16_inputs) and bf16_inputs[i]:
                    # .npy has no bfloat16; tensor text does. Debian's onnx
                    # reads bfloat16 tensors as their float32 values (exact).
                    bits = value.view(np.uint16) if value.dtype == np.uint16 \
                        else (value.astype(np.float32).reshape(-1).view(np.uint32)
                              >> 16).astype(np.uint16).reshape(value.shape)
                    command.append("--input=" + bfloat16_text(bits))
                    continue
                path = os.path.join(tmp, f"in{i}.npy")
                np.save(path, value.copy(order="C"))  # as stored; keeps rank 0
                command.append(f"--input=@{path}")
            wants = [load_tensor(p) for p in outputs]
            if any(w is None for w in wants):
                return dict(result, ok=False, category="import: sequence/optional value",
                            detail="outputs")
            out_paths = [os.path.join(tmp, f"out{i}.npy") for i in range(len(wants))]
            command += [f"--output=@{p}" for p in out_paths]
            try:
                proc = subprocess.run(command, capture_output=True, text=True,
                                      timeout=args.timeout)
            except subprocess.TimeoutExpired:
                return dict(result, ok=False, category="timeout", detail="run")
            if proc.returncode < 0:
                return dict(result, ok=False, category="crash",
                            detail=f"strata-run signal {-proc.returncode}")
            if proc.returncode != 0:
                line = next((l for l in proc.stderr.splitlines() if l.strip()), "")
                return dict(result, ok=False, category="run error", detail=line[:300])
            for i, (p, want) in enumerate(zip(out_paths, wants)):
                problem = compare(np.load(p), want, case.real_model)
                if problem:
                    return dict(result, ok=False, category="wrong result",
                                detail=f"{os.path.basename(ds)} output {i}: {problem}")
    return dict(result, ok=True, seconds=time.monotonic() - start)


def select_subset(cases, fraction, seed=20240601):
    """A fixed, deterministic subset of the test-data cases (real models are
    always kept)."""
    rng = random.Random(seed)
    return [c for c in cases if c.real_model or rng.random() < fraction]


def failure_reason(result):
    """A failure's reason without the per-case parts (paths, names)."""
    detail = result.get("detail", "")
    detail = re.sub(r"^\S*model\.onnx:\d+:\d+: error: ", "", detail)
    detail = re.sub(r"node '[^']*' ", "", detail)
    detail = re.sub(r"'[^']*_(expanded|function)_[^']*'", "'...'", detail)
    detail = re.sub(r"test_data_set_0 output \d+: ", "", detail)
    detail = re.sub(r"\(\d+ of \d+ elements\)", "", detail)
    detail = re.sub(r"max error [0-9.e+-]+", "max error above tolerance", detail)
    return f"{result['category']}: {detail.strip()}"[:160]


def write_failures_markdown(path, results):
    groups = {}
    for r in results:
        if not r["ok"]:
            groups.setdefault(failure_reason(r), []).append(
                f"{r['suite']}/{r['name']}")
    with open(path, "w") as f:
        for reason, names in sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            f.write(f"- **{len(names)}** {reason}\n")
            f.write("  " + ", ".join(f"`{n.split('/', 1)[1]}`" for n in sorted(names)) + "\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bin", required=True, help="directory with strata-compile, strata-run")
    parser.add_argument("--testdata", default=DEFAULT_TESTDATA)
    parser.add_argument("--models", help="shared/models directory")
    parser.add_argument("--suites", default=",".join(SUITES + ["models"]))
    parser.add_argument("--filter", help="regex on suite/name")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--device", default="local-sync")
    parser.add_argument("--compile-arg", action="append", default=[],
                        help="extra strata-compile argument (repeatable), e.g. --cpu=x86-64-v3")
    parser.add_argument("--expected", help="expected_counts.json: fail if a count goes down")
    parser.add_argument("--update-expected", action="store_true",
                        help="raise the counts in --expected to this run's")
    parser.add_argument("--json", help="write per-case results here")
    parser.add_argument("--failures-markdown",
                        help="write the failures, grouped by reason, as a "
                             "markdown list here (for tests/onnx/README.md)")
    args = parser.parse_args()

    suites = args.suites.split(",")
    if "models" in suites and not args.models:
        suites.remove("models")
    cases = discover(args.testdata, args.models, suites)
    if args.filter:
        cases = [c for c in cases if re.search(args.filter, f"{c.suite}/{c.name}")]
    start = time.monotonic()
    results = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs) as pool:
        futures = {pool.submit(run_case, c, args): c for c in cases}
        for future in concurrent.futures.as_completed(futures):
            case = futures[future]
            try:
                results.append(future.result())
            except Exception as e:  # a runner bug must not hide other cases
                results.append({"suite": case.suite, "name": case.name, "ok": False,
                                "category": "runner error", "detail": repr(e)})
    elapsed = time.monotonic() - start
    results.sort(key=lambda r: (r["suite"], r["name"]))

    print("failures:")
    for r in results:
        if not r["ok"]:
            print(f"  {r['suite']}/{r['name']}: {r['category']}: {r.get('detail', '')}")
    counts = {}
    print(f"\n{'suite':<20}{'passed':>8}{'failed':>8}{'total':>8}")
    for suite in suites:
        rs = [r for r in results if r["suite"] == suite]
        if not rs:
            continue
        passed = sum(r["ok"] for r in rs)
        counts[suite] = passed
        print(f"{suite:<20}{passed:>8}{len(rs) - passed:>8}{len(rs):>8}")
    categories = {}
    for r in results:
        if not r["ok"]:
            key = r["category"]
            categories[key] = categories.get(key, 0) + 1
    print("\nfailure reasons:")
    for key, n in sorted(categories.items(), key=lambda kv: -kv[1]):
        print(f"  {n:5d}  {key}")
    print(f"\ntime: {elapsed:.1f} s with {args.jobs} workers")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.failures_markdown:
        write_failures_markdown(args.failures_markdown, results)

    status = 0
    if args.expected:
        with open(args.expected) as f:
            expected = json.load(f)
        for suite, want in expected.items():
            if suite in counts and counts[suite] < want:
                print(f"REGRESSION: {suite} passes {counts[suite]}, expected at least {want}")
                status = 1
            elif suite in counts and counts[suite] > want:
                print(f"note: {suite} passes {counts[suite]} > {want} recorded; raise it in {args.expected}")
        if args.update_expected:
            for suite, n in counts.items():
                expected[suite] = max(n, expected.get(suite, 0))
            with open(args.expected, "w") as f:
                json.dump(expected, f, indent=2, sort_keys=True)
                f.write("\n")
    passed = sum(r["ok"] for r in results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return status


if __name__ == "__main__":
    sys.exit(main())
