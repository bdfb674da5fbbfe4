#!/usr/bin/python3
"""bench/zoo.sh: times every zoo model (tests/zoo/cases.txt) in Kiln and ONNX Runtime, same inputs,
same thread count, and prints kiln/ort per model and their geometric mean (issue 18's goal: every
model at most 1.0x, geometric mean at most 0.8x). See bench/README.md, "The zoo".

Per case: one probe process per runner (first run, 2 timed runs); the slower runner's latency L sets the
run counts: unless --runs is given, every process then does max(3, min(1000, --budget-ms / L)) timed
runs, so the 1024x1024 imgly models get few and the wake-word heads many. Then --rounds rounds, one
Kiln and one ONNX Runtime process each, their order alternating per round. A runner's latency is the
median of its per-process medians. A Kiln process that exits with one of its error classes (exit 11-20, docs/CLI.md) marks the
row "refused"; a crash, an internal error or a timeout marks it "failed"; either way Kiln is not run
again on that case, and the row is left out of the geometric mean."""
import argparse
import datetime
import json
import math
import os
import shutil
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import machine  # noqa: E402
import runners  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
CASES_TXT = os.path.join(ROOT, "tests", "zoo", "cases.txt")
OUT_DIR = os.path.join(ROOT, "bench", "out", "zoo")
REFUSAL_EXIT_CODES = range(11, 21)  # 10 + error class, invalid_model .. not_found; 21 is internal


def read_cases(zoo_dir):
    """[(name, model path, {input name: .npy path})] in cases.txt order. Input names hold ':' and '::',
    never '=', so each NAME=PATH splits at its last '='."""
    cases = []
    with open(CASES_TXT) as f:
        for line in f:
            parts = line.split()
            if not parts or parts[0].startswith("#"):
                continue
            inputs = {}
            for spec in parts[2:]:
                k = spec.rfind("=")
                inputs[spec[:k]] = os.path.join(zoo_dir, spec[k + 1:])
            cases.append((parts[0], os.path.join(zoo_dir, parts[1]), inputs))
    return cases


def input_shapes(inputs):
    import numpy as np
    return {name: list(np.load(path, mmap_mode="r").shape) for name, path in inputs.items()}


def ort_command(case, settings, json_path, output_dir):
    """runners.ort_command (free dims fixed to the inputs' sizes), or without overrides when the onnx
    package cannot read the model (ONNX Runtime reads it anyway)."""
    try:
        runners.free_dimension_values(case)
    except Exception as error:  # noqa: BLE001
        print(f"  {case.model}: ONNX Runtime runs without free-dim overrides ({error})", file=sys.stderr)
        return (["node", os.path.join(runners.PEERS, "ort_bench.js"), case.model_path, *runners._input_args(case),
                 *runners._common_args(case, settings, json_path, output_dir)], {})
    return runners.ort_command(case, settings, json_path, output_dir)


runners.RUNNERS["ort"] = ort_command


def exit_code(error):
    """The exit status in runners.measure's 'exit N: ...' error, or None (not found, timeout, bad JSON)."""
    if error and error.startswith("exit "):
        try:
            return int(error[5:].split(":", 1)[0])
        except ValueError:
            return None
    return None


def run_counts(args, latency_ms):
    if args.runs:
        runs = args.runs
    else:
        runs = max(args.min_runs, min(args.max_runs, int(args.budget_ms / max(latency_ms, 1e-3))))
    if args.warmup is not None:
        warmup = args.warmup
    else:  # every process's first run is untimed as well
        warmup = 3 if latency_ms < 100 else 1 if latency_ms < 1000 else 0
    return runs, warmup


