"""numpy arrays in and out of kiln: inputs read in place, outputs over Kiln's buffers, every
dtype numpy and Kiln share, strings, scalars, sequences and optionals."""

import numpy as np

import kiln
from kiln import _kiln


def test_a_c_ordered_input_is_read_in_place():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert _kiln.input_address(x) == x.ctypes.data


def test_other_layouts_are_converted_once():
    x = np.arange(12, dtype=np.float32).reshape(3, 4).T  # Fortran order
    assert _kiln.input_address(x) != x.ctypes.data
    swapped = np.arange(4, dtype=">f4")  # big-endian
    assert _kiln.input_address(swapped) != swapped.ctypes.data


def test_outputs_are_arrays_over_kilns_buffers(models, xy):
    x, y = xy
    session = kiln.InferenceSession(str(models["two_outputs"]))
    total = session.run(["sum"], {"x": x, "y": y})[0]
    assert not total.flags.owndata and type(total.base).__name__ == "PyCapsule"
    assert total.flags.writeable and total.flags.c_contiguous
    again = session.run(["sum"], {"x": x, "y": y})[0]
    total += 1  # the first result is the caller's: a later run does not touch it
    np.testing.assert_array_equal(again, x + y)
    np.testing.assert_array_equal(total, x + y + 1)


def test_non_contiguous_inputs_give_the_same_results(models):
    session = kiln.InferenceSession(str(models["two_outputs"]))
    wide = np.arange(12, dtype=np.float32).reshape(3, 4)
    x = wide[:2, :3]  # a strided view
    y = np.asfortranarray(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(session.run(["sum"], {"x": x, "y": y})[0], x + 1)


def test_every_shared_dtype_round_trips(models):
    session = kiln.InferenceSession(str(models["dtypes"]))
    ids = np.array([[1, -2, 3], [2**40, 0, -7]], np.int64)
    mask = np.array([True, False, False, True])
    half = np.array([-1.5, 2.0, -0.0, 65504, -3e-5], np.float16)
    words = np.array(["kiln", "fire"])
    neg, not_mask, abs_half, same_words, as_float = session.run(None, {"ids": ids, "mask": mask, "half": half, "words": words})
    assert neg.dtype == np.int64 and not_mask.dtype == np.bool_ and abs_half.dtype == np.float16
    np.testing.assert_array_equal(neg, -ids)
    np.testing.assert_array_equal(not_mask, ~mask)
    np.testing.assert_array_equal(abs_half, np.abs(half))
    assert same_words.dtype == object and list(same_words) == ["kiln", "fire"]
    np.testing.assert_array_equal(as_float, ids.astype(np.float32))


def test_strings_may_be_objects_or_bytes(models):
    session = kiln.InferenceSession(str(models["dtypes"]))
    feeds = {"ids": np.zeros((2, 3), np.int64), "mask": np.zeros(4, bool), "half": np.zeros(5, np.float16)}
    for words in (np.array(["a", "b"], dtype=object), np.array([b"a", b"b"]), ["a", "b"]):
        assert list(session.run(["same_words"], dict(feeds, words=words))[0]) == ["a", "b"]


def test_sequences_are_lists_and_an_empty_optional_is_none(models):
    session = kiln.InferenceSession(str(models["containers"]))
    parts = [np.ones((1, 2), np.float32), np.full((2, 2), 2, np.float32)]
    joined, pair, has = session.run(None, {"parts": parts, "maybe": None})
    np.testing.assert_array_equal(joined, np.concatenate(parts))
    assert isinstance(pair, list) and len(pair) == 2
    np.testing.assert_array_equal(pair[1], joined)
    assert has.shape == () and not has
    assert session.run(["has"], {"parts": parts, "maybe": np.zeros(2, np.float32)})[0]
