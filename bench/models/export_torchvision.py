#!/usr/bin/python3
"""Exports torchvision models with random weights to ONNX, for the benches.

Run with Debian's interpreter (/usr/bin/python3), which has python3-torch
and python3-torchvision:

    /usr/bin/python3 bench/models/export_torchvision.py [--keep-batchnorm] OUT_DIR [MODEL...]

Weights are random (seed 0): the benches measure speed, not accuracy, and
nothing is downloaded. --keep-batchnorm writes NAME-bn.onnx as torch
exports without its own graph optimizations (no constant folding, the
BatchNormalization nodes kept, TrainingMode.PRESERVE of an eval model),
for the pfvm phase's folds to do the work (bench/pfvm/pfvm_vs_ort.py).
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


def export(name, out_dir, keep_batchnorm):
    torch.manual_seed(0)
    model = MODELS[name](weights=None).eval()
    path = os.path.join(out_dir, name + ("-bn" if keep_batchnorm else "") +
                        ".onnx")
    image = torch.randn(1, 3, 224, 224)
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
    if not arguments:
        sys.exit(__doc__)
    out_dir = arguments[0]
    os.makedirs(out_dir, exist_ok=True)
    for name in arguments[1:] or list(MODELS):
        if name not in MODELS:
            sys.exit("unknown model %s; known: %s" % (name, ", ".join(MODELS)))
        export(name, out_dir, keep_batchnorm)


if __name__ == "__main__":
    main()
