"""Writes a 3x3 convolution whose K runs in phases with a B stream long
enough for X20 (docs/codegen.md): 256 -> 256 channels over 7 x 7 pixels,
as ONNX text with pseudo-random weights in multiples of 1/64 (plain
Python, no packages): make_phased_conv.py OUT.onnxtxt."""
import sys

count = 256 * 256 * 3 * 3
state = 12345
values = []
for _ in range(count):
    # A linear congruential generator: the same weights every time.
    state = (state * 1103515245 + 12345) % (1 << 31)
    values.append(repr(((state >> 8) % 129 - 64) / 64.0))
with open(sys.argv[1], "w") as f:
    f.write('<ir_version: 8, opset_import: ["" : 17]>\n')
    f.write("phased_conv (float[1, 256, 7, 7] X) => (float[1, 256, 7, 7] Y) {\n")
    f.write("  W = Constant <value = float[256, 256, 3, 3] {")
    f.write(", ".join(values))
    f.write("}> ()\n")
    f.write("  Y = Conv <kernel_shape = [3, 3], pads = [1, 1, 1, 1]> (X, W)\n")
    f.write("}\n")
