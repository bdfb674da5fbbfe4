#!/usr/bin/python3
"""bench/ops.sh: per-op speed, Kiln against ONNX Runtime (in the spirit of ggml's test-backend-ops perf
mode). Every case of harness/op_cases.py (one per op the cpu provider has a kernel for, `kiln ops`,
plus variants and small fused patterns) is written to bench/out/ops/cases/<case>/ (model.onnx,
input_<name>.npy) and timed, for each thread count, as bench/zoo.sh times a model
(comparison.time_runners: probes set the run counts from --budget-ms, then --rounds rounds of one Kiln
and one ONNX Runtime process, order alternating; a runner's latency is the median of its per-process
medians). Kiln's implementation of the case's op comes from its kernel profile (`kiln bench --json`:
kernels[].implementation). A case whose kiln/ort exceeds 1.25 is flagged SLOW. See bench/README.md,
"Per-op speed (bench/ops.sh)".

--smoke: the tiny size of every case, Kiln only, one `kiln run` each on cpu (two cases at a time), its
outputs compared with the reference provider's (`kiln run --providers cpu_ref`); exits non-zero when
a case fails to run on cpu or the coverage rule is broken (every op of `kiln ops` a case or excluded,
never both). Disagreements with the reference are reported, not failures (each op's correctness is
tested elsewhere), unless --strict. This is `make test`'s bench.ops_smoke.
"""
import argparse
import concurrent.futures
import datetime
import json
import os
import shutil
import subprocess
import sys
import time

try:
    import numpy as np
    import onnx  # noqa: F401 (op_cases builds the models with it)
