"""Writes a model in the ONNX text syntax with one large initializer."""
import sys

count = int(sys.argv[1])
values = ", ".join("%d.5" % (i % 7) for i in range(count))
print('<ir_version: 8, opset_import: ["" : 17]>')
print("large (float[%d] X) => (float[%d] Y)" % (count, count))
print("<float[%d] weight = {%s}>" % (count, values))
print("{")
print("  Y = Mul(X, weight)")
print("}")
