#!/usr/bin/python3
"""The cuda target's checks, in two halves so the GPU half runs where the
compiler does not.

  make  (here): compiles every end-to-end case and shared model with
        --target=cuda, assembles each executable's PTX with ptxas for every
        --ptxas-arch (skipped with a note when ptxas is absent), and writes
        the modules, inputs and independent references (numpy for the
        cases, PyTorch's outputs for the models) into a bundle directory.
  run   (on a machine with a GPU): runs each module with
        `strata-run --device=cuda`, compares every output with its
        reference, and with --bench times the models with strata-bench.
        Exits 77 (a skip for ctest) when no CUDA device is present.
"""
import argparse
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))
from e2e_cases import CASES, CUDA_UNSUPPORTED  # noqa: E402
from run_e2e import compare  # noqa: E402

SKIP = 77
MAGIC = b"STRCUDA\0"


def executables_in(module_bytes):
    """The cuda executables inside a module file: (kernel names, PTX) for
    each, read through the header of cuda_executable_format.h."""
    found = []
    start = 0
    while True:
        at = module_bytes.find(MAGIC, start)
        if at < 0:
            return found
        version, count, ptx_offset, ptx_length = struct.unpack_from("<4I", module_bytes, at + 8)
        names = []
        for i in range(count):
            name_offset, name_length = struct.unpack_from("<2I", module_bytes, at + 32 + 32 * i)
            names.append(module_bytes[at + name_offset:at + name_offset + name_length].decode())
        ptx = module_bytes[at + ptx_offset:at + ptx_offset + ptx_length - 1].decode()
        found.append((names, ptx))
        start = at + ptx_offset + ptx_length


def check_ptx(module, archs, ptxas):
    """Assembles every PTX of `module` for each arch; returns error text."""
    with open(module, "rb") as f:
        executables = executables_in(f.read())
    if not executables:
        return f"{module}: holds no cuda executable"
    with tempfile.TemporaryDirectory() as tmp:
        for index, (names, ptx) in enumerate(executables):
            path = os.path.join(tmp, f"e{index}.ptx")
            with open(path, "w") as f:
                f.write(ptx)
            for arch in archs:
                result = subprocess.run([ptxas, f"-arch={arch}", path, "-o", os.devnull],
                                        capture_output=True, text=True)
                if result.returncode != 0:
                    return f"ptxas -arch={arch} rejects {names}:\n{result.stderr}"
    return None


def load_pb(path):
    import onnx
    from onnx import numpy_helper
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor)


def make(args):
    compiler = os.path.join(args.bin, "strata-compile")
    ptxas = shutil.which("ptxas") or ("/usr/local/cuda/bin/ptxas"
                                      if os.path.exists("/usr/local/cuda/bin/ptxas") else None)
    if not ptxas:
        print("note: no ptxas on this machine; the PTX is not assembled")
    os.makedirs(args.out, exist_ok=True)
    manifest = []
    failures = []
    items = []
    for name in sorted(CASES):
        if args.cases and not re.search(args.cases, name):
            continue
        source, function, make_case = CASES[name]
        items.append(("case", name, os.path.join(args.source_dir, source), function, make_case))
    if args.models:
        for model in sorted(os.listdir(args.models)):
            if args.model_filter and not re.search(args.model_filter, model):
                continue
            path = os.path.join(args.models, model, "model.onnx")
            if os.path.exists(path):
                items.append(("model", model, path, "main", None))
    if args.multi_target:
        for name in sorted(CASES):
            if re.search(args.multi_target, name) and name not in CUDA_UNSUPPORTED:
                source, function, make_case = CASES[name]
                items.append(("case", f"cpu_cuda_{name}",
                              os.path.join(args.source_dir, source), function, make_case))
    for spec in args.bench_program or []:
        name, _, path = spec.partition("=")
        items.append(("bench", name, os.path.join(args.source_dir, path), "main", None))
    for kind, name, source, function, make_case in items:
        folder = os.path.join(args.out, name)
        os.makedirs(folder, exist_ok=True)
        module = os.path.join(folder, "module.smod")
        target = "cpu,cuda" if name.startswith("cpu_cuda_") else "cuda"
        result = subprocess.run([compiler, source, "-o", module, f"--target={target}",
                                 f"--cuda-arch={args.cuda_arch}"],
                                capture_output=True, text=True)
        refusal = CUDA_UNSUPPORTED.get(name) if kind == "case" else None
        if refusal:
            # Must fail cleanly, with the refusal's message.
            if result.returncode != 1 or refusal not in result.stderr:
                failures.append(f"{name}: expected the refusal '{refusal}', got exit "
                                f"{result.returncode}:\n{result.stderr[-3000:]}")
            else:
                print(f"{name}: refused as expected")
            shutil.rmtree(folder)
            continue
        if result.returncode != 0:
            failures.append(f"{name}: strata-compile --target=cuda failed:\n{result.stderr}")
            shutil.rmtree(folder)
            continue
        if ptxas:
            error = check_ptx(module, args.ptxas_arch, ptxas)
            if error:
                failures.append(f"{name}: {error}")
        if kind == "bench":
            inputs, references = [], []
        elif kind == "case":
            inputs, references = make_case()
        else:
            data = os.path.join(os.path.dirname(source), "test_data_set_0")
            inputs = [load_pb(os.path.join(data, f))
                      for f in sorted(os.listdir(data)) if f.startswith("input_")]
            references = [load_pb(os.path.join(data, f))
                          for f in sorted(os.listdir(data)) if f.startswith("output_")]
        for i, value in enumerate(inputs):
            np.save(os.path.join(folder, f"input{i}.npy"), value)
        for i, value in enumerate(references):
            np.save(os.path.join(folder, f"reference{i}.npy"), value)
        manifest.append({"name": name, "kind": kind, "function": function,
                         "inputs": len(inputs), "outputs": len(references)})
        print(f"{name}: compiled" + (", PTX assembled" if ptxas else ""))
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    for failure in failures:
        print(failure)
    print(f"{len(manifest)} modules in {args.out}, {len(failures)} failures")
    return 1 if failures else 0


