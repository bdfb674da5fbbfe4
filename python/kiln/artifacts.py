"""Kiln's ahead-of-time artifacts from Python: compile a model into a signed .kiln file, verify
one without loading it, sign one, make a key pair (the `kiln compile | sign | verify | keygen`
commands; docs/ARTIFACT.md). An artifact loads with `InferenceSession(path, options)`, whose
`public_key` and `require_signature` options make the signature a condition of loading."""

import copy
import os

from . import _kiln
from .options import SessionOptions
from .session import InferenceSession


def _key_bytes(key):
    """A key given as raw bytes, or as the path of a key file (`kiln keygen` writes raw bytes)."""
    if key is None or isinstance(key, (bytes, bytearray)):
        return None if key is None else bytes(key)
    with open(os.fspath(key), "rb") as f:
        return f.read()


def generate_key_pair():
    """A new Ed25519 key pair (public_key, secret_key): 32 and 64 raw bytes."""
    return _kiln.generate_key_pair()


def sign(path, secret_key):
    """Signs the artifact at `path` in place (replacing any earlier signature); `secret_key`: 64
    raw bytes or the path of a .sk file."""
    _kiln.sign(os.fspath(path), _key_bytes(secret_key))


def verify(path, public_key=None, require_signature=False, isa=""):
    """Checks the artifact at `path` without loading it: structure and every section hash, the
    signature (made with `public_key`, raw bytes or a .pk file, when given; present when
    `require_signature`), and that this machine (capped at `isa`) has the CPU features its kernels
    need. Returns what it found; raises the failing check's error (kiln.IntegrityFailure for a
    corrupted or wrongly signed file, kiln.UnsupportedTarget for a machine that lacks features)."""
    return _kiln.verify(os.fspath(path), _key_bytes(public_key), require_signature, isa)


def compile(model, out, shapes=None, shape_profile=None, sign_key=None, sess_options=None, providers=None,
            specialize=False, assets=None, warmup_inputs=None):
    """Compiles `model` (a path or ONNX bytes) into the artifact `out` and returns verify(out).

    `shapes`: {input: shape} to plan (and, with `specialize`, to compile exactly) for;
    `shape_profile`: {symbol: (min, opt, max)}; `sign_key`: the secret key to sign with (64 raw
    bytes or a .sk file); `assets`: {name: file path} stored in the artifact; `warmup_inputs`:
    {input: array} recorded with their outputs, which loading checks in warm_up()."""
    options = copy.deepcopy(sess_options) if sess_options is not None else SessionOptions()
    if shapes:
        options.input_shapes = {name: list(shape) for name, shape in shapes.items()}
    if shape_profile:
        options.shape_profile = dict(shape_profile)
    options.specialize = options.specialize or specialize
    options.optimized_model_filepath = ""
    options.enable_profiling = False
    session = InferenceSession(model, options, providers)
    session.write_artifact(out, assets, warmup_inputs)
    if sign_key is not None:
        sign(out, sign_key)
    return verify(out)
