#!/usr/bin/python3
"""Exports torchvision architectures and torch.nn text models to ONNX the
way a user does, for the model corpus (issue 14): seeded random weights,
BatchNorm statistics calibrated on random batches (so that outputs depend
on the input), exported with torch.onnx at opset 17, once with static
shapes and once with dynamic axes (batch, height, width; batch, sequence
for token inputs), with the input and torch eager's output saved as
references.

usage: export_torch_models.py OUT_DIR [--models a,b,c]
Writes OUT_DIR/NAME/{static.onnx,dynamic.onnx,input.npy,output.npy},
input2.npy/output2.npy, the dynamic export's second size, and
input3.npy/output3.npy, another batch at the first size (token models: the
second size again); a model already there is kept (the cache)."""
import argparse
import os
import sys

import numpy as np
import torch
import torchvision

class CausalDecoder(torch.nn.Module):
    """A GPT-style decoder: token and position embeddings, pre-norm blocks
    of causally masked self-attention and an MLP, tied output projection."""

    def __init__(self, vocab=100, width=64, heads=4, layers=2, context=32):
        super().__init__()
        self.tokens = torch.nn.Embedding(vocab, width)
        self.positions = torch.nn.Embedding(context, width)
        block = torch.nn.TransformerEncoderLayer(
            width, heads, 4 * width, dropout=0.0, activation="gelu",
            batch_first=True, norm_first=True)
        self.blocks = torch.nn.TransformerEncoder(block, layers,
                                                  enable_nested_tensor=False)
        self.norm = torch.nn.LayerNorm(width)

    def forward(self, ids):
        length = ids.shape[1]
        positions = torch.arange(length, device=ids.device).unsqueeze(0)
        x = self.tokens(ids) + self.positions(positions)
        mask = torch.triu(torch.full((length, length), float("-inf")),
                          diagonal=1)
        x = self.blocks(x, mask=mask)
        return self.norm(x) @ self.tokens.weight.t()


class LstmTagger(torch.nn.Module):
    """A bidirectional two-layer LSTM tagger over token embeddings."""

    def __init__(self, vocab=100, width=32, hidden=48, tags=9):
        super().__init__()
        self.embed = torch.nn.Embedding(vocab, width)
        self.lstm = torch.nn.LSTM(width, hidden, num_layers=2,
                                  bidirectional=True, batch_first=True)
        self.out = torch.nn.Linear(2 * hidden, tags)

    def forward(self, ids):
        return self.out(self.lstm(self.embed(ids))[0]).log_softmax(-1)


class PaddedUNet(torch.nn.Module):
    """A small segmentation net over any image size, as dense predictors
    are written: the image padded to a multiple of 8 with sizes computed
    from its shape, an encoder (strided conv, max pool), a decoder (2x
    upsampling, bilinear resizing to a skip's size, concatenations), the
    prediction cropped back to the image."""

    def __init__(self):
        super().__init__()
        self.stem = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.down = torch.nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.middle = torch.nn.Conv2d(16, 16, 3, padding=1)
        self.merge = torch.nn.Conv2d(32, 16, 3, padding=1)
        self.head = torch.nn.Conv2d(24, 4, 1)

    def forward(self, x):
        height, width = x.shape[-2:]
        x = torch.nn.functional.pad(x, (0, (8 - width % 8) % 8,
                                        0, (8 - height % 8) % 8))
        a = torch.relu(self.stem(x))
        b = torch.relu(self.down(a))
        c = torch.relu(self.middle(torch.nn.functional.max_pool2d(b, 2)))
        c = torch.nn.functional.interpolate(c, scale_factor=2.0,
                                            mode="nearest")
        d = torch.relu(self.merge(torch.cat([b, c], 1)))
        d = torch.nn.functional.interpolate(d, size=a.shape[-2:],
                                            mode="bilinear",
                                            align_corners=False)
        return self.head(torch.cat([a, d], 1))[:, :, :height, :width]


# Token models: name -> (constructor, sequence length).
TEXT_MODELS = {
    "gpt_decoder": (lambda: CausalDecoder(), 16),
    "lstm_tagger": (lambda: LstmTagger(), 12),
}

