"""The runners bench/run.sh compares, each one process per measurement: Kiln (`kiln bench`),
ONNX Runtime (peers/ort_bench.js), PyTorch eager (peers/torch_bench.py), and on request ONNX Runtime
running Kiln's int8 written as ONNX (`ort_int8`: `kiln compile --precision int8 --emit-onnx`). All
take the same inputs and settings and write the same JSON ({load_ms, first_run_ms, samples_ms,
latency_ms, ...}); a runner that fails yields an error record, never numbers."""
import functools
import json
import os
import subprocess
import sys
from dataclasses import dataclass, field, replace

import onnx

BENCH = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = os.path.join(BENCH, "peers")
TIMEOUT_S = 1800  # one process: load, warm-up and timed runs of the largest model at batch 8


@dataclass
class Case:
    """One row of the comparison: a model at a batch size and a thread count."""
    model: str
    model_path: str
    batch: int
    threads: int
    inputs: dict  # input name -> .npy path
    shapes: dict  # input name -> shape
    calibration: str = None  # kiln --calibrate folder (static int8), or None

    @property
    def label(self):
        return f"{self.model}_b{self.batch}_t{self.threads}"


@dataclass
class Settings:
    warmup: int
    runs: int
    kiln: str
    kiln_providers: str = None
    kiln_allow_fallback: str = None
    torch_openblas_coretype: str = None
    kiln_isa: str = None
    kiln_precision: str = "fp32"
    kiln_accuracy_budget: str = None
    kiln_on_budget: str = None


def _input_args(case):
    return [arg for name, path in case.inputs.items() for arg in ("--input", f"{name}={path}")]


def _common_args(case, settings, json_path, output_dir):
    args = ["--threads", str(case.threads), "--warmup", str(settings.warmup), "--runs", str(settings.runs),
            "--json", json_path]
    return args + (["--output-dir", output_dir] if output_dir else [])


@functools.lru_cache(maxsize=None)
def _symbolic_input_dims(model_path):
    """(input name, axis, dim name) of every named symbolic dim of the model's inputs."""
    graph = onnx.load(model_path, load_external_data=False).graph
    return tuple((value.name, axis, dim.dim_param) for value in graph.input
                 for axis, dim in enumerate(value.type.tensor_type.shape.dim) if dim.dim_param)


def free_dimension_values(case):
    """The case's value of each symbolic input dim, by dim name (ONNX Runtime's freeDimensionOverrides)."""
    return {dim: case.shapes[name][axis] for name, axis, dim in _symbolic_input_dims(case.model_path)
            if name in case.shapes}


def kiln_command(case, settings, json_path, output_dir):
    """Kiln compiles for the case's shapes (--specialize), as ONNX Runtime does with its free dims fixed."""
    shapes = [arg for name, shape in case.shapes.items()
              for arg in ("--shape", f"{name}={'x'.join(map(str, shape))}")]
    flags = {"--providers": settings.kiln_providers, "--allow-fallback": settings.kiln_allow_fallback,
             "--isa": settings.kiln_isa, "--precision": settings.kiln_precision if settings.kiln_precision != "fp32" else None,
             "--calibrate": case.calibration, "--accuracy-budget": settings.kiln_accuracy_budget,
             "--on-budget": settings.kiln_on_budget}
    extra = ["--specialize"] + [arg for flag, value in flags.items() if value for arg in (flag, value)]
    return ([settings.kiln, "bench", case.model_path, *_input_args(case), *shapes, *extra,
             *_common_args(case, settings, json_path, output_dir)], {})


def ort_command(case, settings, json_path, output_dir):
    """ONNX Runtime with the model's symbolic dims fixed to the case's (freeDimensionOverrides)."""
    free_dims = [arg for dim, size in free_dimension_values(case).items() for arg in ("--free-dim", f"{dim}={size}")]
    return (["node", os.path.join(PEERS, "ort_bench.js"), case.model_path, *_input_args(case), *free_dims,
             *_common_args(case, settings, json_path, output_dir)], {})


