"""kiln.Stream and onnxruntime-style IOBinding: carried state equals runs chained by hand, bound
arrays are read and written in place, kept outputs are never overwritten, reset starts over,
streams run in threads at once, and misuse raises kiln.InvalidArgument naming the input or output."""

import threading

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import kiln
from conftest import opset_model, save


@pytest.fixture(scope="module")
def cell(tmp_path_factory):
    """x: float[N, 16], h: float[N, 8] -> h_out = tanh(x Wx + h Wh), y = h_out Wy: float[N, 4]."""
    rng = np.random.default_rng(3)
    weights = {name: (rng.standard_normal(shape) * 0.3).astype(np.float32)
               for name, shape in (("wx", (16, 8)), ("wh", (8, 8)), ("wy", (8, 4)))}
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "wx"], ["xw"]), helper.make_node("MatMul", ["h", "wh"], ["hw"]),
         helper.make_node("Add", ["xw", "hw"], ["pre"]), helper.make_node("Tanh", ["pre"], ["h_out"]),
         helper.make_node("MatMul", ["h_out", "wy"], ["y"])],
        "cell",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 16]),
         helper.make_tensor_value_info("h", TensorProto.FLOAT, ["N", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 4]),
         helper.make_tensor_value_info("h_out", TensorProto.FLOAT, ["N", 8])],
        [numpy_helper.from_array(w, name) for name, w in weights.items()])
    return save(opset_model(graph), tmp_path_factory.mktemp("stream"), "cell")


def chunks(count, batch=1, seed=11):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((batch, 16)).astype(np.float32) for _ in range(count)]


def chained_by_hand(session, xs, h):
    ys = []
    for x in xs:
        y, h = session.run(None, {"x": x, "h": h})
        ys.append(y)
    return ys


def test_carried_state_equals_runs_chained_by_hand_and_reset_starts_over(cell):
    session = kiln.InferenceSession(str(cell))
    xs = chunks(25)
    h0 = np.zeros((1, 8), np.float32)
    expected = chained_by_hand(session, xs, h0)
    stream = session.stream(carry={"h_out": "h"}, initial={"h": h0})
    for round_ in range(2):
        for k, x in enumerate(xs):
            y, = stream.run({"x": x}, ["y"])
            assert np.array_equal(y, expected[k]), (round_, k)
        stream.reset()
    assert stream.calls == 50
    assert not h0.any(), "the initial state was written"
    assert session.report()["execution"]["streams"] == 1


def test_zeros_bound_by_the_stream_start_the_carried_state(cell):
    session = kiln.InferenceSession(str(cell))
    xs = chunks(6)
    expected = chained_by_hand(session, xs, np.zeros((1, 8), np.float32))
    stream = session.stream(carry={"h_out": "h"})
    stream.bind_zeros("h", (1, 8))
    for round_ in range(2):
        for k, x in enumerate(xs):
            y, = stream.run({"x": x}, ["y"])
            assert np.array_equal(y, expected[k]), (round_, k)
        stream.reset()
    with pytest.raises(kiln.InvalidArgument):
        stream.bind_zeros("no_such_input", (1, 8))


def test_bound_arrays_are_read_and_written_in_place(cell):
    session = kiln.InferenceSession(str(cell))
    x = np.zeros((1, 16), np.float32)
    h = np.full((1, 8), 0.5, np.float32)
    y = np.empty((1, 4), np.float32)
    stream = session.stream()
    stream.bind_input("x", x)
    stream.bind_input("h", h)
    stream.bind_output("y", y)
    for k, chunk in enumerate(chunks(5)):
        x[...] = chunk  # refilled in place: the stream reads the bound array
        outputs = stream.run()
        assert outputs[0] is y
        expected, _ = session.run(None, {"x": chunk, "h": h})
        assert np.array_equal(y, expected), k


