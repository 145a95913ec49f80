#!/usr/bin/python3
"""Models that are not in ../shared/models, exported as a user would, for
run_models_bench.py --models-dir: torchvision architectures at 224x224 and
recurrent/attention text models, each as DIR/NAME/model.onnx with
test_data_set_0/{input_0,output_0}.pb (torch eager's output), the layout of
../shared/models.

  apt-get install -y python3-torch python3-torchvision
  /usr/bin/python3 bench/export_bench_models.py /tmp/bench-models [--models a,b]

Weights are seeded random (BatchNorm statistics calibrated on random
batches), opset 17, batch 1. Speed only depends on the architecture.
"""
import argparse
import os
import sys

import numpy as np
import onnx
import torch
import torchvision
from onnx import numpy_helper


class Recurrent(torch.nn.Module):
    """A 2-layer GRU or LSTM over a [1, T, F] sequence and a linear head."""

    def __init__(self, cell, features=64, hidden=128):
        super().__init__()
        self.rnn = cell(features, hidden, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(hidden, 16)

    def forward(self, x):
        y, _ = self.rnn(x)
        return self.head(y)


IMAGE_MODELS = {
    "squeezenet1_1": torchvision.models.squeezenet1_1,
    "efficientnet_b0": torchvision.models.efficientnet_b0,
    "mobilenet_v3_small": torchvision.models.mobilenet_v3_small,
    "shufflenet_v2_x1_0": torchvision.models.shufflenet_v2_x1_0,
    "mnasnet1_0": torchvision.models.mnasnet1_0,
    "regnet_y_400mf": torchvision.models.regnet_y_400mf,
    "googlenet": lambda: torchvision.models.googlenet(aux_logits=False, init_weights=True),
    "resnet50": torchvision.models.resnet50,
    "densenet121": torchvision.models.densenet121,
    "convnext_tiny": torchvision.models.convnext_tiny,
}

SEQUENCE_MODELS = {
    "gru": (lambda: Recurrent(torch.nn.GRU), (1, 32, 64)),
    "lstm2": (lambda: Recurrent(torch.nn.LSTM), (1, 32, 64)),
}


def calibrate(model):
    torch.manual_seed(1)
    model.train()
    with torch.no_grad():
        for _ in range(2):
            model(torch.randn(2, 3, 224, 224))
    model.eval()


def save_tensor(array, path):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(np.ascontiguousarray(array)).SerializeToString())


def export(name, out_dir):
    folder = os.path.join(out_dir, name)
    data = os.path.join(folder, "test_data_set_0")
    if os.path.exists(os.path.join(data, "output_0.pb")):
        return
    os.makedirs(data, exist_ok=True)
    torch.manual_seed(0)
    if name in IMAGE_MODELS:
        model = IMAGE_MODELS[name]()
        calibrate(model)
        x = torch.randn(1, 3, 224, 224)
    else:
        constructor, shape = SEQUENCE_MODELS[name]
        model = constructor().eval()
        x = torch.randn(*shape)
    with torch.no_grad():
        y = model(x)
        torch.onnx.export(model, (x,), os.path.join(folder, "model.onnx"), opset_version=17,
                          input_names=["input"], output_names=["output"])
    save_tensor(x.numpy(), os.path.join(data, "input_0.pb"))
    save_tensor(y.numpy(), os.path.join(data, "output_0.pb"))
    print(f"{name}: exported", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("out_dir")
    parser.add_argument("--models", default=",".join([*IMAGE_MODELS, *SEQUENCE_MODELS]))
    args = parser.parse_args()
    for name in args.models.split(","):
        export(name, args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
