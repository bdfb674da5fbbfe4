#!/usr/bin/python3
"""bench/streaming.sh: the per-call cost of a stateful model called in a loop, Kiln against ONNX
Runtime (onnxruntime-node), 1 intra-op thread each. The model (bench/models/export_stream.py): a
512-sample chunk through an LSTM whose state (h, c) each call hands to the next, called --calls
times; and its null twin (the same inputs and outputs through one trivial op each), whose call
time is what a runtime costs per call beyond the kernels. Runners: Kiln's kiln.Stream (state
carried without copies), Kiln's InferenceSession.run with the state fed back by hand (what an
onnxruntime script does), and ONNX Runtime's session.run with the state fed back. --rounds rounds,
one process per runner each, their order alternating; a figure is the median over rounds."""
import argparse
import json
import os
import statistics
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import machine  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
RUNNERS = ["kiln-stream", "kiln-run", "ort"]


def measure(runner, model, folder, calls):
    flags = ["--signal", os.path.join(folder, "signal.npy"), "--state", "h=h_out", "--state", "c=c_out",
             "--initial", "h=" + os.path.join(folder, "input_h.npy"), "--initial", "c=" + os.path.join(folder, "input_c.npy"),
             "--calls", str(calls)]
    if runner == "ort":
        command = ["node", os.path.join(ROOT, "bench", "peers", "ort_stream.js"), model, *flags]
        env = dict(os.environ)
    else:
        command = [sys.executable, os.path.join(HERE, "stream_kiln.py"), model, *flags, "--api", runner.split("-")[1]]
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "build", "python"))
    run = subprocess.run(command, capture_output=True, text=True, env=env, timeout=600)
    if run.returncode != 0:
        raise RuntimeError("%s failed on %s: %s" % (runner, model, run.stderr.strip()[-400:]))
    result = json.loads(run.stdout.strip().splitlines()[-1])
    times = np.array(result["times_ms"])
    return {"median_ms": float(np.median(times)), "p99_ms": float(np.percentile(times, 99)),
            "kernel_ms_per_call": result.get("kernel_ms_per_call")}


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=10000)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--models", default=os.path.join(ROOT, "bench", "models", "out", "stream_lstm"))
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "streaming.json"))
    args = parser.parse_args()
    if not os.path.exists(os.path.join(args.models, "null.onnx")):
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "bench", "models", "export_stream.py"), "--out", args.models],
                       check=True)
    rows = []
    for label, file in (("lstm", "model.onnx"), ("null", "null.onnx")):
        samples = {runner: [] for runner in RUNNERS}
        for r in range(args.rounds):
            order = RUNNERS if r % 2 == 0 else list(reversed(RUNNERS))
            for runner in order:
                samples[runner].append(measure(runner, os.path.join(args.models, file), args.models, args.calls))
        for runner in RUNNERS:
            med = lambda key: statistics.median(s[key] for s in samples[runner] if s[key] is not None) \
                if any(s[key] is not None for s in samples[runner]) else None
            rows.append({"model": label, "runner": runner, "median_ms": med("median_ms"), "p99_ms": med("p99_ms"),
                         "kernel_ms_per_call": med("kernel_ms_per_call"), "samples": samples[runner]})
            print("  %s, %s: median %.4f ms, p99 %.4f ms" % (label, runner, rows[-1]["median_ms"], rows[-1]["p99_ms"]), flush=True)
    info = machine.machine_info(os.path.join(ROOT, "build", "kiln"))
    by = {(row["model"], row["runner"]): row for row in rows}
    print("\n%-6s %-12s %12s %12s %16s" % ("model", "runner", "median ms", "p99 ms", "median vs ort"))
    for row in rows:
        ort = by[(row["model"], "ort")]["median_ms"]
        print("%-6s %-12s %12.4f %12.4f %15.2fx" % (row["model"], row["runner"], row["median_ms"], row["p99_ms"], row["median_ms"] / ort))
    kiln_lstm = by[("lstm", "kiln-stream")]
    print("\nper-call cost beyond the kernels, from the null model's call time: kiln stream %.4f ms, kiln run %.4f ms, "
          "onnxruntime %.4f ms (kiln stream / onnxruntime: %.2f)" % (
              by[("null", "kiln-stream")]["median_ms"], by[("null", "kiln-run")]["median_ms"], by[("null", "ort")]["median_ms"],
              by[("null", "kiln-stream")]["median_ms"] / by[("null", "ort")]["median_ms"]))
    print("kiln stream on the LSTM: %.4f ms per call, of which kernels %.4f ms (Kiln's report): %.4f ms beyond them" % (
        kiln_lstm["median_ms"], kiln_lstm["kernel_ms_per_call"], kiln_lstm["median_ms"] - kiln_lstm["kernel_ms_per_call"]))
    print("%d calls per round, %d rounds. CPU: %s, %s CPUs" % (args.calls, args.rounds, info["cpu"]["model"], info["cpu"]["cpus"]))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"machine": info, "rows": rows, "calls": args.calls, "rounds": args.rounds}, f, indent=2)
    print("raw numbers: %s" % args.out)


if __name__ == "__main__":
    main()
