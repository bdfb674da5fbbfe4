"""kiln.compile, kiln.verify, kiln.sign and loading a signed artifact with a required key."""

import numpy as np
import pytest

import kiln


@pytest.fixture
def keys():
    return kiln.generate_key_pair()


def test_compile_signs_and_verifies(models, keys, tmp_path):
    public, secret = keys
    assert len(public) == 32 and len(secret) == 64
    out = tmp_path / "model.kiln"
    found = kiln.compile(str(models["two_outputs"]), out, shapes={"x": [2, 3], "y": [2, 3]}, sign_key=secret)
    assert found["signature"].startswith("signed by ")
    assert {s["name"] for s in found["sections"]} >= {"plan", "weights"}
    again = kiln.verify(out, public_key=public, require_signature=True)
    assert again["manifest_sha256"] == found["manifest_sha256"]


def test_a_signed_artifact_loads_only_with_its_key(models, keys, tmp_path, xy):
    public, secret = keys
    out = tmp_path / "model.kiln"
    key_file = tmp_path / "key.sk"
    key_file.write_bytes(secret)
    kiln.compile(models["two_outputs"], out, sign_key=key_file)  # a key file works as well
    options = kiln.SessionOptions()
    options.public_key = public
    options.require_signature = True
    x, y = xy
    session = kiln.InferenceSession(str(out), options)
    np.testing.assert_array_equal(session.run(["sum"], {"x": x, "y": y})[0], x + y)
    other_public, _ = kiln.generate_key_pair()
    options.public_key = other_public
    with pytest.raises(kiln.IntegrityFailure):
        kiln.InferenceSession(str(out), options)
    with pytest.raises(kiln.IntegrityFailure, match="^signature"):
        kiln.verify(out, public_key=other_public)


def test_verify_finds_a_flipped_byte(models, tmp_path):
    out = tmp_path / "model.kiln"
    kiln.compile(models["two_outputs"], out)
    data = bytearray(out.read_bytes())
    data[len(data) // 2] ^= 0x01
    out.write_bytes(bytes(data))
    with pytest.raises(kiln.IntegrityFailure, match="^structure"):
        kiln.verify(out)


def test_an_unsigned_artifact_fails_a_required_signature(models, tmp_path):
    out = tmp_path / "model.kiln"
    assert kiln.compile(models["two_outputs"], out)["signature"] == "unsigned"
    with pytest.raises(kiln.IntegrityFailure, match="^signature"):
        kiln.verify(out, require_signature=True)


def test_recorded_fixtures_and_assets_travel_with_the_artifact(models, tmp_path, xy):
    x, y = xy
    labels = tmp_path / "labels.txt"
    labels.write_text("zero\none\n")
    out = tmp_path / "model.kiln"
    kiln.compile(models["two_outputs"], out, shapes={"x": [2, 3], "y": [2, 3]}, assets={"labels": str(labels)},
                 warmup_inputs={"x": x, "y": y})
    session = kiln.InferenceSession(str(out))
    assert session.asset("labels") == b"zero\none\n"
    session.warm_up()  # the recorded inputs, their outputs checked
    assert session.state == "ready"
    assert session.report()["warmup"]["fixtures"] == "artifact"
    with pytest.raises(kiln.NotFound, match="labels"):
        session.asset("missing")


def test_a_missing_artifact_is_not_found(tmp_path):
    with pytest.raises(kiln.NotFound):
        kiln.verify(tmp_path / "nothing.kiln")
