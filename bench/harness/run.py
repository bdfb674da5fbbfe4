"""bench/run.sh's driver: for each model x batch x threads, runs Kiln, ONNX Runtime and PyTorch in
alternating rounds (one process per runner per round, the order rotating), pools each runner's
timed runs, compares the outputs, and writes bench/out/results.json, bench/out/results.png and a
plain-text table. See bench/README.md."""
import argparse
import json
import os
import shutil
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BENCH = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import flops  # noqa: E402
import inputs  # noqa: E402
import machine  # noqa: E402
import report  # noqa: E402
import runners  # noqa: E402
from outputs import max_abs_diff  # noqa: E402

MODELS = ["resnet50", "mobilenet_v2", "squeezenet1_1", "vit_b_16", "bert_encoder", "gpt2_decoder"]
SINGLE_BATCH = {"gpt2_decoder"}  # a decoder step serves one sequence: batch 1 only
OUT = os.path.join(BENCH, "out")


def parse_args():
    parser = argparse.ArgumentParser(description="Kiln vs ONNX Runtime vs PyTorch (see bench/README.md)")
    parser.add_argument("--models", nargs="+", choices=MODELS, default=MODELS)
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 8],
                        help="batch sizes (gpt2_decoder runs batch 1 only)")
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--rounds", type=int, default=4, help="processes per runner per row, alternating")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per process")
    parser.add_argument("--warmup", type=int, default=2, help="untimed runs per process after the first")
    parser.add_argument("--runners", nargs="+", choices=list(runners.RUNNERS), default=runners.DEFAULT_RUNNERS,
                        help="default: kiln ort torch; ort_int8: ONNX Runtime on Kiln's int8 written as ONNX (with --precision int8)")
    parser.add_argument("--kiln", default=os.environ.get("KILN", "build/kiln"),
                        help="Kiln binary (default: $KILN or build/kiln)")
    parser.add_argument("--providers", default="cpu", help="passed to kiln bench --providers (default: cpu)")
    parser.add_argument("--isa", default="",
                        help="passed to kiln bench --isa (e.g. avx2: Kiln and oneDNN capped at that level, to measure a "
                             "lesser machine on this one); the FMA probe then measures that level's peak. ONNX Runtime "
                             "and PyTorch cannot be capped: they run at the machine's own level")
    parser.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "int8", "int8+bf16", "auto"],
                        help="passed to kiln bench --precision: Kiln's products in this precision (ONNX Runtime and PyTorch "
                             "run fp32); Kiln measures its accuracy against its own fp32 on the case's inputs, shown beside "
                             "each row")
    parser.add_argument("--calibrate", type=int, default=0, metavar="N",
                        help="with --precision int8: static int8, Kiln calibrated (kiln --calibrate) on N input sets drawn "
                             "like the case's but from other seeds (ort_int8 then runs the QDQ model Kiln writes); "
                             "default 0: dynamic int8")
    parser.add_argument("--allow-fallback", default="",
                        help="passed to kiln bench --allow-fallback (default: none, fail closed: every node on cpu)")
    parser.add_argument("--torch-openblas-coretype",
                        help="OPENBLAS_CORETYPE for PyTorch (default: unset, OpenBLAS detects the CPU)")
    parser.add_argument("--quick", action="store_true",
                        help="smoke test: squeezenet1_1, batch 1, 1 thread, 2 rounds of 3 runs")
    args = parser.parse_args()
    if args.quick:
        args.models, args.batches, args.threads, args.rounds, args.runs, args.warmup = (
            ["squeezenet1_1"], [1], [1], 2, 3, 1)
    return args


def make_cases(args):
    cases = []
    for model in args.models:
        for batch in args.batches:
            if model in SINGLE_BATCH and batch != 1:
                continue
            paths, shapes = inputs.ensure_inputs(model, batch)
            calibration = inputs.ensure_calibration(model, batch, args.calibrate) if args.calibrate > 0 else None
            for threads in args.threads:
                cases.append(runners.Case(model, inputs.model_path(model), batch, threads, paths, shapes, calibration))
    return cases


