"""The benchmark models and their inputs for bench/run.sh: exports the full-size models if missing
(bench/models/export.py --variant full) and writes reference inputs for each batch as .npy, drawn
with the export's seed (a fresh generator per batch, so every runner and every run reads the same
bytes)."""
import json
import os
import subprocess
import sys

import numpy as np

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(BENCH, "models"))
_caller_wait_policy = os.environ.get("OMP_WAIT_POLICY")
import export  # noqa: E402  (imports torch; only used here to draw inputs)

# export.py sets OMP_WAIT_POLICY=PASSIVE for its own torch; the runners inherit this process's
# environment, and Kiln and ONNX Runtime must get the caller's, not PyTorch's setting.
if _caller_wait_policy is None:
    os.environ.pop("OMP_WAIT_POLICY", None)

EXPORT_DIR = os.path.join(BENCH, "models", "out", "full")


def _has_dynamic_batch(model_dir):
    """Exports made before the full variant's CNNs got a dynamic batch axis must be redone."""
    meta_path = os.path.join(model_dir, "meta.json")
    if not os.path.exists(os.path.join(model_dir, "model.onnx")) or not os.path.exists(meta_path):
        return False
    with open(meta_path) as f:
        meta = json.load(f)
    return all(isinstance(value["shape"][0], str) for value in meta["inputs"])


def ensure_exports(models):
    missing = [m for m in models if not _has_dynamic_batch(os.path.join(EXPORT_DIR, m))]
    if missing:
        print(f"exporting {' '.join(missing)} (full variant) into {EXPORT_DIR}", flush=True)
        subprocess.run([sys.executable, os.path.join(BENCH, "models", "export.py"), "--variant", "full",
                        "--out", EXPORT_DIR, "--models", *missing],
                       env=dict(os.environ, OMP_WAIT_POLICY="PASSIVE"), check=True)


def model_path(model):
    return os.path.join(EXPORT_DIR, model, "model.onnx")


def ensure_inputs(model, batch):
    """Returns ({input name: .npy path}, {input name: shape}) for the model at this batch, writing
    the files if missing."""
    spec = export.specs("full")[model]
    directory = os.path.join(EXPORT_DIR, model, f"bench_inputs_b{batch}")
    paths = {name: os.path.join(directory, f"{name}.npy") for name in spec["inputs"]}
    if not all(os.path.exists(p) for p in paths.values()):
        os.makedirs(directory, exist_ok=True)
        generator = export.torch.Generator().manual_seed(export.SEED)
        for name, value in export.make_inputs(spec, generator, batch).items():
            np.save(paths[name], value.numpy())
    shapes = {name: list(np.load(path, mmap_mode="r").shape) for name, path in paths.items()}
    return paths, shapes


def ensure_calibration(model, batch, count):
    """A folder of `count` calibration sets for the model at this batch (kiln --calibrate), drawn
    like the reference inputs but each from its own seed after the export's, so that none is the
    input the rows are measured on; written if missing."""
    spec = export.specs("full")[model]
    directory = os.path.join(EXPORT_DIR, model, f"calibration_b{batch}_n{count}")
    for index in range(count):
        folder = os.path.join(directory, f"set{index:02d}")
        paths = {name: os.path.join(folder, f"{name}.npy") for name in spec["inputs"]}
        if all(os.path.exists(p) for p in paths.values()):
            continue
        os.makedirs(folder, exist_ok=True)
        generator = export.torch.Generator().manual_seed(export.SEED + 1 + index)
        for name, value in export.make_inputs(spec, generator, batch).items():
            np.save(paths[name], value.numpy())
    return directory
