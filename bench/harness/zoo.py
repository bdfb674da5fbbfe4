#!/usr/bin/python3
"""bench/zoo.sh: times every zoo model (tests/zoo/cases.txt) in Kiln and ONNX Runtime, same inputs,
same thread count, and prints kiln/ort per model and their geometric mean (issue 18's goal: every
model at most 1.0x, geometric mean at most 0.8x). See bench/README.md, "The zoo".

The timing is harness/comparison.py's (shared with bench/corpus.sh and bench/ops.sh): probes set each
process's timed runs from --budget-ms (so the 1024x1024 imgly models get few and the wake-word heads
many), then --rounds rounds of one Kiln and one ONNX Runtime process, their order alternating; a
runner's latency is the median of its per-process medians. A model Kiln refuses (exit 11-20,
docs/CLI.md) is a "refused" row, a crash or timeout a "failed" one; neither counts in the geometric mean."""
import argparse
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import comparison  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
CASES_TXT = os.path.join(ROOT, "tests", "zoo", "cases.txt")
OUT_DIR = os.path.join(ROOT, "bench", "out", "zoo")


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


def main():
    sys.stdout.reconfigure(line_buffering=True)
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--cases", help="comma-separated case names (default: all of tests/zoo/cases.txt)")
    comparison.add_arguments(parser)
    parser.add_argument("--threads", type=int, default=2, help="threads for both runners (default 2)")
    parser.add_argument("--zoo-dir", default=os.environ.get("KILN_ZOO_DIR", os.path.expanduser("~/.cache/kiln/zoo")))
    parser.add_argument("--out", default=os.path.join(OUT_DIR, "results.json"), help="JSON with every raw number "
                        "(default bench/out/zoo/results.json); each process's JSON is kept in bench/out/zoo/runs/")
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds must be at least 1")
    cases = comparison.select_cases(parser, read_cases(args.zoo_dir), args.cases, "tests/zoo/cases.txt")
    comparison.run("zoo bench", cases, args, OUT_DIR, ("zoo", "not fetched (run make zoo)"))


if __name__ == "__main__":
    main()
