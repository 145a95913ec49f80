#!/usr/bin/python3
"""ONNX Runtime's time per graph node, to set next to
`strata-bench --per-dispatch` on the same model: which of our dispatches
lose to which of its nodes. Runs the model with ORT's profiler
(`enableProfiling`) on the model's own test inputs and prints the mean
microseconds per call by op type and for the slowest nodes. Measured only,
never asserted.

  bench/ort_node_profile.py ../shared/models/mobilenet_v2 [--threads 1]
      [--runs 50] [--top 30] [--json]

ONNX Runtime comes from build/peers, installed on first use as
run_models_bench.py does.
"""
import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run_models_bench import ROOT, ensure_ort  # noqa: E402

# Loads the model, feeds its test_data_set_0 inputs (decoded by the peers'
# own reader), runs it `runs` times with the profiler on and prints the
# profile file's path.
PROFILE_SCRIPT = r"""
const path = require('path');
const fs = require('fs');
const peers = process.argv[2];
const ort = require(path.join(peers, 'node_modules', 'onnxruntime-node'));
const io = require(path.join(peers, 'lib', 'onnx_io.js'));
(async () => {
  const [modelDir, threads, runs, prefix] = process.argv.slice(3);
  const so = { executionProviders: ['cpu'], intraOpNumThreads: Number(threads),
               interOpNumThreads: 1, executionMode: 'sequential', logSeverityLevel: 3,
               enableProfiling: true, profileFilePrefix: prefix };
  const sess = await ort.InferenceSession.create(path.join(modelDir, 'model.onnx'), so);
  const dataDir = path.join(modelDir, 'test_data_set_0');
  const files = fs.readdirSync(dataDir).filter((f) => /^input_\d+\.pb$/.test(f))
    .sort((a, b) => Number(a.match(/\d+/)[0]) - Number(b.match(/\d+/)[0]));
  const feeds = {};
  files.forEach((f, i) => {
    const t = io.decodeTensorProto(fs.readFileSync(path.join(dataDir, f)));
    feeds[sess.inputNames[i]] = new ort.Tensor(io.DTYPES[t.dataType].ort, t.data, t.dims);
  });
  for (let i = 0; i < Number(runs); i++) await sess.run(feeds);
  await sess.release();
})().catch((e) => { console.error(String(e)); process.exit(1); });
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model_dir")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--warmup", type=int, default=10,
                        help="first runs left out of the means")
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.runs <= args.warmup:
        sys.exit("--runs must exceed --warmup")
    peers = ensure_ort()
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, "profile.js")
        with open(script, "w") as f:
            f.write(PROFILE_SCRIPT)
        prefix = os.path.join(tmp, "ort_profile")
        subprocess.run(["node", script, peers, os.path.abspath(args.model_dir),
                        str(args.threads), str(args.runs), prefix], check=True)
        profiles = [p for p in os.listdir(tmp) if p.startswith("ort_profile")]
        if len(profiles) != 1:
            sys.exit(f"expected one profile file, found {profiles}")
        with open(os.path.join(tmp, profiles[0])) as f:
            events = json.load(f)

    runs = [e for e in events if e.get("cat") == "Session" and e.get("name") == "model_run"]
    measured = runs[args.warmup:]
    if not measured:
        sys.exit("the profile has no measured runs")
    first = measured[0]["ts"]
    node_us = collections.defaultdict(float)
    op_of = {}
    for e in events:
        if (e.get("cat") != "Node" or not e["name"].endswith("_kernel_time") or
                e["ts"] < first):
            continue
        name = e["name"][:-len("_kernel_time")]
        node_us[name] += e["dur"]
        op_of[name] = e.get("args", {}).get("op_name", "?")
    count = len(measured)
    call_us = sum(r["dur"] for r in measured) / count
    per_node = sorted(((us / count, op_of[n], n) for n, us in node_us.items()), reverse=True)
    per_op = collections.defaultdict(float)
    for us, op, _ in per_node:
        per_op[op] += us
    if args.json:
        json.dump({"threads": args.threads, "runs": count, "call_us": call_us,
                   "ops": dict(per_op),
                   "nodes": [{"name": n, "op": op, "us": us} for us, op, n in per_node]},
                  sys.stdout, indent=1)
        print()
        return
    print(f"ONNX Runtime, {args.threads} thread(s), {count} profiled runs: "
          f"{call_us:.1f} us per call (profiling on)")
    print("by op type (us per call):")
    for op, us in sorted(per_op.items(), key=lambda item: -item[1]):
        print(f"  {op:<28} {us:10.1f}")
    print(f"slowest nodes (us per call):")
    for us, op, name in per_node[:args.top]:
        print(f"  {us:10.1f}  {op:<20} {name}")


if __name__ == "__main__":
    main()
