#!/usr/bin/python3
"""Single kernels side by side: Strata's compiled code (strata-compile +
strata-bench) against oneDNN (the Debian package, libdnnl-dev 2.6) on the same
machine in one run, reported in GFLOP/s with the ratio strata / oneDNN (above
1 means Strata is faster). Speed is only measured here, never asserted.

  flock /tmp/strata-build.lock bench/run_kernels_bench.py \\
      [--kernels REGEX] [--threads 1,2] [--iterations N] [--min-time S]
      [--rounds R] [--compile-timeout S] [--bin build/bin] [--list] [--keep DIR]

For every kernel the script writes an MLIR program (linalg on tensors,
func.func @main, static shapes) to a temporary directory, compiles it with strata-compile, checks the result of one call
(strata-run) against a numpy reference, and then times, for each thread
count, the Strata module (strata-bench, local-sync for 1 thread,
local-task?workers=N for N) and right after it the same operation in oneDNN
(bench/onednn_kernels.cpp, built on first use into build/bench-kernels/ and
run with OMP_NUM_THREADS), --rounds times, alternating; each side's best
round median is reported. Both sides of a kernel run the same number of
timed calls: --iterations, or more for small kernels so that a measurement
lasts about --min-time seconds. A kernel strata-compile refuses is reported as
"refused" (or "crashed" when it dies on a signal), one whose result is off
or that fails to run as "WRONG" (and is not timed), and the run goes on;
oneDNN is still timed for it.

oneDNN gets format_tag::any for the weights (and for source and destination
of convolutions), i.e. its blocked layouts, and only the primitive's execution
is timed: its weights are reordered once, before. Strata's weights (a
convolution's filter, a matmul's right operand) are therefore constants of
the program by default, as a model's are, which the compiler lays out once
(--weights=constants); --weights=arguments passes them in every call instead
(a batch matmul's operands always are: attention multiplies activations).
Strata's convolutions include their zero padding (tensor.pad before the
linalg convolution, as the ONNX importer emits it).
"""
import argparse
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DRIVER_SOURCE = os.path.join(ROOT, "bench", "onednn_kernels.cpp")
DRIVER = os.path.join(ROOT, "build", "bench-kernels", "onednn_kernels")
COMPILE_MEMORY_GIB = 8


# ----------------------------------------------------------------------------
# Kernels: each has a name, a shape label, the MLIR argument/result shapes and
# body, a numpy reference, the oneDNN driver's arguments and its FLOP count.

def ttype(shape):
    return "tensor<" + "x".join(str(d) for d in shape) + "xf32>"


def mlir_main(args, result, body):
    params = ", ".join(f"%a{i}: {ttype(s)}" for i, s in enumerate(args))
    return (f"func.func @main({params}) -> {ttype(result)} {{\n"
            f"  %zero = arith.constant 0.0 : f32\n"
            f"  %init = tensor.empty() : {ttype(result)}\n"
            f"  %fill = linalg.fill ins(%zero : f32) outs(%init : {ttype(result)}) -> {ttype(result)}\n"
            f"{body}"
            f"  return %r : {ttype(result)}\n"
            f"}}\n")


def pad_op(value, shape, spatial_dims, pad):
    """tensor.pad of `value` by `pad` on both sides of `spatial_dims`; returns
    (mlir text defining %p, padded shape)."""
    if pad == 0:
        return "", value, shape
    padded = [d + 2 * pad if i in spatial_dims else d for i, d in enumerate(shape)]
    low = ", ".join(str(pad) if i in spatial_dims else "0" for i in range(len(shape)))
    idx = ", ".join(f"%i{i}: index" for i in range(len(shape)))
    text = (f"  %p = tensor.pad {value} low[{low}] high[{low}] {{\n"
            f"  ^bb0({idx}):\n"
            f"    tensor.yield %zero : f32\n"
            f"  }} : {ttype(shape)} to {ttype(padded)}\n")
    return text, "%p", padded


