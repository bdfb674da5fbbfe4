"""Startup benchmark (bench/startup.sh): time from process start to first result, side by side.
Kiln runs `kiln run MODEL.kiln` (an artifact compiled ahead by `kiln compile --specialize -o`);
ONNX Runtime creates a session from the .onnx and runs once, and also from its own optimised
model (saved once with optimizedModelFilePath, loaded with graph optimisation disabled). Each
measurement is one whole process, wall clock; the runners alternate; medians over the rounds."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import inputs  # noqa: E402

BENCH = inputs.BENCH
ROOT = os.path.dirname(BENCH)
OUT = os.path.join(BENCH, "out")


def wall_ms(command):
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    elapsed = (time.perf_counter() - start) * 1e3
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return elapsed


def kiln_report(model):
    return os.path.join(OUT, "startup", model, "kiln_report.json")


def kiln_stages(model):
    """Load, warm-up and first-request times from the report of the Kiln run just made."""
    with open(kiln_report(model)) as f:
        report = json.load(f)
    return {"load_ms": report["stages_ms"]["load"], "warmup_ms": report["warmup"]["ms"],
            "first_request_ms": report["run"]["first_run_ms"]}


def prepare(model, kiln, threads):
    """The case's inputs, its Kiln artifact and ONNX Runtime's optimised model (made once)."""
    paths, shapes = inputs.ensure_inputs(model, 1)
    input_args = [a for name, path in paths.items() for a in ("--input", f"{name}={path}")]
    shape_args = [a for name, shape in shapes.items() for a in ("--shape", f"{name}={'x'.join(map(str, shape))}")]
    work = os.path.join(OUT, "startup", model)
    os.makedirs(work, exist_ok=True)
    artifact = os.path.join(work, "model.kiln")
    subprocess.run([kiln, "compile", inputs.model_path(model), *shape_args, "--specialize", "--threads", str(threads),
                    "-o", artifact], check=True, capture_output=True)
    ort_optimized = os.path.join(work, "ort_optimized.onnx")
    node = ["node", os.path.join(BENCH, "peers", "ort_startup.js")]
    subprocess.run([*node, inputs.model_path(model), *input_args, "--threads", str(threads), "--save-optimized", ort_optimized],
                   check=True, capture_output=True)
    return {
        "kiln (.kiln)": [kiln, "run", artifact, *input_args, "--threads", str(threads), "--report", kiln_report(model)],
        "ort (.onnx)": [*node, inputs.model_path(model), *input_args, "--threads", str(threads)],
        "ort (optimised)": [*node, ort_optimized, *input_args, "--threads", str(threads), "--level", "disabled"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--models", nargs="+", default=["resnet50", "bert_encoder"])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--kiln", default=os.environ.get("KILN", os.path.join(ROOT, "build", "kiln")))
    args = parser.parse_args()
    inputs.ensure_exports(args.models)
    rows = []
    for model in args.models:
        commands = prepare(model, args.kiln, args.threads)
        samples = {name: [] for name in commands}
        stages = []
        for _ in range(args.rounds):
            for name, command in commands.items():
                samples[name].append(wall_ms(command))
                if name == "kiln (.kiln)":
                    stages.append(kiln_stages(model))
        medians = {name: statistics.median(values) for name, values in samples.items()}
        kiln_medians = {key: statistics.median(s[key] for s in stages) for key in stages[0]}
        best_ort = min(medians["ort (.onnx)"], medians["ort (optimised)"])
        rows.append({"model": model, "threads": args.threads, "median_ms": medians, "samples_ms": samples,
                     "kiln_stages_median_ms": kiln_medians, "kiln_over_best_ort": medians["kiln (.kiln)"] / best_ort})
    print(f"{'model':>14} {'thr':>4} {'kiln .kiln ms':>14} {'ort .onnx ms':>13} {'ort optimised ms':>17} {'kiln/best ort':>14} "
          f"{'-0.25':>7}   kiln load / warm-up / first request ms")
    for r in rows:
        m, k = r["median_ms"], r["kiln_stages_median_ms"]
        print(f"{r['model']:>14} {r['threads']:>4} {m['kiln (.kiln)']:>14.1f} {m['ort (.onnx)']:>13.1f} "
              f"{m['ort (optimised)']:>17.1f} {r['kiln_over_best_ort']:>14.3f} {r['kiln_over_best_ort'] - 0.25:>7.3f}"
              f"   {k['load_ms']:.1f} / {k['warmup_ms']:.1f} / {k['first_request_ms']:.1f}")
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "startup.json"), "w") as f:
        json.dump({"rounds": args.rounds, "rows": rows}, f, indent=2)
    print(f"wrote {os.path.join(OUT, 'startup.json')}")


if __name__ == "__main__":
    main()
