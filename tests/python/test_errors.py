"""Every failure is a kiln.KilnError subclass naming what is wrong, and the interpreter survives
it: bad files, unknown operators, wrong inputs, guards, corrupted artifacts, bad options."""

import numpy as np
import pytest

import kiln


def test_the_classes_form_one_hierarchy():
    for cls in (kiln.InvalidModel, kiln.UnsupportedOperator, kiln.UnsupportedTarget, kiln.InvalidArgument,
                kiln.ShapeGuardFailure, kiln.AllocationFailure, kiln.BackendFailure, kiln.NumericalIssue,
                kiln.IntegrityFailure, kiln.NotFound, kiln.Internal):
        assert issubclass(cls, kiln.KilnError)
    assert issubclass(kiln.InvalidArgument, ValueError)


def test_a_missing_file_is_not_found(tmp_path):
    with pytest.raises(kiln.NotFound, match="nothing.onnx"):
        kiln.InferenceSession(str(tmp_path / "nothing.onnx"))


def test_a_truncated_model_is_invalid(models, tmp_path):
    data = models["two_outputs"].read_bytes()
    truncated = tmp_path / "truncated.onnx"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(kiln.InvalidModel):
        kiln.InferenceSession(str(truncated))
    with pytest.raises(kiln.InvalidModel):
        kiln.InferenceSession(data[: len(data) // 2])


def test_an_unknown_operator_is_named(models):
    with pytest.raises(kiln.UnsupportedOperator, match="Frobnicate"):
        kiln.InferenceSession(str(models["unknown_op"]))


@pytest.mark.parametrize("feeds, message", [
    (lambda x, y: {"x": x}, "'y'"),                                            # missing input
    (lambda x, y: {"x": x, "y": y, "z": x}, "'z' is not an input"),            # unknown input
    (lambda x, y: {"x": x.astype(np.float64), "y": y}, "'x'"),                 # wrong dtype
    (lambda x, y: {"x": x.reshape(6), "y": y}, "'x'"),                         # wrong rank
    (lambda x, y: {"x": x[:, :2], "y": y}, "'x'"),                             # wrong dim
    (lambda x, y: {"x": np.array([["a"] * 3] * 2), "y": y}, "'x'"),            # strings for floats
    (lambda x, y: {"x": x.astype(np.complex64), "y": y}, "'x'"),               # a type the model lacks
])
def test_wrong_inputs_are_invalid_arguments_naming_the_input(models, xy, feeds, message):
    session = kiln.InferenceSession(str(models["two_outputs"]))
    with pytest.raises(kiln.InvalidArgument, match=message):
        session.run(None, feeds(*xy))
    x, y = xy
    np.testing.assert_array_equal(session.run(["sum"], {"x": x, "y": y})[0], x + y)  # still usable


def test_an_unknown_output_name_is_an_invalid_argument(models, xy):
    x, y = xy
    session = kiln.InferenceSession(str(models["two_outputs"]))
    with pytest.raises(kiln.InvalidArgument, match="'difference' is not an output"):
        session.run(["difference"], {"x": x, "y": y})


def test_a_feed_that_is_not_a_dict_is_an_invalid_argument(models, xy):
    session = kiln.InferenceSession(str(models["two_outputs"]))
    with pytest.raises(kiln.InvalidArgument, match="dict"):
        session.run(None, list(xy))


def test_an_object_numpy_cannot_hold_is_an_invalid_argument(models, xy):
    x, _ = xy
    session = kiln.InferenceSession(str(models["two_outputs"]))
    with pytest.raises(kiln.InvalidArgument, match="'y'"):
        session.run(None, {"x": x, "y": np.array([object(), object()])})


def test_bad_options_are_invalid_arguments(models):
    options = kiln.SessionOptions()
    options.mode = "warp"
    with pytest.raises(kiln.InvalidArgument, match="warp"):
        kiln.InferenceSession(str(models["two_outputs"]), options)
    options = kiln.SessionOptions()
    options.intra_op_num_threads = -1
    with pytest.raises(kiln.InvalidArgument, match="threads"):
        kiln.InferenceSession(str(models["two_outputs"]), options)


def test_a_corrupted_artifact_is_an_integrity_failure(models, tmp_path):
    path = tmp_path / "model.kiln"
    kiln.InferenceSession(str(models["two_outputs"])).write_artifact(path)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(kiln.KilnError) as raised:
        kiln.InferenceSession(str(path))
    assert isinstance(raised.value, (kiln.IntegrityFailure, kiln.InvalidModel))


def test_a_wrongly_signed_requirement_is_an_integrity_failure(models, tmp_path):
    path = tmp_path / "unsigned.kiln"
    kiln.InferenceSession(str(models["two_outputs"])).write_artifact(path)
    options = kiln.SessionOptions()
    options.require_signature = True
    with pytest.raises(kiln.IntegrityFailure, match="sign"):
        kiln.InferenceSession(str(path), options)


def test_an_unknown_instruction_set_is_refused(models):
    options = kiln.SessionOptions()
    options.isa = "avx9000"
    with pytest.raises(kiln.KilnError, match="avx9000"):
        kiln.InferenceSession(str(models["two_outputs"]), options)


def test_a_custom_op_library_is_refused():
    with pytest.raises(kiln.UnsupportedOperator):
        kiln.SessionOptions().register_custom_ops_library("/tmp/libcustom.so")
