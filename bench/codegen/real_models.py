#!/usr/bin/env python3
"""Real models on emu2 (issue 15): compile time, emulated cycles, time at
750 MHz, effective TFLOPS, the MV transfers' and the MAU's busy cycles as a
share of the run, the nodes left on the host, and the emulator's own host
time next to ONNX Runtime's time for the same model on this machine.

    /usr/bin/python3 bench/models/export_torchvision.py build/bench-models
    /usr/bin/python3 bench/models/export_torchvision.py build/bench-models --batch 8
    /usr/bin/python3 bench/models/export_bert.py build/bench-models tiny
    (cd bench/reference && npm_config_onnxruntime_node_install=skip npm install)
    /usr/bin/python3 bench/codegen/real_models.py [--build-dir build]
        [--models resnet18,...] [--batches 1,8] [--float-dtype mixed]

Each model compiles with default options (or --float-dtype) and runs on
emu2 from one random input (seed 0) that ONNX Runtime (onnxruntime-node,
2 threads, median of --ort-runs) runs too; --verify compares with
pfvm:cpu. MV busy sums every transfer's cycles (transfers in flight
together each count), so it can exceed the run's cycles. The emulator's
time ratio has a target of at most 10x ONNX Runtime for ResNet-50 batch 1.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
from models import compile_model, run_emu2  # noqa: E402

# name, input name, the input for a batch (seeded)
MODELS = {
    "resnet18": "input",
    "resnet50": "input",
    "mobilenet_v2": "input",
    "squeezenet1_1": "input",
    "bert_tiny": "ids",
}


def model_file(directory, name, batch):
    suffix = "" if batch == 1 else "_b%d" % batch
    return os.path.join(directory, name + suffix + ".onnx")


def make_input(name, batch, path):
    generator = np.random.RandomState(0)
    if name.startswith("bert"):
        np.save(path, generator.randint(0, 1000, (batch, 128)).astype(np.int64))
    else:
        np.save(path, generator.randn(batch, 3, 224, 224).astype(np.float32))


def ort_ms(model, image, runs, threads, scratch):
    peer = subprocess.run(
        ["node", os.path.join(ROOT, "bench", "reference", "ort_run.js"),
         model, image, str(runs), str(threads),
         os.path.join(scratch, "ort.bin")],
        capture_output=True, text=True)
    found = re.search(r"median_ms ([0-9.]+)", peer.stdout)
    return float(found.group(1)) if found else None


def main():
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--model-dir", default=None,
                        help="default: BUILD_DIR/bench-models")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--batches", default="1")
    parser.add_argument("--float-dtype", default=None)
    parser.add_argument("--ort-runs", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    mncc = os.path.join(args.build_dir, "bin", "mncc")
    model_dir = args.model_dir or os.path.join(args.build_dir, "bench-models")
    print(f"{'model':<13} {'batch':>5} {'compile s':>9} {'host':>4} "
          f"{'cycles':>10} {'ms':>8} {'TFLOPS':>7} {'% peak':>6} "
          f"{'MV %':>6} {'MAU %':>6} {'verify':<6} {'emu s':>8} "
          f"{'ORT ms':>8} {'emu/ORT':>8}")
    for name in args.models.split(","):
        if name not in MODELS:
            sys.exit("unknown model %s; known: %s" % (name, ", ".join(MODELS)))
        for batch in (int(b) for b in args.batches.split(",")):
            model = model_file(model_dir, name, batch)
            head = f"{name:<13} {batch:>5}"
            if not os.path.exists(model):
                print(f"{head} missing {model} (see the export commands above)")
                continue
            with tempfile.TemporaryDirectory() as scratch:
                codegen = os.path.join(scratch, "codegen")
                options = ([f"--float_dtype={args.float_dtype}"]
                           if args.float_dtype else [])
                seconds, error = compile_model(mncc, model, codegen, options)
                if error:
                    print(f"{head} does not compile: {error[:100]}")
                    continue
                with open(os.path.join(codegen, "partitions.json")) as f:
                    hosted = [n for n in json.load(f) if n["where"] != "device"]
                image = os.path.join(scratch, "input.npy")
                make_input(name, batch, image)
                figures = run_emu2(
                    mncc, codegen, ["--input", f"{MODELS[name]}={image}"],
                    os.path.join(scratch, "out"))
                if isinstance(figures, str):
                    print(f"{head} {seconds:>9.2f} does not run: {figures[:90]}")
                    continue
                peer = ort_ms(model, image, args.ort_runs, args.threads,
                              scratch)
                cycles = figures["cycles"]
                ratio = (f"{figures['emulator_s'] * 1000 / peer:>7.0f}x"
                         if peer else "       -")
                print(f"{head} {seconds:>9.2f} {len(hosted):>4} {cycles:>10} "
                      f"{figures['us'] / 1000:>8.3f} {figures['tflops']:>7.3f} "
                      f"{figures['peak']:>6.2f} "
                      f"{100.0 * figures['mv_busy'] / cycles:>6.1f} "
                      f"{100.0 * figures['mau_busy'] / cycles:>6.1f} "
                      f"{figures['verify']:<6} {figures['emulator_s']:>8.1f} "
                      f"{peer if peer else float('nan'):>8.2f} {ratio}",
                      flush=True)
                for failure in figures["failures"]:
                    print(f"    {failure}", flush=True)
    print("verify pass*: beyond the float_dtype's constant tolerance of "
          "pfvm:cpu, within the tolerance\nof pfvm:cpu in the program's "
          "formats (docs/codegen.md \"Tolerances\")")
    return 0


if __name__ == "__main__":
    sys.exit(main())
