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


def compile_model(mncc, model, codegen, options):
    """`mncc compile`; returns (seconds, None) or (seconds, the error)."""
    compiled, seconds = run([mncc, "compile", model, "-o", codegen] + options)
    if compiled.returncode != 0:
        return seconds, first_error(compiled.stderr)
    return seconds, None


def run_emu2(mncc, codegen, inputs, out):
    """`mncc run --device=emu2 --profile --verify` on a codegen_dir, with
    `inputs` the input arguments (--random-inputs SEED or --input ...).
    Returns a dict of the profile's figures, or a string saying why not."""
    ran, host = run([mncc, "run", "--device=emu2", codegen] + inputs +
                    ["--output-dir", out, "--profile", "--verify"])
    total = re.search(
        r"total: (\d+) cycles, ([0-9.]+) us at 750 MHz, "
        r"(\d+) FLOP, ([0-9.]+) TFLOPS effective "
        r"\(([0-9.]+)% of the half matrix peak\)", ran.stdout)
    if not total:
        return first_error(ran.stderr)
    busy = re.search(r"busy: MV transfers (\d+) cycles, MAU (\d+) cycles; "
                     r"host time ([0-9.]+) s", ran.stdout)
    # Per output: the verdict against pfvm:cpu, and the one against
    # pfvm:cpu in the program's formats when the first is "beyond it"
    # (docs/codegen.md "Tolerances").
    verdicts = []
    for exact, formats in re.findall(
            r"^verify .*: (pass|FAIL|beyond it)\n"
            r"(?:  first failure: .*\n)?"
            r"(?:  against pfvm:cpu in the program's formats: .*: "
            r"(pass|FAIL))?", ran.stdout, re.MULTILINE):
        verdicts.append("pass" if exact == "pass" else
                        "pass*" if formats == "pass" else "FAIL")
    # Each output that failed, as --verify said it (error and tolerance).
    failures = [line[len("verify "):] for line in ran.stdout.splitlines()
                if line.startswith("verify ") and line.endswith("FAIL")]
    return {
        "cycles": int(total.group(1)),
        "us": float(total.group(2)),
        "tflops": float(total.group(4)),
        "peak": float(total.group(5)),
        "mv_busy": int(busy.group(1)) if busy else 0,
        "mau_busy": int(busy.group(2)) if busy else 0,
        # The emulator's own time, without the compile and pfvm:cpu.
        "emulator_s": float(busy.group(3)) if busy else host,
        # pass*: beyond the float_dtype's constant tolerance, within the
        # tolerance of the reference in the program's formats.
        "verify": ("FAIL" if not verdicts or "FAIL" in verdicts else
                   "pass*" if "pass*" in verdicts else "pass"),
        "host_s": host,
        "failures": failures,
    }


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
                    seconds, error = compile_model(
                        mncc, os.path.join(ROOT, path), codegen,
                        [f"--input-shape={input_name}:{shape}",
                         f"--float_dtype={dtype}"])
                    if error:
                        print(f"{name:<11} {batch:>5} {dtype:<6} "
                              f"does not compile: {error[:90]}")
                        continue
                    figures = run_emu2(mncc, codegen, ["--random-inputs", "1"],
                                       os.path.join(scratch, "out"))
                    if isinstance(figures, str):
                        print(f"{name:<11} {batch:>5} {dtype:<6} "
                              f"{seconds:>9.2f} does not run: {figures[:80]}")
                        continue
                    print(f"{name:<11} {batch:>5} {dtype:<6} {seconds:>9.2f} "
                          f"{figures['cycles']:>10} {figures['us']:>9.2f} "
                          f"{figures['tflops']:>8.4f} {figures['peak']:>7.2f} "
                          f"{figures['verify']:<6} {figures['host_s']:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
