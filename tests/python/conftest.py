"""Small ONNX models for the kiln package's tests, written with Debian's python3-onnx (opset 17,
IR 8: what its checker takes) into a session-wide temporary folder."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper


def save(model, folder, name):
    onnx.checker.check_model(model)
    path = folder / (name + ".onnx")
    onnx.save(model, str(path))
    return path


def opset_model(graph, opset=17, **fields):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], **fields)
    model.ir_version = 8
    return model


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    paths = {}

    # x, y: float[batch, 3] -> sum = x + y, product = x * y; with metadata.
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "y"], ["sum"], name="add"), helper.make_node("Mul", ["x", "y"], ["product"], name="mul")],
        "two_outputs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 3]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 3])],
        [helper.make_tensor_value_info("sum", TensorProto.FLOAT, ["batch", 3]),
         helper.make_tensor_value_info("product", TensorProto.FLOAT, ["batch", 3])])
    model = opset_model(graph, producer_name="kiln-tests", producer_version="1.0", model_version=7, doc_string="adds and multiplies")
    model.domain = "org.kiln.tests"
    helper.set_model_props(model, {"author": "kiln", "purpose": "tests"})
    paths["two_outputs"] = save(model, folder, "two_outputs")

    # One input and output per dtype, through ops that compute (not only move) where Kiln has them.
    graph = helper.make_graph(
        [helper.make_node("Neg", ["ids"], ["neg_ids"]), helper.make_node("Not", ["mask"], ["not_mask"]),
         helper.make_node("Abs", ["half"], ["abs_half"]), helper.make_node("Identity", ["words"], ["same_words"]),
         helper.make_node("Cast", ["ids"], ["ids_as_float"], to=TensorProto.FLOAT)],
        "dtypes",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [2, 3]),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, [4]),
         helper.make_tensor_value_info("half", TensorProto.FLOAT16, [5]),
         helper.make_tensor_value_info("words", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("neg_ids", TensorProto.INT64, [2, 3]),
         helper.make_tensor_value_info("not_mask", TensorProto.BOOL, [4]),
         helper.make_tensor_value_info("abs_half", TensorProto.FLOAT16, [5]),
         helper.make_tensor_value_info("same_words", TensorProto.STRING, [2]),
         helper.make_tensor_value_info("ids_as_float", TensorProto.FLOAT, [2, 3])])
    paths["dtypes"] = save(opset_model(graph), folder, "dtypes")

    # A sequence in (concatenated) and out (constructed), and an optional in.
    seq_float = helper.make_sequence_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, ["rows", 2]))
    opt_float = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [2]))
    graph = helper.make_graph(
        [helper.make_node("ConcatFromSequence", ["parts"], ["joined"], axis=0),
         helper.make_node("SequenceConstruct", ["joined", "joined"], ["pair"]),
         helper.make_node("OptionalHasElement", ["maybe"], ["has"])],
        "containers",
        [helper.make_value_info("parts", seq_float), helper.make_value_info("maybe", opt_float)],
        [helper.make_tensor_value_info("joined", TensorProto.FLOAT, ["total", 2]), helper.make_value_info("pair", seq_float),
         helper.make_tensor_value_info("has", TensorProto.BOOL, [])])
    paths["containers"] = save(opset_model(graph), folder, "containers")

    # An op no provider has (a custom domain).
    graph = helper.make_graph([helper.make_node("Frobnicate", ["x"], ["y"], domain="com.example")], "unknown_op",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.example", 1)])
    model.ir_version = 8
    path = folder / "unknown_op.onnx"
    onnx.save(model, str(path))
    paths["unknown_op"] = path
    return paths


@pytest.fixture
def xy():
    rng = np.random.default_rng(7)
    return rng.standard_normal((2, 3)).astype(np.float32), rng.standard_normal((2, 3)).astype(np.float32)
