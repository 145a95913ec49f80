#!/usr/bin/python3
"""Models exported with dynamic axes (symbolic input dimensions such as
`batch` and `sequence`, an unnamed one, symbolic intermediate and output
types, a Shape -> Gather -> Concat -> Reshape chain over them), compiled
with their dimensions pinned by strata-compile's --dim and --input-shape at
two sizes each (and an input's value by --input-value), and compiled once unpinned (dims known only at run time)
and run at two sizes; each run with strata-run and checked against numpy.
Then the pins a user can get wrong, and dynamic dims an op cannot take,
each refused with a message that names the problem.

usage: pinned_shapes_test.py --bin BUILD/bin [--compile-arg=...]
Prints each case and the closing line `N passed, M failed`."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
from onnx import TensorProto, checker, helper, numpy_helper, save

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def make_model(name, nodes, inputs, outputs, initializers, value_info=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers,
                              value_info=list(value_info))
    model = helper.make_model(graph,
                              opset_imports=[helper.make_opsetid("", 17)])
    checker.check_model(model)
    return model


def cnn_model(rng):
    """Conv 3x3 (pad 1) -> Relu -> GlobalAveragePool -> Flatten -> MatMul
    over X [batch, 3, height, width]; the exporter's symbolic types on an
    intermediate and the output."""
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    g = rng.standard_normal((4, 5)).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["X", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("GlobalAveragePool", ["r"], ["p"]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("MatMul", ["f", "G"], ["Y"]),
    ]
    model = make_model(
        "cnn", nodes,
        [helper.make_tensor_value_info("X", F, ["batch", 3, "height", "width"])],
        [helper.make_tensor_value_info("Y", F, ["batch", 5])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B"),
         numpy_helper.from_array(g, "G")],
        [helper.make_tensor_value_info("r", F,
                                       ["batch", 4, "height", "width"])])

    def reference(x):
        n, _, h, wd = x.shape
        xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
        conv = np.zeros((n, 4, h, wd))
        for i in range(3):
            for j in range(3):
                conv += np.einsum("nchw,fc->nfhw", xp[:, :, i:i + h, j:j + wd],
                                  w[:, :, i, j])
        conv += b[None, :, None, None]
        pooled = np.maximum(conv, 0).mean(axis=(2, 3))
        return (pooled @ g).astype(np.float32)

    return model, reference


def embedding_model(rng):
    """Token ids [batch, sequence] -> Gather embedding -> MatMul -> Softmax,
    then reshaped through [-1, 8] and back to [batch, sequence, 8] with a
    shape computed from the input's own Shape."""
    table = rng.standard_normal((50, 8)).astype(np.float32)
    proj = rng.standard_normal((8, 8)).astype(np.float32)
    nodes = [
        helper.make_node("Gather", ["E", "ids"], ["e"]),
        helper.make_node("MatMul", ["e", "P"], ["m"]),
        helper.make_node("Softmax", ["m"], ["s"], axis=-1),
        helper.make_node("Reshape", ["s", "flat_shape"], ["flat"]),
        helper.make_node("Shape", ["ids"], ["ids_shape"]),
        helper.make_node("Concat", ["ids_shape", "width"], ["out_shape"],
                         axis=0),
        helper.make_node("Reshape", ["flat", "out_shape"], ["Y"]),
    ]
    model = make_model(
        "embedding", nodes,
        [helper.make_tensor_value_info("ids", I64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("Y", F, ["batch", "sequence", 8])],
        [numpy_helper.from_array(table, "E"),
         numpy_helper.from_array(proj, "P"),
         numpy_helper.from_array(np.array([-1, 8], np.int64), "flat_shape"),
         numpy_helper.from_array(np.array([8], np.int64), "width")])

    def reference(ids):
        m = table[ids].astype(np.float64) @ proj
        e = np.exp(m - m.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)

    return model, reference


def segmentation_head_model():
    """X [batch, 2, 4, 4] resized (nearest) to sizes computed from its own
    Shape, split into its two channels, their difference's max per image,
    and the argmax over the rows of X's first channel."""
    nodes = [
        helper.make_node("Shape", ["X"], ["shape"], end=2),
        helper.make_node("Concat", ["shape", "hw"], ["sizes"], axis=0),
        helper.make_node("Resize", ["X", "", "", "sizes"], ["r"],
                         mode="nearest"),
        helper.make_node("Split", ["r"], ["r0", "r1"], axis=1),
        helper.make_node("Sub", ["r0", "r1"], ["d"]),
        helper.make_node("ReduceMax", ["d"], ["m"], axes=[1, 2, 3],
                         keepdims=0),
        helper.make_node("Slice", ["X", "zero", "one", "one"], ["first"]),
        helper.make_node("ArgMax", ["first"], ["rows"], axis=2, keepdims=0),
        helper.make_node("Cast", ["rows"], ["rows_f"], to=F),
        helper.make_node("ReduceSum", ["rows_f", "all"], ["s"], keepdims=0),
        helper.make_node("Add", ["m", "s"], ["Y"]),
    ]
    model = make_model(
        "head", nodes,
        [helper.make_tensor_value_info("X", F, ["batch", 2, 4, 4])],
        [helper.make_tensor_value_info("Y", F, ["batch"])],
        [numpy_helper.from_array(np.array([8, 8], np.int64), "hw"),
         numpy_helper.from_array(np.array([0], np.int64), "zero"),
         numpy_helper.from_array(np.array([1], np.int64), "one"),
         numpy_helper.from_array(np.array([1, 2], np.int64), "all")])

    def reference(x):
        r = x.repeat(2, axis=2).repeat(2, axis=3)
        m = (r[:, 0] - r[:, 1]).max(axis=(1, 2))
        s = x[:, 0].argmax(axis=1).sum(axis=1).astype(np.float32)
        return (m + s).astype(np.float32)

    return model, reference


def pools_model():
    """X [batch, 3, height, width] -> MaxPool 3x3 stride 2 (ceil_mode) ->
    AveragePool 3x3 stride 2 pad 1 (padding not counted): window counts and
    the ceil-mode edge follow the image size."""
    nodes = [
        helper.make_node("MaxPool", ["X"], ["m"], kernel_shape=[3, 3],
                         strides=[2, 2], ceil_mode=1),
        helper.make_node("AveragePool", ["m"], ["Y"], kernel_shape=[3, 3],
                         strides=[2, 2], pads=[1, 1, 1, 1]),
    ]
    model = make_model(
        "pools", nodes,
        [helper.make_tensor_value_info("X", F, ["batch", 3, "height", "width"])],
        [helper.make_tensor_value_info("Y", F, ["batch", 3, "oh", "ow"])], [])

    def pool(x, reduce, pad, ceil):
        """3x3 stride-2 windows over the spatial dims, clipped to the
        input (so padding never counts)."""
        sizes = []
        for n in x.shape[2:]:
            span = n + 2 * pad - 3
            out = (-(-span // 2) if ceil else span // 2) + 1
            if ceil and (out - 1) * 2 >= n + pad:
                out -= 1
            sizes.append(out)
        y = np.zeros(x.shape[:2] + tuple(sizes), np.float64)
        for i in range(sizes[0]):
            for j in range(sizes[1]):
                r0, c0 = max(2 * i - pad, 0), max(2 * j - pad, 0)
                r1, c1 = 2 * i - pad + 3, 2 * j - pad + 3
                y[:, :, i, j] = reduce(x[:, :, r0:r1, c0:c1], axis=(2, 3))
        return y

    def reference(x):
        m = pool(x.astype(np.float64), np.max, 0, True)
        return pool(m, np.mean, 1, False).astype(np.float32)

    return model, reference


def resize_model():
    """X [batch, 2, height, width] upsampled 2x (bilinear, half_pixel), plus
    X's channel means resized from 1x1 back to X's own size (sizes from its
    Shape, as segmentation heads do), both over image sizes known at the
    call."""
    nodes = [
        helper.make_node("Resize", ["X", "", "scales"], ["up"],
                         mode="linear"),
        helper.make_node("GlobalAveragePool", ["X"], ["mean"]),
        helper.make_node("Shape", ["X"], ["shape"]),
        helper.make_node("Resize", ["mean", "", "", "shape"], ["back"],
                         mode="linear"),
        helper.make_node("Add", ["X", "back"], ["sum"]),
        helper.make_node("Resize", ["sum", "", "scales"], ["sum_up"],
                         mode="nearest"),
        helper.make_node("Add", ["up", "sum_up"], ["Y"]),
    ]
    model = make_model(
        "resize", nodes,
        [helper.make_tensor_value_info("X", F, ["batch", 2, "height", "width"])],
        [helper.make_tensor_value_info("Y", F, ["batch", 2, "h2", "w2"])],
        [numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32),
                                 "scales")])

    def bilinear_2x(x):
        """half_pixel: output i samples input (i + 0.5) / 2 - 0.5, clamped."""
        def axis_taps(n):
            c = np.clip((np.arange(2 * n) + 0.5) / 2 - 0.5, 0, n - 1)
            lo = np.floor(c).astype(int)
            hi = np.minimum(lo + 1, n - 1)
            return lo, hi, c - lo
        h0, h1, hw = axis_taps(x.shape[2])
        w0, w1, ww = axis_taps(x.shape[3])
        rows = (x[:, :, h0] * (1 - hw)[:, None] + x[:, :, h1] * hw[:, None])
        return rows[:, :, :, w0] * (1 - ww) + rows[:, :, :, w1] * ww

    def reference(x):
        x = x.astype(np.float64)
        total = x + x.mean(axis=(2, 3), keepdims=True)
        nearest = total.repeat(2, axis=2).repeat(2, axis=3)
        return (bilinear_2x(x) + nearest).astype(np.float32)

    return model, reference


def conv_transpose_reference(x, w, b, stride, pads, out_pad, group):
    """ConvTranspose (2-D, dilation 1) as ONNX defines it, in float64: each
    input pixel's weighted kernel added at stride * position, then the
    pads cropped off."""
    n, c, h, wd = x.shape
    _, mg, kh, kw = w.shape
    cg = c // group
    canvas = np.zeros((n, mg * group, stride * (h - 1) + kh + out_pad,
                       stride * (wd - 1) + kw + out_pad))
    for g in range(group):
        xs = x[:, g * cg:(g + 1) * cg].astype(np.float64)
        for i in range(kh):
            for j in range(kw):
                canvas[:, g * mg:(g + 1) * mg,
                       i:i + stride * (h - 1) + 1:stride,
                       j:j + stride * (wd - 1) + 1:stride] += np.einsum(
                    "nchw,cm->nmhw", xs, w[g * cg:(g + 1) * cg, :, i, j])
    oh = stride * (h - 1) + out_pad + kh - pads[0] - pads[2]
    ow = stride * (wd - 1) + out_pad + kw - pads[1] - pads[3]
    y = canvas[:, :, pads[0]:pads[0] + oh, pads[1]:pads[1] + ow]
    return y + (0 if b is None else b[None, :, None, None])


def upsample_model(rng):
    """X [batch, 4, height, width] -> ConvTranspose 3x3 stride 2 (pads 1,
    output_padding 1, bias) -> depthwise ConvTranspose 2x2 stride 2: the
    learned upsampling of segmentation and text-detection heads, over
    image sizes known at the call."""
    w1 = (rng.standard_normal((4, 4, 3, 3)) * 0.3).astype(np.float32)
    b1 = rng.standard_normal(4).astype(np.float32)
    w2 = (rng.standard_normal((4, 1, 2, 2)) * 0.5).astype(np.float32)
    nodes = [
        helper.make_node("ConvTranspose", ["X", "W1", "B1"], ["t"],
                         strides=[2, 2], pads=[1, 1, 1, 1],
                         output_padding=[1, 1]),
        helper.make_node("ConvTranspose", ["t", "W2"], ["Y"], strides=[2, 2],
                         group=4),
    ]
    model = make_model(
        "upsample", nodes,
        [helper.make_tensor_value_info("X", F, ["batch", 4, "height", "width"])],
        [helper.make_tensor_value_info("Y", F, ["batch", 4, "oh", "ow"])],
        [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(b1, "B1"),
         numpy_helper.from_array(w2, "W2")])

    def reference(x):
        t = conv_transpose_reference(x, w1, b1, 2, [1, 1, 1, 1], 1, 1)
        return conv_transpose_reference(t, w2, None, 2, [0, 0, 0, 0], 0,
                                        4).astype(np.float32)

    return model, reference


def text_head_upsample_model(rng):
    """X [batch, 16, height, width] -> ConvTranspose 2x2 stride 2 without
    bias (PaddleOCR's detector head): pinned to batch 1, its workgroups
    split the output rows, each reading a window of the spread-out input
    (its map had the kernel flip in it and undersized that window)."""
    w = (rng.standard_normal((16, 16, 2, 2)) * 0.3).astype(np.float32)
    model = make_model(
        "text_head_upsample",
        [helper.make_node("ConvTranspose", ["X", "W"], ["Y"], strides=[2, 2])],
        [helper.make_tensor_value_info("X", F, ["batch", 16, "height",
                                                "width"])],
        [helper.make_tensor_value_info("Y", F, ["batch", 16, "oh", "ow"])],
        [numpy_helper.from_array(w, "W")])

    def reference(x):
        return conv_transpose_reference(x, w, None, 2, [0, 0, 0, 0], 0,
                                        1).astype(np.float32)

    return model, reference


def position_ids_model():
    """Position ids as RoBERTa computes them from the attention mask [batch,
    sequence]: cumsum(mask) * mask + 1, int64."""
    nodes = [
        helper.make_node("Cast", ["mask"], ["m"], to=I64),
        helper.make_node("CumSum", ["m", "axis"], ["c"]),
        helper.make_node("Mul", ["c", "m"], ["p"]),
        helper.make_node("Add", ["p", "one"], ["Y"]),
    ]
    model = make_model(
        "positions", nodes,
        [helper.make_tensor_value_info("mask", TensorProto.INT32,
                                       ["batch", "sequence"])],
        [helper.make_tensor_value_info("Y", I64, ["batch", "sequence"])],
        [numpy_helper.from_array(np.array(1, np.int64), "axis"),
         numpy_helper.from_array(np.array(1, np.int64), "one")])

    def reference(mask):
        m = mask.astype(np.int64)
        return np.cumsum(m, axis=1) * m + 1

    return model, reference


def tile_model():
    """X [batch, 3] tiled 2x3 times (as models repeat a token row)."""
    model = make_model(
        "tile", [helper.make_node("Tile", ["X", "repeats"], ["Y"])],
        [helper.make_tensor_value_info("X", F, ["batch", 3])],
        [helper.make_tensor_value_info("Y", F, ["rows", 9])],
        [numpy_helper.from_array(np.array([2, 3], np.int64), "repeats")])
    return model, lambda x: np.tile(x, (2, 3))


def depth_space_model():
    """X [batch, 8, height, width] -> DepthToSpace 2 (CRD, as pixel
    shuffles export) -> squared -> SpaceToDepth 2: sub-pixel layers over
    image sizes known at the call."""
    nodes = [
        helper.make_node("DepthToSpace", ["X"], ["a"], blocksize=2,
                         mode="CRD"),
        helper.make_node("Mul", ["a", "a"], ["sq"]),
        helper.make_node("SpaceToDepth", ["sq"], ["Y"], blocksize=2),
    ]
    model = make_model(
        "depth_space", nodes,
        [helper.make_tensor_value_info("X", F, ["batch", 8, "height", "width"])],
        [helper.make_tensor_value_info("Y", F, ["batch", 8, "height", "width"])],
        [])

    def reference(x):
        n, c, h, w = x.shape
        a = x.reshape(n, c // 4, 2, 2, h, w).transpose(0, 1, 4, 2, 5, 3)
        a = (a.reshape(n, c // 4, 2 * h, 2 * w)) ** 2
        y = a.reshape(n, c // 4, h, 2, w, 2).transpose(0, 3, 5, 1, 2, 4)
        return y.reshape(n, c, h, w)

    return model, reference


def top_k_model():
    """The 3 best scores of each row of X [batch, classes] and their indices
    (cast to float and added, one output), over any batch and class count."""
    nodes = [
        helper.make_node("TopK", ["X", "k"], ["values", "indices"], axis=1),
        helper.make_node("Cast", ["indices"], ["fi"], to=F),
        helper.make_node("Add", ["values", "fi"], ["Y"]),
    ]
    model = make_model(
        "top_k", nodes,
        [helper.make_tensor_value_info("X", F, ["batch", "classes"])],
        [helper.make_tensor_value_info("Y", F, ["batch", 3])],
        [numpy_helper.from_array(np.array([3], np.int64), "k")])

    def reference(x):
        order = np.argsort(-x, axis=1, kind="stable")[:, :3]
        return (np.take_along_axis(x, order, axis=1) + order).astype(
            np.float32)

    return model, reference


def channels_model():
    """A Conv over X [batch, channels, 8, 8]: its channel count unknown."""
    w = np.ones((2, 3, 3, 3), np.float32)
    return make_model(
        "channels", [helper.make_node("Conv", ["X", "W"], ["Y"])],
        [helper.make_tensor_value_info("X", F, ["batch", "channels", 8, 8])],
        [helper.make_tensor_value_info("Y", F, ["batch", 2, 6, 6])],
        [numpy_helper.from_array(w, "W")])


def same_strided_model():
    """A stride-2 Conv with auto_pad SAME_UPPER over a dynamic image: its
    pads follow the size."""
    w = np.ones((2, 3, 3, 3), np.float32)
    return make_model(
        "same", [helper.make_node("Conv", ["X", "W"], ["Y"], strides=[2, 2],
                                  auto_pad="SAME_UPPER")],
        [helper.make_tensor_value_info("X", F, ["batch", 3, "height", "width"])],
        [helper.make_tensor_value_info("Y", F, ["batch", 2, "oh", "ow"])],
        [numpy_helper.from_array(w, "W")])


def unnamed_model():
    """An input whose first dimension has no name: X [?, 4] -> Relu."""
    model = make_model(
        "unnamed", [helper.make_node("Relu", ["X"], ["Y"])],
        [helper.make_tensor_value_info("X", F, [None, 4])],
        [helper.make_tensor_value_info("Y", F, [None, 4])], [])
    return model, lambda x: np.maximum(x, 0)


def audio_model():
    """Silero VAD's front, with its sample rate an input: audio [batch,
    samples] -> Unsqueeze -> Pad (reflect, samples only) -> Slice (step -1)
    -> If (rate == 16000: * 2, else: negated). Pinned with
    --input-value=rate=16000 and --input-shape=audio=?xSAMPLES, the If
    folds and the batch stays dynamic; unpinned, the If runs the branch the
    rate picks."""
    i64 = lambda name, v: numpy_helper.from_array(np.array(v, np.int64), name)
    branch = lambda name, node: helper.make_graph(
        [node], name, [], [helper.make_tensor_value_info(
            node.output[0], F, ["batch", 1, None])])
    model = make_model(
        "audio",
        [helper.make_node("Unsqueeze", ["audio", "one"], ["a3"]),
         helper.make_node("Pad", ["a3", "pads"], ["padded"], mode="reflect"),
         helper.make_node("Slice", ["padded", "last", "before", "two",
                                    "back"], ["reversed"]),
         helper.make_node("Equal", ["rate", "sixteen_k"], ["is_16k"]),
         helper.make_node(
             "If", ["is_16k"], ["Y"],
             then_branch=branch("then", helper.make_node(
                 "Mul", ["reversed", "twice"], ["doubled"])),
             else_branch=branch("else", helper.make_node(
                 "Neg", ["reversed"], ["negated"])))],
        [helper.make_tensor_value_info("audio", F, ["batch", "samples"]),
         helper.make_tensor_value_info("rate", I64, [])],
        [helper.make_tensor_value_info("Y", F, ["batch", 1, None])],
        [i64("one", [1]), i64("pads", [0, 0, 2, 0, 0, 2]), i64("last", [-1]),
         i64("before", [-(2 ** 62)]), i64("two", [2]), i64("back", [-1]),
         i64("sixteen_k", 16000),
         numpy_helper.from_array(np.array(2, np.float32), "twice")])

    def reference(audio):
        padded = np.pad(audio[:, None, :], ((0, 0), (0, 0), (2, 2)),
                        mode="reflect")
        return padded[:, :, ::-1] * 2
    return model, reference


def run_case(bin_dir, compile_args, tmp, name, model, pins, calls):
    """Compiles `model` once with `pins`, then runs each (inputs, want) of
    `calls` on that module."""
    path = os.path.join(tmp, name + ".onnx")
    module = os.path.join(tmp, name + ".smod")
    save(model, path)
    proc = subprocess.run([os.path.join(bin_dir, "strata-compile"), path,
                           "-o", module] + pins + compile_args,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        return "compile error: " + proc.stderr.strip()[:400]
    for inputs, want in calls:
        problem = run_call(bin_dir, tmp, name, module, inputs, want)
        if problem:
            return problem
    return None


def run_call(bin_dir, tmp, name, module, inputs, want):
    command = [os.path.join(bin_dir, "strata-run"), f"--module={module}",
               "--function=main"]
    for i, array in enumerate(inputs):
        p = os.path.join(tmp, f"{name}_in{i}.npy")
        np.save(p, array)
        command.append(f"--input=@{p}")
    out = os.path.join(tmp, f"{name}_out.npy")
    command.append(f"--output=@{out}")
    proc = subprocess.run(command, capture_output=True, text=True)
    if proc.returncode != 0:
        return "run error: " + proc.stderr.strip()[:400]
    got = np.load(out)
    if got.shape != want.shape or got.dtype != want.dtype:
        return (f"output {got.dtype}{got.shape}, want {want.dtype}{want.shape}"
                f" for inputs of shapes {[a.shape for a in inputs]}")
    if not np.allclose(got, want, rtol=1e-4, atol=1e-5):
        return f"max error {np.abs(got - want).max():.3g}"
    return None


def refused(bin_dir, tmp, name, model, args, wants):
    """strata-compile must fail with a message holding each of `wants`."""
    path = os.path.join(tmp, name + ".onnx")
    save(model, path)
    proc = subprocess.run([os.path.join(bin_dir, "strata-compile"), path,
                           "-o", os.path.join(tmp, name + ".smod")] + args,
                          capture_output=True, text=True)
    if proc.returncode == 0:
        return "compiled; expected a refusal"
    if "Stack dump" in proc.stderr or proc.returncode < 0:
        return "crashed: " + proc.stderr.strip()[:400]
    missing = [want for want in wants if want not in proc.stderr]
    if missing:
        return f"message lacks {missing}: {proc.stderr.strip()[:400]}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--compile-arg", action="append", default=[])
    args = parser.parse_args()
    rng = np.random.default_rng(7)
    cnn, cnn_ref = cnn_model(rng)
    emb, emb_ref = embedding_model(rng)
    unnamed, unnamed_ref = unnamed_model()
    head, head_ref = segmentation_head_model()
    pools, pools_ref = pools_model()
    resize, resize_ref = resize_model()
    upsample, upsample_ref = upsample_model(rng)
    positions, positions_ref = position_ids_model()
    tile, tile_ref = tile_model()
    top_k, top_k_ref = top_k_model()
    k1 = rng.standard_normal((2, 5)).astype(np.float32)
    k2 = rng.standard_normal((3, 11)).astype(np.float32)
    depth, depth_ref = depth_space_model()
    d1 = rng.standard_normal((1, 8, 3, 2)).astype(np.float32)
    d2 = rng.standard_normal((2, 8, 4, 5)).astype(np.float32)
    t1 = rng.standard_normal((1, 3)).astype(np.float32)
    t2 = rng.standard_normal((4, 3)).astype(np.float32)
    m1 = (rng.random((2, 5)) > 0.3).astype(np.int32)
    m2 = (rng.random((3, 9)) > 0.3).astype(np.int32)
    h1 = rng.standard_normal((1, 2, 4, 4)).astype(np.float32)
    h2 = rng.standard_normal((3, 2, 4, 4)).astype(np.float32)

    x1 = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    x2 = rng.standard_normal((2, 3, 12, 10)).astype(np.float32)
    ids1 = rng.integers(0, 50, (1, 6)).astype(np.int64)
    ids2 = rng.integers(0, 50, (3, 11)).astype(np.int64)
    x3 = rng.standard_normal((3, 3, 8, 8)).astype(np.float32)
    u = rng.standard_normal((3, 4)).astype(np.float32)
    u2 = rng.standard_normal((7, 4)).astype(np.float32)
    p1 = rng.standard_normal((1, 3, 9, 9)).astype(np.float32)
    p2 = rng.standard_normal((2, 3, 14, 11)).astype(np.float32)
    p3 = rng.standard_normal((1, 3, 8, 16)).astype(np.float32)
    r1 = rng.standard_normal((1, 2, 3, 5)).astype(np.float32)
    r2 = rng.standard_normal((2, 2, 6, 4)).astype(np.float32)
    v1 = rng.standard_normal((1, 4, 3, 5)).astype(np.float32)
    v2 = rng.standard_normal((2, 4, 6, 2)).astype(np.float32)
    runs = [
        ("cnn_dims", cnn, ["--dim=batch=1", "--dim=height=8", "--dim=width=8"],
         [([x1], cnn_ref(x1))]),
        ("cnn_input_shape", cnn, ["--input-shape=X=2x3x12x10"],
         [([x2], cnn_ref(x2))]),
        ("embedding_dims", emb, ["--dim=batch=1", "--dim=sequence=6"],
         [([ids1], emb_ref(ids1))]),
        ("embedding_mixed", emb, ["--dim=batch=3", "--input-shape=ids=3x11"],
         [([ids2], emb_ref(ids2))]),
        ("unnamed", unnamed, ["--input-shape=X=3x4"], [([u], unnamed_ref(u))]),
        # Compiled once; the dims left dynamic are read at each call.
        ("cnn_dynamic_batch", cnn, ["--dim=height=8", "--dim=width=8"],
         [([x1], cnn_ref(x1)), ([x3], cnn_ref(x3))]),
        ("embedding_dynamic", emb, [],
         [([ids1], emb_ref(ids1)), ([ids2], emb_ref(ids2))]),
        ("unnamed_dynamic", unnamed, [],
         [([u], unnamed_ref(u)), ([u2], unnamed_ref(u2))]),
        ("head_dynamic", head, [],
         [([h1], head_ref(h1)), ([h2], head_ref(h2))]),
        # Nothing pinned: windows over image sizes known at the call.
        ("cnn_dynamic_size", cnn, [],
         [([x1], cnn_ref(x1)), ([x2], cnn_ref(x2))]),
        ("pools_dynamic_size", pools, [],
         [([p], pools_ref(p)) for p in (p1, p2, p3)]),
        ("resize_dynamic_size", resize, [],
         [([r], resize_ref(r)) for r in (r1, r2)]),
        ("upsample_static", upsample, ["--input-shape=X=1x4x3x5"],
         [([v1], upsample_ref(v1))]),
        ("depth_space_dynamic", depth, [],
         [([d1], depth_ref(d1)), ([d2], depth_ref(d2))]),
        ("top_k_dynamic", top_k, [],
         [([k1], top_k_ref(k1)), ([k2], top_k_ref(k2))]),
        ("tile_dynamic", tile, [],
         [([t1], tile_ref(t1)), ([t2], tile_ref(t2))]),
        ("positions_dynamic", positions, [],
         [([m1], positions_ref(m1)), ([m2], positions_ref(m2))]),
        ("upsample_dynamic_size", upsample, [],
         [([v], upsample_ref(v)) for v in (v1, v2)]),
    ]
    head_up, head_up_ref = text_head_upsample_model(rng)
    hx1 = rng.standard_normal((1, 16, 8, 8)).astype(np.float32)
    hx2 = rng.standard_normal((1, 16, 16, 12)).astype(np.float32)
    runs += [
        ("text_head_upsample_batch1", head_up, ["--input-shape=X=1x16x8x8"],
         [([hx1], head_up_ref(hx1))]),
        ("text_head_upsample_batch1_16x12", head_up,
         ["--input-shape=X=1x16x16x12"], [([hx2], head_up_ref(hx2))]),
    ]
    audio, audio_ref = audio_model()
    w1 = rng.standard_normal((1, 16)).astype(np.float32)
    w2 = rng.standard_normal((3, 16)).astype(np.float32)
    runs += [
        ("audio_value_pinned", audio,
         ["--input-value=rate=16000", "--input-shape=audio=2x16"],
         [([w2[:2]], audio_ref(w2[:2]))]),
        ("audio_value_pinned_dynamic_batch", audio,
         ["--input-value=rate=16000", "--input-shape=audio=?x16"],
         [([w1], audio_ref(w1)), ([w2], audio_ref(w2))]),
        # Unpinned: the reflect padding over run-time samples, the If on the
        # rate at run time (either branch).
        ("audio_dynamic_samples_and_rate", audio, [],
         [([w1, np.array(16000)], audio_ref(w1)),
          ([w2[:, :11], np.array(8000)], -audio_ref(w2[:, :11]) / 2)]),
    ]
    refusals = []
    if "--target=vmvx" in args.compile_arg:
        # VMVX executables are static: a model left dynamic is refused.
        refusals += [(name, model, pins + args.compile_arg,
                      ["vmvx target compiles static shapes only"])
                     for name, model, pins, _ in runs if "dynamic" in name]
        runs = [run for run in runs if "dynamic" not in run[0]]
    refusals += [
        # Windows need static channels (the weights fix them), and pads
        # planned at compile time.
        ("dynamic_channels", channels_model(), [],
         ["(Conv)", "dim 1 (the channels) of input 'X' is dynamic",
          "--dim=channels=SIZE"]),
        ("same_strided", same_strided_model(), [],
         ["(Conv)", "auto_pad SAME_UPPER with stride 2",
          "--dim=height=SIZE"]),
        ("unknown_input", cnn, ["--input-shape=pixels=1x3x8x8"],
         ["'pixels'", "not an input", "'X'"]),
        ("unknown_dim", cnn, ["--dim=seq=4"],
         ["'seq'", "batch, height, width"]),
        ("rank_mismatch", cnn, ["--input-shape=X=1x3x8"],
         ["has 4 dimensions", "gives 3"]),
        ("static_mismatch", cnn, ["--input-shape=X=1x4x8x8"],
         ["dimension 1 is 3", "gives 4"]),
        ("conflicting_pins", cnn, ["--dim=batch=2", "--input-shape=X=3x3x8x8"],
         ["'batch'", "pinned to 2", "to 3"]),
        ("malformed_dim", cnn, ["--dim=batch"], ["expected NAME=SIZE"]),
        ("zero_size", cnn, ["--input-shape=X=0x3x8x8"],
         ["expected NAME=D0xD1x"]),
        ("value_count", audio, ["--input-value=rate=1,2"],
         ["input 'rate' holds 1 elements, the pin gives 2"]),
        ("value_type", audio, ["--input-value=rate=16k"],
         ["'16k' is not a value of input 'rate'", "INT64"]),
        ("value_unknown_input", audio, ["--input-value=sr=16000"],
         ["the model has no input 'sr'"]),
        ("value_dynamic_input", audio, ["--input-value=audio=1,2"],
         ["input 'audio' has dynamic dimensions"]),
        ("malformed_value", audio, ["--input-value=rate"],
         ["expected NAME=V0,V1,..."]),
    ]
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="strata-pinned-") as tmp:
        results = [(name, run_case(args.bin, args.compile_arg, tmp, name,
                                   model, pins, calls))
                   for name, model, pins, calls in runs]
        results += [(name, refused(args.bin, tmp, name, model, pins, wants))
                    for name, model, pins, wants in refusals]
        for name, problem in results:
            print(f"{'FAIL' if problem else 'ok  '} {name}"
                  + (f": {problem}" if problem else ""))
            if problem:
                failed += 1
            else:
                passed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
