#!/usr/bin/python3
"""Exports torchvision models with random weights to ONNX, for the benches.

Run with Debian's interpreter (/usr/bin/python3), which has python3-torch
and python3-torchvision:

    /usr/bin/python3 bench/models/export_torchvision.py [--keep-batchnorm]
                                [--batch N] OUT_DIR [MODEL...]

Weights are random (seed 0), with the BatchNormalization statistics
measured on random images (calibrate_batch_norms): the benches measure
speed and agreement, not accuracy, and nothing is downloaded. Batch 1
writes NAME.onnx; --batch N (N > 1) writes NAME_bN.onnx with the batch
fixed to N, as every input shape is static. --keep-batchnorm writes
NAME-bn.onnx as torch exports without its own graph optimizations (no
constant folding, the BatchNormalization nodes kept, TrainingMode.PRESERVE
of an eval model), for the pfvm phase's folds to do the work
(bench/pfvm/pfvm_vs_ort.py).
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


def export(name, out_dir, keep_batchnorm, batch):
    torch.manual_seed(0)
    model = MODELS[name](weights=None)
    calibrate_batch_norms(model)
    suffix = ("-bn" if keep_batchnorm else "") + \
        ("" if batch == 1 else "_b%d" % batch)
    path = os.path.join(out_dir, name + suffix + ".onnx")
    image = torch.randn(batch, 3, 224, 224)
    options = (dict(do_constant_folding=False,
                    training=torch.onnx.TrainingMode.PRESERVE)
               if keep_batchnorm else dict(do_constant_folding=True))
    torch.onnx.export(model, image, path, opset_version=17,
                      input_names=["input"], output_names=["output"],
                      **options)
    print("%s: %s (%.1f MB)" % (name, path, os.path.getsize(path) / 1e6))


def main():
    arguments = sys.argv[1:]
    keep_batchnorm = "--keep-batchnorm" in arguments
    arguments = [a for a in arguments if a != "--keep-batchnorm"]
    batch = 1
    if "--batch" in arguments:
        at = arguments.index("--batch")
        if at + 1 >= len(arguments) or not arguments[at + 1].isdigit() or \
                int(arguments[at + 1]) < 1:
            sys.exit("--batch takes a positive number")
        batch = int(arguments[at + 1])
        del arguments[at:at + 2]
    if not arguments:
        sys.exit(__doc__)
    out_dir = arguments[0]
    os.makedirs(out_dir, exist_ok=True)
    for name in arguments[1:] or list(MODELS):
        if name not in MODELS:
            sys.exit("unknown model %s; known: %s" % (name, ", ".join(MODELS)))
        export(name, out_dir, keep_batchnorm, batch)


if __name__ == "__main__":
    main()
