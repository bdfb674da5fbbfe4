"""Throughput of one Kiln session (the kiln Python package, 1 intra-op thread per run) with CALLERS
threads running it at once, for SECONDS; prints JSON as bench/peers/ort_concurrent.js does.
    PYTHONPATH=build/python python3 concurrency_kiln.py MODEL --input NAME=file.npy --callers N --seconds S"""
import argparse
import json
import threading
import time

import numpy as np

import kiln

parser = argparse.ArgumentParser()
parser.add_argument("model")
parser.add_argument("--input", action="append", default=[])
parser.add_argument("--callers", type=int, default=1)
parser.add_argument("--seconds", type=float, default=2.0)
args = parser.parse_args()

options = kiln.SessionOptions()
options.intra_op_num_threads = 1
session = kiln.InferenceSession(args.model, options)
feeds = {name: np.load(path) for name, path in (item.split("=", 1) for item in args.input)}
for _ in range(10):  # warm-up, and one lane per caller made before timing
    session.run(None, feeds)
counts = [0] * args.callers


def caller(index, deadline):
    while time.perf_counter() < deadline:
        session.run(None, feeds)
        counts[index] += 1


# Each caller's lane (its arena and kernels) is built on its first concurrent run: build them first.
warm = [threading.Thread(target=caller, args=(i, time.perf_counter() + 0.3)) for i in range(args.callers)]
for t in warm:
    t.start()
for t in warm:
    t.join()
counts = [0] * args.callers
start = time.perf_counter()
threads = [threading.Thread(target=caller, args=(i, start + args.seconds)) for i in range(args.callers)]
for t in threads:
    t.start()
for t in threads:
    t.join()
elapsed = time.perf_counter() - start
print(json.dumps({"runner": "kiln", "callers": args.callers, "runs": sum(counts), "seconds": elapsed,
                  "per_second": sum(counts) / elapsed, "lanes": session.report()["execution"]["lanes"]}))
