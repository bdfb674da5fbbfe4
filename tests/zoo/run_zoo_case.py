#!/usr/bin/python3
"""Runs one zoo case through Kiln in one mode and compares every output with ONNX Runtime's.

usage: run_zoo_case.py CASE --mode graph|eager|jit|aot --kiln PATH [--precision bf16|int8] [--zoo-dir DIR] [--work-dir DIR]

graph, eager, jit: `kiln run MODEL --mode M --input ... --output-dir ...`.
aot: `kiln compile MODEL --shape ... --warmup-input ... -o CASE.kiln`, then `kiln run CASE.kiln ...`.
Each output must satisfy max|kiln - ort| <= tol * max(1, max|ort|), with tol from tolerances.txt
(default 1e-3), the same shape and dtype, and NaN where ONNX Runtime has NaN. With --precision, Kiln
compiles the model's products in that precision and tol comes from precision_budgets.txt (CASE PRECISION
TOL REASON; default 5e-2 for bf16, 1e-1 for int8). Kiln holds itself to the same budget against its own
fp32 on the case's inputs (`kiln run --precision P --accuracy-budget rel=TOL --on-budget fallback`): the
products most sensitive to P stay fp32 until it holds, and the line printed says how many ran in P. A
machine whose target lacks the precision (kiln's unsupported_target, exit 13) skips the test, printing
kiln's reason.
A case listed for this mode in known_failures.txt must fail (an error class from kiln or a mismatch;
a crash, a timeout or an internal error still fails the test); if it passes the test fails and asks for the entry to be
removed, so the list cannot go stale.

Exit codes: 0 pass (or an expected failure), 1 fail (or a known failure that now passes),
77 skipped: the zoo has not been fetched (`make zoo`), so there is nothing to compare.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP = 77
DEFAULT_TOL = 1e-3
MODES = ("graph", "eager", "jit", "aot")


def read_table(path):
    """Lines of whitespace-separated fields; '#' starts a comment line; the last field may hold spaces."""
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                rows.append(line)
    return rows


def find_case(name):
    for line in read_table(os.path.join(HERE, "cases.txt")):
        parts = line.split()
        if parts[0] == name:
            inputs = []
            for spec in parts[2:]:
                k = spec.rfind("=")  # input names contain ':' and '::', never '='
                inputs.append((spec[:k], spec[k + 1:]))
            return parts[1], inputs
    return None


def tolerance(name):
    """tolerances.txt: CASE TOL REASON..."""
    for line in read_table(os.path.join(HERE, "tolerances.txt")):
        parts = line.split(None, 2)
        if parts[0] == name:
            return float(parts[1]), parts[2] if len(parts) > 2 else ""
    return DEFAULT_TOL, ""


DEFAULT_PRECISION_TOL = {"bf16": 5e-2, "int8": 1e-1}


def precision_summary(report_path):
    """How many products ran reduced, and what the accuracy fallback kept in fp32, from kiln's report."""
    import json
    with open(report_path) as f:
        precision = json.load(f)["precision"]
    text = "%d of %d products in %s" % (precision["reduced_products"], len(precision["products"]), precision["requested"])
    if precision.get("fallback"):
        text += " (%s)" % precision["fallback"][-1].split(":")[0]
    return text


def precision_tolerance(name, precision):
    """precision_budgets.txt: CASE PRECISION TOL REASON..."""
    for line in read_table(os.path.join(HERE, "precision_budgets.txt")):
        parts = line.split(None, 3)
        if parts[0] == name and parts[1] == precision:
            return float(parts[2]), parts[3] if len(parts) > 3 else ""
    return DEFAULT_PRECISION_TOL[precision], ""


def verdict(tag, ok, detail, expected_failure):
    """Prints the test's line and returns its exit code: a case known_failures.txt lists must fail
    (its failure passes, saying so; its passing fails, so that the list cannot go stale)."""
    if expected_failure is not None:
        if ok:
            print("FAIL: %s now passes: take it off tests/zoo/known_failures.txt (%s)" % (tag, detail))
            return 1
        print("PASS (expected failure, known_failures.txt: %s): %s %s" % (expected_failure, tag, detail))
        return 0
    print("%s: %s %s" % ("PASS" if ok else "FAIL", tag, detail))
    return 0 if ok else 1


