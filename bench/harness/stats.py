"""Latency summary shared by the PyTorch peer and bench/run.sh (ort_bench.js has the same in JS):
min / median / p90 / max / mean, percentiles interpolated linearly between ranks (NumPy's default)."""
import numpy as np


def summarize(samples_ms):
    samples = np.asarray(samples_ms, dtype=np.float64)
    return {"min": float(samples.min()), "median": float(np.median(samples)),
            "p90": float(np.percentile(samples, 90)), "max": float(samples.max()), "mean": float(samples.mean())}
