#!/usr/bin/env python3
"""The code generator's models on emu2: compile time, emulated cycles,
effective TFLOPS and the fraction of the half matrix peak, with --verify
against pfvm:cpu.

    /usr/bin/python3 bench/codegen/models.py [--build-dir build]
        [--float-dtypes mixed,float,half,double] [--models mnist_mlp,...]

Each row compiles the model with `mncc compile` (the time is the whole
command) and runs the codegen_dir with `mncc run --device=emu2 --profile
--verify` from random-filled memory. Peak: 512 FLOP per cycle and MAB at
half, 1024 MABs, 750 MHz (docs/target/mncore2.md). The emulator's cycle
counts follow its timing model (T1-T9); the host time is the emulator's
own speed.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# name, model file, input name, shape per batch size
MODELS = [
    ("tiny_cnn", "examples/models/tiny_cnn.onnxtxt", "image",
     {1: "1,3,32,32"}),
    ("mnist_mlp", "test/models/mnist_mlp.onnx", "x",
     {1: "1,784", 16: "16,784"}),
    ("lenet5", "test/models/lenet5.onnx", "x",
     {1: "1,1,32,32", 16: "16,1,32,32"}),
    ("small_cnn", "test/models/small_cnn.onnx", "x",
     {1: "1,3,32,32", 16: "16,3,32,32"}),
]


def first_error(text):
    """The first line that says what went wrong."""
    lines = text.strip().splitlines()
    for line in lines:
        if "error:" in line and "was left as it was" not in line:
            return line
    return lines[-1] if lines else "?"


def run(command):
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    return done, time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--float-dtypes", default="mixed,float")
    parser.add_argument("--models", default=",".join(m[0] for m in MODELS))
    args = parser.parse_args()
    mncc = os.path.join(args.build_dir, "bin", "mncc")
    wanted = set(args.models.split(","))
    print(f"{'model':<11} {'batch':>5} {'dtype':<6} {'compile s':>9} "
          f"{'cycles':>10} {'us':>9} {'TFLOPS':>8} {'% peak':>7} "
          f"{'verify':<6} {'host s':>7}")
    with tempfile.TemporaryDirectory() as scratch:
        for name, path, input_name, shapes in MODELS:
            if name not in wanted:
                continue
            for batch, shape in shapes.items():
                for dtype in args.float_dtypes.split(","):
                    codegen = os.path.join(scratch, f"{name}-{batch}-{dtype}")
                    compiled, seconds = run(
                        [mncc, "compile", os.path.join(ROOT, path), "-o",
                         codegen, f"--input-shape={input_name}:{shape}",
                         f"--float_dtype={dtype}"])
                    if compiled.returncode != 0:
                        reason = first_error(compiled.stderr)
                        print(f"{name:<11} {batch:>5} {dtype:<6} "
                              f"does not compile: {reason[:90]}")
                        continue
                    out = os.path.join(scratch, "out")
                    ran, host = run([mncc, "run", "--device=emu2", codegen,
                                     "--random-inputs", "1", "--output-dir",
                                     out, "--profile", "--verify"])
                    total = re.search(
                        r"total: (\d+) cycles, ([0-9.]+) us at 750 MHz, "
                        r"(\d+) FLOP, ([0-9.]+) TFLOPS effective "
                        r"\(([0-9.]+)% of the half matrix peak\)", ran.stdout)
                    if not total:
                        reason = first_error(ran.stderr)
                        print(f"{name:<11} {batch:>5} {dtype:<6} "
                              f"{seconds:>9.2f} does not run: {reason[:80]}")
                        continue
                    verdicts = re.findall(r"verify .*: (pass|FAIL)", ran.stdout)
                    verdict = ("pass" if verdicts and
                               all(v == "pass" for v in verdicts) else "FAIL")
                    print(f"{name:<11} {batch:>5} {dtype:<6} {seconds:>9.2f} "
                          f"{int(total.group(1)):>10} "
                          f"{float(total.group(2)):>9.2f} "
                          f"{float(total.group(4)):>8.4f} "
                          f"{float(total.group(5)):>7.2f} {verdict:<6} "
                          f"{host:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