def fmt_ms(value):
    if value is None:
        return "-"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def bench_case(name, model, inputs, args, case_dir):
    row = {"case": name, "model": model, "inputs": inputs, "status": "ok", "errors": {}, "processes": []}
    missing = [p for p in [model, *inputs.values()] if not os.path.exists(p)]
    if missing:
        row.update(status="missing", errors={"zoo": f"not fetched (run make zoo): {missing[0]}"})
        return row
    shapes = input_shapes(inputs)
    case = runners.Case(model=name, model_path=model, batch=1, threads=args.threads, inputs=inputs, shapes=shapes)
    row["input_shapes"] = shapes

    settings = lambda runs, warmup: runners.Settings(
        warmup=warmup, runs=runs, kiln=args.kiln, kiln_providers=args.providers,
        kiln_allow_fallback=args.allow_fallback, kiln_isa=args.isa)

    def record(runner, round_index, measurement, runs, warmup):
        row["processes"].append({"runner": runner, "round": round_index, "runs": runs, "warmup": warmup,
                                 "command": measurement.command, "error": measurement.error,
                                 "result": measurement.result})

    def kiln_error(error):
        row["errors"]["kiln"] = error
        code = exit_code(error)
        row["status"] = "refused" if code in REFUSAL_EXIT_CODES else "failed"
        row["kiln_exit_code"] = code

    # Probes: each runner once, first run and 2 timed runs; the slower one's latency sets the run counts (Kiln
    # can be far slower than ONNX Runtime), and a model Kiln refuses is found here.
    probes = {}
    for runner in ("ort", "kiln"):
        m = runners.measure(runner, case, settings(2, 0), os.path.join(case_dir, f"{runner}_probe.json"))
        record(runner, "probe", m, 2, 0)
        if m.error:
            if runner == "ort":
                row.update(status="ort failed", errors={"ort": m.error})
                return row
            kiln_error(m.error)
        else:
            probes[runner] = min(m.result["samples_ms"])
    latency = max(probes.values())
    runs, warmup = run_counts(args, latency)
    row.update(runs=runs, warmup=warmup, probe_ms=probes)

    medians = {"kiln": [], "ort": []}
    for r in range(args.rounds):
        order = ("kiln", "ort") if r % 2 == 0 else ("ort", "kiln")
        for runner in order:
            if runner in row["errors"]:
                continue
            m = runners.measure(runner, case, settings(runs, warmup), os.path.join(case_dir, f"{runner}_r{r}.json"))
            record(runner, r, m, runs, warmup)
            if m.error:
                row["errors"][runner] = m.error
                if runner == "kiln":
                    kiln_error(m.error)
                else:
                    row["status"] = "ort failed"
            else:
                medians[runner].append(statistics.median(m.result["samples_ms"]))
    row["round_medians_ms"] = medians
    for runner in ("kiln", "ort"):
        row[f"{runner}_ms"] = statistics.median(medians[runner]) if medians[runner] else None
    if row["kiln_ms"] is not None and row["ort_ms"] is not None and row["status"] == "ok":
        row["kiln_over_ort"] = row["kiln_ms"] / row["ort_ms"]
    return row