def torch_command(case, settings, json_path, output_dir):
    """PyTorch gets its best setting (NOTES.md): passive OpenMP waiting so its OpenMP and OpenBLAS
    pools do not fight, OpenBLAS instead of a reference BLAS, and OpenBLAS's own CPU detection
    unless a core type is asked for (OPENBLAS_CORETYPE=Haswell halves its speed on AVX-512)."""
    threads = str(case.threads)
    env = {"OMP_WAIT_POLICY": "PASSIVE", "OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": threads,
           "LD_LIBRARY_PATH": ":".join(filter(None, [os.path.join(PEERS, "openblas", "lib"),
                                                      os.environ.get("LD_LIBRARY_PATH")])),
           "OPENBLAS_CORETYPE": settings.torch_openblas_coretype}
    return (["/usr/bin/python3", os.path.join(PEERS, "torch_bench.py"), "--model", case.model, "--variant", "full",
             *_input_args(case), *_common_args(case, settings, json_path, output_dir)], env)


@functools.lru_cache(maxsize=None)
def _int8_onnx(kiln, model_path, isa, calibration):
    """The model with Kiln's int8 products in ONNX's quantization operators (dynamic: MatMulInteger
    for matrix products, QDQ for convolutions; calibrated: QDQ throughout), written once per model
    and calibration under bench/out/int8_onnx; (path, None), or (None, why) when Kiln could not write it."""
    name = os.path.basename(os.path.dirname(model_path)) + ("_" + os.path.basename(calibration) if calibration else "")
    out = os.path.join(BENCH, "out", "int8_onnx", name + ".onnx")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    command = [kiln, "compile", model_path, "--precision", "int8", "--emit-onnx", out] + (["--isa", isa] if isa else []) + \
        (["--calibrate", calibration] if calibration else [])
    try:
        process = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"{' '.join(command)}: {error}"
    if process.returncode != 0:
        return None, f"{' '.join(command)}: exit {process.returncode}: {_tail(process.stderr or process.stdout)}"
    return out, None


def ort_int8_command(case, settings, json_path, output_dir):
    """ONNX Runtime on Kiln's int8 written as ONNX: the same int8 weights and scales, ONNX Runtime's
    int8 kernels where its fusions take the form (DynamicQuantizeMatMul from MatMulInteger; QDQ
    groups), its fp32 ones on the dequantized values elsewhere. A failed export is this runner's error."""
    exported, error = _int8_onnx(settings.kiln, case.model_path, settings.kiln_isa, case.calibration)
    if error:
        return [sys.executable, "-c", "import sys; sys.exit(sys.argv[1])", "the int8 export failed: " + error], {}
    return ort_command(replace(case, model_path=exported, calibration=None), settings, json_path, output_dir)


RUNNERS = {"kiln": kiln_command, "ort": ort_command, "torch": torch_command, "ort_int8": ort_int8_command}
DEFAULT_RUNNERS = ["kiln", "ort", "torch"]


@dataclass
class Measurement:
    """One process's result: its JSON, or why there is none."""
    runner: str
    command: list
    environment: dict = field(default_factory=dict)
    result: dict = None
    error: str = None


def _environment(overrides):
    """The process environment: os.environ with overrides applied (None removes a variable)."""
    env = dict(os.environ)
    for key, value in overrides.items():
        if value is None:
            env.pop(key, None)
        else:
            env[key] = value
    return env


def _tail(text, lines=6):
    return "\n".join(text.strip().splitlines()[-lines:])


def measure(runner, case, settings, json_path, output_dir=None):
    command, overrides = RUNNERS[runner](case, settings, json_path, output_dir)
    measurement = Measurement(runner, command, overrides)
    if os.path.exists(json_path):
        os.remove(json_path)
    try:
        process = subprocess.run(command, env=_environment(overrides), capture_output=True, text=True,
                                 timeout=TIMEOUT_S)
    except FileNotFoundError:
        measurement.error = f"{command[0]} not found" + (" (build Kiln, or set KILN / --kiln)" if runner == "kiln" else "")
        return measurement
    except subprocess.TimeoutExpired:
        measurement.error = f"timed out after {TIMEOUT_S} s"
        return measurement
    if process.returncode != 0:
        measurement.error = f"exit {process.returncode}: {_tail(process.stderr or process.stdout) or 'no output'}"
        return measurement
    try:
        with open(json_path) as f:
            result = json.load(f)
    except (OSError, ValueError) as error:
        measurement.error = f"no usable JSON at {json_path}: {error}"
        return measurement
    if len(result.get("samples_ms") or []) != settings.runs:
        measurement.error = f"JSON has {len(result.get('samples_ms') or [])} samples, expected {settings.runs}"
        return measurement
    measurement.result = result
    return measurement
