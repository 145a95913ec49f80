#!/usr/bin/python3
"""Compiles and runs the model corpus (export_torch_models.py's output) as
a user would, and compares with torch eager's output:
max|got - ref| <= 1e-3 * max|ref| + 1e-5, shapes equal. Each model runs as
its static export, and as its dynamic-axes export pinned (--input-shape)
to the reference input's shape and to a second one (another batch, a
larger map or sequence); and the dynamic export compiled once with only
the dims that size windows pinned (image height and width; token models
pin nothing) and called at two sizes: the module reads the rest at run
time.

usage: run_corpus.py CORPUS_DIR --bin BUILD/bin [--models a,b]
Prints a row per model and variant and the closing line `N passed, M failed`."""
import argparse
import os
import subprocess
import sys
import time

import numpy as np


# Dynamic variants the compiler refuses so far, (model, variant) -> the
# message it must give: refused with it, the variant passes; compiled, it
# must run and match like any other.
KNOWN_REFUSALS = {
    # Its position embeddings fix the image size (torch's forward refuses
    # other sizes too): the dynamic height and width must be pinned.
    ("vit_b_16", "dynamic_any_size"):
        "do not broadcast ([?,?,768] against [?,17,768]); pin the dynamic",
}


def compile_model(bin_dir, onnx_path, module, args):
    start = time.time()
    proc = subprocess.run([os.path.join(bin_dir, "strata-compile"), onnx_path,
                           "-o", module] + args, capture_output=True, text=True)
    seconds = time.time() - start
    if proc.returncode != 0:
        lines = [l for l in proc.stderr.splitlines() if "error" in l]
        message = lines[0] if lines else proc.stderr.strip()
        return seconds, (message or f"exit {proc.returncode}, no message")[:300]
    return seconds, None


def run_module(bin_dir, module, x, tmp, name):
    inp = os.path.join(tmp, name + "_in.npy")
    out = os.path.join(tmp, name + "_out.npy")
    np.save(inp, x)
    proc = subprocess.run([os.path.join(bin_dir, "strata-run"),
                           f"--module={module}", "--function=main",
                           f"--input=@{inp}", f"--output=@{out}"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return None, "run error: " + proc.stderr.strip()[:300]
    return np.load(out), None


def compare(got, want):
    if got.shape != want.shape:
        return f"shape {got.shape}, want {want.shape}"
    err = float(np.abs(got.astype(np.float64) - want).max())
    bound = 1e-3 * float(np.abs(want).max()) + 1e-5
    if not err <= bound:
        return f"max error {err:.3g} > {bound:.3g}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("corpus")
    parser.add_argument("--bin", required=True)
    parser.add_argument("--models", default="")
    parser.add_argument("--tmp", default="/tmp/strata-corpus")
    args = parser.parse_args()
    os.makedirs(args.tmp, exist_ok=True)
    names = args.models.split(",") if args.models else sorted(os.listdir(args.corpus))
    passed = failed = 0
    for name in names:
        folder = os.path.join(args.corpus, name)
        x1 = np.load(os.path.join(folder, "input.npy"))
        want1 = np.load(os.path.join(folder, "output.npy"))
        x2 = np.load(os.path.join(folder, "input2.npy"))
        want2 = np.load(os.path.join(folder, "output2.npy"))
        x3 = np.load(os.path.join(folder, "input3.npy"))
        want3 = np.load(os.path.join(folder, "output3.npy"))
        pin = lambda x: ["--input-shape=input=" + "x".join(map(str, x.shape))]
        # Image models pin height and width; token models nothing.
        unpinned = ([f"--dim=height={x1.shape[2]}", f"--dim=width={x1.shape[3]}"]
                    if x1.ndim == 4 else [])
        variants = [("static", "static.onnx", [], [(x1, want1)]),
                    ("dynamic", "dynamic.onnx", pin(x1), [(x1, want1)]),
                    ("dynamic_size2", "dynamic.onnx", pin(x2), [(x2, want2)]),
                    ("dynamic_unpinned", "dynamic.onnx", unpinned,
                     [(x1, want1), (x3, want3)])]
        # Image models once more with nothing pinned: one module at both
        # batches and both image sizes.
        if x1.ndim == 4:
            variants.append(("dynamic_any_size", "dynamic.onnx", [],
                             [(x1, want1), (x2, want2)]))
        for variant, file, pins, calls in variants:
            module = os.path.join(args.tmp, f"{name}_{variant}.smod")
            seconds, problem = compile_model(args.bin, os.path.join(folder, file),
                                             module, pins)
            known = KNOWN_REFUSALS.get((name, variant), "")
            if problem and known and known in problem:
                print(f"ok   {name} {variant}: refused as known ({problem[:160]})")
                passed += 1
                continue
            for x, want in calls if not problem else []:
                got, problem = run_module(args.bin, module, x, args.tmp, name)
                if not problem:
                    problem = compare(got, want)
                if problem:
                    problem += f" (input {x.shape})"
                    break
            print(f"{'FAIL' if problem else 'ok  '} {name} {variant} "
                  f"(compile {seconds:.1f} s)" + (f": {problem}" if problem else ""),
                  flush=True)
            if problem:
                failed += 1
            else:
                passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
