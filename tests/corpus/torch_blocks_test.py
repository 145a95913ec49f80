#!/usr/bin/python3
"""The building blocks of the models users export, each exported from
torch.nn with dynamic axes (torch.onnx, opset 17, seeded weights) and
compiled once with nothing pinned, then run at two sizes and compared with
torch eager: max|got - ref| <= 1e-3 * max|ref| + 1e-5, shapes equal. What
the torchvision corpus does not cover on its own: flips and rolls,
interpolation to a scale or to another tensor's size, reflect padding of a
signal, bidirectional GRUs, a causal decoder with cross-attention, group
and instance norms, transposed convolutions, einsum, a causal mask built
from the length, sorts, one-hot of argmax, meshgrid positions, PReLU, grid sampling, ...
Blocks Strata refuses are listed with the refusal they must give.

usage: torch_blocks_test.py --bin BUILD/bin [--tmp DIR] [--blocks a,b]
Prints a row per block and the closing line `N passed, M failed`."""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from run_corpus import compare


class FlipRoll(nn.Module):
    def forward(self, x):
        return torch.flip(x, [2]) + torch.roll(x, 3, dims=3)


class ConvInterpolate(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)

    def forward(self, x):
        return F.interpolate(self.conv(x), scale_factor=2.0, mode="bilinear",
                             align_corners=False)


class InterpolateToSize(nn.Module):
    def forward(self, x, y):
        return F.interpolate(x, size=y.shape[-2:], mode="nearest") + y


class ReflectPadConv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(4, 6, 5)

    def forward(self, x):
        return self.conv(F.pad(x, (2, 2), mode="reflect"))


class BiGru(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(8, 16, batch_first=True, bidirectional=True)
        self.out = nn.Linear(32, 4)

    def forward(self, x):
        return self.out(self.gru(x)[0])


class CausalCrossDecoder(nn.Module):
    def __init__(self):
        super().__init__()
        layer = nn.TransformerDecoderLayer(32, 4, 64, dropout=0.0,
                                           batch_first=True)
        self.decoder = nn.TransformerDecoder(layer, 1)

    def forward(self, x, memory):
        n = x.shape[1]
        mask = torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)
        return self.decoder(x, memory, tgt_mask=mask)


class DilatedGroupNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv1d(4, 8, 3, dilation=2, padding=2)
        self.norm = nn.GroupNorm(2, 8)
        self.c2 = nn.Conv1d(8, 4, 3, dilation=4, padding=4)

    def forward(self, x):
        return self.c2(F.silu(self.norm(self.c1(x))))


