#!/usr/bin/env bash
# What mncc can do today, on the bundled examples. It grows with each stage.
set -euo pipefail
build=${1:-build}
bin="$build/bin"
here="$(cd "$(dirname "$0")/.." && pwd)"

section() { printf '\n=== %s ===\n' "$1"; }

section "mncc-opt: the dialects and passes it knows"
"$bin/mncc-opt" --version | tail -n 1
"$bin/mncc-opt" --help | grep -E "Available Dialects|--mngraph-"

section "A graph placed on MN-Core 2 (examples/graph/layout-switches.mlir)"
grep -v '^//' "$here/examples/graph/layout-switches.mlir"

section "Canonicalized: the switch chain x -> a -> b is one switch x -> b"
"$bin/mncc-opt" --canonicalize "$here/examples/graph/layout-switches.mlir"

section "With the layouts stripped: the host-side computation"
"$bin/mncc-opt" --mngraph-strip-layouts "$here/examples/graph/layout-switches.mlir"
