"""Writes the binary models with named nodes that the tests use
(test/onnx/import-errors.test, test/tools/mncc/run-sizes.test):
make_named_models.py OUT_DIR (needs the onnx package; run by hand, the
outputs are committed: ONNX's text syntax in libonnx 1.14 has no node
names)."""
import os
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]

# A verifier error on a named node: Softmax's axis as a float.
softmax = helper.make_node("Softmax", ["X"], ["Y"], name="soft_max")
softmax.attribute.append(helper.make_attribute("axis", 1.5))
graph = helper.make_graph(
    [softmax], "g",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 3])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, os.path.join(out, "named_attribute_type.onnx"))

# A run-time error on a named node: ConstantOfShape of a shape from data.
fill = helper.make_node("ConstantOfShape", ["S"], ["Y"], name="fill")
graph = helper.make_graph(
    [fill], "g",
    [helper.make_tensor_value_info("S", TensorProto.INT64, [2])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, os.path.join(out, "named_constant_of_shape.onnx"))
