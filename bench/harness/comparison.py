"""Kiln against ONNX Runtime, one process per measurement: the timing shared by bench/zoo.sh
(harness/zoo.py), bench/corpus.sh (harness/corpus.py) and bench/ops.sh (harness/ops.py), and the first
two's report (`run`: one table, the geometric mean of kiln/ort). See bench/README.md, "The zoo".

Per case (time_runners): one probe process per runner (first run, 2 timed runs); the slower runner's
latency L sets the run counts: unless --runs is given, every process then does max(--min-runs,
min(--max-runs, --budget-ms / L)) timed runs. Then --rounds rounds, one Kiln and one ONNX Runtime
process each, their order alternating per round. A runner's latency is the median of its per-process
medians; a runner whose process fails is not run again. In `run`, a Kiln process that exits with one
of its error classes (exit 11-20, docs/CLI.md) marks the row "refused", a crash, an internal error or
a timeout "failed", an ONNX Runtime failure "ort failed"; such rows are left out of the geometric mean."""
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
REFUSAL_EXIT_CODES = range(11, 21)  # 10 + error class, invalid_model .. not_found; 21 is internal


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
    if value < 1:
        return f"{value:.4f}"
    return f"{value:.3f}" if value < 10 else f"{value:.1f}" if value < 1000 else f"{value:.0f}"


def geometric_mean(ratios):
    return math.exp(sum(map(math.log, ratios)) / len(ratios)) if ratios else None


def write_json(path, data):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=1, default=str)
        f.write("\n")


def measure(runner, case, settings, json_path):
    """runners.measure, with a process that cannot start (the binary being relinked: EACCES, ETXTBSY)
    tried once more after a pause, then recorded as that process's error."""
    for attempt in range(2):
        try:
            return runners.measure(runner, case, settings, json_path)
        except OSError as error:
            if attempt:
                command, overrides = runners.RUNNERS[runner](case, settings, json_path, None)
                return runners.Measurement(runner, command, overrides, error=f"cannot start: {error}")
            time.sleep(5)


def time_runners(row, case, args, case_dir):
    """Times Kiln and ONNX Runtime on `case` (runners.Case) into `row` (with "errors": {} and
    "processes": []): one probe process per runner (first run, 2 timed runs); the slower one's latency
    sets the run counts (run_counts); then args.rounds rounds of one process per runner, their order
    alternating. A runner whose process fails (row["errors"][runner]) is not run again. Adds runs,
    warmup, probe_ms, round_medians_ms, kiln_ms and ort_ms (the median of the runner's per-process
    medians) and, when neither failed, kiln_over_ort. Every process's command, error and JSON go to
    row["processes"], its JSON file to case_dir."""
    def process(runner, round_index, runs, warmup):
        name = "probe" if round_index == "probe" else f"r{round_index}"
        settings = runners.Settings(warmup=warmup, runs=runs, kiln=args.kiln, kiln_providers=args.providers,
                                    kiln_allow_fallback=args.allow_fallback, kiln_isa=args.isa,
                                    kiln_precision=args.precision, kiln_accuracy_budget=args.accuracy_budget,
                                    kiln_on_budget=args.on_budget)
        m = measure(runner, case, settings, os.path.join(case_dir, f"{runner}_{name}.json"))
        row["processes"].append({"runner": runner, "round": round_index, "runs": runs, "warmup": warmup,
                                 "command": m.command, "error": m.error, "result": m.result})
        if m.error:
            row["errors"][runner] = m.error
        return m.result

    # Kiln can be far slower than ONNX Runtime, and a model Kiln refuses is found here.
    probes = {}
    for runner in ("ort", "kiln"):
        result = process(runner, "probe", 2, 0)
        if result is not None:
            probes[runner] = min(result["samples_ms"])
    if not probes:
        return
    runs, warmup = run_counts(args, max(probes.values()))
    row.update(runs=runs, warmup=warmup, probe_ms=probes)

    medians = {"kiln": [], "ort": []}
    for r in range(args.rounds):
        for runner in ("kiln", "ort") if r % 2 == 0 else ("ort", "kiln"):
            if runner not in row["errors"]:
                result = process(runner, r, runs, warmup)
                if result is not None:
                    medians[runner].append(statistics.median(result["samples_ms"]))
    row["round_medians_ms"] = medians
    for runner in ("kiln", "ort"):
        row[f"{runner}_ms"] = statistics.median(medians[runner]) if medians[runner] else None
    if row["kiln_ms"] is not None and row["ort_ms"] is not None and not row["errors"]:
        row["kiln_over_ort"] = row["kiln_ms"] / row["ort_ms"]


