"""kiln.InferenceSession as onnxruntime's users call it: run, inputs and outputs, metadata,
providers, options, profiling, loading from bytes."""

import json
import os
import warnings

import numpy as np
import pytest

import kiln


def test_run_returns_every_output_in_model_order(models, xy):
    x, y = xy
    session = kiln.InferenceSession(str(models["two_outputs"]))
    total, product = session.run(None, {"x": x, "y": y})
    np.testing.assert_array_equal(total, x + y)
    np.testing.assert_array_equal(product, x * y)


def test_run_returns_the_named_outputs_in_the_order_asked(models, xy):
    x, y = xy
    session = kiln.InferenceSession(models["two_outputs"], providers=["CPUExecutionProvider"])
    outputs = session.run(["product", "sum"], {"x": x, "y": y})
    assert len(outputs) == 2
    np.testing.assert_array_equal(outputs[0], x * y)
    np.testing.assert_array_equal(outputs[1], x + y)


def test_inputs_and_outputs_describe_names_types_and_symbolic_shapes(models):
    session = kiln.InferenceSession(str(models["two_outputs"]))
    assert [(i.name, i.type, i.shape) for i in session.get_inputs()] == [
        ("x", "tensor(float)", ["batch", 3]), ("y", "tensor(float)", ["batch", 3])]
    assert [o.name for o in session.get_outputs()] == ["sum", "product"]
    assert session.get_outputs()[0].type == "tensor(float)"


def test_container_inputs_and_outputs_have_their_types(models):
    session = kiln.InferenceSession(str(models["containers"]))
    types = {i.name: i.type for i in session.get_inputs() + session.get_outputs()}
    assert types == {"parts": "seq(tensor(float))", "maybe": "optional(tensor(float))", "joined": "tensor(float)",
                     "pair": "seq(tensor(float))", "has": "tensor(bool)"}


def test_model_metadata(models):
    meta = kiln.InferenceSession(str(models["two_outputs"])).get_modelmeta()
    assert meta.producer_name == "kiln-tests"
    assert meta.graph_name == "two_outputs"
    assert meta.domain == "org.kiln.tests"
    assert meta.description == "adds and multiplies"
    assert meta.version == 7
    assert meta.custom_metadata_map == {"author": "kiln", "purpose": "tests"}


def test_a_model_loads_from_bytes(models, xy):
    x, y = xy
    session = kiln.InferenceSession(models["two_outputs"].read_bytes())
    np.testing.assert_array_equal(session.run(["sum"], {"x": x, "y": y})[0], x + y)
    assert session.report()["model"]["path"] == "<bytes>"


def test_providers(models, xy):
    x, y = xy
    # onnxruntime's name, then every provider of the build's registry
    assert kiln.get_available_providers()[0] == "CPUExecutionProvider"
    assert {"cpu", "cpu_ref"} <= set(kiln.get_available_providers())
    reference = kiln.InferenceSession(str(models["two_outputs"]), providers=["cpu_ref"])
    assert reference.get_providers() == ["cpu_ref"]
    np.testing.assert_array_equal(reference.run(["sum"], {"x": x, "y": y})[0], x + y)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        session = kiln.InferenceSession(str(models["two_outputs"]), providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
    assert any("CUDAExecutionProvider" in str(w.message) for w in caught)
    assert session.get_providers() == ["CPUExecutionProvider"]


def test_session_options_reach_the_session(models, xy):
    x, y = xy
    options = kiln.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = kiln.GraphOptimizationLevel.ORT_DISABLE_ALL
    options.add_session_config_entry("kiln.mode", "eager")
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")  # onnxruntime's: kept, no effect
    session = kiln.InferenceSession(str(models["two_outputs"]), sess_options=options)
    report = session.report()
    assert report["options"]["threads"] == "1"
    assert report["options"]["optimize"] == "false"
    assert report["execution"]["mode"] == "eager"
    assert session.get_session_options().get_session_config_entry("session.intra_op.allow_spinning") == "0"
    np.testing.assert_array_equal(session.run(["product"], {"x": x, "y": y})[0], x * y)


def test_a_free_dimension_override_fixes_the_dim(models):
    options = kiln.SessionOptions()
    options.add_free_dimension_override_by_name("batch", 2)
    session = kiln.InferenceSession(str(models["two_outputs"]), options)
    ones = np.ones((2, 3), np.float32)
    assert session.run(["sum"], {"x": ones, "y": ones})[0].shape == (2, 3)
    with pytest.raises(kiln.ShapeGuardFailure, match="batch"):
        session.run(None, {"x": np.ones((3, 3), np.float32), "y": np.ones((3, 3), np.float32)})


def test_profiling_writes_a_chrome_trace_of_the_runs(models, xy, tmp_path):
    x, y = xy
    options = kiln.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = str(tmp_path / "trace")
    session = kiln.InferenceSession(str(models["two_outputs"]), options)
    for _ in range(3):
        session.run(None, {"x": x, "y": y})
    path = session.end_profiling()
    assert os.path.dirname(path) == str(tmp_path)
    with open(path) as f:
        events = json.load(f)["traceEvents"]
    assert len(events) >= 3 * 2  # two kernels (Add, Mul) per run, unless fused into one
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)
    assert session.end_profiling() == ""  # ended


def test_the_optimized_model_is_written_as_an_artifact_that_loads(models, xy, tmp_path):
    x, y = xy
    options = kiln.SessionOptions()
    options.optimized_model_filepath = str(tmp_path / "optimized.kiln")
    kiln.InferenceSession(str(models["two_outputs"]), options)
    artifact = kiln.InferenceSession(str(tmp_path / "optimized.kiln"))
    np.testing.assert_array_equal(artifact.run(["sum"], {"x": x, "y": y})[0], x + y)
    assert artifact.report()["execution"]["mode"] == "aot"


def test_warm_up_makes_the_session_ready(models, xy):
    x, y = xy
    session = kiln.InferenceSession(str(models["two_outputs"]))
    assert session.state == "loaded"
    session.warm_up({"x": x, "y": y}, runs=2)
    assert session.state == "ready"
    assert session.report()["warmup"]["runs"] == 2