def known_failure(name, mode):
    """known_failures.txt: CASE MODES(comma-separated or 'all') REASON..."""
    for line in read_table(os.path.join(HERE, "known_failures.txt")):
        parts = line.split(None, 2)
        modes = parts[1].split(",")
        if parts[0] == name and ("all" in modes or mode in modes):
            return parts[2] if len(parts) > 2 else "(no reason given)"
    return None


def file_name_for(name):
    """Kiln's --output-dir file name for an output (src/kiln/cli/model_io.cpp, file_name_for)."""
    s = re.sub(r"[^A-Za-z0-9_.-]", "_", name)
    return "_" + s if not s or s[0] == "." else s


def run(cmd, timeout):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, "timed out after %d s: %s" % (timeout, " ".join(cmd))
    return p.returncode, p.stdout


def first_error(text):
    lines = [l for l in text.splitlines() if l.lstrip().startswith("error")]
    return (lines[0] if lines else text.strip()[-400:]).strip()


def compare(np, ref_dir, out_dir, tol):
    """Returns (ok, worst error / allowed, text naming the worst output)."""
    worst_ratio, worst_text, ok = 0.0, "", True
    with open(os.path.join(ref_dir, "outputs.tsv")) as f:
        rows = [l.rstrip("\n").split("\t", 1) for l in f if l.strip()]
    for ref_file, name in rows:
        ref = np.load(os.path.join(ref_dir, ref_file))
        got_path = os.path.join(out_dir, file_name_for(name) + ".npy")
        if not os.path.exists(got_path):
            return False, float("inf"), "output %r: Kiln wrote no %s" % (name, os.path.basename(got_path))
        got = np.load(got_path)
        if got.shape != ref.shape or got.dtype != ref.dtype:
            return False, float("inf"), "output %r: Kiln %s %s, ONNX Runtime %s %s" % (
                name, got.dtype, got.shape, ref.dtype, ref.shape)
        if ref.size == 0:
            continue
        r = ref.astype(np.float64)
        g = got.astype(np.float64)
        nan_r, nan_g = np.isnan(r), np.isnan(g)
        if (nan_r != nan_g).any():
            return False, float("inf"), "output %r: NaN at %d places where ONNX Runtime has none or vice versa" % (
                name, int((nan_r != nan_g).sum()))
        finite = ~nan_r
        if not finite.any():
            continue
        err = float(np.max(np.abs(g[finite] - r[finite])))
        ref_max = float(np.max(np.abs(r[finite])))
        allowed = tol * max(1.0, ref_max)
        ratio = err / allowed if allowed > 0 else (0.0 if err == 0 else float("inf"))
        if not ratio <= 1.0:
            ok = False
        if ratio >= worst_ratio:
            worst_ratio = ratio
            worst_text = "output %r: max abs err %.3g, allowed %.3g (tol %g x max(1, %.3g))" % (
                name, err, allowed, tol, ref_max)
    return ok, worst_ratio, worst_text


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("case")
    ap.add_argument("--mode", required=True, choices=MODES)
    ap.add_argument("--kiln", required=True)
    ap.add_argument("--zoo-dir", default=os.environ.get("KILN_ZOO_DIR") or os.path.expanduser("~/.cache/kiln/zoo"))
    ap.add_argument("--work-dir", help="where Kiln's outputs (and the artifact) go; default: a temporary folder")
    ap.add_argument("--keep", action="store_true", help="keep the work folder")
    ap.add_argument("--timeout", type=int, default=1200, help="seconds per kiln command")
    ap.add_argument("--threads", type=int, default=None, help="kiln --threads (default: Kiln's own)")
    ap.add_argument("--precision", choices=sorted(DEFAULT_PRECISION_TOL),
                    help="compile the products in this precision (graph and aot modes); tolerance from precision_budgets.txt")
    ap.add_argument("--kiln-arg", action="append", default=[],
                    help="extra flag for kiln compile/run, e.g. --kiln-arg=--allow-fallback --kiln-arg=cpu_ref")
    a = ap.parse_args()
    tag = "zoo %s %s%s:" % (a.case, a.mode, " " + a.precision if a.precision else "")

    found = find_case(a.case)
    if found is None:
        print("FAIL: %s no case %r in %s" % (tag, a.case, os.path.join(HERE, "cases.txt")))
        return 1
    model_rel, inputs = found
    zoo = a.zoo_dir
    model = os.path.join(zoo, model_rel)
    ref_dir = os.path.join(zoo, "ref", a.case)
    needed = [model, os.path.join(ref_dir, "outputs.tsv")] + [os.path.join(zoo, p) for _, p in inputs]
    missing = [p for p in needed if not os.path.exists(p)]
    if missing:
        reason = "zoo not fetched (run make zoo)"
        status = os.path.join(zoo, "STATUS")
        if os.path.exists(status):  # why the last `make zoo` did not finish, written by tests/zoo/zoo.sh
            with open(status) as f:
                reason += "; last make zoo: " + f.read().strip()
        print("SKIP: %s: %s; missing %s" % (a.case, reason, missing[0]))
        return SKIP
    try:
        import numpy as np
    except ImportError:
        print("FAIL: %s %s has no numpy (Debian: python3-numpy)" % (tag, sys.executable))
        return 1

    tol, tol_reason = precision_tolerance(a.case, a.precision) if a.precision else tolerance(a.case)
    expected_failure = known_failure(a.case, a.precision or a.mode)
    work = a.work_dir or tempfile.mkdtemp(prefix="kiln-zoo-%s-%s-" % (a.case, a.mode))
    if a.work_dir:
        shutil.rmtree(work, ignore_errors=True)
    out_dir = os.path.join(work, "out")
    os.makedirs(out_dir, exist_ok=True)

    input_flags = []
    for name, path in inputs:
        input_flags += ["--input", "%s=%s" % (name, os.path.join(zoo, path))]
    extra = (["--threads", str(a.threads)] if a.threads is not None else []) + a.kiln_arg
    report = os.path.join(work, "report.json")
    if a.precision:
        extra += ["--precision", a.precision, "--accuracy-budget", "rel=%g" % tol, "--on-budget", "fallback", "--report", report]
    try:
        if a.mode == "aot":
            shape_flags, warmup_flags = [], []
            for name, path in inputs:
                arr = np.load(os.path.join(zoo, path), mmap_mode="r")
                shape_flags += ["--shape", "%s=%s" % (name, "x".join(str(d) for d in arr.shape))]
                warmup_flags += ["--warmup-input", "%s=%s" % (name, os.path.join(zoo, path))]
            artifact = os.path.join(work, a.case + ".kiln")
            rc, text = run([a.kiln, "compile", model, *shape_flags, *warmup_flags, *extra, "-o", artifact], a.timeout)
            if rc == 0:
                rc, text = run([a.kiln, "run", artifact, *input_flags, "--output-dir", out_dir, *extra], a.timeout)
        else:
            rc, text = run([a.kiln, "run", model, "--mode", a.mode, *input_flags, "--output-dir", out_dir, *extra],
                           a.timeout)
        # A known failure must fail the way Kiln reports a model it cannot run (docs/CLI.md: 10 + the
        # error class, not invalid_argument 14 or internal 21) or with a mismatch; a crash, a timeout,
        # a malformed command line (CLI11's 100+) or an internal error still fails the test.
        crashed = rc != 0 and not (11 <= rc <= 20 and rc != 14)
        if a.precision and rc == 13:  # unsupported_target: this machine lacks the precision
            print("SKIP: %s %s" % (tag, first_error(text)))
            return SKIP
        if rc != 0:
            ok, detail = False, "kiln %s: %s" % ("exited %d" % rc if rc > 0 else "was killed or timed out (%d)" % rc,
                                                first_error(text))
        else:
            ok, ratio, worst = compare(np, ref_dir, out_dir, tol)
            detail = "%s; worst err/allowed %.3g" % (worst, ratio)
            if a.precision:
                detail += "; " + precision_summary(report)
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)

    if tol_reason and tol != DEFAULT_TOL:
        detail += " [tol %g: %s]" % (tol, tol_reason)
    if crashed:
        expected_failure = None
    return verdict(tag, ok, detail, expected_failure)


if __name__ == "__main__":
    sys.exit(main())