def test_kept_outputs_are_not_overwritten(cell):
    session = kiln.InferenceSession(str(cell))
    stream = session.stream(carry={"h_out": "h"}, initial={"h": np.zeros((1, 8), np.float32)})
    kept = [stream.run({"x": x}, ["y", "h_out"]) for x in chunks(6)]
    expected = chained_by_hand(session, chunks(6), np.zeros((1, 8), np.float32))
    for k, (y, _) in enumerate(kept):
        assert np.array_equal(y, expected[k]), k


def test_streams_run_in_threads_at_once(cell):
    session = kiln.InferenceSession(str(cell))
    xs = chunks(40)
    expected = chained_by_hand(session, xs, np.zeros((1, 8), np.float32))
    failures = []

    def follow():
        stream = session.stream(carry={"h_out": "h"}, initial={"h": np.zeros((1, 8), np.float32)})
        for k, x in enumerate(xs):
            if not np.array_equal(stream.run({"x": x}, ["y"])[0], expected[k]):
                failures.append(k)

    threads = [threading.Thread(target=follow) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_misuse_names_the_input_or_output(cell):
    session = kiln.InferenceSession(str(cell))
    stream = session.stream()
    with pytest.raises(kiln.InvalidArgument, match="'nope'"):
        stream.bind_input("nope", np.zeros((1, 16), np.float32))
    with pytest.raises(kiln.InvalidArgument, match="'x'"):
        stream.bind_input("x", np.zeros((1, 16), np.int64))
    stream.bind_input("x", np.zeros((1, 16), np.float32))
    with pytest.raises(kiln.InvalidArgument, match="'h'"):
        stream.run()  # h is neither bound nor carried
    with pytest.raises(kiln.InvalidArgument, match="'y'"):
        stream.bind_output("y", np.zeros((4, 2), np.float32).T[:1])  # not C-ordered
    read_only = np.zeros((1, 4), np.float32)
    read_only.flags.writeable = False
    with pytest.raises(kiln.InvalidArgument, match="'y'"):
        stream.bind_output("y", read_only)
    stream.bind_input("h", np.zeros((1, 8), np.float32))
    stream.bind_output("y", np.zeros((2, 4), np.float32))
    with pytest.raises(kiln.InvalidArgument, match="'y'"):
        stream.run()  # a buffer of another shape
    stream.carry("h_out", "h")
    with pytest.raises(kiln.InvalidArgument, match="'h'"):
        stream.carry("y", "h")  # h is carried into already


def test_terminate_cancels_a_call(cell):
    session = kiln.InferenceSession(str(cell))
    stream = session.stream(carry={"h_out": "h"}, initial={"h": np.zeros((1, 8), np.float32)})
    options = kiln.RunOptions()
    options.terminate = True
    with pytest.raises(kiln.Cancelled):
        stream.run({"x": chunks(1)[0]}, run_options=options)
    assert stream.calls == 0


def test_io_binding_as_onnxruntime_scripts_use_it(cell):
    session = kiln.InferenceSession(str(cell))
    x, h = chunks(1)[0], np.full((1, 8), 0.25, np.float32)
    expected_y, expected_h = session.run(None, {"x": x, "h": h})
    binding = session.io_binding()
    binding.bind_cpu_input("x", x)
    binding.bind_input("h", "cpu", 0, np.float32, list(h.shape), h.ctypes.data)
    y = np.empty((1, 4), np.float32)
    binding.bind_output("y", "cpu", 0, np.float32, [1, 4], y.ctypes.data)
    binding.bind_output("h_out")
    session.run_with_iobinding(binding)
    assert np.array_equal(y, expected_y)  # written at the bound address
    copies = binding.copy_outputs_to_cpu()
    assert np.array_equal(copies[0], expected_y) and np.array_equal(copies[1], expected_h)
    values = binding.get_outputs()
    assert values[1].shape() == [1, 8] and values[1].data_type() == "tensor(float)"
    assert np.array_equal(values[1].numpy(), expected_h)
    with pytest.raises(kiln.InvalidArgument, match="cuda"):
        binding.bind_output("y", "cuda")
    binding.clear_binding_inputs()
    with pytest.raises(kiln.InvalidArgument, match="'x'"):
        session.run_with_iobinding(binding)