def model_compare(got, want):
    """The models' tolerance: PyTorch's float32 outputs against ours, whose
    sums run in another order (1e-3 of the output's largest magnitude)."""
    if got.shape != want.shape:
        return f"shape {got.shape} != {want.shape}"
    scale = float(np.max(np.abs(want))) if want.size else 0.0
    err = float(np.max(np.abs(got.astype(np.float64) - want))) if want.size else 0.0
    if err > 1e-3 * scale + 1e-5:
        return f"max abs error {err:g} (scale {scale:g})"
    return None


def run(args):
    strata_run = os.path.join(args.bin, "strata-run")
    listed = subprocess.run([strata_run, "--list-devices"], capture_output=True, text=True)
    if "cuda://" not in listed.stdout:
        print(f"skipped: no CUDA device ({listed.stdout.strip() or listed.stderr.strip()})")
        return SKIP
    print(listed.stdout.strip())
    with open(os.path.join(args.bundle, "manifest.json")) as f:
        manifest = json.load(f)
    passed, failed = [], []
    manifest_checked = [e for e in manifest if e["kind"] != "bench"]
    for entry in manifest_checked:
        name = entry["name"]
        folder = os.path.join(args.bundle, name)
        command = [strata_run, f"--module={folder}/module.smod",
                   f"--function={entry['function']}", "--device=cuda", "--timeout=60"]
        command += [f"--input=@{folder}/input{i}.npy" for i in range(entry["inputs"])]
        outputs = [os.path.join(args.work, f"{name}_output{i}.npy")
                   for i in range(entry["outputs"])]
        command += [f"--output=@{p}" for p in outputs]
        try:
            result = subprocess.run(command, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            failed.append(f"{name}: strata-run did not finish in 120 s")
            continue
        if result.returncode != 0:
            failed.append(f"{name}: strata-run failed ({result.returncode}): "
                          f"{result.stderr.strip()[-2000:]}")
            continue
        errors = []
        for i, path in enumerate(outputs):
            got = np.load(path)
            want = np.load(os.path.join(folder, f"reference{i}.npy"))
            error = (compare(i, got, want) if entry["kind"] == "case"
                     else model_compare(got, want))
            if error:
                errors.append(error)
        if errors:
            failed.append(f"{name}: " + "; ".join(errors)[:2000])
        else:
            passed.append(name)
    for failure in failed:
        print("FAIL", failure)
    print(f"passed {len(passed)}/{len(manifest_checked)}: {' '.join(passed)}")
    if args.bench:
        strata_bench = os.path.join(args.bin, "strata-bench")
        for entry in manifest:
            if entry["kind"] != "model":
                continue
            folder = os.path.join(args.bundle, entry["name"])
            command = [strata_bench, f"--module={folder}/module.smod",
                       f"--function={entry['function']}", "--device=cuda",
                       "--warmup=3", "--iterations=20"]
            command += [f"--input=@{folder}/input{i}.npy" for i in range(entry["inputs"])]
            try:
                result = subprocess.run(command, capture_output=True, text=True, timeout=120)
            except subprocess.TimeoutExpired:
                print(f"== bench {entry['name']}: did not finish in 120 s")
                continue
            print(f"== bench {entry['name']}\n{result.stdout.strip()}\n{result.stderr.strip()[-500:]}")
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("--bin", required=True, help="directory with strata-compile")
    m.add_argument("--source-dir", required=True, help="the repository root")
    m.add_argument("--out", required=True)
    m.add_argument("--models", help="../shared/models: also compile these")
    m.add_argument("--model-filter", help="regex on the model names")
    m.add_argument("--cases", help="regex on the case names")
    m.add_argument("--multi-target",
                   help="regex: these cases also compiled with --target=cpu,cuda (cpu_cuda_NAME)")
    m.add_argument("--bench-program", action="append",
                   help="NAME=PATH: also compile this program (timed, not checked)")
    m.add_argument("--cuda-arch", default="sm_80")
    m.add_argument("--ptxas-arch", nargs="+", default=["sm_80", "sm_90"])
    r = sub.add_parser("run")
    r.add_argument("--bin", required=True, help="directory with strata-run")
    r.add_argument("--bundle", required=True)
    r.add_argument("--work", default=tempfile.gettempdir())
    r.add_argument("--bench", action="store_true")
    args = parser.parse_args()
    return make(args) if args.command == "make" else run(args)


if __name__ == "__main__":
    sys.exit(main())
