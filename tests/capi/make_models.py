"""Writes the small models the C API test needs besides the exported parity models:
unknown_op.onnx (an op of a domain no provider has). Usage: make_models.py OUT_DIR"""

import os
import sys

import onnx
from onnx import TensorProto, helper

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
graph = helper.make_graph([helper.make_node("Frobnicate", ["x"], ["y"], domain="com.example")], "unknown_op",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
model.ir_version = 8
onnx.save(model, os.path.join(out, "unknown_op.onnx"))
