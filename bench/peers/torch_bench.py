#!/usr/bin/python3
"""Times a benchmark model in PyTorch eager mode the way `kiln bench` times its ONNX export: build,
first run, warm-up runs, timed runs; writes the timings as JSON and, if asked, the outputs as .npy.
The model comes from bench/models/export.py's build_model (same seed, same weights as the export).

  /usr/bin/python3 torch_bench.py --model resnet50 --input image=x.npy --threads 1 --warmup 2 \
      --runs 10 [--variant full] [--json OUT.json] [--output-dir DIR]
"""
import argparse
import ctypes
import json
import os
import sys
import time
import warnings

os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")  # before torch loads (NOTES.md); bench/run.sh sets it

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "..", "models"), os.path.join(HERE, "..", "harness")]

import numpy as np  # noqa: E402
import torch  # noqa: E402

import export  # noqa: E402
from outputs import output_file  # noqa: E402
from stats import summarize  # noqa: E402

# Settings that change PyTorch's speed, reported with every result.
ENVIRONMENT = ["OMP_WAIT_POLICY", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "OPENBLAS_CORETYPE",
               "MKL_NUM_THREADS", "LD_LIBRARY_PATH"]


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", required=True, choices=export.MODELS)
    parser.add_argument("--variant", default="full", choices=["test", "full"])
    parser.add_argument("--input", action="append", default=[], metavar="NAME=FILE.npy")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--warmup", type=int, default=2)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--json")
    parser.add_argument("--output-dir")
    return parser.parse_args()


def loaded_blas():
    """The BLAS libraries this process mapped (Debian's libblas.so.3 may be the slow reference BLAS)
    and, for OpenBLAS, the kernel family it picked (OPENBLAS_CORETYPE or its CPU detection)."""
    with open("/proc/self/maps") as maps:
        paths = sorted({line.split()[-1] for line in maps if "blas" in line.rsplit("/", 1)[-1]})
    core = None
    if any("openblas" in path for path in paths):
        get_corename = ctypes.CDLL("libopenblas.so.0").openblas_get_corename
        get_corename.restype = ctypes.c_char_p
        core = get_corename().decode()
    return {"libraries": paths, "openblas_core": core}


def timed(function):
    start = time.perf_counter_ns()
    result = function()
    return result, (time.perf_counter_ns() - start) / 1e6


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    warnings.filterwarnings("ignore", category=UserWarning)
    files = dict(item.split("=", 1) for item in args.input)

    # "Load": constructing the seeded model, including its BatchNorm calibration pass.
    (model, spec, _), load_ms = timed(lambda: export.build_model(args.model, args.variant))
    inputs = tuple(torch.from_numpy(np.load(files[name])) for name in spec["inputs"])

    def run():
        with torch.no_grad():
            outputs = model(*inputs)
        return outputs if isinstance(outputs, tuple) else (outputs,)

    outputs, first_run_ms = timed(run)
    for _ in range(args.warmup):
        run()
    samples = []
    for _ in range(args.runs):
        outputs, ms = timed(run)
        samples.append(ms)
    if args.output_dir:
        os.makedirs(args.output_dir, exist_ok=True)
        for name, value in zip(spec["outputs"], outputs):
            np.save(output_file(args.output_dir, name), value.numpy())

    result = {
        "runner": "torch", "version": torch.__version__, "model": args.model, "variant": args.variant,
        "threads": args.threads, "environment": {k: os.environ.get(k) for k in ENVIRONMENT},
        "blas": loaded_blas(), "load_ms": load_ms, "first_run_ms": first_run_ms,
        "warmup": args.warmup, "runs": args.runs, "samples_ms": samples, "latency_ms": summarize(samples),
    }
    text = json.dumps(result, indent=2)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text + "\n")
    else:
        print(text)


if __name__ == "__main__":
    main()
