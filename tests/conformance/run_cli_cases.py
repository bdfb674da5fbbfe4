#!/usr/bin/python3
"""Runs ONNX's backend test data through the `kiln` binary, as a user would: for every case and
data set, `kiln run CASE/model.onnx --input NAME=input_K.pb ... --expect NAME=output_K.pb ...`.

usage: run_cli_cases.py --kiln PATH [--suite NAME]... [--expected FILE] [--data-root DIR]
                        [--workers N] [--case-timeout S] [--filter TEXT] [--kiln-arg ARG]...

input_K.pb binds to graph.input[K] and output_K.pb to graph.output[K] by position (IR-3 models
list their initializers among graph.input after the real inputs, so those never get a file).
The library's conformance expectations (expected.txt for cpu_ref, expected_cpu.txt for the cpu
provider, the CLI's default) list the cases it does not pass, with why; such a case may fail here
too (an expected failure, its listed reason printed); every other case must pass. --expect uses
--tolerance 1e-3: max|got - want| <= 1e-3 * max(1, max|want|) per tensor, at least as loose as
the conformance runner's |got - want| <= 1e-7 + 1e-3 * |want| per element, so a case the library
passes cannot fail here on tolerance alone.

Prints one line per suite and a total (passed, expected failures, unexpected failures) and every
unexpected failure with kiln's error; exits 1 on any unexpected failure, 77 (skipped) when the
test data or python3-onnx is missing.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys
import time

SKIP = 77
HERE = os.path.dirname(os.path.abspath(__file__))
SUITES = ("node", "pytorch-converted", "pytorch-operator", "simple")


def read_expected(path):
    """'suite/case  status  reason' lines of the conformance expectations -> {id: 'status  reason'}."""
    listed = {}
    with open(path) as f:
        for line in f:
            if not line.strip() or line.startswith("#") or line.startswith("passed "):
                continue
            parts = line.rstrip("\n").split(None, 1)
            listed[parts[0]] = parts[1] if len(parts) > 1 else ""
    return listed


def numbered_files(folder, stem):
    files = []
    while os.path.exists(os.path.join(folder, "%s_%d.pb" % (stem, len(files)))):
        files.append(os.path.join(folder, "%s_%d.pb" % (stem, len(files))))
    return files


def data_sets(case_dir):
    prefix = "test_data_set_"
    sets = [n for n in os.listdir(case_dir) if n.startswith(prefix) and os.path.isdir(os.path.join(case_dir, n))]
    return [os.path.join(case_dir, n) for n in sorted(sets, key=lambda n: int(n[len(prefix):]))]


def kiln_commands(onnx, kiln, case_dir, extra_args):
    """(data set folder, `kiln run` command line) for each data set of the case."""
    model_path = os.path.join(case_dir, "model.onnx")
    graph = onnx.load(model_path, load_external_data=False).graph
    inputs = [v.name for v in graph.input]
    outputs = [v.name for v in graph.output]
    commands = []
    for data_set in data_sets(case_dir):
        command = [kiln, "run", model_path, "--tolerance", "1e-3", "--threads", "1"] + extra_args
        for k, path in enumerate(numbered_files(data_set, "input")):
            command += ["--input", "%s=%s" % (inputs[k], path)]
        for k, path in enumerate(numbered_files(data_set, "output")):
            command += ["--expect", "%s=%s" % (outputs[k], path)]
        commands.append((data_set, command))
    return commands


def run_case(onnx, kiln, case_dir, extra_args, timeout_s):
    """None when every data set passes, else why not (kiln's error line, or the last lines it printed)."""
    for data_set, command in kiln_commands(onnx, kiln, case_dir, extra_args):
        try:
            done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout_s)
        except subprocess.TimeoutExpired:
            return "timed out after %d s: %s" % (timeout_s, " ".join(command))
        if done.returncode != 0:
            text = done.stdout.decode("utf-8", "replace").strip().splitlines()
            errors = [line for line in text if line.startswith("error (")]
            why = errors[-1] if errors else " | ".join(text[-3:])
            return "%s: exit %d: %s" % (os.path.basename(data_set), done.returncode, why)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--suite", action="append", choices=SUITES)
    parser.add_argument("--expected", default=os.path.join(HERE, "expected_cpu.txt"))
    parser.add_argument("--data-root", default="/usr/share/libonnx-testdata/data")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--case-timeout", type=int, default=120)
    parser.add_argument("--filter", default="")
    parser.add_argument("--kiln-arg", action="append", default=[], help="passed on to every kiln run")
    args = parser.parse_args()
    if not os.access(args.kiln, os.X_OK):
        print("no kiln binary at %s" % args.kiln)
        return 2
    if not os.path.isdir(args.data_root):
        print("no ONNX test data at %s (install libonnx-testdata); skipping" % args.data_root)
        return SKIP
    try:
        import onnx
    except ImportError:
        print("python3-onnx is missing (it reads each model's input and output names); skipping")
        return SKIP
    listed = read_expected(args.expected)
    cases = []
    for suite in args.suite or SUITES:
        suite_dir = os.path.join(args.data_root, suite)
        for name in sorted(os.listdir(suite_dir)):
            if args.filter in name and os.path.exists(os.path.join(suite_dir, name, "model.onnx")):
                cases.append((suite, name))
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=args.workers) as pool:
        futures = [pool.submit(run_case, onnx, args.kiln, os.path.join(args.data_root, suite, name), args.kiln_arg,
                               args.case_timeout) for suite, name in cases]
        reasons = [f.result() for f in futures]
    counts = {}
    unexpected, now_passing = [], []
    for (suite, name), why in zip(cases, reasons):
        case_id = suite + "/" + name
        c = counts.setdefault(suite, {"passed": 0, "expected": 0, "unexpected": 0})
        if why is None:
            c["passed"] += 1
            if case_id in listed:
                now_passing.append(case_id)
        elif case_id in listed:
            c["expected"] += 1
        else:
            c["unexpected"] += 1
            unexpected.append("%s: %s" % (case_id, why))
    total = {"passed": 0, "expected": 0, "unexpected": 0}
    for suite, c in counts.items():
        print("%s: %d passed, %d expected failures, %d unexpected failures" % (suite, c["passed"], c["expected"],
                                                                                 c["unexpected"]))
        for key in total:
            total[key] += c[key]
    print("total: %d passed, %d expected failures (listed in %s), %d unexpected failures, in %.0f s" %
          (total["passed"], total["expected"], os.path.basename(args.expected), total["unexpected"],
           time.monotonic() - start))
    for case_id in now_passing:
        print("now passes through kiln, though %s lists it: %s" % (os.path.basename(args.expected), case_id))
    for line in unexpected:
        print("UNEXPECTED FAILURE " + line)
    return 1 if unexpected else 0


if __name__ == "__main__":
    sys.exit(main())
