#!/usr/bin/python3
"""Damaged ONNX models must give clean compiler diagnostics, never a crash:
strata-compile on a valid model (shared/models/mlp/model.onnx) truncated at
sampled points and with a thousand random byte flips. Most of that file is
weight data, where a flip only changes numbers, so most flips land in the
rest (the protobuf structure: graph, nodes, attributes, tensor headers);
the others land anywhere. A damaged model may still be valid; then it must
compile. Each run goes through the importer and the input phase
(--dump-after=input); --full-every runs the whole pipeline on some."""
import argparse
import concurrent.futures
import os
import random
import subprocess
import sys
import tempfile

CRASH_MARKERS = ("Assertion", "Sanitizer", "runtime error:", "PLEASE submit",
                 "Stack dump", "terminate called", "Segmentation fault")


def weight_ranges(data, path):
    """Byte ranges of the initializers' raw data (python3-onnx), if known."""
    try:
        import onnx
    except ImportError:
        return []
    model = onnx.load(path, load_external_data=False)
    ranges = []
    for tensor in model.graph.initializer:
        if len(tensor.raw_data) >= 64:
            at = data.find(tensor.raw_data)
            if at >= 0:
                ranges.append((at, at + len(tensor.raw_data)))
    return ranges


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="dir with strata-compile")
    parser.add_argument("--model", required=True)
    parser.add_argument("--flips", type=int, default=1000)
    parser.add_argument("--cuts", type=int, default=60)
    parser.add_argument("--full-every", type=int, default=10,
                        help="compile every Nth damaged model to a module")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20251122)
    args = parser.parse_args()
    compiler = os.path.join(args.bin, "strata-compile")
    data = open(args.model, "rb").read()
    weights = weight_ranges(data, args.model)
    in_weights = bytearray(len(data))
    for begin, end in weights:
        in_weights[begin:end] = b"\x01" * (end - begin)
    structure = [i for i in range(len(data)) if not in_weights[i]]

    rng = random.Random(args.seed)
    cases = []
    cuts = set([0, 1, 2, 8, len(data) - 1])
    cuts.update(rng.sample(structure, min(args.cuts, len(structure))))
    cuts.update(rng.sample(range(len(data)), 10))
    for n in sorted(cuts):
        cases.append((f"truncated to {n} bytes", data[:n]))
    for k in range(args.flips):
        # Four in five flips hit the structure.
        at = rng.choice(structure) if k % 5 else rng.randrange(len(data))
        damaged = bytearray(data)
        if rng.random() < 0.5:
            damaged[at] ^= 1 << rng.randrange(8)
            what = f"bit flip at byte {at}"
        else:
            damaged[at] = rng.randrange(256)
            what = f"byte {at} set to {damaged[at]}"
        cases.append((what, bytes(damaged)))

    with tempfile.TemporaryDirectory() as tmp:
        def run(index):
            what, content = cases[index]
            path = os.path.join(tmp, f"damaged_{index}.onnx")
            with open(path, "wb") as f:
                f.write(content)
            if args.full_every and index % args.full_every == 0:
                command = [compiler, path, "-o", path + ".smod"]
            else:
                command = [compiler, path, "--dump-after=input"]
            try:
                result = subprocess.run(command, capture_output=True, text=True,
                                        errors="replace", timeout=300)
            except subprocess.TimeoutExpired:
                return what, "timeout", None
            finally:
                for leftover in (path, path + ".smod"):
                    if os.path.exists(leftover):
                        os.remove(leftover)
            if (result.returncode < 0 or result.returncode >= 128 or
                    any(m in result.stderr for m in CRASH_MARKERS)):
                return what, "crash", result
            if result.returncode != 0:
                if not result.stderr.strip():
                    return what, "silent", result
                return what, "error", result
            return what, "valid", result

        with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
            outcomes = list(pool.map(run, range(len(cases))))

    problems = []
    counts = {}
    for what, outcome, result in outcomes:
        counts[outcome] = counts.get(outcome, 0) + 1
        if outcome in ("crash", "silent", "timeout"):
            detail = ""
            if result is not None:
                detail = f" (exit {result.returncode}): {result.stderr[-600:]}"
            problems.append(f"{what}: {outcome}{detail}")
        elif outcome == "valid" and what.startswith("truncated"):
            # A protobuf cut at a field boundary can still parse, but never
            # as the whole model: the graph's outputs or weights go missing.
            pass
    for problem in problems[:20]:
        print(problem)
    print(f"{len(cases)} damaged models ({len(weights)} weight blobs "
          f"skipped by {args.flips * 4 // 5} structural flips): "
          f"{counts.get('error', 0)} clean errors, "
          f"{counts.get('valid', 0)} still valid, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