class InstanceNorm(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.norm = nn.InstanceNorm2d(8, affine=True)

    def forward(self, x):
        return self.norm(self.conv(x))


class PixelShuffle(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 12, 3, padding=1)

    def forward(self, x):
        return F.pixel_shuffle(self.conv(x), 2)


class Einsum(nn.Module):
    def forward(self, a, b):
        return torch.einsum("bij,bjk->bik", a, b)


class CausalMaskSoftmax(nn.Module):
    def forward(self, x):
        n = x.shape[-1]
        mask = torch.arange(n)[None, :] > torch.arange(n)[:, None]
        return x.masked_fill(mask, -1e9).softmax(-1)


class Sort(nn.Module):
    def forward(self, x):
        return torch.sort(x, dim=-1, descending=True).values[..., :3]


class ArgmaxOneHot(nn.Module):
    def forward(self, x):
        return F.one_hot(x.argmax(-1), 5).float() * x.max(-1,
                                                          keepdim=True).values


class MeshgridPositions(nn.Module):
    def forward(self, x):
        h, w = x.shape[-2:]
        ys, xs = torch.meshgrid(torch.arange(h, dtype=torch.float32),
                                torch.arange(w, dtype=torch.float32),
                                indexing="ij")
        return x + torch.sin(ys / 3.0) + torch.cos(xs / 5.0)


class PositionEmbedding(nn.Module):
    def __init__(self):
        super().__init__()
        self.tokens = nn.Embedding(30, 8)
        self.positions = nn.Embedding(64, 8)

    def forward(self, ids):
        return (self.tokens(ids)
                + self.positions(torch.arange(ids.shape[1]))[None])


class PRelu(nn.Module):
    def __init__(self):
        super().__init__()
        self.prelu = nn.PReLU(3)

    def forward(self, x):
        return self.prelu(x)


class ConvTranspose(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.ConvTranspose2d(3, 5, 4, stride=2, padding=1)

    def forward(self, x):
        return self.conv(x)


class GridSample(nn.Module):
    def __init__(self, mode="bilinear", padding="zeros", align=False):
        super().__init__()
        self.options = dict(mode=mode, padding_mode=padding,
                            align_corners=align)

    def forward(self, x, grid):
        # (Grids reaching past the image, for the padding modes.)
        return F.grid_sample(x, 1.3 * grid, **self.options)


def randn(*shape):
    return torch.randn(*shape)


def ids(*shape):
    return torch.randint(0, 30, shape)


IMAGE = {0: "batch", 2: "height", 3: "width"}
SEQUENCE = {0: "batch", 1: "sequence"}

def make_blocks():
    """name -> (module, inputs at size 1, their dynamic axes, inputs at size
    2, the refusal's text where Strata refuses the block), seeded."""
    torch.manual_seed(0)
    return {
    "flip_roll": (FlipRoll(), [randn(1, 3, 8, 10)], [IMAGE],
                  [randn(2, 3, 5, 7)], None),
    "interpolate_scale": (ConvInterpolate(), [randn(1, 3, 8, 10)], [IMAGE],
                          [randn(2, 3, 6, 5)], None),
    "interpolate_to_size": (
        InterpolateToSize(), [randn(1, 3, 4, 5), randn(1, 3, 8, 10)],
        [IMAGE, {0: "batch", 2: "h2", 3: "w2"}],
        [randn(2, 3, 3, 3), randn(2, 3, 9, 6)], None),
    "reflect_pad_signal": (ReflectPadConv(), [randn(1, 4, 20)],
                           [{0: "batch", 2: "time"}], [randn(2, 4, 13)],
                           None),
    "bidirectional_gru": (BiGru(), [randn(1, 7, 8)], [SEQUENCE],
                          [randn(3, 4, 8)], None),
    "causal_cross_decoder": (
        CausalCrossDecoder(), [randn(1, 5, 32), randn(1, 7, 32)],
        [SEQUENCE, {0: "batch", 1: "memory"}],
        [randn(2, 3, 32), randn(2, 4, 32)], None),
    "dilated_group_norm": (DilatedGroupNorm(), [randn(1, 4, 30)],
                           [{0: "batch", 2: "time"}], [randn(2, 4, 17)],
                           None),
    "instance_norm": (InstanceNorm(), [randn(1, 3, 8, 10)], [IMAGE],
                      [randn(2, 3, 5, 7)], None),
    "pixel_shuffle": (PixelShuffle(), [randn(1, 3, 8, 10)], [IMAGE],
                      [randn(2, 3, 5, 7)], None),
    "einsum_bmm": (Einsum(), [randn(1, 3, 4), randn(1, 4, 5)],
                   [{0: "batch", 1: "i"}, {0: "batch", 2: "k"}],
                   [randn(2, 2, 4), randn(2, 4, 3)], None),
    "causal_mask_softmax": (CausalMaskSoftmax(), [randn(2, 6, 6)],
                            [{0: "batch", 1: "n", 2: "n"}],
                            [randn(1, 4, 4)], None),
    "sort": (Sort(), [randn(2, 9)], [SEQUENCE], [randn(3, 5)], None),
    "argmax_one_hot": (ArgmaxOneHot(), [randn(2, 3, 5)], [SEQUENCE],
                       [randn(1, 4, 5)], None),
    "meshgrid_positions": (MeshgridPositions(), [randn(1, 2, 4, 6)], [IMAGE],
                           [randn(2, 2, 3, 5)], None),
    "position_embedding": (PositionEmbedding(), [ids(2, 6)], [SEQUENCE],
                           [ids(3, 9)], None),
    "prelu": (PRelu(), [randn(1, 3, 8, 10)], [IMAGE], [randn(2, 3, 5, 7)],
              None),
    "conv_transpose": (ConvTranspose(), [randn(1, 3, 8, 10)], [IMAGE],
                       [randn(2, 3, 5, 7)], None),
    **{f"grid_sample_{mode}_{padding}": (
        GridSample(mode, padding, align),
        [randn(1, 3, 8, 10), torch.rand(1, 4, 5, 2) * 2 - 1],
        [IMAGE, {0: "batch", 1: "gh", 2: "gw"}],
        [randn(2, 3, 5, 7), torch.rand(2, 3, 3, 2) * 2 - 1], None)
       for mode, padding, align in (("bilinear", "zeros", False),
                                    ("nearest", "border", False),
                                    ("bilinear", "reflection", True),
                                    ("bicubic", "zeros", True))},
    }


def check(bin_dir, tmp, name, block):
    module, inputs, axes, inputs2, refusal = block
    module.eval()
    path = os.path.join(tmp, name + ".onnx")
    names = [f"in{i}" for i in range(len(inputs))]
    with torch.no_grad():
        torch.onnx.export(module, tuple(inputs), path, opset_version=17,
                          input_names=names, output_names=["out"],
                          dynamic_axes={**dict(zip(names, axes)),
                                        "out": {0: "batch"}})
    compiled = os.path.join(tmp, name + ".smod")
    proc = subprocess.run([os.path.join(bin_dir, "strata-compile"), path,
                           "-o", compiled], capture_output=True, text=True)
    if refusal:
        if proc.returncode == 0:
            return "compiled, but a refusal was expected"
        if refusal not in proc.stderr:
            return f"refused without '{refusal}': {proc.stderr[:300]}"
        return None
    if proc.returncode != 0:
        return "compile error: " + proc.stderr.strip()[:400]
    for size, arrays in enumerate((inputs, inputs2)):
        with torch.no_grad():
            want = module(*arrays).numpy()
        command = [os.path.join(bin_dir, "strata-run"), f"--module={compiled}",
                   "--function=main"]
        for i, array in enumerate(arrays):
            saved = os.path.join(tmp, f"{name}_{size}_in{i}.npy")
            np.save(saved, array.numpy())
            command.append(f"--input=@{saved}")
        out = os.path.join(tmp, f"{name}_{size}_out.npy")
        proc = subprocess.run(command + [f"--output=@{out}"],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            return f"size {size + 1}: run error: " + proc.stderr.strip()[:400]
        problem = compare(np.load(out), want)
        if problem:
            return f"size {size + 1}: {problem}"
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--tmp")
    parser.add_argument("--blocks")
    args = parser.parse_args()
    blocks = make_blocks()
    passed = failed = 0
    with tempfile.TemporaryDirectory(prefix="strata-blocks-") as scratch:
        tmp = args.tmp or scratch
        os.makedirs(tmp, exist_ok=True)
        for name in args.blocks.split(",") if args.blocks else blocks:
            problem = check(args.bin, tmp, name, blocks[name])
            print(f"{'FAIL' if problem else 'ok  '} {name}"
                  + (f": {problem}" if problem else ""), flush=True)
            passed += not problem
            failed += bool(problem)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