def conv_attrs(stride, dilation):
    return (f"{{dilations = dense<{dilation}> : tensor<2xi64>, "
            f"strides = dense<{stride}> : tensor<2xi64>}}")


def out_size(h, k, stride, pad, dilation):
    return (h + 2 * pad - dilation * (k - 1) - 1) // stride + 1


def conv_ref(x, w, stride, pad, dilation, groups):
    """x: NCHW, w: OC x C/G x KH x KW -> NCHW, in float64."""
    x = x.astype(np.float64)
    w = w.astype(np.float64)
    n, c, h, wd = x.shape
    oc, cg, kh, kw = w.shape
    oh, ow = out_size(h, kh, stride, pad, dilation), out_size(wd, kw, stride, pad, dilation)
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    out = np.zeros((n, groups, oc // groups, oh, ow))
    wg = w.reshape(groups, oc // groups, cg, kh, kw)
    for i in range(kh):
        for j in range(kw):
            xs = xp[:, :, i * dilation:i * dilation + stride * (oh - 1) + 1:stride,
                    j * dilation:j * dilation + stride * (ow - 1) + 1:stride]
            xs = xs.reshape(n, groups, cg, oh, ow)
            out += np.einsum("ngchw,gfc->ngfhw", xs, wg[:, :, :, i, j], optimize=True)
    return out.reshape(n, oc, oh, ow)


class Kernel:
    def __init__(self, name, shape, arg_shapes, result_shape, body, reference, onednn, flops,
                 form, weights=True):
        self.name, self.shape = name, shape
        self.arg_shapes, self.result_shape = arg_shapes, result_shape
        self.body = body
        self.reference, self.onednn, self.flops, self.form = reference, onednn, flops, form
        # Whether %a1 is weights (a constant of a model), not an activation.
        self.weights = weights

    def mlir(self, constant_weights=None):
        """The program; with `constant_weights` (an array), %a1 is that
        constant instead of an argument."""
        if constant_weights is None:
            return mlir_main(self.arg_shapes, self.result_shape, self.body)
        text = mlir_main(self.arg_shapes[:1], self.result_shape, self.body)
        data = np.ascontiguousarray(constant_weights, dtype="<f4").tobytes().hex().upper()
        constant = (f'  %a1 = arith.constant dense<"0x{data}"> : '
                    f"{ttype(self.arg_shapes[1])}\n")
        head, rest = text.split("\n", 1)
        return head + "\n" + constant + rest


def matmul(name, m, k, n):
    body = (f"  %r = linalg.matmul ins(%a0, %a1 : {ttype([m, k])}, {ttype([k, n])}) "
            f"outs(%fill : {ttype([m, n])}) -> {ttype([m, n])}\n")
    return Kernel(name, f"{m}x{k}x{n}", [[m, k], [k, n]], [m, n], body,
                  lambda a: a[0].astype(np.float64) @ a[1],
                  ["matmul", m, k, n], 2.0 * m * k * n, "linalg.matmul")


def batch_matmul(name, b, m, k, n):
    body = (f"  %r = linalg.batch_matmul ins(%a0, %a1 : {ttype([b, m, k])}, {ttype([b, k, n])}) "
            f"outs(%fill : {ttype([b, m, n])}) -> {ttype([b, m, n])}\n")
    return Kernel(name, f"{b}x{m}x{k}x{n}", [[b, m, k], [b, k, n]], [b, m, n], body,
                  lambda a: a[0].astype(np.float64) @ a[1],
                  ["batch_matmul", b, m, k, n], 2.0 * b * m * k * n, "linalg.batch_matmul",
                  weights=False)


def conv(name, layout, c, h, oc, kh, stride=1, pad=0, dilation=1, groups=1, n=1):
    """A square 2-D convolution in one of the linalg forms:
    nchw (conv_2d_nchw_fchw), nhwc (conv_2d_nhwc_hwcf), ngchw
    (conv_2d_ngchw_gfchw, grouped), dw_nchw (depthwise_conv_2d_nchw_chw),
    dw_nhwc (depthwise_conv_2d_nhwc_hwc)."""
    w = h
    oh = out_size(h, kh, stride, pad, dilation)
    ow = oh
    cg, fg = c // groups, oc // groups
    attrs = conv_attrs(stride, dilation)
    if layout == "nchw":
        x_shape, w_shape, r_shape = [n, c, h, w], [oc, c, kh, kh], [n, oc, oh, ow]
        spatial, op = (2, 3), "linalg.conv_2d_nchw_fchw"
        to_ref = lambda a: (a[0], a[1])
        from_ref = lambda o: o
    elif layout == "nhwc":
        x_shape, w_shape, r_shape = [n, h, w, c], [kh, kh, c, oc], [n, oh, ow, oc]
        spatial, op = (1, 2), "linalg.conv_2d_nhwc_hwcf"
        to_ref = lambda a: (a[0].transpose(0, 3, 1, 2), a[1].transpose(3, 2, 0, 1))
        from_ref = lambda o: o.transpose(0, 2, 3, 1)
    elif layout == "ngchw":
        x_shape, w_shape = [n, groups, cg, h, w], [groups, fg, cg, kh, kh]
        r_shape = [n, groups, fg, oh, ow]
        spatial, op = (3, 4), "linalg.conv_2d_ngchw_gfchw"
        to_ref = lambda a: (a[0].reshape(n, c, h, w), a[1].reshape(oc, cg, kh, kh))
        from_ref = lambda o: o.reshape(r_shape)
    elif layout == "dw_nchw":
        assert groups == c == oc
        x_shape, w_shape, r_shape = [n, c, h, w], [c, kh, kh], [n, c, oh, ow]
        spatial, op = (2, 3), "linalg.depthwise_conv_2d_nchw_chw"
        to_ref = lambda a: (a[0], a[1].reshape(c, 1, kh, kh))
        from_ref = lambda o: o
    elif layout == "dw_nhwc":
        assert groups == c == oc
        x_shape, w_shape, r_shape = [n, h, w, c], [kh, kh, c], [n, oh, ow, c]
        spatial, op = (1, 2), "linalg.depthwise_conv_2d_nhwc_hwc"
        to_ref = lambda a: (a[0].transpose(0, 3, 1, 2), a[1].transpose(2, 0, 1)[:, None])
        from_ref = lambda o: o.transpose(0, 2, 3, 1)
    elif layout in ("nchw16c", "dw_nchw16c"):
        return blocked_conv(name, layout, c, h, oc, kh, stride, pad, dilation,
                            groups, n)
    else:
        raise ValueError(layout)
    pad_text, x_value, x_padded = pad_op("%a0", x_shape, spatial, pad)
    body = (pad_text +
            f"  %r = {op} {attrs}\n"
            f"       ins({x_value}, %a1 : {ttype(x_padded)}, {ttype(w_shape)}) "
            f"outs(%fill : {ttype(r_shape)}) -> {ttype(r_shape)}\n")

    def reference(a):
        xr, wr = to_ref(a)
        return from_ref(conv_ref(xr, wr, stride, pad, dilation, groups))

    return conv_kernel(name, layout.split('_')[-1].upper(), op, [x_shape, w_shape], r_shape,
                       body, reference, c, h, oc, kh, stride, pad, dilation, groups, n)


def conv_kernel(name, layout_label, op, arg_shapes, r_shape, body, reference, c, h, oc, kh,
                stride, pad, dilation, groups, n):
    """The Kernel of a square convolution: its label, FLOPs and oneDNN peer."""
    oh = out_size(h, kh, stride, pad, dilation)
    label = f"{c}->{oc} {kh}x{kh}/{stride} @{h}x{h}" + (f" g={groups}" if groups > 1 else "")
    label += f" {layout_label}"
    flops = 2.0 * n * oc * oh * oh * (c // groups) * kh * kh
    form = ("tensor.pad + " if pad else "") + op
    return Kernel(name, label, arg_shapes, r_shape, body, reference,
                  ["conv", n, c, h, h, oc, kh, kh, stride, pad, dilation, groups], flops, form)


BLOCK = 16


def blocked_conv(name, layout, c, h, oc, kh, stride, pad, dilation, groups, n):
    """A convolution in the blocked channel layout the compiler gives
    convolution chains (strata-block-channels, 16 channels per block on
    AVX-512): input [N, C/16, H, W, 16] (NCHW when C does not divide, as a
    network's first layer), filter packed [OC/16, C/16, KH, KW, 16, 16]
    (depthwise [C/16, KH, KW, 16]), output [N, OC/16, OH, OW, 16]; as a
    linalg.generic, the form the pass produces."""
    b = BLOCK
    w = h
    oh = out_size(h, kh, stride, pad, dilation)
    ob = oc // b
    depthwise = layout == "dw_nchw16c"
    blocked_in = c % b == 0
    d = dilation
    grouped = not depthwise and groups > 1
    if grouped:
        # Each group a blocked convolution: [N, G, C/G/16, H, W, 16] in,
        # filter [G, OC/G/16, C/G/16, KH, KW, 16, 16], [N, G, OC/G/16, ...]
        # out, as strata-block-channels gives a grouped convolution.
        cg, fg = c // groups, oc // groups
        assert cg % b == 0 and fg % b == 0
        x_shape = [n, groups, cg // b, h, w, b]
        w_shape = [groups, fg // b, cg // b, kh, kh, b, b]
        loops = "d0, d1, d2, d3, d4, d5, d6, d7, d8, d9"  # n, g, ob, oh, ow, cb, kh, kw, fi, ci
        maps = [f"(d0, d1, d5, d3 * {stride} + d6 * {d}, d4 * {stride} + d7 * {d}, d9)",
                "(d1, d2, d5, d6, d7, d9, d8)", "(d0, d1, d2, d3, d4, d8)"]
        iterators = (["parallel"] * 5 + ["reduction"] * 3 + ["parallel", "reduction"])
    elif depthwise:
        assert groups == c == oc and blocked_in
        x_shape, w_shape = [n, c // b, h, w, b], [c // b, kh, kh, b]
        loops = "d0, d1, d2, d3, d4, d5, d6"  # n, cb, oh, ow, kh, kw, ci
        maps = [f"(d0, d1, d2 * {stride} + d4 * {d}, d3 * {stride} + d5 * {d}, d6)",
                "(d1, d4, d5, d6)", "(d0, d1, d2, d3, d6)"]
        iterators = ["parallel"] * 4 + ["reduction"] * 2 + ["parallel"]
    elif blocked_in:
        assert groups == 1
        x_shape, w_shape = [n, c // b, h, w, b], [ob, c // b, kh, kh, b, b]
        loops = "d0, d1, d2, d3, d4, d5, d6, d7, d8"  # n, ob, oh, ow, cb, kh, kw, fi, ci
        maps = [f"(d0, d4, d2 * {stride} + d5 * {d}, d3 * {stride} + d6 * {d}, d8)",
                "(d1, d4, d5, d6, d8, d7)", "(d0, d1, d2, d3, d7)"]
        iterators = (["parallel"] * 4 + ["reduction"] * 3 + ["parallel", "reduction"])
    else:
        assert groups == 1
        x_shape, w_shape = [n, c, h, w], [ob, c, kh, kh, b]
        loops = "d0, d1, d2, d3, d4, d5, d6, d7"  # n, ob, oh, ow, c, kh, kw, fi
        maps = [f"(d0, d4, d2 * {stride} + d5 * {d}, d3 * {stride} + d6 * {d})",
                "(d1, d4, d5, d6, d7)", "(d0, d1, d2, d3, d7)"]
        iterators = ["parallel"] * 4 + ["reduction"] * 3 + ["parallel"]
    r_shape = [n, ob, oh, oh, b]
    spatial = (2, 3)
    if grouped:
        r_shape = [n, groups, oc // groups // b, oh, oh, b]
        spatial = (3, 4)
    pad_text, x_value, x_padded = pad_op("%a0", x_shape, spatial, pad)
    map_text = ", ".join(f"affine_map<({loops}) -> {m}>" for m in maps)
    iter_text = ", ".join(f'"{i}"' for i in iterators)
    body = (pad_text +
            f"  %r = linalg.generic {{indexing_maps = [{map_text}], "
            f"iterator_types = [{iter_text}]}}\n"
            f"       ins({x_value}, %a1 : {ttype(x_padded)}, {ttype(w_shape)}) "
            f"outs(%fill : {ttype(r_shape)}) {{\n"
            f"  ^bb0(%x: f32, %w: f32, %acc: f32):\n"
            f"    %m = arith.mulf %x, %w : f32\n"
            f"    %s = arith.addf %acc, %m : f32\n"
            f"    linalg.yield %s : f32\n"
            f"  }} -> {ttype(r_shape)}\n")

    def unblock(a):  # [N, C/16, H, W, 16] -> NCHW
        return a.transpose(0, 1, 4, 2, 3).reshape(a.shape[0], -1, a.shape[2], a.shape[3])

    def reference(a):
        if grouped:
            x = a[0].transpose(0, 1, 2, 5, 3, 4).reshape(n, c, h, w)
            wr = a[1].transpose(0, 1, 6, 2, 5, 3, 4).reshape(oc, c // groups, kh, kh)
            out = conv_ref(x, wr, stride, pad, dilation, groups)
            return out.reshape(n, groups, oc // groups // b, b, oh, oh).transpose(0, 1, 2, 4, 5, 3)
        x = unblock(a[0]) if blocked_in else a[0]
        if depthwise:
            wr = a[1].transpose(0, 3, 1, 2).reshape(c, 1, kh, kh)
        elif blocked_in:
            wr = a[1].transpose(0, 5, 1, 4, 2, 3).reshape(oc, c, kh, kh)
        else:
            wr = a[1].transpose(0, 4, 1, 2, 3).reshape(oc, c, kh, kh)
        out = conv_ref(x, wr, stride, pad, dilation, groups)
        return out.reshape(n, ob, b, oh, oh).transpose(0, 1, 3, 4, 2)

    return conv_kernel(name, "NCHW16c", "linalg.generic (blocked)", [x_shape, w_shape],
                       r_shape, body, reference, c, h, oc, kh, stride, pad, dilation, groups, n)


KERNELS = [
    matmul("matmul_512", 512, 512, 512),
    matmul("matmul_1024", 1024, 1024, 1024),
    matmul("proj_128x256x1024", 128, 256, 1024),
    matmul("proj_197x384x1152", 197, 384, 1152),
    matmul("matvec_1x1024x1024", 1, 1024, 1024),
    # A classifier head: 1000 classes, not a multiple of the vector width.
    matmul("matvec_1x1024x1000", 1, 1024, 1000),
    batch_matmul("bmm_attention", 12, 128, 64, 128),
    conv("conv3x3_nhwc", "nhwc", 64, 56, 64, 3, pad=1),
    conv("conv3x3_nchw", "nchw", 64, 56, 64, 3, pad=1),
    conv("conv1x1_nchw", "nchw", 64, 56, 256, 1),
    conv("conv1x1_expand_nchw", "nchw", 24, 56, 144, 1),
    conv("conv3x3_s2_nchw", "nchw", 128, 28, 128, 3, stride=2, pad=1),
    conv("conv7x7_s2_stem", "nchw", 3, 224, 64, 7, stride=2, pad=3),
    conv("conv3x3_g4", "ngchw", 64, 56, 64, 3, pad=1, groups=4),
    conv("dw3x3_nchw", "dw_nchw", 32, 112, 32, 3, pad=1, groups=32),
    conv("dw3x3_nhwc", "dw_nhwc", 32, 112, 32, 3, pad=1, groups=32),
    conv("dw5x5_nchw", "dw_nchw", 96, 56, 96, 5, pad=2, groups=96),
    conv("dw7x7_nchw", "dw_nchw", 96, 56, 96, 7, pad=3, groups=96),
    conv("dw3x3_14x14_nchw", "dw_nchw", 576, 14, 576, 3, pad=1, groups=576),
    conv("dw3x3_7x7_nchw", "dw_nchw", 960, 7, 960, 3, pad=1, groups=960),
    # The blocked layout convolution chains get (what models run).
    conv("conv3x3_nchw16c", "nchw16c", 64, 56, 64, 3, pad=1),
    # A narrow reduction (squeezenet's fire modules: 16 channels in).
    conv("conv3x3_c16_nchw16c", "nchw16c", 16, 55, 64, 3, pad=1),
    conv("conv1x1_nchw16c", "nchw16c", 64, 56, 256, 1),
    # Deep layers (ResNet's last stages): the filters outgrow the L2 cache.
    conv("conv3x3_256_14x14_nchw16c", "nchw16c", 256, 14, 256, 3, pad=1),
    conv("conv3x3_512_7x7_nchw16c", "nchw16c", 512, 7, 512, 3, pad=1),
    conv("conv3x3_s2_nchw16c", "nchw16c", 128, 28, 128, 3, stride=2, pad=1),
    conv("conv7x7_s2_stem_nchw16c", "nchw16c", 3, 224, 64, 7, stride=2, pad=3),
    conv("conv3x3_g4_nchw16c", "nchw16c", 64, 56, 64, 3, pad=1, groups=4),
    conv("dw3x3_nchw16c", "dw_nchw16c", 32, 112, 32, 3, pad=1, groups=32),
    conv("dw5x5_nchw16c", "dw_nchw16c", 96, 56, 96, 5, pad=2, groups=96),
    conv("dw3x3_14x14_nchw16c", "dw_nchw16c", 576, 14, 576, 3, pad=1, groups=576),
    conv("dw3x3_7x7_nchw16c", "dw_nchw16c", 960, 7, 960, 3, pad=1, groups=960),
]


# ----------------------------------------------------------------------------

def build_driver():
    if os.path.exists(DRIVER) and os.path.getmtime(DRIVER) >= os.path.getmtime(DRIVER_SOURCE):
        return
    os.makedirs(os.path.dirname(DRIVER), exist_ok=True)
    print(f"building {os.path.relpath(DRIVER, ROOT)}", file=sys.stderr)
    subprocess.run(["g++", "-O2", "-std=c++17", DRIVER_SOURCE, "-ldnnl", "-o", DRIVER],
                   check=True)


def onednn_gflops(kernel, threads, iterations):
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    out = subprocess.run([DRIVER, f"--iterations={iterations}", "--warmup=3"] +
                         [str(v) for v in kernel.onednn],
                         env=env, check=True, capture_output=True, text=True).stdout
    result = json.loads(out)
    return kernel.flops / (result["median_ms"] * 1e6), result


def device_flag(threads):
    return "--device=local-sync" if threads == 1 else f"--device=local-task?workers={threads}"


def limit_memory():
    """The machine is shared: a compiler that runs away gets an allocation
    failure (reported as a crash) instead of waking the OOM killer."""
    limit = COMPILE_MEMORY_GIB << 30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def strata_prepare(args, kernel, tmp):
    """Compiles and checks one kernel. Returns (module, inputs, status) with
    status None when it is fine, else "refused" or "WRONG" (and a reason)."""
    d = os.path.join(tmp, kernel.name)
    os.makedirs(d, exist_ok=True)
    rng = np.random.default_rng(zlib.crc32(kernel.name.encode()))
    arrays = [rng.uniform(-1.0, 1.0, shape).astype(np.float32) for shape in kernel.arg_shapes]
    constant = kernel.weights and args.weights == "constants"
    prog = os.path.join(d, "prog.mlir")
    with open(prog, "w") as f:
        f.write(kernel.mlir(arrays[1] if constant else None))
    module = os.path.join(d, "prog.smod")
    try:
        compiled = subprocess.run([os.path.join(args.bin, "strata-compile"), prog, "-o", module],
                                  capture_output=True, text=True, timeout=args.compile_timeout,
                                  preexec_fn=limit_memory)
    except subprocess.TimeoutExpired:
        return None, None, ("refused", f"strata-compile ran past {args.compile_timeout} s")
    if compiled.returncode != 0:
        message = (compiled.stderr or compiled.stdout).strip()
        if compiled.returncode < 0:  # killed by a signal: a crash, not a diagnostic
            return None, None, ("crashed", f"strata-compile signal {-compiled.returncode} "
                                           f"{message[-300:]}")
        first = [line for line in message.splitlines() if "error" in line][:1]
        return None, None, ("refused", (first[0] if first else message)[:400] or
                            f"strata-compile exit {compiled.returncode}")
    inputs = []
    for i, a in enumerate(arrays[:1] if constant else arrays):
        path = os.path.join(d, f"arg{i}.npy")
        np.save(path, a)
        inputs.append(path)
    out = os.path.join(d, "out.npy")
    ran = subprocess.run([os.path.join(args.bin, "strata-run"), f"--module={module}",
                          "--function=main", f"--output=@{out}"] +
                         [f"--input=@{p}" for p in inputs],
                         capture_output=True, text=True)
    if ran.returncode != 0:
        return None, None, ("WRONG", f"strata-run exit {ran.returncode}: " +
                            (ran.stderr or ran.stdout).strip()[:300])
    got = np.load(out)
    ref = kernel.reference(arrays)
    if got.shape != tuple(kernel.result_shape) or got.shape != ref.shape:
        return None, None, ("WRONG", f"result shape {got.shape}, expected {ref.shape}")
    scale = max(1.0, float(np.abs(ref).max()))
    err = float(np.abs(got.astype(np.float64) - ref).max())
    if not np.isfinite(err) or err > 1e-3 * scale:
        return None, None, ("WRONG", f"max abs error {err:.3g} (reference max {scale:.3g})")
    return module, inputs, None


def strata_gflops(args, kernel, module, inputs, threads, iterations):
    command = [os.path.join(args.bin, "strata-bench"), f"--module={module}", "--function=main",
               device_flag(threads), f"--iterations={iterations}", "--warmup=3", "--json"]
    command += [f"--input=@{p}" for p in inputs]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    result = json.loads(out)
    return kernel.flops / (result["median_ms"] * 1e6), result


def iterations_for(args, kernel):
    """--iterations, raised for small kernels so that one measurement lasts
    about --min-time seconds (guessing 50 GFLOP/s), at most 5000."""
    guess_s = kernel.flops / 50e9
    return max(args.iterations, min(5000, math.ceil(args.min_time / guess_s)))


def measure(args, kernel, module, inputs, threads, notes):
    """--rounds rounds of: Strata, then oneDNN right after it on the same
    shape and thread count. Returns each side's best round (the highest
    GFLOP/s of the per-round medians; interference only slows a round down)
    and oneDNN's implementation name."""
    iterations = iterations_for(args, kernel)
    strata, onednn, impl = [], [], ""
    for _ in range(args.rounds):
        if module:
            try:
                strata.append(strata_gflops(args, kernel, module, inputs, threads, iterations)[0])
            except subprocess.CalledProcessError as error:
                notes.append(f"{kernel.name} {threads}T: strata-bench failed: "
                             f"{(error.stderr or '').strip()[:300]}")
                module = None
        try:
            gflops, result = onednn_gflops(kernel, threads, iterations)
            onednn.append(gflops)
            impl = result.get("impl", "")
        except subprocess.CalledProcessError as error:
            notes.append(f"{kernel.name} {threads}T: oneDNN failed: "
                         f"{(error.stderr or '').strip()[:300]}")
            break
    s = max(strata) if strata and module else None
    o = max(onednn) if onednn else None
    print(f"  {kernel.name} {threads}T x{iterations}: strata "
          f"{' '.join(f'{v:.1f}' for v in strata) or '-'} GFLOP/s, oneDNN "
          f"{' '.join(f'{v:.1f}' for v in onednn) or '-'} GFLOP/s ({impl})",
          file=sys.stderr, flush=True)
    return s, o


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.path.join(ROOT, "build", "bin"))
    parser.add_argument("--kernels", default=".", help="regular expression on kernel names")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--iterations", type=int, default=30,
                        help="timed calls per measurement, at least (default 30)")
    parser.add_argument("--min-time", type=float, default=0.2,
                        help="seconds one measurement should last; small kernels get more "
                             "iterations (default 0.2)")
    parser.add_argument("--rounds", type=int, default=3,
                        help="alternating Strata/oneDNN measurements per kernel and thread "
                             "count; the best of each side is reported (default 3)")
    parser.add_argument("--compile-timeout", type=int, default=300,
                        help="seconds strata-compile may take per kernel (default 300)")
    parser.add_argument("--weights", choices=["constants", "arguments"], default="constants",
                        help="a convolution's filter and a matmul's right operand as constants "
                             "of the program (as a model's weights; oneDNN's are reordered "
                             "before it is timed) or as arguments of every call "
                             "(default constants)")
    parser.add_argument("--list", action="store_true", help="print the kernels and exit")
    parser.add_argument("--keep", help="write the programs and inputs here instead of a temp dir")
    args = parser.parse_args()
    threads = [int(t) for t in args.threads.split(",")]
    kernels = [k for k in KERNELS if re.search(args.kernels, k.name)]
    if args.list:
        for k in kernels:
            print(f"{k.name:<20} {k.shape:<34} {k.form}")
        return 0
    if not kernels:
        print("no kernel matches", file=sys.stderr)
        return 1
    if not os.path.exists(os.path.join(args.bin, "strata-compile")):
        print(f"no strata-compile in {args.bin}", file=sys.stderr)
        return 1
    build_driver()
    compiler = os.path.join(args.bin, "strata-compile")
    compiler_mtime = os.path.getmtime(compiler)

    header = "| kernel | shape |"
    rule = "|---|---|"
    for t in threads:
        header += f" strata GFLOP/s {t}T | oneDNN {t}T | ratio {t}T |"
        rule += "---|---|---|"
    rows, ratios, notes = [], {t: [] for t in threads}, []
    tmp = args.keep or tempfile.mkdtemp(prefix="strata-kernels-")
    try:
        for k in kernels:
            module, inputs, status = strata_prepare(args, k, tmp)
            row = f"| {k.name} | {k.shape} |"
            if status:
                notes.append(f"{k.name}: {status[0]}: {status[1][:400]}")
                print(f"  {k.name}: {status[0]}: {status[1][:400]}", file=sys.stderr)
            for t in threads:
                s, o = measure(args, k, module, inputs, t, notes)
                strata_cell = status[0] if status else (f"{s:.1f}" if s else "failed")
                row += f" {strata_cell} | {o:.1f} |" if o else f" {strata_cell} | - |"
                if s and o:
                    ratios[t].append(s / o)
                    row += f" {s / o:.2f} |"
                else:
                    row += " - |"
            rows.append(row)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)

    print(header)
    print(rule)
    for row in rows:
        print(row)
    print()
    for t in threads:
        r = ratios[t]
        if r:
            geomean = math.exp(sum(math.log(x) for x in r) / len(r))
            print(f"geomean ratio (strata / oneDNN) {t}T: {geomean:.2f} over {len(r)} kernels")
    for note in notes:
        print(f"- {note}")
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(compiler_mtime))
    print(f"- strata-compile: {compiler}, built {stamp} UTC")
    print(f"- weights (convolution filters, matmul right operands): {args.weights}")
    if os.path.getmtime(compiler) != compiler_mtime:
        print("- WARNING: strata-compile was rebuilt during this run; kernels compiled "
              "before and after it came from different compilers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
