#!/usr/bin/python3
"""Import speed and memory of mncc against ONNX's own Python loader.

    /usr/bin/python3 bench/onnx/import_bench.py [--build build] [--runs 5] MODEL.onnx...

For each model, runs `mncc summary` (import: parse, checks, shape
inference, the onnx dialect with weights as resources, verification) and,
as the peer, Python's `onnx.load` followed by `onnx.shape_inference`
(python3-onnx, the same libonnx). Prints the median wall time of each, the
peak resident memory of mncc beside the file size, and the ratios.
Targets (issue 3): ResNet-50 under 1 s, peak memory under 2x the file.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

PEER = (
    "import onnx, sys\n"
    "model = onnx.load(sys.argv[1])\n"
    "onnx.shape_inference.infer_shapes(model)\n"
)


def run(command):
    """Wall seconds and peak RSS in bytes of one run of `command`."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if status != 0:
        sys.exit("failed: %s\n%s" % (" ".join(command),
                                    process.stderr.read().decode()))
    return elapsed, usage.ru_maxrss * 1024


def measure(command, runs):
    results = [run(command) for _ in range(runs)]
    return (statistics.median(r[0] for r in results),
            max(r[1] for r in results))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--build", default="build")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("models", nargs="+")
    args = parser.parse_args()
    mncc = os.path.join(args.build, "bin", "mncc")

    print("%-16s %9s %10s %10s %8s %10s %8s" %
          ("model", "file MB", "mncc s", "mncc MB", "RSS/file",
           "onnx.py s", "speedup"))
    for path in args.models:
        size = os.path.getsize(path)
        ours, rss = measure([mncc, "summary", path], args.runs)
        peer, _ = measure([sys.executable, "-c", PEER, path], args.runs)
        name = os.path.splitext(os.path.basename(path))[0]
        print("%-16s %9.1f %10.3f %10.1f %8.2f %10.3f %7.1fx" %
              (name, size / 1e6, ours, rss / 1e6, rss / size, peer,
               peer / ours))


if __name__ == "__main__":
    main()
