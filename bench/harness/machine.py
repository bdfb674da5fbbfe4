"""What the bench harnesses record about the machine: CPU (lscpu), memory, load, the environment variables
that change the runners' speed, tool versions, and the FP32 FMA peak from bench/fma_probe.cpp."""
import json
import os
import platform
import subprocess

# Variables that steer threading or BLAS kernels in one of the runners.
SPEED_VARIABLES = ("OMP_", "KMP_", "GOMP_", "OPENBLAS_", "MKL_", "DNNL_", "ONEDNN_", "ORT_", "LD_LIBRARY_PATH", "LD_PRELOAD")


def _command_output(command):
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unavailable: {error}"


def cpu_identity():
    """The CPU as lscpu describes it: its model name ("model"), family, model number and stepping
    (these tell microarchitectures apart where a KVM guest's model name is generic), CPU count,
    topology, hypervisor and SIMD flags."""
    fields = {}
    for line in _command_output(["lscpu"]).splitlines():
        key, _, value = line.partition(":")
        fields[key.strip()] = value.strip()
    flags = fields.get("Flags", "").split()
    return {
        "model": fields.get("Model name"), "family": fields.get("CPU family"), "model_number": fields.get("Model"),
        "stepping": fields.get("Stepping"), "cpus": fields.get("CPU(s)"),
        "threads_per_core": fields.get("Thread(s) per core"), "cores_per_socket": fields.get("Core(s) per socket"),
        "hypervisor": fields.get("Hypervisor vendor"),
        "simd": [f for f in flags if f.startswith(("avx", "fma", "amx"))],
    }


def cpu_line(cpu):
    """A cpu_identity() as printed: 'model name (family F, model M, stepping S, N CPUs)'."""
    details = [f"{label} {cpu[key]}" for key, label in (("family", "family"), ("model_number", "model"),
                                                          ("stepping", "stepping")) if cpu.get(key)]
    details += [f"{cpu['cpus']} CPUs"] if cpu.get("cpus") else []
    return (cpu.get("model") or "unknown CPU") + (f" ({', '.join(details)})" if details else "")


def _memory_gib():
    with open("/proc/meminfo") as meminfo:
        for line in meminfo:
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 2**20, 1)
    return None


def speed_environment():
    return {k: v for k, v in sorted(os.environ.items()) if k.startswith(SPEED_VARIABLES)}


def machine_info(kiln_binary):
    return {
        "cpu": cpu_identity(), "memory_gib": _memory_gib(), "kernel": platform.release(),
        "load_average_at_start": list(os.getloadavg()), "environment": speed_environment(),
        "versions": {"node": _command_output(["node", "--version"]),
                     "gcc": _command_output(["g++", "-dumpfullversion"]),
                     "kiln": _command_output([kiln_binary, "--version"])},
    }


def fma_peak(probe, isa=""):
    """The probe's JSON ({"isa", "chains", "peak_gflops": {"1": .., "2": ..}}), or an error. With `isa`
    "avx2" (Kiln capped at AVX2), the peak of 256-bit FMAs even on an AVX-512 machine."""
    if not os.access(probe, os.X_OK):
        return {"error": f"{probe} not built: run bench/setup.sh"}
    return json.loads(_command_output([probe, "--isa", "avx2"] if isa == "avx2" else [probe]))
