#!/usr/bin/python3
"""Real models side by side: Strata (strata-compile + strata-bench) against
ONNX Runtime (../shared/peers), in one run on the same machine, reported as
latency ratios. Speed is only measured here, never asserted.

  bench/run_models_bench.py [--bin build/bin] [--models mlp,resnet18] [--no-ort]
      [--models-dir DIR]  (default ../shared/models; export_bench_models.py makes more)

ONNX Runtime is installed on first use into build/peers (a copy of
../shared/peers, which stays read-only) with
`ONNXRUNTIME_NODE_INSTALL=skip npm install`.
"""
import argparse
import glob
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.environ.get("STRATA_SHARED_DIR",
                        os.path.join(os.path.dirname(ROOT), "shared"))


def load_inputs(model_dir, tmp):
    import onnx
    from onnx import numpy_helper
    paths = []
    for pb in sorted(glob.glob(os.path.join(model_dir, "test_data_set_0", "input_*.pb"))):
        tensor = onnx.TensorProto()
        with open(pb, "rb") as f:
            tensor.ParseFromString(f.read())
        path = os.path.join(tmp, os.path.basename(model_dir) + "_" + os.path.basename(pb)[:-3] + ".npy")
        np.save(path, numpy_helper.to_array(tensor))
        paths.append(path)
    return paths


def strata_median_ms(args, model_dir, tmp, workers, iterations):
    module = os.path.join(tmp, os.path.basename(model_dir) + ".smod")
    if not os.path.exists(module):
        subprocess.run([os.path.join(args.bin, "strata-compile"),
                        os.path.join(model_dir, "model.onnx"), "-o", module], check=True)
    device = "local-sync" if workers == 1 else f"local-task?workers={workers}"
    command = [os.path.join(args.bin, "strata-bench"), f"--module={module}", "--function=main",
               f"--device={device}", f"--iterations={iterations}", "--warmup=2", "--json"]
    command += [f"--input=@{p}" for p in load_inputs(model_dir, tmp)]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["median_ms"]


def ensure_ort():
    """build/peers with onnxruntime-node installed (copied from
    ../shared/peers on first use); returns its path."""
    peers = os.path.join(ROOT, "build", "peers")
    if not os.path.exists(os.path.join(peers, "node_modules", "onnxruntime-node")):
        shutil.copytree(os.path.join(SHARED, "peers"), peers, dirs_exist_ok=True)
        env = dict(os.environ, ONNXRUNTIME_NODE_INSTALL="skip")
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=peers, env=env,
                       check=True, capture_output=True)
    return peers


def ort_medians_ms(args, model_dir, iterations):
    peers = ensure_ort()
    # The model's own test inputs: random integers would index past
    # embedding tables (bert's token_type_ids).
    out = subprocess.run(["node", os.path.join(peers, "ort_bench.js"), "--model", model_dir,
                          "--verify", "--threads", "1,2", "--warmup", "3",
                          "--runs", str(iterations)],
                         check=True, capture_output=True, text=True).stdout
    result = json.loads(out)
    medians = {}
    for entry in result.get("results", []):
        medians[int(entry["intra_op_threads"])] = entry["median_ms"]
    return medians


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--models-dir", default=os.path.join(SHARED, "models"),
                        help="where the models are, one folder each with model.onnx and "
                             "test_data_set_0 (../shared/models, or the output of "
                             "export_bench_models.py)")
    parser.add_argument("--models", default=None,
                        help="comma-separated folder names (default: every model of "
                             "--models-dir)")
    parser.add_argument("--iterations", type=int, default=10,
                        help="the fewest timed calls per model, thread count and side")
    parser.add_argument("--min-time", type=float, default=0.2,
                        help="seconds of timed calls per model, thread count and side: "
                             "small models get more calls (at most 5000), the same on "
                             "both sides")
    parser.add_argument("--no-ort", action="store_true")
    parser.add_argument("--rounds", type=int, default=1,
                        help="measure every model this many times, interleaved with "
                             "ORT, and keep each side's best median (a shared machine's "
                             "noise only ever adds time)")
    args = parser.parse_args()

    print(f"{'model':<22}{'strata 1T':>11}{'strata 2T':>11}{'ORT 1T':>9}{'ORT 2T':>9}"
          f"{'ratio 1T':>10}{'ratio 2T':>10}")
    ratios = {1: [], 2: []}
    names = args.models.split(",") if args.models else sorted(
        name for name in os.listdir(args.models_dir)
        if os.path.exists(os.path.join(args.models_dir, name, "model.onnx")))
    with tempfile.TemporaryDirectory() as tmp:
        for name in names:
            model_dir = os.path.join(args.models_dir, name)
            best = {}
            failed = False
            try:
                estimate_ms = strata_median_ms(args, model_dir, tmp, 1, 3)
            except subprocess.CalledProcessError as error:
                print(f"{name:<22}  strata failed: {(error.stderr or '')[:120]!r}")
                continue
            iterations = max(args.iterations,
                             min(5000, int(args.min_time * 1000 / max(estimate_ms, 1e-3))))
            for _ in range(args.rounds):
                try:
                    measured = {
                        ("strata", 1): strata_median_ms(args, model_dir, tmp, 1, iterations),
                        ("strata", 2): strata_median_ms(args, model_dir, tmp, 2, iterations)}
                except subprocess.CalledProcessError as error:
                    print(f"{name:<22}  strata failed: {(error.stderr or '')[:120]!r}")
                    failed = True
                    break
                try:
                    o = {} if args.no_ort else ort_medians_ms(args, model_dir, iterations)
                except subprocess.CalledProcessError as error:
                    print(f"{name:<22}  ORT failed: {(error.stderr or '')[-160:]!r}")
                    o = {}
                for threads, ms in o.items():
                    measured[("ort", threads)] = ms
                for key, ms in measured.items():
                    best[key] = min(ms, best.get(key, ms))
            if failed:
                continue
            s1, s2 = best[("strata", 1)], best[("strata", 2)]
            o1, o2 = best.get(("ort", 1)), best.get(("ort", 2))
            fmt = lambda v: f"{v:.3f}" if v else "-"
            cells = []
            for threads, ours, peer in ((1, s1, o1), (2, s2, o2)):
                if peer:
                    ratios[threads].append(ours / peer)
                    cells.append(f"{ours / peer:.2f}x")
                else:
                    cells.append("-")
            print(f"{name:<22}{fmt(s1):>11}{fmt(s2):>11}{fmt(o1):>9}{fmt(o2):>9}"
                  f"{cells[0]:>10}{cells[1]:>10}")
    for threads, values in ratios.items():
        if values:
            geomean = math.exp(sum(math.log(v) for v in values) / len(values))
            print(f"geomean ratio {threads}T: {geomean:.2f}x over {len(values)} models")
    return 0


if __name__ == "__main__":
    sys.exit(main())
