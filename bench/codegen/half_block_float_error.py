#!/usr/bin/env python3
"""How much error MN-Core 2's half block floats alone give a model.

Under float_dtype=mixed, every Conv, Gemm and MatMul multiplies on the
matrix unit in half block floats (docs/target/mncore2.md "Block floats"):
16 elements share the exponent of the largest and keep 9-bit significands
below it, so an element 2^k smaller than its block's largest keeps 9 - k
bits. This script emulates only that quantization on the host, in torch
(the operands of each dense convolution quantized in blocks of 16 over the
input channels, depthwise convolutions' operands and every convolution's
output rounded to IEEE half), and prints the largest output error as a
share of the largest output, the figure --verify compares with the
mixed tolerance (docs/codegen.md "Tolerances"), and the same for
float_dtype=float's pseudo-single block floats. Same models, seeds and
BatchNorm calibration as export_torchvision.py; the input is uniform in
[-1, 1) from seed 0 (mncc run --random-inputs=0).

    /usr/bin/python3 bench/codegen/half_block_float_error.py [--models ...]
"""

import argparse
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "models"))
import export_torchvision as export  # noqa: E402


def block_float(t, dim, bits, block=16, truncate=False):
    """t quantized in blocks of `block` along `dim`: the block's exponent,
    `bits`-bit significands (the leading bit included), round to nearest
    (or toward zero: the MAU ignores pseudo-single's low 5 bits)."""
    t = t.movedim(dim, -1)
    shape = t.shape
    n = shape[-1]
    padded = torch.nn.functional.pad(t, (0, (-n) % block))
    blocks = padded.reshape(*shape[:-1], -1, block)
    largest = blocks.abs().amax(-1, keepdim=True).clamp_min(1e-30)
    step = 2.0 ** (torch.floor(torch.log2(largest)) - (bits - 1))
    quantized = (torch.trunc if truncate else torch.round)(blocks / step) * step
    return quantized.reshape(*shape[:-1], -1)[..., :n].movedim(-1, dim)


def half(t):
    return t.half().float()


def quantized_copy(model, name, bits):
    copy = export.MODELS[name](weights=None)
    copy.load_state_dict(model.state_dict())
    copy.eval()
    for module in copy.modules():
        if not isinstance(module, torch.nn.Conv2d):
            continue
        dense = module.groups == 1
        module.weight.data = (block_float(module.weight.data, 1, bits)
                              if dense else half(module.weight.data))
        module.register_forward_pre_hook(
            lambda m, i: ((block_float(i[0], 1, bits) if m.groups == 1
                           else half(i[0])),))
        module.register_forward_hook(lambda m, i, o: half(o))
    return copy


def pseudo_single_copy(model, name):
    """float_dtype=float: every convolution's operands in pseudo-single
    block floats (8 per exponent, 18 significant bits, the rest ignored),
    outputs in single; in double so that only the format errs."""
    copy = export.MODELS[name](weights=None).double()
    copy.load_state_dict(model.state_dict())
    copy.eval()

    def quantize(t, dim):
        return block_float(t, dim, 18, block=8, truncate=True)
    for module in copy.modules():
        if not isinstance(module, torch.nn.Conv2d):
            continue
        module.weight.data = quantize(module.weight.data,
                                      1 if module.groups == 1 else 0)
        module.register_forward_pre_hook(lambda m, i: (quantize(i[0], 1),))
        module.register_forward_hook(lambda m, i, o: o.float().double())
    return copy


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", default="resnet18,mobilenet_v2")
    args = parser.parse_args()
    image = torch.tensor(np.random.RandomState(0).uniform(
        -1, 1, (1, 3, 224, 224)).astype(np.float32))
    print("%-14s %12s %14s %16s %18s" % (
        "model", "max|output|", "IEEE-half BF", "MN-Core half BF",
        "pseudo-single BF"))
    for name in args.models.split(","):
        torch.manual_seed(0)
        model = export.MODELS[name](weights=None)
        export.calibrate_batch_norms(model)
        model.eval()
        with torch.no_grad():
            reference = model(image).double()
            largest = reference.abs().max().item()
            shares = []
            for bits in (11, 9):
                output = quantized_copy(model, name, bits)(image).double()
                shares.append((output - reference).abs().max().item() /
                              largest)
            exact = model.double()(image.double())
            single = pseudo_single_copy(model, name)(image.double())
            shares.append((single - exact).abs().max().item() /
                          exact.abs().max().item())
        print("%-14s %12.4f %13.2f%% %15.2f%% %17.2e" %
              (name, largest, 100 * shares[0], 100 * shares[1], shares[2]))


if __name__ == "__main__":
    main()
