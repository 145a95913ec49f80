#!/usr/bin/python3
"""ONNX models newer than Debian's libonnx (IR 9-13, opsets 18-28), compiled
with strata-compile and run with strata-run:

- a network exported by torch (1.13 exports opset 17 at most), carried to
  opset 21 and IR 10 as a newer exporter writes it (reductions take their
  axes as an input from opset 18) and checked against torch's own output;
- operators whose form changed after opset 17, or that are new, checked
  against numpy implementations of their definitions;
- what Strata cannot read, each refused with a message naming it.

usage: newer_versions_test.py --bin BUILD/bin [--compile-arg=...]
Prints each case and the closing line `N passed, M failed`."""
import argparse
import io
import math
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def make_model(nodes, inputs, outputs, opset, initializers=(), ir_version=10):
    graph = helper.make_graph(nodes, "newer", inputs, outputs,
                              list(initializers))
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    return model


def value(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def upgrade_to_opset(model, opset, ir_version):
    """Rewrites an opset-17 model in the form opset `opset` (<= 22) gives
    its nodes: the reductions other than ReduceSum read `axes` from an input
    from opset 18; the other operators torch exports kept their form."""
    reductions = {"ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp",
                  "ReduceMax", "ReduceMean", "ReduceMin", "ReduceProd",
                  "ReduceSumSquare"}
    for index, node in enumerate(model.graph.node):
        if node.op_type not in reductions:
            continue
        axes = [a for a in node.attribute if a.name == "axes"]
        if not axes:
            continue
        name = f"upgraded_axes_{index}"
        model.graph.initializer.append(
            numpy_helper.from_array(np.array(axes[0].ints, np.int64), name))
        node.attribute.remove(axes[0])
        node.input.append(name)
    for entry in model.opset_import:
        if entry.domain in ("", "ai.onnx"):
            entry.version = opset
    model.ir_version = ir_version
    return model


# --- torch ----------------------------------------------------------------

def torch_case(rng):
    """A small CNN + attention-style head exported by torch at opset 17,
    upgraded to opset 21 / IR 10; the reference is torch's output."""
    import torch

    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = torch.nn.Conv2d(3, 8, 3, padding=1)
            self.bn = torch.nn.BatchNorm2d(8)
            self.norm = torch.nn.LayerNorm(8)
            self.proj = torch.nn.Linear(8, 8)

        def forward(self, x):
            y = torch.relu(self.bn(self.conv(x)))
            y = torch.nn.functional.max_pool2d(y, 2)
            tokens = y.flatten(2).transpose(1, 2)  # [N, 16, 8]
            tokens = self.norm(tokens)
            scores = torch.softmax(tokens @ tokens.transpose(1, 2) / 8 ** 0.5,
                                   dim=-1)
            mixed = torch.nn.functional.gelu(self.proj(scores @ tokens))
            return mixed.mean(dim=1), tokens.amax(dim=2, keepdim=True)

    torch.manual_seed(0)
    net = Net().eval()
    with torch.no_grad():
        net.bn.running_mean.uniform_(-0.5, 0.5)
        net.bn.running_var.uniform_(0.5, 1.5)
    x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
    buffer = io.BytesIO()
    torch.onnx.export(net, torch.from_numpy(x), buffer, opset_version=17,
                      input_names=["x"], output_names=["pooled", "peak"])
    model = onnx.load_from_string(buffer.getvalue())
    with torch.no_grad():
        want = [t.numpy() for t in net(torch.from_numpy(x))]
    return upgrade_to_opset(model, 21, 10), [x], want


# --- operators whose form changed after opset 17 --------------------------

def split_uneven_case(rng):
    x = rng.standard_normal((2, 7)).astype(np.float32)
    model = make_model(
        [helper.make_node("Split", ["X"], ["A", "B", "C"], axis=1,
                          num_outputs=3)],
        [value("X", F, [2, 7])],
        [value("A", F, [2, 3]), value("B", F, [2, 3]), value("C", F, [2, 1])],
        18)
    return model, [x], [x[:, :3], x[:, 3:6], x[:, 6:]]


def pad_axes_case(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    model = make_model(
        [helper.make_node("Pad", ["X", "pads", "value", "axes"], ["Y"],
                          mode="reflect")],
        [value("X", F, [2, 3, 4])], [value("Y", F, [2, 6, 4])], 19,
        [numpy_helper.from_array(np.array([2, 1], np.int64), "pads"),
         numpy_helper.from_array(np.array(0, np.float32), "value"),
         numpy_helper.from_array(np.array([-2], np.int64), "axes")])
    return model, [x], [np.pad(x, ((0, 0), (2, 1), (0, 0)), mode="reflect")]


def reduce_axes_input_case(rng):
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    model = make_model(
        [helper.make_node("ReduceMax", ["X", "axes"], ["Y"], keepdims=0),
         helper.make_node("ReduceMean", ["X", "empty"], ["Z"],
                          noop_with_empty_axes=1)],
        [value("X", F, [2, 3, 4])],
        [value("Y", F, [3]), value("Z", F, [2, 3, 4])], 18,
        [numpy_helper.from_array(np.array([0, 2], np.int64), "axes"),
         numpy_helper.from_array(np.zeros(0, np.int64), "empty")])
    return model, [x], [x.max(axis=(0, 2)), x]


def group_norm_reference(x, scale, bias, groups, per_channel, eps=1e-5):
    n, c = x.shape[:2]
    g = x.reshape(n, groups, -1).astype(np.float64)
    y = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) +
                                                  eps)
    y = y.reshape(x.shape)
    if not per_channel:  # opset 18: one scale and bias per group
        scale = np.repeat(scale, c // groups)
        bias = np.repeat(bias, c // groups)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return (y * scale.reshape(shape) + bias.reshape(shape)).astype(np.float32)


def group_norm_case(opset):
    def make(rng):
        x = rng.standard_normal((2, 6, 3, 3)).astype(np.float32)
        params = 6 if opset >= 21 else 2
        scale = rng.standard_normal(params).astype(np.float32)
        bias = rng.standard_normal(params).astype(np.float32)
        model = make_model(
            [helper.make_node("GroupNormalization", ["X", "s", "b"], ["Y"],
                              num_groups=2)],
            [value("X", F, [2, 6, 3, 3])], [value("Y", F, [2, 6, 3, 3])],
            opset, [numpy_helper.from_array(scale, "s"),
                    numpy_helper.from_array(bias, "b")])
        return model, [x], [group_norm_reference(x, scale, bias, 2,
                                                 opset >= 21)]
    return make


def transformer_ops_case(rng):
    """Gelu (tanh), RMSNormalization over the last two dims, Swish."""
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    scale = rng.standard_normal((3, 4)).astype(np.float32)
    model = make_model(
        [helper.make_node("Gelu", ["X"], ["G"], approximate="tanh"),
         helper.make_node("RMSNormalization", ["G", "S"], ["R"], axis=-2),
         helper.make_node("Swish", ["R"], ["Y"], alpha=0.5)],
        [value("X", F, [2, 3, 4])], [value("Y", F, [2, 3, 4])], 24,
        [numpy_helper.from_array(scale, "S")])
    x64 = x.astype(np.float64)
    g = 0.5 * x64 * (1 + np.tanh(math.sqrt(2 / math.pi) *
                                 (x64 + 0.044715 * x64 ** 3)))
    r = g / np.sqrt((g * g).mean(axis=(1, 2), keepdims=True) + 1e-5) * scale
    y = r / (1 + np.exp(-0.5 * r))
    return model, [x], [y.astype(np.float32)]


def resize_axes_case(rng):
    """Resize-18: sizes for the spatial axes only, keeping the aspect ratio
    (not_larger), nearest; half_pixel coordinates."""
    x = rng.standard_normal((1, 2, 4, 6)).astype(np.float32)
    model = make_model(
        [helper.make_node("Resize", ["X", "", "", "sizes"], ["Y"],
                          mode="nearest", axes=[2, 3],
                          keep_aspect_ratio_policy="not_larger",
                          nearest_mode="floor")],
        [value("X", F, [1, 2, 4, 6])], [value("Y", F, [1, 2, 2, 3])], 19,
        [numpy_helper.from_array(np.array([3, 3], np.int64), "sizes")])
    scale = min(3 / 4, 3 / 6)  # 0.5 for both axes
    rows = np.floor((np.arange(2) + 0.5) / scale - 0.5).clip(0).astype(int)
    cols = np.floor((np.arange(3) + 0.5) / scale - 0.5).clip(0).astype(int)
    return model, [x], [x[:, :, rows][:, :, :, cols]]


def attention_case(rng):
    """Attention-23, 3-D inputs with grouped-query heads and a causal mask."""
    b, s, hq, hkv, d = 2, 4, 4, 2, 3
    q = rng.standard_normal((b, s, hq * d)).astype(np.float32)
    k = rng.standard_normal((b, s, hkv * d)).astype(np.float32)
    v = rng.standard_normal((b, s, hkv * d)).astype(np.float32)
    model = make_model(
        [helper.make_node("Attention", ["Q", "K", "V"], ["Y"], is_causal=1,
                          q_num_heads=hq, kv_num_heads=hkv)],
        [value("Q", F, [b, s, hq * d]), value("K", F, [b, s, hkv * d]),
         value("V", F, [b, s, hkv * d])],
        [value("Y", F, [b, s, hq * d])], 23)
    heads = lambda t, h: t.reshape(b, s, h, d).transpose(0, 2, 1, 3)
    q4, k4, v4 = heads(q, hq), heads(k, hkv), heads(v, hkv)
    k4, v4 = np.repeat(k4, hq // hkv, axis=1), np.repeat(v4, hq // hkv, axis=1)
    scores = q4.astype(np.float64) @ k4.transpose(0, 1, 3, 2) / math.sqrt(d)
    scores = scores + np.triu(np.full((s, s), -np.inf), 1)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    y = (p @ v4).transpose(0, 2, 1, 3).reshape(b, s, hq * d)
    return model, [q, k, v], [y.astype(np.float32)]


# --- refusals --------------------------------------------------------------

def refusal_cases():
    relu = [helper.make_node("Relu", ["X"], ["Y"])]
    io_ = ([value("X", F, [2])], [value("Y", F, [2])])
    too_new_opset = make_model(relu, *io_, 29)
    too_new_ir = make_model(relu, *io_, 21, ir_version=14)
    float8 = make_model([helper.make_node("Identity", ["X"], ["Y"])],
                        [value("X", 17, [2])], [value("Y", 17, [2])], 21)
    cast_to_int4 = make_model(
        [helper.make_node("Cast", ["X"], ["Y"], to=22)],
        [value("X", F, [2])], [value("Y", 22, [2])], 21)
    image = make_model(
        [helper.make_node("ImageDecoder", ["X"], ["Y"])],
        [value("X", TensorProto.UINT8, [8])],
        [value("Y", TensorProto.UINT8, [1, 1, 3])], 20)
    return [
        ("opset newer than known", too_new_opset,
         "opset 29 is newer than the newest Strata reads (28)"),
        ("IR newer than known", too_new_ir,
         "IR version 14 is newer than the newest Strata reads (13)"),
        ("float8 input", float8,
         "graph input 'X' has element type FLOAT8E4M3FN, which Strata does "
         "not support"),
        ("cast to int4", cast_to_int4, "element type INT4"),
        ("op new in opset 20 without a lowering", image,
         "unsupported op ImageDecoder as of opset 20"),
    ]


# --- running ---------------------------------------------------------------

def compile_model(args, tmp, name, model):
    path = os.path.join(tmp, name + ".onnx")
    module = os.path.join(tmp, name + ".smod")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    proc = subprocess.run([os.path.join(args.bin, "strata-compile"), path,
                           "-o", module] + args.compile_arg,
                          capture_output=True, text=True)
    return proc, module


def run_case(args, tmp, name, model, inputs, wants):
    proc, module = compile_model(args, tmp, name, model)
    if proc.returncode != 0:
        return "compile error: " + proc.stderr.strip()[:400]
    command = [os.path.join(args.bin, "strata-run"), f"--module={module}",
               "--function=main"]
    for i, x in enumerate(inputs):
        path = os.path.join(tmp, f"{name}_in{i}.npy")
        np.save(path, x)
        command.append(f"--input=@{path}")
    outs = [os.path.join(tmp, f"{name}_out{i}.npy") for i in range(len(wants))]
    command += [f"--output=@{p}" for p in outs]
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        return "run error: " + proc.stderr.strip()[:400]
    for i, (path, want) in enumerate(zip(outs, wants)):
        got = np.load(path)
        if got.shape != want.shape:
            return f"output {i}: shape {got.shape}, expected {want.shape}"
        if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
            err = float(np.max(np.abs(got.astype(np.float64) - want)))
            return f"output {i}: max error {err:.3g}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--compile-arg", action="append", default=[])
    args = parser.parse_args()
    rng = np.random.default_rng(20261126)
    cases = [("torch export upgraded to opset 21, IR 10", torch_case),
             ("Split-18 num_outputs, uneven", split_uneven_case),
             ("Pad-19 reflect with axes", pad_axes_case),
             ("ReduceMax/ReduceMean-18 axes input", reduce_axes_input_case),
             ("GroupNormalization-18 (per group)", group_norm_case(18)),
             ("GroupNormalization-21 (per channel)", group_norm_case(21)),
             ("Gelu-20, RMSNormalization-23, Swish-24", transformer_ops_case),
             ("Resize-19 axes, not_larger", resize_axes_case),
             ("Attention-23 GQA causal, 3-D", attention_case)]
    failed = 0
    with tempfile.TemporaryDirectory(prefix="strata-newer-") as tmp:
        for index, (name, make) in enumerate(cases):
            model, inputs, wants = make(rng)
            problem = run_case(args, tmp, f"case{index}", model, inputs, wants)
            print(f"{'FAIL' if problem else 'ok  '} {name}"
                  + (f": {problem}" if problem else ""))
            failed += problem is not None
        for index, (name, model, message) in enumerate(refusal_cases()):
            proc, _ = compile_model(args, tmp, f"refusal{index}", model)
            ok = proc.returncode == 1 and message in proc.stderr
            print(f"{'ok  ' if ok else 'FAIL'} refused: {name}"
                  + ("" if ok else f": exit {proc.returncode}, "
                     f"{proc.stderr.strip()[:300]}"))
            failed += not ok
    total = len(cases) + len(refusal_cases())
    print(f"{total - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
