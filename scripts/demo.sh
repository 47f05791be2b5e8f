#!/usr/bin/env bash
# What mncc can do today, on the bundled examples. It grows with each stage.
set -euo pipefail
build=${1:-build}
bin="$build/bin"
here="$(cd "$(dirname "$0")/.." && pwd)"
model="$here/examples/models/tiny_cnn.onnxtxt"
gather_layout='((75_Time:4, 8_L2B:1, 16_MAB:1, 4:1, 4:4), (4_Time:1, 24:16, 4_W:1, 4_PE:1); B@[L1B])'

section() { printf '\n=== %s ===\n' "$1"; }

section "1. An ONNX model: what it holds (mncc summary)"
"$bin/mncc" summary "$model"

section "2. The ONNX stage: the model as MLIR (mncc-translate --import-onnx)"
"$bin/mncc-translate" --import-onnx "$model" --mlir-elide-resource-strings-if-larger=64 |
  head -n 20

section "3. MN-Core 2 layouts: where row 1000, column 37 of a 151936x1536 embedding lives"
echo "layout: $gather_layout"
"$bin/mncc-layout" locate "$gather_layout" --index 1000,37 | head -n 3
echo "... one copy on each of the 8 L1B (B@[L1B])"

section "4. The optimized graph: layout switches fold (mncc-opt --canonicalize)"
"$bin/mncc-opt" --canonicalize "$here/examples/graph/layout-switches.mlir"

section "5. The same graph with layouts stripped: the host computation"
"$bin/mncc-opt" --mngraph-strip-layouts "$here/examples/graph/layout-switches.mlir"

section "6. pfvm:cpu, the host reference executor, runs the model (mncc run)"
"$bin/mncc" run --device=pfvm:cpu "$model" --random-inputs 0 \
  --output-dir "$build/demo-out" --repeat 20 --profile

section "7. The compiler: the phases that exist, into a codegen_dir (mncc compile)"
"$bin/mncc" compile "$model" -o "$build/demo-codegen" --option_json=O1 2>&1
(cd "$build/demo-codegen" && find . -type f | sort)
sed -n '/^accepted, not implemented:/,/^$/p' "$build/demo-codegen/compile.log"
