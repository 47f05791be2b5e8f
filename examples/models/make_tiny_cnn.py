"""Writes tiny_cnn.onnxtxt: a small image classifier in the ONNX text syntax.

Conv(3->8, 3x3) Relu MaxPool Conv(8->16, 3x3) Relu GlobalAveragePool
Flatten Gemm(16->10) Softmax, with deterministic pseudo-random weights, so
that the demo and the tests need no downloaded model.
"""

import sys

state = 12345


def uniform():
    global state
    state = (1103515245 * state + 12345) % (1 << 31)
    return state / float(1 << 31) - 0.5


def tensor(name, dims, scale):
    count = 1
    for dim in dims:
        count *= dim
    values = ", ".join("%.4f" % (scale * uniform()) for _ in range(count))
    shape = ", ".join(str(dim) for dim in dims)
    return "float[%s] %s = {%s}" % (shape, name, values)


initializers = [
    tensor("conv1_weight", [8, 3, 3, 3], 0.5),
    tensor("conv1_bias", [8], 0.1),
    tensor("conv2_weight", [16, 8, 3, 3], 0.2),
    tensor("conv2_bias", [16], 0.1),
    tensor("fc_weight", [10, 16], 0.5),
    tensor("fc_bias", [10], 0.1),
]
out = sys.stdout
out.write('<ir_version: 8, opset_import: ["" : 17], producer_name: "mncc-examples">\n')
out.write("tiny_cnn (float[1, 3, 32, 32] image) => (float[1, 10] probabilities)\n")
out.write("<" + ",\n ".join(initializers) + ">\n")
out.write("""{
  c1 = Conv <kernel_shape = [3, 3], pads = [1, 1, 1, 1]> (image, conv1_weight, conv1_bias)
  r1 = Relu (c1)
  p1 = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (r1)
  c2 = Conv <kernel_shape = [3, 3], pads = [1, 1, 1, 1]> (p1, conv2_weight, conv2_bias)
  r2 = Relu (c2)
  g = GlobalAveragePool (r2)
  f = Flatten (g)
  logits = Gemm <transB = 1> (f, fc_weight, fc_bias)
  probabilities = Softmax <axis = 1> (logits)
}
""")