def last_result(row, runner):
    """The JSON of the row's last `runner` process that wrote one (a timed round's, else the probe's), or None."""
    return next((p["result"] for p in reversed(row["processes"]) if p["runner"] == runner and p["result"]), None)


def bench_case(name, model, inputs, args, case_dir, missing):
    """One row: time_runners, its status from the errors. `missing` is (error key, message) for a case
    whose files are not there."""
    row = {"case": name, "model": model, "inputs": inputs, "status": "ok", "errors": {}, "processes": []}
    absent = [p for p in [model, *inputs.values()] if not os.path.exists(p)]
    if absent:
        row.update(status="missing", errors={missing[0]: f"{missing[1]}: {absent[0]}"})
        return row
    shapes = input_shapes(inputs)
    row["input_shapes"] = shapes
    case = runners.Case(model=name, model_path=model, batch=1, threads=args.threads, inputs=inputs, shapes=shapes)
    time_runners(row, case, args, case_dir)
    kiln = last_result(row, "kiln")
    if kiln and kiln.get("precision"):
        row["precision"] = kiln["precision"]
    if "kiln" in row["errors"]:
        code = exit_code(row["errors"]["kiln"])
        row.update(status="refused" if code in REFUSAL_EXIT_CODES else "failed", kiln_exit_code=code)
    elif "ort" in row["errors"]:
        row["status"] = "ort failed"
    return row


def add_arguments(parser, rounds=3, budget_ms=1000, min_runs=3, max_runs=1000):
    """The options time_runners reads: rounds, run counts, Kiln's binary and flags, with the caller's
    defaults (the caller adds --threads and --out)."""
    parser.add_argument("--rounds", type=int, default=rounds, help=f"processes per runner per case (default {rounds})")
    parser.add_argument("--runs", type=int, help="timed runs per process (default: --budget-ms / probe latency, "
                                                 "clamped to --min-runs..--max-runs)")
    parser.add_argument("--budget-ms", type=float, default=budget_ms,
                        help=f"timed milliseconds per process (default {budget_ms:g})")
    parser.add_argument("--min-runs", type=int, default=min_runs)
    parser.add_argument("--max-runs", type=int, default=max_runs)
    parser.add_argument("--warmup", type=int, help="untimed runs per process after the first (default 3; 1 over 100 ms, 0 over 1 s)")
    parser.add_argument("--kiln", default=os.environ.get("KILN", os.path.join(ROOT, "build", "kiln")))
    parser.add_argument("--providers", help="passed to kiln bench --providers")
    parser.add_argument("--allow-fallback", help="passed to kiln bench --allow-fallback")
    parser.add_argument("--isa", help="passed to kiln's --isa (e.g. avx2)")
    parser.add_argument("--precision", default="fp32",
                        help="passed to kiln bench --precision (bf16, int8, int8+bf16, auto); ONNX Runtime runs fp32. The "
                             "table shows what Kiln ran in and its worst 1 - cosine against its own fp32")
    parser.add_argument("--accuracy-budget", help="passed to kiln bench --accuracy-budget (auto's default: cos=0.995)")
    parser.add_argument("--on-budget", choices=["fail", "fallback"],
                        help="passed to kiln bench --on-budget: with fallback, a reduced precision that breaks the budget "
                             "keeps its most sensitive products fp32 (auto then weighs that against the others)")


def select_cases(parser, all_cases, wanted, source):
    """The cases named in the comma-separated `wanted` (all when empty), in all_cases' order; an unknown
    name is a usage error that points at `source`."""
    if not wanted:
        return all_cases
    wanted = [c for c in wanted.split(",") if c]
    known = {c[0] for c in all_cases}
    unknown = [c for c in wanted if c not in known]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)} (see {source})")
    return [c for c in all_cases if c[0] in wanted]


def opening(title, details, kiln):
    """Prints a run's first line (title, date, `details`, CPU, load) and returns (machine.machine_info, start time)."""
    info = machine.machine_info(kiln)
    started = datetime.datetime.now().astimezone()
    print(f"{title} {started:%Y-%m-%d %H:%M %Z}: {details}; CPU {machine.cpu_line(info['cpu'])}; "
          f"load {info['load_average_at_start'][0]:.2f}", flush=True)
    return info, started


