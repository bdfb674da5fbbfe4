"""An onnxruntime-style script (ort_style_script.py: `import kiln as ort`, the rest unchanged) runs
every exported parity model and reproduces PyTorch's outputs within the parity tests' tolerance
(1e-4 x max(1, max |reference|), as tests/models/model_parity_test.cpp)."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

MODELS = os.path.join(os.environ.get("KILN_BINARY_DIR", "build"), "models")
SCRIPT = os.path.join(os.path.dirname(__file__), "ort_style_script.py")
NAMES = sorted(d for d in os.listdir(MODELS) if os.path.exists(os.path.join(MODELS, d, "model.onnx"))) \
    if os.path.isdir(MODELS) else []


def test_the_parity_models_are_exported():
    assert NAMES, "no exported models in %s (make models)" % MODELS


@pytest.mark.parametrize("name", NAMES)
def test_an_onnxruntime_script_runs_unchanged(name, tmp_path):
    folder = os.path.join(MODELS, name)
    with open(os.path.join(folder, "meta.json")) as f:
        meta = json.load(f)
    feeds = ["%s=%s" % (i["name"], os.path.join(folder, "input_%s.npy" % i["name"])) for i in meta["inputs"]]
    run = subprocess.run([sys.executable, SCRIPT, os.path.join(folder, "model.onnx"), str(tmp_path), *feeds],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
    assert run.returncode == 0, run.stdout
    for output in meta["outputs"]:
        want = np.load(os.path.join(folder, "output_%s.npy" % output["name"]))
        got = np.load(str(tmp_path / (output["name"] + ".npy")))
        assert got.shape == want.shape and got.dtype == want.dtype
        tolerance = 1e-4 * max(1.0, float(np.abs(want).max()))
        assert float(np.abs(got.astype(np.float64) - want).max()) <= tolerance, name
