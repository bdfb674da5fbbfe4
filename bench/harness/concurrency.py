#!/usr/bin/python3
"""bench/concurrency.sh: throughput (inferences/s) of one session with 1, 2 and 4 callers running it
at once, 1 intra-op thread per run, in Kiln (the kiln Python package's threads: the GIL is released
while Kiln runs) and ONNX Runtime (onnxruntime-node: concurrent session.run calls), on zoo models
(tests/zoo/cases.txt, `make zoo`). Per case and caller count: --rounds rounds, one process per
runner each, their order alternating; a runner's figure is the median over rounds."""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import machine  # noqa: E402
from zoo import read_cases  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))


def measure(runner, case, callers, seconds):
    _, model, inputs = case
    flags = [item for name, path in inputs.items() for item in ("--input", "%s=%s" % (name, path))]
    if runner == "kiln":
        command = [sys.executable, os.path.join(HERE, "concurrency_kiln.py"), model, *flags]
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "build", "python"))
    else:
        command = ["node", os.path.join(ROOT, "bench", "peers", "ort_concurrent.js"), model, *flags]
        env = dict(os.environ)
    command += ["--callers", str(callers), "--seconds", str(seconds)]
    run = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    if run.returncode != 0:
        raise RuntimeError("%s failed on %s: %s" % (runner, case[0], run.stderr.strip()[-400:]))
    return json.loads(run.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", default="fp_landmark,fp_detect,mlsd_320_tiny")
    parser.add_argument("--callers", default="1,2,4")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--zoo-dir", default=os.environ.get("KILN_ZOO_DIR", os.path.expanduser("~/.cache/kiln/zoo")))
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "concurrency.json"))
    args = parser.parse_args()
    wanted = args.cases.split(",")
    cases = [c for c in read_cases(args.zoo_dir) if c[0] in wanted]
    rows = []
    for case in cases:
        for callers in (int(c) for c in args.callers.split(",")):
            samples = {"kiln": [], "ort": []}
            lanes = 0
            for r in range(args.rounds):
                for runner in (("kiln", "ort") if r % 2 == 0 else ("ort", "kiln")):
                    result = measure(runner, case, callers, args.seconds)
                    samples[runner].append(result["per_second"])
                    lanes = max(lanes, result.get("lanes", 0))
            kiln, ort = statistics.median(samples["kiln"]), statistics.median(samples["ort"])
            rows.append({"case": case[0], "callers": callers, "kiln_per_s": kiln, "ort_per_s": ort, "kiln_lanes": lanes,
                         "samples": samples})
            print("  %s, %d caller(s): kiln %.0f/s, ort %.0f/s" % (case[0], callers, kiln, ort), flush=True)
    info = machine.machine_info(os.path.join(ROOT, "build", "kiln"))
    print("\n%-16s %7s %10s %10s %12s" % ("case", "callers", "kiln /s", "ort /s", "kiln/ort"))
    for row in rows:
        print("%-16s %7d %10.0f %10.0f %11.2fx" % (row["case"], row["callers"], row["kiln_per_s"], row["ort_per_s"],
                                                  row["kiln_per_s"] / row["ort_per_s"]))
    print("throughput ratio: above 1.0 Kiln serves more inferences per second. CPU: %s, %s CPUs" % (
        info["cpu"]["model"], info["cpu"]["cpus"]))
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump({"machine": info, "rows": rows, "rounds": args.rounds, "seconds": args.seconds}, f, indent=2)
    print("raw numbers: %s" % args.out)


if __name__ == "__main__":
    main()