def closing_line(info, started, t0):
    """The CPU, start time, seconds since t0 and the load at start and now, as a run's last line."""
    return (f"CPU: {machine.cpu_line(info['cpu'])}; {started:%Y-%m-%d %H:%M:%S %Z}; {time.monotonic() - t0:.0f} s; "
            f"load {info['load_average_at_start'][0]:.2f} -> {os.getloadavg()[0]:.2f}")


def run(title, cases, args, out_dir, missing, precheck=None, annotate=None):
    """Times every (name, model path, {input: .npy}) case, prints one line per case (stderr) as it goes,
    then the table, the geometric mean and every error's last line, and writes args.out (JSON).

    missing: bench_case's. precheck(name, model, inputs): a (status, error key, message) that stands for
    the row instead of timing it, or None. annotate(row): adds fields to a timed row."""
    info, started = opening(title, f"{len(cases)} cases, {args.threads} threads, {args.rounds} rounds, Kiln in {args.precision}",
                            args.kiln)
    runs_dir = os.path.join(out_dir, "runs")
    rows = []
    t0 = time.monotonic()
    for name, model, inputs in cases:
        case_dir = os.path.join(runs_dir, name)
        shutil.rmtree(case_dir, ignore_errors=True)
        os.makedirs(case_dir)
        t = time.monotonic()
        verdict = precheck(name, model, inputs) if precheck else None
        if verdict:
            status, key, message = verdict
            row = {"case": name, "model": model, "inputs": inputs, "status": status, "errors": {key: message},
                   "processes": []}
        else:
            row = bench_case(name, model, inputs, args, case_dir, missing)
        if annotate:
            annotate(row)
        row["wall_s"] = time.monotonic() - t
        rows.append(row)
        ratio = row.get("kiln_over_ort")
        print(f"  {name}: {row['status']}, kiln {fmt_ms(row.get('kiln_ms'))} ms, ort {fmt_ms(row.get('ort_ms'))} ms"
              f"{f', {ratio:.2f}x' if ratio else ''} ({row.get('runs', '-')} runs, {row['wall_s']:.0f} s)",
              file=sys.stderr, flush=True)

    ratios = [r["kiln_over_ort"] for r in rows if r.get("kiln_over_ort")]
    geomean = geometric_mean(ratios)
    refused = [r["case"] for r in rows if r["status"] == "refused"]
    other = [r for r in rows if r["status"] not in ("ok", "refused")]

    width = max([len("case")] + [len(r["case"]) for r in rows])
    print(f"\n{'case':<{width}}  {'kiln ms':>9}  {'ort ms':>9}  {'kiln/ort':>8}  {'precision':>9}  {'1-cos':>8}  runs")
    for r in rows:
        ratio = r.get("kiln_over_ort")
        cell = f"{ratio:.2f}" if ratio else r["status"]
        flag = " *" if ratio and ratio > 1.0 else ""
        precision = r.get("precision") or {}
        outputs = (precision.get("accuracy") or {}).get("outputs") or []
        cosine = f"{1 - min(o['cosine'] for o in outputs):.1e}" if outputs else "-"
        print(f"{r['case']:<{width}}  {fmt_ms(r.get('kiln_ms')):>9}  {fmt_ms(r.get('ort_ms')):>9}  {cell:>8}  "
              f"{precision.get('requested', '-'):>9}  {cosine:>8}  {r.get('runs', '-')}{flag}")
    over = sum(1 for x in ratios if x > 1.0)
    print(f"\ngeometric mean kiln/ort over {len(ratios)} models both ran: "
          f"{f'{geomean:.3f}' if geomean else '-'} (goal <= 0.8); over 1.0x (*): {over}; "
          f"refused by Kiln: {len(refused)}" + (f" ({', '.join(refused)})" if refused else ""))
    for r in rows:
        for runner, error in r["errors"].items():
            print(f"  {r['case']} {runner}: {error.splitlines()[-1] if error else error}")
    print(closing_line(info, started, t0))

    info["load_average_at_end"] = list(os.getloadavg())
    results = {"date": started.isoformat(), "settings": vars(args), "machine": info,
               "summary": {"geomean_kiln_over_ort": geomean, "models_compared": len(ratios),
                           "over_1x": over, "refused": refused,
                           "other_failures": {r["case"]: r["status"] for r in other}},
               "rows": rows}
    write_json(args.out, results)
    print(f"raw numbers: {args.out}")
    return results
