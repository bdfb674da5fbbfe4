#!/usr/bin/python3
"""The streaming loop of bench/streaming.sh in Kiln (the kiln package, 1 intra-op thread): CALLS
calls of one model, each on the next chunk of a signal, its state outputs carried into its state
inputs. --api stream uses kiln.Stream (state carried without copies); --api run feeds the state
back by hand through InferenceSession.run, as an onnxruntime script does. Prints JSON: every
call's wall time (ms) and Kiln's kernel time per call (its report's op times)."""
import argparse
import json
import time

import numpy as np

import kiln


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("model")
    parser.add_argument("--signal", required=True)
    parser.add_argument("--state", action="append", default=[], help="INPUT=OUTPUT")
    parser.add_argument("--initial", action="append", default=[], help="INPUT=file.npy")
    parser.add_argument("--calls", type=int, default=10000)
    parser.add_argument("--api", choices=["stream", "run"], default="stream")
    args = parser.parse_args()
    options = kiln.SessionOptions()
    options.intra_op_num_threads = 1
    session = kiln.InferenceSession(args.model, options)
    chunks = list(np.load(args.signal))
    states = dict(item.split("=", 1) for item in args.state)           # input -> output
    initial = {name: np.load(path) for name, path in (item.split("=", 1) for item in args.initial)}
    first = session.get_outputs()[0].name
    out_names = [first] + list(states.values())

    if args.api == "stream":
        stream = session.stream(carry={out: inp for inp, out in states.items()}, initial=initial)

        def loop(calls):
            times = np.empty(calls)
            stream.reset()
            for k in range(calls):
                x = chunks[k % len(chunks)]
                start = time.perf_counter_ns()
                stream.run({"x": x}, [first])
                times[k] = (time.perf_counter_ns() - start) / 1e6
            return times
    else:
        def loop(calls):
            times = np.empty(calls)
            feeds = dict(initial)
            for k in range(calls):
                feeds["x"] = chunks[k % len(chunks)]
                start = time.perf_counter_ns()
                results = session.run(out_names, feeds)
                times[k] = (time.perf_counter_ns() - start) / 1e6
                for (inp, _), value in zip(states.items(), results[1:]):
                    feeds[inp] = value
            return times

    loop(200)  # warm-up
    before = session.report()["run"]
    times = loop(args.calls)
    after = session.report()["run"]
    kernel_ms = sum(o["ms"] for o in after["op_times"]) - sum(o["ms"] for o in before["op_times"])
    print(json.dumps({"runner": "kiln-" + args.api, "version": kiln.__version__, "calls": args.calls,
                      "times_ms": times.tolist(), "kernel_ms_per_call": kernel_ms / args.calls}))


if __name__ == "__main__":
    main()