def measure_case(case, args, settings):
    """Rounds of one process per runner, rotating the order; round 0 also writes the outputs. A
    runner that fails is not retried in later rounds (its errors are deterministic in practice)."""
    directory = os.path.join(OUT, "runs", case.label)
    shutil.rmtree(directory, ignore_errors=True)
    os.makedirs(directory)
    measurements = {name: [] for name in args.runners}
    for round_index in range(args.rounds):
        shift = round_index % len(args.runners)
        for name in args.runners[shift:] + args.runners[:shift]:
            if any(m.error for m in measurements[name]):
                continue
            output_dir = os.path.join(directory, f"outputs_{name}") if round_index == 0 else None
            json_path = os.path.join(directory, f"{name}_round{round_index}.json")
            measurement = runners.measure(name, case, settings, json_path, output_dir)
            measurements[name].append(measurement)
            status = measurement.error.splitlines()[-1] if measurement.error else \
                f"median {measurement.result['latency_ms']['median']:.2f} ms"
            print(f"  {case.label} round {round_index} {name}: {status}", flush=True)
    return measurements, directory


def output_diffs(directory, measurements):
    """max |x - ORT| over all outputs for Kiln and PyTorch (a string says why there is none)."""
    reference = os.path.join(directory, "outputs_ort")
    diffs = {}
    for name in ("kiln", "torch"):
        if name not in measurements:
            continue
        if not measurements[name] or not measurements[name][0].result or not os.path.isdir(reference):
            diffs[f"{name}_vs_ort"] = None
            continue
        try:
            diffs[f"{name}_vs_ort"] = max_abs_diff(os.path.join(directory, f"outputs_{name}"), reference)
        except (OSError, ValueError) as error:
            diffs[f"{name}_vs_ort"] = f"not comparable: {error}"
    return diffs


def serializable(measurements):
    return {name: [{"command": m.command, "environment": m.environment, "error": m.error, "result": m.result}
                   for m in ms] for name, ms in measurements.items()}


def main():
    args = parse_args()
    os.makedirs(OUT, exist_ok=True)
    settings = runners.Settings(args.warmup, args.runs, args.kiln, args.providers, args.allow_fallback,
                                args.torch_openblas_coretype, args.isa, args.precision)
    started = time.time()
    info = machine.machine_info(args.kiln)
    probe = machine.fma_peak(os.path.join(BENCH, "peers", "fma_probe"), args.isa)
    isa = args.isa or "the machine's own"
    calibration = f", static: calibrated on {args.calibrate} sets" if args.calibrate > 0 else ""
    print(f"machine: {info['cpu']['model']}, {info['cpu']['cpus']} CPUs; Kiln's ISA: {isa}; Kiln's precision: "
          f"{args.precision}{calibration}; FMA peak {probe}", flush=True)

    inputs.ensure_exports(args.models)
    rows, raw = [], {}
    for case in make_cases(args):
        print(f"{case.label}: {args.rounds} rounds x {args.runs} runs per runner", flush=True)
        model_flops = flops.count_flops(case.model_path, case.shapes)
        measurements, directory = measure_case(case, args, settings)
        peak = probe.get("peak_gflops", {}).get(str(case.threads))
        rows.append(report.make_row(case, model_flops, peak, measurements, output_diffs(directory, measurements)))
        raw[case.label] = serializable(measurements)

    info["load_average_at_end"] = list(os.getloadavg())
    results = {
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "seconds": round(time.time() - started, 1),
        "settings": vars(args), "machine": info, "fma_probe": probe,
        "target_ratio": report.TARGET_RATIO, "rows": rows, "processes": raw,
    }
    with open(os.path.join(OUT, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    print()
    print(f"Kiln's ISA: {isa}; Kiln's precision: {args.precision}; FMA probe ({probe.get('isa', '?')}): {probe.get('peak_gflops')} GF/s by threads; "
          f"CPU: {info['cpu']['model']}")
    print(report.table(rows))
    try:
        report.chart(rows, os.path.join(OUT, "results.png"))
        chart = " and results.png"
    except ImportError as error:  # the table and JSON stand without the chart
        chart = f" (no chart: {error}; bench/setup.sh installs python3-matplotlib)"
    print(f"\nwrote {os.path.relpath(OUT)}/results.json{chart} "
          f"(load average {info['load_average_at_start'][0]:.2f} at start, {info['load_average_at_end'][0]:.2f} at end)")


if __name__ == "__main__":
    main()
