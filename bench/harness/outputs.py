"""Output files shared by the runners: the name each output gets under --output-dir (as `kiln bench`
names them), and the largest absolute difference between two runners' outputs."""
import os
import re

import numpy as np


def output_file(directory, output_name):
    return os.path.join(directory, re.sub(r"[^A-Za-z0-9_.-]", "_", output_name) + ".npy")


def max_abs_diff(directory, reference_directory):
    """Largest |a - b| over every output .npy in reference_directory and its namesake in directory.
    Raises ValueError when an output is missing or its shape differs."""
    names = sorted(f for f in os.listdir(reference_directory) if f.endswith(".npy"))
    if not names:
        raise ValueError(f"no outputs in {reference_directory}")
    worst = 0.0
    for name in names:
        path = os.path.join(directory, name)
        if not os.path.exists(path):
            raise ValueError(f"missing output {path}")
        got, want = np.load(path), np.load(os.path.join(reference_directory, name))
        if got.shape != want.shape:
            raise ValueError(f"{name}: shape {list(got.shape)} vs {list(want.shape)}")
        worst = max(worst, float(np.max(np.abs(got.astype(np.float64) - want.astype(np.float64)))))
    return worst
