"""Dynamic-shape benchmark (bench/dynamic.sh): one seeded sequence of calls to the BERT-style
encoder exported with dynamic batch and sequence axes, each call a random (batch, seq) from the
given sets, replayed in order by Kiln (`kiln replay`, jit and graph modes) and ONNX Runtime
(peers/ort_replay.js), one process each, same threads, over several rounds whose runner order
rotates so that the machine's drift falls on every runner alike. Prints, per runner, the round
with the median total (its p50/p99 latency, peak RSS, variants Kiln built), the spread of the
totals, and the ratio of median totals to ONNX Runtime's; writes bench/out/dynamic.json and every
round's replay under bench/out/dynamic/."""
import statistics
import argparse
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import inputs  # noqa: E402

BENCH = inputs.BENCH
ROOT = os.path.dirname(BENCH)
OUT = os.path.join(BENCH, "out", "dynamic")
MODEL = "bert_encoder_dynamic"


def run_json(command, path):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    with open(path) as f:
        return json.load(f)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--seqs", nargs="+", type=int, default=[16, 32, 64, 128, 256])
    parser.add_argument("--batches", nargs="+", type=int, default=[1, 4])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--max-variants", type=int, default=16)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--rounds", type=int, default=3, help="replays per runner, runner order rotating")
    parser.add_argument("--kiln", default=os.environ.get("KILN", os.path.join(ROOT, "build", "kiln")))
    args = parser.parse_args()
    if not os.path.exists(inputs.model_path(MODEL)):
        subprocess.run([sys.executable, os.path.join(BENCH, "models", "export.py"), "--variant", "full",
                        "--out", inputs.EXPORT_DIR, "--models", MODEL], env=dict(os.environ, OMP_WAIT_POLICY="PASSIVE"),
                       check=True)
    os.makedirs(OUT, exist_ok=True)
    rng = random.Random(args.seed)
    calls = []
    for _ in range(args.calls):
        shape = [rng.choice(args.batches), rng.choice(args.seqs)]
        calls.append({"input_ids": shape, "attention_mask": shape})
    calls_path = os.path.join(OUT, "calls.json")
    with open(calls_path, "w") as f:
        json.dump(calls, f)
    model = inputs.model_path(MODEL)
    threads = str(args.threads)
    commands = {
        f"kiln {mode}": lambda path, mode=mode: [args.kiln, "replay", model, "--calls", calls_path, "--json", path, "--mode",
                                                  mode, "--threads", threads, "--max-variants", str(args.max_variants)]
        for mode in ["jit", "graph"]
    }
    commands["ort"] = lambda path: ["node", os.path.join(BENCH, "peers", "ort_replay.js"), model, "--calls", calls_path,
                                    "--threads", threads, "--int64", "input_ids,attention_mask", "--json", path]
    names = list(commands)
    rounds = {name: [] for name in names}
    for r in range(args.rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:
            path = os.path.join(OUT, f"{name.replace(' ', '_')}.round{r + 1}.json")
            rounds[name].append(run_json(commands[name](path), path))
    rows = {}
    for name, results in rounds.items():
        median_round = sorted(results, key=lambda x: x["total_ms"])[(len(results) - 1) // 2]
        rows[name] = dict(median_round, round_totals_ms=[x["total_ms"] for x in results])
        with open(os.path.join(OUT, f"{name.replace(' ', '_')}.json"), "w") as f:
            json.dump(median_round, f)
    ort_total = statistics.median(rows["ort"]["round_totals_ms"])
    print(f"{len(calls)} calls, batch in {args.batches}, seq in {args.seqs}, {args.threads} threads, "
          f"{args.rounds} rounds (the round with the median total shown)")
    print(f"{'runner':>12} {'total s':>9} {'totals min-max':>15} {'p50 ms':>9} {'p99 ms':>9} {'peak RSS MiB':>13} "
          f"{'variants':>9} {'/ort total':>11}")
    for name, r in rows.items():
        variants = r.get("execution", {}).get("variants_built", "-")
        totals = r["round_totals_ms"]
        spread = f"{min(totals) / 1e3:.1f}-{max(totals) / 1e3:.1f}"
        print(f"{name:>12} {r['total_ms'] / 1e3:>9.2f} {spread:>15} {r['p50_ms']:>9.2f} {r['p99_ms']:>9.2f} "
              f"{r['peak_rss_bytes'] / 2**20:>13.0f} {variants!s:>9} {statistics.median(totals) / ort_total:>11.3f}")
    summary = {name: {k: v for k, v in r.items() if k != "latencies_ms"} for name, r in rows.items()}
    with open(os.path.join(BENCH, "out", "dynamic.json"), "w") as f:
        json.dump({"calls": len(calls), "seqs": args.seqs, "batches": args.batches, "threads": args.threads,
                   "rounds": args.rounds, "rows": summary}, f, indent=2)
    print(f"wrote {os.path.join(BENCH, 'out', 'dynamic.json')}")


if __name__ == "__main__":
    main()
