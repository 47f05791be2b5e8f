#!/usr/bin/env python3
"""Runs every mncc test through lit and prints one summary line.

lit runs the FileCheck suite (test/) and, through its GoogleTest format, every
unit test binary (test/unit). The last line is "N passed, N failed, N skipped";
the exit status is non-zero when anything failed or nothing ran.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

LIT = "/usr/lib/llvm-19/build/utils/lit/lit.py"
PASSED = {"PASS", "XFAIL", "FLAKYPASS"}
SKIPPED = {"UNSUPPORTED", "SKIPPED", "EXCLUDED"}


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--build-dir", default="build")
    parser.add_argument("--jobs", "-j", default=str(os.cpu_count() or 2))
    parser.add_argument("paths", nargs="*",
                        help="tests or folders under the build's test/ "
                        "(default: all)")
    args = parser.parse_args()

    suite = os.path.join(args.build_dir, "test")
    # A test named by its source path (test/graph/x.mlir) runs from the
    # build tree, where lit finds the generated site configuration.
    paths = [os.path.join(args.build_dir, path)
             if path.startswith("test") else path
             for path in args.paths] or [suite]
    with tempfile.TemporaryDirectory() as scratch:
        report = os.path.join(scratch, "lit.json")
        command = [sys.executable, LIT, "-sv", "-j", args.jobs,
                   "--output", report] + paths
        lit = subprocess.run(command)
        results = []
        if os.path.exists(report):
            with open(report) as handle:
                results = json.load(handle).get("tests", [])

    passed = sum(1 for test in results if test["code"] in PASSED)
    skipped = sum(1 for test in results if test["code"] in SKIPPED)
    failed = len(results) - passed - skipped
    if not results and lit.returncode != 0:
        failed = 1  # lit itself failed before running anything
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    if failed or lit.returncode != 0 or passed == 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