# Image models: name -> (constructor, input size).
MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(), 64),
    "resnext50_32x4d": (lambda: torchvision.models.resnext50_32x4d(), 64),
    "densenet121": (lambda: torchvision.models.densenet121(), 64),
    "googlenet": (lambda: torchvision.models.googlenet(aux_logits=False,
                                                       init_weights=True), 64),
    "inception_v3": (lambda: torchvision.models.inception_v3(
        aux_logits=False, init_weights=True), 96),
    "shufflenet_v2_x0_5": (lambda: torchvision.models.shufflenet_v2_x0_5(), 64),
    "mnasnet0_5": (lambda: torchvision.models.mnasnet0_5(), 64),
    "regnet_y_400mf": (lambda: torchvision.models.regnet_y_400mf(), 64),
    "mobilenet_v3_small": (lambda: torchvision.models.mobilenet_v3_small(), 64),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(), 64),
    "efficientnet_v2_s": (lambda: torchvision.models.efficientnet_v2_s(), 64),
    "squeezenet1_1": (lambda: torchvision.models.squeezenet1_1(), 64),
    "convnext_tiny": (lambda: torchvision.models.convnext_tiny(), 64),
    "swin_t": (lambda: torchvision.models.swin_t(), 64),
    "vit_b_16": (lambda: torchvision.models.vit_b_16(image_size=64), 64),
    # Sizes not a multiple of its stride: its padding is exercised.
    "padded_unet": (lambda: PaddedUNet(), 60),
    "deeplabv3_mobilenet_v3_large": (
        lambda: torchvision.models.segmentation.deeplabv3_mobilenet_v3_large(
            weights_backbone=None, aux_loss=False), 64),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(), 64),
    "regnet_x_400mf": (lambda: torchvision.models.regnet_x_400mf(), 64),
    "lraspp_mobilenet_v3_large": (
        lambda: torchvision.models.segmentation.lraspp_mobilenet_v3_large(
            weights_backbone=None), 64),
    "fcn_resnet50": (
        lambda: torchvision.models.segmentation.fcn_resnet50(
            weights_backbone=None, aux_loss=False), 64),
}


def calibrate(model, size, seed):
    """BatchNorm running statistics from random batches, as training would
    leave them (not the identity of a fresh model)."""
    torch.manual_seed(seed)
    model.train()
    with torch.no_grad():
        for _ in range(3):
            model(torch.randn(4, 3, size, size))
    model.eval()


def output_tensor(result):
    if isinstance(result, dict):  # segmentation models
        return result["out"]
    return result


class Wrapped(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, x):
        return output_tensor(self.model(x))


# Models whose input size is fixed by their weights (a ViT's position
# table): the second size changes only the batch.
FIXED_SIZE = {"vit_b_16"}


def second_input(name, x, generator):
    """The input of the dynamic export's second size: another batch, and
    a 1.5x larger map (or 5 more tokens)."""
    if name in TEXT_MODELS:
        return torch.randint(0, 100, (3, x.shape[1] + 5), generator=generator)
    size = x.shape[2] if name in FIXED_SIZE else x.shape[2] * 3 // 2
    return torch.randn(2, 3, size, size, generator=generator)


def export(name, out_dir):
    folder = os.path.join(out_dir, name)
    if all(os.path.exists(os.path.join(folder, f"output{suffix}.npy"))
           for suffix in ("", "2", "3")):
        return
    os.makedirs(folder, exist_ok=True)
    torch.manual_seed(0)
    generator = torch.Generator().manual_seed(2)
    if name in TEXT_MODELS:
        make, length = TEXT_MODELS[name]
        model = make().eval()
        x = torch.randint(0, 100, (2, length), generator=generator)
        dynamic = {"input": {0: "batch", 1: "sequence"},
                   "output": {0: "batch", 1: "sequence"}}
    else:
        make, size = MODELS[name]
        model = make()
        calibrate(model, size, 1)
        model = Wrapped(model).eval()
        x = torch.randn(1, 3, size, size, generator=generator)
        dynamic = {"input": {0: "batch", 2: "height", 3: "width"},
                   "output": {0: "batch"}}
    x2 = second_input(name, x, generator)
    # The batch-dynamic module's second call: another batch at x's size.
    x3 = x2 if name in TEXT_MODELS else torch.randn(
        2, *x.shape[1:], generator=generator)
    with torch.no_grad():
        y = model(x)
        y2 = model(x2)
        y3 = model(x3)
    for kind, axes in (("static", None), ("dynamic", dynamic)):
        torch.onnx.export(model, x, os.path.join(folder, kind + ".onnx"),
                          opset_version=17, input_names=["input"],
                          output_names=["output"], dynamic_axes=axes)
    np.save(os.path.join(folder, "input3.npy"), x3.numpy())
    np.save(os.path.join(folder, "output3.npy"), y3.numpy())
    np.save(os.path.join(folder, "input2.npy"), x2.numpy())
    np.save(os.path.join(folder, "output2.npy"), y2.numpy())
    np.save(os.path.join(folder, "input.npy"), x.numpy())
    np.save(os.path.join(folder, "output.npy"), y.numpy())


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out_dir")
    parser.add_argument("--models", default=",".join([*MODELS, *TEXT_MODELS]))
    args = parser.parse_args()
    for name in args.models.split(","):
        print(f"exporting {name}", flush=True)
        try:
            export(name, args.out_dir)
        except Exception as e:  # report and go on: one model is not the corpus
            print(f"  export failed: {e}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
