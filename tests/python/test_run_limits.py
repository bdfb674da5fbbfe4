"""Run limits from Python: RunOptions.timeout_ms ends a long Loop with kiln.Cancelled and the
session runs on; SessionOptions.max_loop_iterations refuses a Loop above it, naming the node;
SessionOptions.memory_limit refuses a run past it with kiln.AllocationFailure (a MemoryError)."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import kiln
from conftest import opset_model, save


@pytest.fixture(scope="module")
def loop(tmp_path_factory):
    """x: float[1], M: int64 scalar -> Loop 'count_up' (M iterations of x + 1) -> y."""
    body = helper.make_graph(
        [helper.make_node("Add", ["x_in", "one"], ["x_out"]), helper.make_node("Identity", ["cond_in"], ["cond_out"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []), helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [1])],
        [numpy_helper.from_array(np.ones(1, np.float32), "one")])
    graph = helper.make_graph(
        [helper.make_node("Loop", ["M", "", "x"], ["y"], name="count_up", body=body)], "loop",
        [helper.make_tensor_value_info("M", TensorProto.INT64, []), helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    return save(opset_model(graph), tmp_path_factory.mktemp("limits"), "loop")


def feeds(trip_count):
    return {"M": np.array(trip_count, np.int64), "x": np.zeros(1, np.float32)}


def test_timeout_cancels_a_long_loop_and_the_session_runs_on(loop):
    options = kiln.SessionOptions()
    options.max_loop_iterations = 0  # unbounded: only the deadline stops it
    session = kiln.InferenceSession(str(loop), options)
    run_options = kiln.RunOptions()
    run_options.timeout_ms = 50
    with pytest.raises(kiln.Cancelled, match=r"deadline \(timeout 50 ms\)"):
        session.run(None, feeds(10**12), run_options)
    assert session.run(None, feeds(4), run_options)[0][0] == 4.0


def test_a_loop_above_the_bound_is_refused_naming_the_node(loop):
    options = kiln.SessionOptions()
    options.max_loop_iterations = 100
    session = kiln.InferenceSession(str(loop), options)
    with pytest.raises(kiln.InvalidArgument, match="count_up"):
        session.run(None, feeds(101))
    assert session.run(None, feeds(100))[0][0] == 100.0


def test_a_run_past_the_memory_limit_is_refused_and_the_session_runs_on(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="relu")], "relu",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 64])])
    options = kiln.SessionOptions()
    options.memory_limit = 1 << 20
    session = kiln.InferenceSession(str(save(opset_model(graph), tmp_path, "relu")), options)
    with pytest.raises(MemoryError, match="memory limit 1048576 bytes"):
        session.run(None, {"x": np.ones((8192, 64), np.float32)})  # a 2 MiB output
    assert session.run(None, {"x": -np.ones((2, 64), np.float32)})[0].sum() == 0.0

