#!/usr/bin/python3
"""The pfvm phase against ONNX Runtime's own graph optimizer, side by side.

    (cd bench/reference && npm_config_onnxruntime_node_install=skip npm install)
    /usr/bin/python3 bench/models/export_torchvision.py build/bench-models
    /usr/bin/python3 bench/models/export_torchvision.py --keep-batchnorm build/bench-models
    /usr/bin/python3 bench/models/export_bert.py build/bench-models
    /usr/bin/python3 bench/pfvm/pfvm_vs_ort.py [--repeat 5] [MODEL...]

For each model (default: ResNet-18, ResNet-50, MobileNetV2, SqueezeNet 1.1
and the BERT-like encoder in build/bench-models, then the NAME-bn.onnx
exports without torch's folding, where present):

- `mncc compile --compile-to=pfvm --out_onnx=...` writes the optimized
  graph; the pfvm phase's time is compile_status.json's, the median of
  --repeat compiles;
- ONNX Runtime (onnxruntime-node, CPU) writes its own optimized graph of
  the same model (optimizedModelFilePath, extended graph optimizations);
- the node counts of the original, of out_onnx, and of ONNX Runtime's
  graph are printed, and how many of out_onnx's nodes pfvm:cpu runs
  (a Relu or Clip marked onnx.fused_activation runs inside its Conv or
  Add, as ONNX Runtime's FusedConv does);
- the original and out_onnx run on pfvm:cpu on the same random inputs,
  and the largest relative difference of the outputs is printed (target:
  1e-5), element by element and against the output's largest magnitude
  (a BatchNormalization folded into its Conv rounds differently from one
  run apart; on an output near zero that is a large part of it).

Constant nodes are counted apart: ONNX Runtime turns them into
initializers.
"""

import argparse
import collections
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1",
          "bert_like"]
UNFOLDED = ["resnet18-bn", "resnet50-bn", "mobilenet_v2-bn",
            "squeezenet1_1-bn"]


def node_counts(path):
    """(nodes other than Constant, Constant nodes) of the top-level graph."""
    model = onnx.load(path, load_external_data=False)
    kinds = collections.Counter(node.op_type for node in model.graph.node)
    constants = kinds.pop("Constant", 0)
    return sum(kinds.values()), constants


def pfvm_compile(mncc, model, out_dir, optimized, repeat):
    seconds = []
    for _ in range(repeat):
        subprocess.run([mncc, "compile", model, "--compile-to=pfvm",
                        "-o", out_dir, "--out_onnx=" + optimized],
                       check=True, capture_output=True, text=True)
        with open(os.path.join(out_dir, "compile_status.json")) as status:
            phases = json.load(status)["phases"]
        seconds += [phase["seconds"] for phase in phases
                    if phase["name"] == "pfvm"]
    with open(glob.glob(os.path.join(out_dir, "ir", "2-pfvm.mlir"))[0]) as ir:
        fused = ir.read().count("onnx.fused_activation")
    return statistics.median(seconds), fused


def run_outputs(mncc, model, out_dir):
    subprocess.run([mncc, "run", "--device=pfvm:cpu", model,
                    "--random-inputs", "1", "--output-dir", out_dir],
                   check=True, capture_output=True, text=True)
    return {os.path.basename(path): np.load(path)
            for path in glob.glob(os.path.join(out_dir, "*.npy"))}


def max_relative_differences(expected, actual):
    """(element by element, against each output's largest magnitude)."""
    elementwise = overall = 0.0
    for name, value in expected.items():
        other = actual[name].astype(np.float64)
        value = value.astype(np.float64)
        difference = np.abs(other - value)
        scale = np.maximum(np.abs(value), np.finfo(np.float32).tiny)
        elementwise = max(elementwise, float(np.max(difference / scale)))
        overall = max(overall, float(np.max(difference)) /
                      max(float(np.max(np.abs(value))),
                          float(np.finfo(np.float32).tiny)))
    return elementwise, overall


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--models", default=os.path.join("build", "bench-models"))
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("names", nargs="*")
    args = parser.parse_args()
    if not args.names:
        args.names = MODELS + [name for name in UNFOLDED if os.path.exists(
            os.path.join(args.models, name + ".onnx"))]
    mncc = os.path.join(args.build, "bin", "mncc")
    environment = dict(os.environ, NODE_PATH=os.path.join(
        HERE, "..", "reference", "node_modules"))

    header = ("| model | nodes | after pfvm | pfvm:cpu runs | ONNX Runtime "
              "(extended) | Constant nodes (orig / pfvm) | pfvm phase | "
              "max rel. diff | max diff / max output |")
    print(header)
    print("|" + " --- |" * 9)
    with tempfile.TemporaryDirectory() as scratch:
        for name in args.names:
            model = os.path.join(args.models, name + ".onnx")
            if not os.path.exists(model):
                sys.exit("missing %s: run bench/models/export_*.py" % model)
            work = os.path.join(scratch, name)
            os.makedirs(work)
            optimized = os.path.join(work, "pfvm.onnx")
            seconds, fused = pfvm_compile(mncc, model,
                                          os.path.join(work, "codegen"),
                                          optimized, args.repeat)
            peer = os.path.join(work, "ort.onnx")
            subprocess.run(["node", os.path.join(HERE, "ort_optimize.js"),
                            model, peer], check=True, capture_output=True,
                           text=True, env=environment)
            original, original_constants = node_counts(model)
            ours, our_constants = node_counts(optimized)
            theirs, _ = node_counts(peer)
            elementwise, overall = max_relative_differences(
                run_outputs(mncc, model, os.path.join(work, "original")),
                run_outputs(mncc, optimized, os.path.join(work, "optimized")))
            print("| %s | %d | %d | %d | %d | %d / %d | %.3f s | %.1e | "
                  "%.1e |" %
                  (name, original, ours, ours - fused, theirs,
                   original_constants, our_constants, seconds, elementwise,
                   overall))


if __name__ == "__main__":
    main()