def main():
    sys.stdout.reconfigure(line_buffering=True)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", help="comma-separated case names (default: all of tests/zoo/cases.txt)")
    parser.add_argument("--rounds", type=int, default=3, help="processes per runner per case (default 3)")
    parser.add_argument("--runs", type=int, help="timed runs per process (default: --budget-ms / probe latency, "
                                                 "clamped to --min-runs..--max-runs)")
    parser.add_argument("--budget-ms", type=float, default=1000, help="timed milliseconds per process (default 1000)")
    parser.add_argument("--min-runs", type=int, default=3)
    parser.add_argument("--max-runs", type=int, default=1000)
    parser.add_argument("--warmup", type=int, help="untimed runs per process after the first (default 3; 1 over 100 ms, 0 over 1 s)")
    parser.add_argument("--threads", type=int, default=2, help="threads for both runners (default 2)")
    parser.add_argument("--kiln", default=os.environ.get("KILN", os.path.join(ROOT, "build", "kiln")))
    parser.add_argument("--providers", help="passed to kiln bench --providers")
    parser.add_argument("--allow-fallback", help="passed to kiln bench --allow-fallback")
    parser.add_argument("--isa", help="passed to kiln bench --isa")
    parser.add_argument("--zoo-dir", default=os.environ.get("KILN_ZOO_DIR", os.path.expanduser("~/.cache/kiln/zoo")))
    parser.add_argument("--out", default=os.path.join(OUT_DIR, "results.json"), help="JSON with every raw number "
                        "(default bench/out/zoo/results.json); each process's JSON is kept in bench/out/zoo/runs/")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    all_cases = read_cases(args.zoo_dir)
    if args.cases:
        wanted = [c for c in args.cases.split(",") if c]
        known = {c[0] for c in all_cases}
        unknown = [c for c in wanted if c not in known]
        if unknown:
            parser.error(f"unknown case(s): {', '.join(unknown)} (see tests/zoo/cases.txt)")
        all_cases = [c for c in all_cases if c[0] in wanted]

    info = machine.machine_info(args.kiln)
    started = datetime.datetime.now().astimezone()
    cpu = info["cpu"]["model"]
    print(f"zoo bench {started:%Y-%m-%d %H:%M %Z}: {len(all_cases)} cases, {args.threads} threads, "
          f"{args.rounds} rounds; CPU {cpu}; load {info['load_average_at_start'][0]:.2f}", flush=True)
    runs_dir = os.path.join(OUT_DIR, "runs")
    rows = []
    t0 = time.monotonic()
    for name, model, inputs in all_cases:
        case_dir = os.path.join(runs_dir, name)
        shutil.rmtree(case_dir, ignore_errors=True)
        os.makedirs(case_dir)
        t = time.monotonic()
        row = bench_case(name, model, inputs, args, case_dir)
        row["wall_s"] = time.monotonic() - t
        rows.append(row)
        ratio = row.get("kiln_over_ort")
        print(f"  {name}: {row['status']}, kiln {fmt_ms(row.get('kiln_ms'))} ms, ort {fmt_ms(row.get('ort_ms'))} ms"
              f"{f', {ratio:.2f}x' if ratio else ''} ({row.get('runs', '-')} runs, {row['wall_s']:.0f} s)",
              file=sys.stderr, flush=True)

    ratios = [r["kiln_over_ort"] for r in rows if r.get("kiln_over_ort")]
    geomean = math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None
    refused = [r["case"] for r in rows if r["status"] == "refused"]
    other = [r for r in rows if r["status"] not in ("ok", "refused")]

    width = max([len("case")] + [len(r["case"]) for r in rows])
    print(f"\n{'case':<{width}}  {'kiln ms':>9}  {'ort ms':>9}  {'kiln/ort':>8}  runs")
    for r in rows:
        ratio = r.get("kiln_over_ort")
        cell = f"{ratio:.2f}" if ratio else r["status"]
        flag = " *" if ratio and ratio > 1.0 else ""
        print(f"{r['case']:<{width}}  {fmt_ms(r.get('kiln_ms')):>9}  {fmt_ms(r.get('ort_ms')):>9}  {cell:>8}  "
              f"{r.get('runs', '-')}{flag}")
    over = sum(1 for x in ratios if x > 1.0)
    print(f"\ngeometric mean kiln/ort over {len(ratios)} models both ran: "
          f"{f'{geomean:.3f}' if geomean else '-'} (goal <= 0.8); over 1.0x (*): {over}; "
          f"refused by Kiln: {len(refused)}" + (f" ({', '.join(refused)})" if refused else ""))
    for r in rows:
        for runner, error in r["errors"].items():
            print(f"  {r['case']} {runner}: {error.splitlines()[-1] if error else error}")
    print(f"CPU: {cpu}; {started:%Y-%m-%d %H:%M:%S %Z}; {time.monotonic() - t0:.0f} s; "
          f"load {info['load_average_at_start'][0]:.2f} -> {os.getloadavg()[0]:.2f}")

    info["load_average_at_end"] = list(os.getloadavg())
    results = {"date": started.isoformat(), "settings": vars(args), "machine": info,
               "summary": {"geomean_kiln_over_ort": geomean, "models_compared": len(ratios),
                           "over_1x": over, "refused": refused,
                           "other_failures": {r["case"]: r["status"] for r in other}},
               "rows": rows}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")
    print(f"raw numbers: {args.out}")


if __name__ == "__main__":
    main()
