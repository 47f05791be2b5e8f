#!/usr/bin/python3
"""pfvm:cpu against ONNX Runtime, batch 1, same thread count, side by side.

    (cd bench/reference && npm_config_onnxruntime_node_install=skip npm install)
    /usr/bin/python3 bench/models/export_torchvision.py build/bench-models
    /usr/bin/python3 bench/reference/pfvm_vs_ort.py [--threads 2] [--runs 10]
                                                    [--rounds 5]

For each model, both run the same random input (seed 0) RUNS times after a
warm-up, in ROUNDS rounds that alternate which of the two goes first, so
that a change in the machine's background load hits both alike. The script
prints the median over rounds of each one's median latency, the median of
the per-round ratios with their range, and the largest difference between
the outputs. Target (issue 6): pfvm:cpu within 2x of ONNX Runtime on every
model.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["resnet18", "resnet50", "mobilenet_v2", "squeezenet1_1"]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--models", default=os.path.join("build", "bench-models"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    mncc = os.path.join(args.build, "bin", "mncc")
    environment = dict(os.environ, MNCC_REFERENCE_THREADS=str(args.threads))

    print("%-14s %12s %12s %8s %15s %12s" %
          ("model", "pfvm:cpu ms", "ORT ms", "ratio", "ratio range",
           "max |diff|"))
    with tempfile.TemporaryDirectory() as scratch:
        image = os.path.join(scratch, "input.npy")
        np.save(image, np.random.RandomState(0)
                .randn(1, 3, 224, 224).astype(np.float32))
        for name in MODELS:
            model = os.path.join(args.models, name + ".onnx")
            if not os.path.exists(model):
                sys.exit("missing %s: run bench/models/export_torchvision.py"
                         % model)
            out_dir = os.path.join(scratch, name)
            peer_out = os.path.join(scratch, name + ".ort.bin")

            def run_ours():
                ours = subprocess.run(
                    [mncc, "run", "--device=pfvm:cpu", model,
                     "--input", "input=" + image, "--repeat", str(args.runs),
                     "--output-dir", out_dir],
                    env=environment, capture_output=True, text=True,
                    check=True)
                return float(re.search(r"median ([0-9.]+) ms",
                                       ours.stdout).group(1))

            def run_peer():
                peer = subprocess.run(
                    ["node", os.path.join(HERE, "ort_run.js"), model, image,
                     str(args.runs), str(args.threads), peer_out],
                    capture_output=True, text=True, check=True)
                return float(re.search(r"median_ms ([0-9.]+)",
                                       peer.stdout).group(1))

            ours_times, peer_times, ratios = [], [], []
            for round_index in range(args.rounds):
                if round_index % 2 == 0:
                    ours_ms, peer_ms = run_ours(), run_peer()
                else:
                    peer_ms, ours_ms = run_peer(), run_ours()
                ours_times.append(ours_ms)
                peer_times.append(peer_ms)
                ratios.append(ours_ms / peer_ms)
            ours_output = np.load(os.path.join(out_dir, "output.npy"))
            peer_output = np.fromfile(peer_out, dtype=np.float32)
            difference = np.abs(ours_output.ravel() - peer_output).max()
            print("%-14s %12.2f %12.2f %7.2fx %6.2f-%5.2fx %12.2e" %
                  (name, np.median(ours_times), np.median(peer_times),
                   np.median(ratios), min(ratios), max(ratios), difference))


if __name__ == "__main__":
    main()