except ImportError as missing:  # ctest's bench.ops_smoke reports this as skipped, never passed
    print(f"ops.py: skipped: {missing} (install python3-numpy and python3-onnx)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import comparison  # noqa: E402
import op_cases  # noqa: E402
import runners  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
OUT_DIR = os.path.join(ROOT, "bench", "out", "ops")
SLOW = 1.25
TOLERANCE = 1e-3  # smoke: max |cpu - reference| / max(1, max |reference|), unless the case sets its own


def tail(text, lines=4):
    return " | ".join(line for line in (text or "").strip().splitlines()[-lines:])


def kiln_op_list(kiln, ops_list_file=None):
    """The op types of `kiln ops` (or of --ops-list FILE), or (None, why not)."""
    if ops_list_file:
        with open(ops_list_file) as f:
            return [line.strip() for line in f if line.strip()], None
    try:
        process = subprocess.run([kiln, "ops"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as error:
        return None, f"{kiln} ops: {error}"
    if process.returncode != 0:
        return None, f"{kiln} ops: exit {process.returncode}: {tail(process.stderr or process.stdout)}"
    return [line.strip() for line in process.stdout.splitlines() if line.strip()], None


def write_case(case, size, folder):
    """Builds the case at `size` into folder (model.onnx, input_<name>.npy); returns its description."""
    built = case.make(size)
    os.makedirs(folder, exist_ok=True)
    for name in os.listdir(folder):
        if name.startswith("input_") and name.endswith(".npy"):
            os.remove(os.path.join(folder, name))
    model_path = os.path.join(folder, "model.onnx")
    data = built.model.SerializeToString()
    if not os.path.exists(model_path) or open(model_path, "rb").read() != data:
        with open(model_path, "wb") as f:
            f.write(data)
    inputs, shapes = {}, {}
    for name, array in built.feeds.items():
        path = os.path.join(folder, f"input_{name}.npy")
        np.save(path, array)
        inputs[name] = path
        shapes[name] = list(array.shape)
    return {"case": case.name, "op": case.op, "covers": list(case.covers), "summary": built.summary, "source": built.source,
            "tolerance": case.tolerance if case.tolerance is not None else TOLERANCE,
            "model": model_path, "inputs": inputs, "shapes": shapes,
            "node_names": [n.name for n in built.model.graph.node]}


def plan_of(report, node_names):
    """(implementation of the case's node, ops in Kiln's plan, every node's implementation) from the
    smoke's `kiln run --report` (its target.node_implementations and partition.nodes)."""
    impls = (report.get("target") or {}).get("node_implementations") or {}
    nodes = (report.get("partition") or {}).get("nodes") or []
    plan_ops = [n.get("op") for n in nodes]
    if "target" in impls:
        main = impls["target"]
    else:
        own = [f"{n['node']}={impls[n['node']]}" for n in nodes
               if n.get("node") in impls and n.get("node") in node_names and not n["node"].endswith("_feed_cast")]
        fused = [f"{n['node']}={impls[n['node']]}" for n in nodes if n.get("node") in impls and n.get("node") not in node_names
                 and n.get("op") not in ("Transpose", "Relayout")]
        main = "+".join(own or fused) or ("(no kernel: folded)" if not nodes else "(none recorded)")
    return main, plan_ops, impls


def bare(op):
    return op.rsplit(".", 1)[-1]


def select(cases, wanted):
    if not wanted:
        return cases
    names = {w for w in wanted.split(",") if w}
    chosen = [c for c in cases if c.op in names or c.name in names or c.name.split(".")[0] in names]
    unknown = sorted(n for n in names if not any(c.op == n or c.name == n or c.name.split(".")[0] == n for c in cases))
    if unknown:
        raise SystemExit(f"ops.py: no case for {', '.join(unknown)} (see harness/op_cases.py; excluded: "
                         f"{', '.join(sorted(set(unknown) & set(op_cases.EXCLUDED))) or 'none of them'})")
    return chosen


# -- smoke ----------------------------------------------------------------------------------------

def compare_outputs(cpu_dir, ref_dir, tolerance=TOLERANCE):
    """(worst relative error, problems) between the cpu and reference outputs."""
    problems, worst = [], 0.0
    names = sorted(f for f in os.listdir(ref_dir) if f.endswith(".npy")) if os.path.isdir(ref_dir) else []
    if not names:
        return None, ["reference wrote no .npy outputs"]
    for name in names:
        cpu_path = os.path.join(cpu_dir, name)
        if not os.path.exists(cpu_path):
            problems.append(f"{name}: missing from the cpu run")
            continue
        a, r = np.load(cpu_path), np.load(os.path.join(ref_dir, name))
        if a.shape != r.shape or a.dtype != r.dtype:
            problems.append(f"{name}: cpu {a.dtype}{list(a.shape)} vs reference {r.dtype}{list(r.shape)}")
            continue
        if a.size == 0:
            continue
        if np.issubdtype(r.dtype, np.floating):
            a64, r64 = a.astype(np.float64), r.astype(np.float64)
            if not np.array_equal(np.isnan(a64), np.isnan(r64)):
                problems.append(f"{name}: NaNs differ")
                continue
            finite = ~np.isnan(r64)
            if not finite.any():
                continue
            same_inf = np.isinf(r64) & (a64 == r64)
            diff = np.where(same_inf | ~finite, 0.0, np.abs(a64 - r64))
            scale = max(1.0, float(np.max(np.abs(np.where(np.isinf(r64) | ~finite, 0.0, r64)))))
            err = float(np.max(diff)) / scale
            worst = max(worst, err)
            if err > tolerance or not np.isfinite(err):
                problems.append(f"{name}: max relative error {err:.3g}")
        else:
            mismatched = int(np.count_nonzero(a != r))
            if mismatched:
                worst = max(worst, 1.0)
                problems.append(f"{name}: {mismatched} of {a.size} values differ")
    return worst, problems


def smoke_case(info, args, folder):
    """Runs a tiny case on cpu (with a report) and on cpu_ref; returns the row."""
    row = {"case": info["case"], "op": info["op"], "summary": info["summary"], "status": "ok"}
    inputs = [arg for name, path in info["inputs"].items() for arg in ("--input", f"{name}={path}")]
    shapes = [arg for name, shape in info["shapes"].items() for arg in ("--shape", f"{name}={'x'.join(map(str, shape))}")]
    cpu_dir, ref_dir = os.path.join(folder, "out_cpu"), os.path.join(folder, "out_ref")
    for d in (cpu_dir, ref_dir):
        shutil.rmtree(d, ignore_errors=True)
    report_path = os.path.join(folder, "report.json")
    extra = ["--isa", args.isa] if args.isa else []
    cpu = [args.kiln, "run", info["model"], *inputs, *shapes, "--specialize", "--threads", "2", "--report", report_path,
           "--output-dir", cpu_dir, *extra]
    ref = [args.kiln, "run", info["model"], *inputs, "--providers", "cpu_ref", "--threads", "1", "--output-dir", ref_dir]
    t = time.monotonic()
    try:
        p = subprocess.run(cpu, capture_output=True, text=True, timeout=120)
    except subprocess.TimeoutExpired:
        row.update(status="failed", error="kiln run timed out after 120 s")
        return row
    except OSError as error:
        row.update(status="failed", error=f"cannot start {args.kiln}: {error}")
        return row
    row["cpu_s"] = time.monotonic() - t
    if p.returncode != 0:
        row.update(status="failed", error=f"exit {p.returncode}: {tail(p.stderr or p.stdout)}", command=cpu)
        return row
    try:
        with open(report_path) as f:
            report = json.load(f)
        row["implementation"], row["plan_ops"], row["node_implementations"] = plan_of(report, info["node_names"])
    except (OSError, ValueError) as error:
        row["implementation"], row["plan_ops"] = f"(no report: {error})", []
    planned = {bare(op) for op in row["plan_ops"]}
    row["not_in_plan"] = [op for op in (info["op"], *info["covers"]) if bare(op) not in planned]
    try:
        p = subprocess.run(ref, capture_output=True, text=True, timeout=120)
    except (subprocess.TimeoutExpired, OSError) as error:
        row["reference"] = f"not run: {error}"
        return row
    if p.returncode != 0:
        row["reference"] = f"exit {p.returncode}: {tail(p.stderr or p.stdout, 2)}"
        return row
    worst, problems = compare_outputs(cpu_dir, ref_dir, info["tolerance"])
    row["max_relative_error"] = worst
    row["reference"] = "; ".join(problems) if problems else "agrees"
    return row


def run_smoke(args, cases, coverage):
    work = args.work or (os.path.join(os.path.dirname(os.path.abspath(args.out)), "ops_smoke") if args.out_given
                         else os.path.join(OUT_DIR, "tiny"))
    t0 = time.monotonic()
    infos, rows = [], []
    for case in cases:
        folder = os.path.join(work, case.name)
        try:
            infos.append((write_case(case, "tiny", folder), folder))
        except Exception as error:  # noqa: BLE001
            rows.append({"case": case.name, "op": case.op, "status": "failed", "error": f"building the model: {error!r}"})
    build_s = time.monotonic() - t0
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.workers) as pool:
        rows += list(pool.map(lambda item: smoke_case(item[0], args, item[1]), infos))
    order = {c.name: i for i, c in enumerate(cases)}
    rows.sort(key=lambda r: order[r["case"]])
    failed = [r for r in rows if r["status"] != "ok"]
    disagree = [r for r in rows if r["status"] == "ok" and r.get("reference") not in ("agrees", None)]
    reached = {bare(op) for r in rows for op in r.get("plan_ops") or []}
    # Ops whose own kernel no case reached: each case ran them as another op (MaxPool in a conv's
    # layout runs as kiln.InLayout, Gemm as kiln.FusedMatMul) or folded them away (Shape, Size).
    candidates = coverage.get("kiln_ops") or [] if not args.ops else sorted({op for c in cases for op in c.ops})
    unreached = [op for op in candidates if op not in op_cases.EXCLUDED and bare(op) not in reached]
    width = max(len(r["case"]) for r in rows) if rows else 4
    if args.verbose:
        for r in rows:
            print(f"{r['case']:<{width}}  {r['status']:<6}  {r.get('implementation', '-'):<32}  {r.get('reference', r.get('error', ''))}")
    for r in failed:
        print(f"FAILED {r['case']} ({r['op']}): {r.get('error')}")
    for r in disagree:
        print(f"differs from cpu_ref: {r['case']} ({r['op']}): {r['reference']}")
    if args.verbose:
        for r in rows:
            if r.get("not_in_plan"):
                print(f"ran as: {r['case']}: {', '.join(r['not_in_plan'])} -> {', '.join(r['plan_ops']) or '(folded: empty plan)'}")
    if unreached:
        print(f"no case reached these ops' own kernels (run as other ops or folded): {', '.join(unreached)}")
    for problem in coverage["problems"]:
        print(f"coverage: {problem}")
    elapsed = time.monotonic() - t0
    print(f"ops smoke: {len(rows)} cases ({len(coverage.get('kiln_ops') or [])} ops of `kiln ops`, {len(coverage['covered'])} covered, "
          f"{len(op_cases.EXCLUDED)} excluded), {len(failed)} failed, {len(disagree)} differ from cpu_ref, "
          f"{len(unreached)} ops not reached as themselves; {elapsed:.1f} s (models {build_s:.1f} s, {args.workers} workers)")
    coverage = dict(coverage, not_reached_as_themselves=unreached)
    result = {"date": datetime.datetime.now().astimezone().isoformat(), "mode": "smoke", "seconds": elapsed,
              "settings": {k: v for k, v in vars(args).items() if k != "out_given"}, "coverage": coverage, "rows": rows}
    comparison.write_json(args.out, result)
    strict_fail = args.strict and disagree
    return 1 if failed or coverage["problems"] or strict_fail else 0


# -- timing ---------------------------------------------------------------------------------------

def binary_stamp(path):
    try:
        st = os.stat(path)
        return (st.st_size, st.st_mtime_ns)
    except OSError:
        return None


def implementation_from_kernels(kernels, op):
    """The implementation(s) `kiln bench` profiled for the case's op (kernels[].implementation), else
    for its costliest kernel as op=implementation; None when the profile names no implementations."""
    kernels = [k for k in kernels or [] if k.get("implementation")]
    if not kernels:
        return None
    own = sorted({k["implementation"] for k in kernels if k.get("op_type") in (bare(op), op)})
    if own:
        return "+".join(own)
    # The op ran as another (Conv as FusedConv, a 4-D MaxPool as InLayout): its costliest kernel but
    # the reorders at the graph's edges and the casts feeding inputs.
    edges = ("Relayout", "Transpose", "Cast")
    top = max([k for k in kernels if k.get("op_type") not in edges] or kernels, key=lambda k: k.get("ms", 0))
    return f"{top.get('op_type')}={top['implementation']}"


def op_share(result, op):
    """The fraction of Kiln's kernel time spent in the case's op (its kernel profile)."""
    kernels = result.get("kernels") or []
    total = sum(k.get("ms", 0) for k in kernels)
    own = sum(k.get("ms", 0) for k in kernels if k.get("op_type") in (bare(op), op))
    return own / total if total > 0 else None


def time_case(info, threads, args, case_dir):
    row = {"case": info["case"], "op": info["op"], "summary": info["summary"], "source": info["source"], "threads": threads,
           "errors": {}, "processes": []}
    case = runners.Case(model=info["case"], model_path=info["model"], batch=1, threads=threads, inputs=info["inputs"],
                        shapes=info["shapes"])
    comparison.time_runners(row, case, args, case_dir)
    kiln = comparison.last_result(row, "kiln") or {}
    row["implementation"] = implementation_from_kernels(kiln.get("kernels"), info["op"])
    row["slow"] = row.get("kiln_over_ort", 0) > SLOW
    row["kiln_op_share"] = op_share(kiln, info["op"])
    row["kiln_kernels"] = kiln.get("kernels")
    return row


def run_timing(args, cases, coverage):
    threads_list = [int(t) for t in args.threads.split(",") if t]
    info_machine, started = comparison.opening(
        "ops bench", f"{len(cases)} cases, threads {threads_list}, {args.rounds} rounds, budget {args.budget_ms:g} ms",
        args.kiln)
    for problem in coverage["problems"]:
        print(f"coverage: {problem}", file=sys.stderr)
    work = args.work or OUT_DIR
    infos = []
    for case in cases:
        folder = os.path.join(work, "cases", case.name)
        try:
            infos.append(write_case(case, "representative", folder))
        except Exception as error:  # noqa: BLE001
            print(f"  {case.name}: cannot build the model: {error!r}", file=sys.stderr)
    rows = []
    t0 = time.monotonic()
    stamp = binary_stamp(shutil.which(args.kiln) or args.kiln)
    for info in infos:
        case_dir = os.path.join(work, "runs", info["case"])
        shutil.rmtree(case_dir, ignore_errors=True)
        for threads in threads_list:
            os.makedirs(os.path.join(case_dir, f"t{threads}"))
            t = time.monotonic()
            row = time_case(info, threads, args, os.path.join(case_dir, f"t{threads}"))
            row["wall_s"] = time.monotonic() - t
            rows.append(row)
            ratio = row.get("kiln_over_ort")
            print(f"  {info['case']} t{threads}: kiln {comparison.fmt_ms(row.get('kiln_ms'))} ms, "
                  f"ort {comparison.fmt_ms(row.get('ort_ms'))} ms"
                  f"{f', {ratio:.2f}x' if ratio else ''}{' SLOW' if row.get('slow') else ''} ({row.get('runs', '-')} runs, "
                  f"{row['wall_s']:.1f} s){' errors: ' + ', '.join(row['errors']) if row['errors'] else ''}",
                  file=sys.stderr, flush=True)

    headers = ["case", "op", "shape", "thr", "kiln ms", "ort ms", "kiln/ort", "kiln implementation", ""]
    table = []
    for r in rows:
        ratio = r.get("kiln_over_ort")
        table.append([r["case"], r["op"], r["summary"], str(r["threads"]),
                      comparison.fmt_ms(r.get("kiln_ms")), comparison.fmt_ms(r.get("ort_ms")),
                      f"{ratio:.2f}" if ratio else
                      ("kiln failed" if "kiln" in r["errors"] else "ort failed" if "ort" in r["errors"] else "-"),
                      r.get("implementation") or "-", "SLOW" if r.get("slow") else ""])
    widths = [max(len(h), *(len(t[i]) for t in table)) if table else len(h) for i, h in enumerate(headers)]
    print()
    right = {3, 4, 5, 6}

    def line(cells):
        return "  ".join(c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(cells, widths))).rstrip()
    print(line(headers))
    for t in table:
        print(line(t))

    summary = {}
    print()
    for threads in threads_list:
        these = [r for r in rows if r["threads"] == threads]
        ratios = [r["kiln_over_ort"] for r in these if r.get("kiln_over_ort")]
        slow = [r for r in these if r.get("slow")]
        slow_ops = sorted({r["op"] for r in slow})
        g = comparison.geometric_mean(ratios)
        summary[str(threads)] = {"cases_compared": len(ratios), "geomean_kiln_over_ort": g, "slow_cases": [r["case"] for r in slow],
                                 "slow_ops": slow_ops,
                                 "kiln_failed": [r["case"] for r in these if "kiln" in r["errors"]],
                                 "ort_failed": [r["case"] for r in these if "ort" in r["errors"]]}
        print(f"{threads} thread(s): {len(slow)} of {len(ratios)} cases over {SLOW}x ONNX Runtime ({len(slow_ops)} ops: "
              f"{', '.join(slow_ops) or 'none'}); geometric mean kiln/ort {f'{g:.3f}' if g else '-'}")
    for r in rows:
        for runner, error in r["errors"].items():
            print(f"  {r['case']} t{r['threads']} {runner}: {(error or '').splitlines()[-1] if error else error}")
    print(comparison.closing_line(info_machine, started, t0))
    if binary_stamp(shutil.which(args.kiln) or args.kiln) != stamp:
        print(f"WARNING: {args.kiln} changed during the run (rebuilt?): rows before and after timed different binaries; "
              f"time a copy (--kiln /tmp/kiln) while others build")
    info_machine["load_average_at_end"] = list(os.getloadavg())
    result = {"date": started.isoformat(), "mode": "timing", "settings": {k: v for k, v in vars(args).items() if k != "out_given"},
              "machine": info_machine, "coverage": coverage, "summary": summary, "rows": rows}
    comparison.write_json(args.out, result)
    print(f"raw numbers: {args.out}")
    return 0


def main():
    sys.stdout.reconfigure(line_buffering=True)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ops", help="comma-separated op types or case names (default: every case)")
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated (default 1,2)")
    comparison.add_arguments(parser, rounds=2, budget_ms=500, min_runs=5, max_runs=2000)
    parser.add_argument("--out", help="JSON with every raw number (default bench/out/ops/results.json; --smoke: "
                                      "bench/out/ops/smoke.json)")
    parser.add_argument("--work", help="where cases and runs are written (default bench/out/ops; --smoke with --out: "
                                       "<--out's folder>/ops_smoke)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, Kiln only, every case once; non-zero exit on a "
                                                             "failure or a coverage problem")
    parser.add_argument("--workers", type=int, default=2, help="--smoke: cases run at once (default 2)")
    parser.add_argument("--strict", action="store_true", help="--smoke: a disagreement with cpu_ref fails too")
    parser.add_argument("--verbose", action="store_true", help="--smoke: one line per case")
    parser.add_argument("--ops-list", help="a file with the op list to check coverage against instead of `kiln ops`")
    args = parser.parse_args()
    args.out_given = args.out is not None
    if args.out is None:
        args.out = os.path.join(OUT_DIR, "smoke.json" if args.smoke else "results.json")
    args.kiln = os.path.abspath(args.kiln) if os.path.sep in args.kiln else args.kiln
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")

    all_cases = op_cases.all_cases()
    kiln_ops, why = kiln_op_list(args.kiln, args.ops_list)
    covered = sorted({op for c in all_cases for op in c.ops})
    coverage = {"kiln_ops": kiln_ops, "covered": covered, "excluded": op_cases.EXCLUDED, "cases": len(all_cases),
                "problems": op_cases.coverage_problems(kiln_ops, all_cases) if kiln_ops is not None else [f"no op list: {why}"]}
    cases = select(all_cases, args.ops)
    return run_smoke(args, cases, coverage) if args.smoke else run_timing(args, cases, coverage)


if __name__ == "__main__":
    sys.exit(main())
