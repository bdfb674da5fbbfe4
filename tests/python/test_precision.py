"""Reduced precision from Python: SessionOptions.precision, keep_fp32, accuracy_budget, on_budget and
the calibration options reach the session; the report measures the reduced model against fp32 on generated or given validation
inputs; a broken budget is kiln.NumericalIssue, or under on_budget "fallback" keeps products in fp32."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import kiln
from conftest import opset_model, save


def dense_model(tmp_path, rng):
    """y[4, 8] = x[4, 16] @ w (random constant weights): one matrix product, named "dense"."""
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="dense")], "dense",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])],
        [numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), "w")])
    return str(save(opset_model(graph), tmp_path, "dense"))


def test_precision_is_an_option_and_its_accuracy_is_in_the_report(tmp_path):
    """SessionOptions.precision reduces a matrix product to int8 and the report measures it against fp32;
    a budget it breaks fails the load as kiln.NumericalIssue."""
    rng = np.random.default_rng(0)
    path = dense_model(tmp_path, rng)
    options = kiln.SessionOptions()
    options.precision = "int8"
    session = kiln.InferenceSession(path, options)
    precision = session.report()["precision"]
    assert precision["requested"] == "int8" and precision["reduced_products"] == 1
    assert precision["accuracy"]["outputs"][0]["cosine"] > 0.99
    options.accuracy_budget = "abs=0"
    with pytest.raises(kiln.NumericalIssue, match="'y'"):
        kiln.InferenceSession(path, options)
    options.on_budget = "fallback"  # the one product back in fp32 keeps even abs=0
    precision = kiln.InferenceSession(path, options).report()["precision"]
    assert precision["reduced_products"] == 0 and "fallback kept 1 of 1" in precision["fallback"][-1]
    options.on_budget = "fail"
    options.accuracy_budget = ""
    options.validation_inputs = [{"x": rng.standard_normal((4, 16)).astype(np.float32)} for _ in range(2)]
    accuracy = kiln.InferenceSession(path, options).report()["precision"]["accuracy"]
    assert accuracy["validation_inputs"] == "given" and accuracy["validation_count"] == 2
    options.validation_inputs = [{"image": np.zeros((4, 16), np.float32)}]
    with pytest.raises(kiln.InvalidArgument, match="image"):
        kiln.InferenceSession(path, options)


def test_calibration_inputs_fix_the_int8_input_scales(tmp_path):
    """SessionOptions.calibration_inputs and calibration_method: static int8, the product's input
    scale fixed from the calibration sets (min-max: their range, 0 included, over 255 steps)."""
    rng = np.random.default_rng(1)
    path = dense_model(tmp_path, rng)
    sets = [{"x": rng.standard_normal((4, 16)).astype(np.float32)} for _ in range(3)]
    options = kiln.SessionOptions()
    options.precision = "int8"
    options.calibration_inputs = sets
    precision = kiln.InferenceSession(path, options).report()["precision"]
    assert precision["calibration"]["method"] == "minmax" and precision["calibration"]["count"] == 3
    low = min(0.0, min(float(s["x"].min()) for s in sets))
    high = max(0.0, max(float(s["x"].max()) for s in sets))
    assert precision["products"][0]["input_quantization"]["scale"] == pytest.approx((high - low) / 255, rel=1e-6)
    assert precision["accuracy"]["validation_inputs"] == "calibration"
    options.calibration_method = "entropy"
    assert kiln.InferenceSession(path, options).report()["precision"]["calibration"]["method"] == "entropy"
    options.calibration_method = "median"
    with pytest.raises(kiln.InvalidArgument, match="median"):
        kiln.InferenceSession(path, options)
    options.calibration_method = "minmax"
    options.calibration_inputs = [{"x": np.full((4, 16), np.nan, np.float32)}]
    with pytest.raises(kiln.InvalidArgument, match="calibration_inputs\\[0\\].*all NaN"):
        kiln.InferenceSession(path, options)


def test_an_artifact_keeps_the_precision_of_products_inside_control_flow_bodies(tmp_path):
    """Every product in an If's branches: the artifact records the compile's precision and its
    keep_fp32 choice, so that the bodies, compiled when a run reaches them, take them again."""
    rng = np.random.default_rng(2)

    def branch(name):
        return helper.make_graph(
            [helper.make_node("MatMul", ["x", name + "_w"], [name + "_y"], name=name + "_product")], name, [],
            [helper.make_tensor_value_info(name + "_y", TensorProto.FLOAT, [4, 8])],
            [numpy_helper.from_array(rng.standard_normal((16, 8)).astype(np.float32), name + "_w")])

    graph = helper.make_graph(
        [helper.make_node("If", ["flag"], ["y"], name="choose", then_branch=branch("then"), else_branch=branch("else"))], "choose",
        [helper.make_tensor_value_info("flag", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8])])
    path = str(save(opset_model(graph), tmp_path, "choose"))
    feeds = {"flag": np.array(True), "x": rng.standard_normal((4, 16)).astype(np.float32)}
    options = kiln.SessionOptions()
    options.precision = "int8"
    options.keep_fp32 = ["else_product"]
    options.validation_inputs = [feeds]
    compiled = kiln.InferenceSession(path, options)
    expected = compiled.run(None, feeds)[0]
    artifact = tmp_path / "choose.kiln"
    compiled.write_artifact(artifact, warmup_inputs=feeds)
    loaded = kiln.InferenceSession(str(artifact))
    np.testing.assert_array_equal(loaded.run(None, feeds)[0], expected)
    loaded.run(None, dict(feeds, flag=np.array(False)))
    precision = loaded.report()["precision"]
    assert precision["requested"] == "int8"
    by_node = {p["node"]: p for p in precision["products"]}
    assert by_node["then_product"]["precision"] == "int8"
    assert by_node["else_product"]["precision"] == "fp32" and "keep_fp32" in by_node["else_product"]["reason"]
