#!/usr/bin/python3
"""Exports torchvision models with random weights to ONNX, for the benches.

Run with Debian's interpreter (/usr/bin/python3), which has python3-torch
and python3-torchvision:

    /usr/bin/python3 bench/models/export_torchvision.py OUT_DIR [--batch N]
                                                    [MODEL...]

Weights are random (seed 0), with the BatchNormalization statistics
measured on random images (calibrate_batch_norms): the benches measure
speed and agreement, not accuracy, and nothing is downloaded. Batch 1 writes NAME.onnx; --batch N (N > 1) writes
NAME_bN.onnx with the batch fixed to N, as every input shape is static.
"""

import os
import sys

import torch
import torchvision

MODELS = {
    "resnet18": torchvision.models.resnet18,
    "resnet50": torchvision.models.resnet50,
    "mobilenet_v2": torchvision.models.mobilenet_v2,
    "squeezenet1_1": torchvision.models.squeezenet1_1,
}


def calibrate_batch_norms(model):
    """Running statistics from random images instead of the initial 0 and 1.

    With torchvision's random initialisation and the initial statistics,
    activations shrink layer by layer (MobileNetV2's outputs are about
    3e-9), below what MN-Core's half holds (its smallest normal is 2^-30),
    which no trained model does. Statistics measured on random images keep
    every layer's activations near unit scale, as a trained model's are.
    """
    norms = [m for m in model.modules()
             if isinstance(m, torch.nn.BatchNorm2d)]
    if not norms:
        return
    for norm in norms:
        norm.reset_running_stats()
        norm.momentum = None  # a cumulative average over the batches
    generator = torch.Generator().manual_seed(1)
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(8, 3, 224, 224, generator=generator))
    model.eval()


def export(name, out_dir, batch):
    torch.manual_seed(0)
    model = MODELS[name](weights=None)
    calibrate_batch_norms(model)
    suffix = "" if batch == 1 else "_b%d" % batch
    path = os.path.join(out_dir, name + suffix + ".onnx")
    image = torch.randn(batch, 3, 224, 224)
    torch.onnx.export(model, image, path, opset_version=17,
                      input_names=["input"], output_names=["output"],
                      do_constant_folding=True)
    print("%s: %s (%.1f MB)" % (name, path, os.path.getsize(path) / 1e6))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    names = sys.argv[2:]
    batch = 1
    if names[:1] == ["--batch"]:
        if len(names) < 2 or not names[1].isdigit() or int(names[1]) < 1:
            sys.exit("--batch takes a positive number")
        batch = int(names[1])
        names = names[2:]
    os.makedirs(out_dir, exist_ok=True)
    for name in names or list(MODELS):
        if name not in MODELS:
            sys.exit("unknown model %s; known: %s" % (name, ", ".join(MODELS)))
        export(name, out_dir, batch)


if __name__ == "__main__":
    main()
